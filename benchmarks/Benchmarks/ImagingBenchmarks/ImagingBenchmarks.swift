// Benchmarks of bookpipe's imaging core on a synthetic 12-megapixel shelf photo.
//
// The photo is made in-process (deterministic ramps, stripes and noise, JPEG q92 4:2:0), so the
// suite needs no files. For figures on realistic photos and side by side with libvips and Pillow,
// run imaging/compare.py (see README.md).
import Benchmark
import BookpipeImaging

/// A 4032×3024 picture with spine-like stripes, ramps and noise, encoded at quality 92.
private func shelfPhoto() -> [UInt8] {
    let width = 4032, height = 3024
    var bytes = [UInt8](repeating: 0, count: width * height * 3)
    var state: UInt64 = 0x1234_5678_9ABC_DEF0
    var spineColour: (Int, Int, Int) = (120, 60, 40)
    var nextSpine = 0
    for x in 0..<width {
        if x == nextSpine {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            spineColour = (Int(state >> 56), Int((state >> 48) & 0xFF), Int((state >> 40) & 0xFF))
            nextSpine += 40 + Int((state >> 20) % 100)
        }
        for y in 0..<height {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let noise = Int((state >> 59)) - 16
            let shade = (y % 1008 < 60) ? 60 : 100 + (x * 40 / width) + (((y / 24) % 7 == 3 && (x / 6) % 3 == 0) ? -50 : 0)
            let index = (y * width + x) * 3
            bytes[index] = UInt8(clamping: spineColour.0 * shade / 140 + noise)
            bytes[index + 1] = UInt8(clamping: spineColour.1 * shade / 140 + noise)
            bytes[index + 2] = UInt8(clamping: spineColour.2 * shade / 140 + noise)
        }
    }
    guard let picture = try? PixelBuffer(width: width, height: height, bytes: bytes),
          let jpeg = try? JPEGEncoder(quality: 92).encode(picture) else { return [] }
    return jpeg
}

/// 30 spine boxes spread over the photo (three shelves of ten).
private let spineBoxes: [NormalizedBox] = (0..<30).map { index in
    let shelf = index / 10, slot = index % 10
    return NormalizedBox(x: 0.02 + Double(slot) * 0.097, y: 0.05 + Double(shelf) * 0.32, width: 0.03 + Double(slot % 3) * 0.01, height: 0.27)
}

let benchmarks: @Sendable () -> Void = {
    let photo = shelfPhoto()
    let decoder = ImageDecoder()
    let metrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .throughput, .mallocCountTotal, .peakMemoryResident]
    let configuration = Benchmark.Configuration(metrics: metrics, warmupIterations: 2,
                                                maxDuration: .seconds(3), maxIterations: 50)

    for scale in DecodeScale.allCases {
        Benchmark("Decode 12 MP at 1/\(scale.denominator)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try decoder.decodeStored(photo, file: "bench.jpg", scale: scale))
            }
        }
    }

    // The kernel alone: 12 MP in memory to each preset's size. Throughput = source megapixels/s
    // is 12.2 × (iterations per second).
    let decoded = (try? decoder.decodeStored(photo, file: "bench.jpg")) ?? PixelBuffer(width: 1, height: 1, red: 0, green: 0, blue: 0)
    for (filter, width, height) in [(ResizeFilter.lanczos3, 1536, 1152), (.lanczos3, 3072, 2304), (.lanczos3, 1920, 1440),
                                    (.bilinear, 1536, 1152), (.box, 1536, 1152)] {
        Benchmark("Resize 12 MP to \(width)x\(height) \(filter.rawValue)", configuration: configuration) { benchmark in
            let resizer = Resizer(filter: filter)
            for _ in benchmark.scaledIterations {
                blackHole(resizer.resize(decoded, width: width, height: height))
            }
        }
    }

    let small = Resizer().resize(decoded, width: 1536, height: 1152)
    let large = Resizer().resize(decoded, width: 3072, height: 2304)
    Benchmark("Encode 1536x1152 q85", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JPEGEncoder(quality: 85).encode(small)) }
    }
    Benchmark("Encode 3072x2304 q90", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JPEGEncoder(quality: 90).encode(large)) }
    }

    for preset in ImagePreset.all {
        Benchmark("Preset \(preset.name) end to end (fixed quality)", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try ImagePreparer().prepare(photo: photo, file: "bench.jpg", preset: preset, fixedQuality: true))
            }
        }
    }
    Benchmark("Preset cloudflare end to end (size targeting)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ImagePreparer().prepare(photo: photo, file: "bench.jpg", preset: .cloudflare))
        }
    }

    Benchmark("30 spine crops at max edge 800", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try SpineCropper().crops(photo: photo, file: "bench.jpg", boxes: spineBoxes, maxEdge: 800))
        }
    }
    Benchmark("1 spine crop at max edge 800 (region decode)", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try SpineCropper().crops(photo: photo, file: "bench.jpg", boxes: [spineBoxes[12]], maxEdge: 800))
        }
    }
}
