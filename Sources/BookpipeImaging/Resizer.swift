/// The resampling filter of a ``Resizer``.
public enum ResizeFilter: String, Sendable, CaseIterable, Codable {
    /// Lanczos with 3 lobes: sharp, little aliasing (the default).
    case lanczos3
    /// Linear interpolation (a triangle filter, widened when reducing).
    case bilinear
    /// Area average: each output pixel is the mean of the input pixels it covers.
    case box

    /// Half-width of the kernel in output pixels.
    var support: Double {
        switch self {
        case .lanczos3: return 3
        case .bilinear: return 1
        case .box: return 0.5
        }
    }

    /// The kernel at distance `x` (in output pixels).
    func weight(_ x: Double) -> Double {
        switch self {
        case .lanczos3:
            if x == 0 { return 1 }
            if x <= -3 || x >= 3 { return 0 }
            let pix = Double.pi * x
            return 3 * sin(pix) * sin(pix / 3) / (pix * pix)
        case .bilinear:
            let a = abs(x)
            return a < 1 ? 1 - a : 0
        case .box:
            return (x >= -0.5 && x < 0.5) ? 1 : 0
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Precomputed filter weights for one axis: for each output pixel, the first input pixel and
/// `taps` weights (zero-padded) that sum to 1.
struct AxisWeights {
    let outputSize: Int
    let taps: Int
    let starts: [Int]
    let counts: [Int]
    let weights: [Float]

    /// Weights for resampling `inputSize` pixels to `outputSize` (Pillow's convention: pixel
    /// centres at i + 0.5, the kernel widened by the reduction factor).
    init(filter: ResizeFilter, inputSize: Int, outputSize: Int) {
        let scale = Double(inputSize) / Double(outputSize)
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        let maxTaps = Int(support.rounded(.up)) * 2 + 1
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * maxTaps)
        var used = 1
        var raw = [Double](repeating: 0, count: maxTaps)
        for out in 0..<outputSize {
            let center = (Double(out) + 0.5) * scale
            var first = max(Int((center - support + 0.5).rounded(.down)), 0)
            var last = min(Int((center + support + 0.5).rounded(.down)), inputSize)  // exclusive
            if last - first > maxTaps { last = first + maxTaps }
            var total = 0.0
            for j in first..<max(last, first) {
                let w = filter.weight((Double(j) - center + 0.5) / filterScale)
                raw[j - first] = w
                total += w
            }
            // Trim taps with no weight (exact copies, box edges).
            while last - first > 1 && raw[0] == 0 {
                raw.removeFirst(); raw.append(0); first += 1
            }
            while last - first > 1 && raw[last - first - 1] == 0 { last -= 1 }
            if last <= first || total == 0 {
                first = min(max(Int(center), 0), inputSize - 1)
                last = first + 1
                raw[0] = 1
                total = 1
            }
            starts[out] = first
            counts[out] = last - first
            used = max(used, last - first)
            for k in 0..<(last - first) { weights[out * maxTaps + k] = Float(raw[k] / total) }
            for k in 0..<maxTaps { raw[k] = 0 }
        }
        self.outputSize = outputSize
        self.taps = maxTaps
        self.starts = starts
        self.counts = counts
        self.weights = weights
        _ = used
    }
}

/// Resizes RGB8 pictures with a separable filter (Lanczos-3 by default).
///
/// The vertical pass runs first, one output row at a time over the input rows it needs, so the
/// only intermediate is one row of floats and the input can stream in from the decoder; the
/// horizontal pass then writes the output row. Weights are computed once per call.
///
/// ```swift
/// let small = Resizer().resize(photo, width: 1536, height: 1152)
/// ```
public struct Resizer: Sendable {
    /// The filter used.
    public var filter: ResizeFilter

    /// Creates a resizer with `filter`.
    public init(filter: ResizeFilter = .lanczos3) {
        self.filter = filter
    }

    /// The size that fits `width` × `height` into `longEdge` on its longer side, keeping the
    /// aspect ratio (the shorter side rounded to the nearest pixel, at least 1). Pictures that
    /// already fit keep their size: nothing is enlarged.
    public static func fittingSize(width: Int, height: Int, longEdge: Int) -> (width: Int, height: Int) {
        let long = max(width, height)
        guard longEdge > 0, long > longEdge else { return (width, height) }
        let scale = Double(longEdge) / Double(long)
        if width >= height {
            return (longEdge, max(1, Int((Double(height) * scale).rounded())))
        }
        return (max(1, Int((Double(width) * scale).rounded())), longEdge)
    }

    /// `image` (or the part inside `region`) resampled to `width` × `height`.
    public func resize(_ image: PixelBuffer, region: PixelRect? = nil, width: Int, height: Int) -> PixelBuffer {
        let source = (region ?? PixelRect(x: 0, y: 0, width: image.width, height: image.height))
            .clamped(width: image.width, height: image.height)
        let outWidth = max(width, 1), outHeight = max(height, 1)
        var result = PixelBuffer(width: outWidth, height: outHeight, red: 0, green: 0, blue: 0)
        image.bytes.withUnsafeBufferPointer { input in
            result.bytes.withUnsafeMutableBufferPointer { output in
                guard let from = input.baseAddress, let to = output.baseAddress else { return }
                let stride = image.width * 3
                let origin = from + source.y * stride + source.x * 3
                // Rows come straight from memory: the closure cannot fail.
                try? resample(inputWidth: source.width, inputHeight: source.height,
                              outputWidth: outWidth, outputHeight: outHeight, orientation: .topLeft,
                              output: to) { row in origin + row * stride }
            }
        }
        return result
    }

    /// The core: resamples `inputWidth` × `inputHeight` rows handed out by `row` (asked for in
    /// non-decreasing order; a row pointer must stay valid while fewer than `maxVerticalTaps`
    /// newer rows have been asked for) to `outputWidth` × `outputHeight` stored pixels, written
    /// to `output` turned upright by `orientation`.
    func resample(inputWidth: Int, inputHeight: Int, outputWidth: Int, outputHeight: Int,
                  orientation: Orientation, output: UnsafeMutablePointer<UInt8>,
                  row: (Int) throws(ImagingError) -> UnsafePointer<UInt8>) throws(ImagingError) {
        let horizontal = AxisWeights(filter: filter, inputSize: inputWidth, outputSize: outputWidth)
        let vertical = AxisWeights(filter: filter, inputSize: inputHeight, outputSize: outputHeight)
        let rowFloats = inputWidth * 3
        // One row of floats (plus one float so the last pixel can load as SIMD4).
        let accumulator = UnsafeMutablePointer<Float>.allocate(capacity: rowFloats + 4)
        defer { accumulator.deallocate() }
        accumulator.initialize(repeating: 0, count: rowFloats + 4)
        let rowPointers = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: max(vertical.taps, 1))
        defer { rowPointers.deallocate() }
        try horizontal.weights.withUnsafeBufferPointer { hWeightsBuffer throws(ImagingError) in
            try vertical.weights.withUnsafeBufferPointer { vWeightsBuffer throws(ImagingError) in
                guard let hWeights = hWeightsBuffer.baseAddress, let vWeights = vWeightsBuffer.baseAddress else { return }
                for y in 0..<outputHeight {
                    let first = vertical.starts[y]
                    let count = vertical.counts[y]
                    for k in 0..<count { rowPointers[k] = try row(first + k) }
                    Resizer.verticalPass(rows: rowPointers, weights: vWeights + y * vertical.taps, count: count,
                                         length: rowFloats, into: accumulator)
                    let (start, step) = orientation.uprightPlacement(row: y, storedWidth: outputWidth, storedHeight: outputHeight)
                    Resizer.horizontalPass(accumulator, weights: hWeights, taps: horizontal.taps,
                                           starts: horizontal.starts, counts: horizontal.counts,
                                           outputWidth: outputWidth, into: output + start, step: step)
                }
            }
        }
    }

    /// accumulator[i] = Σ weights[k] · rows[k][i], two rows at a time so the accumulator is
    /// loaded and stored half as often. Written as plain loops over pointers, which LLVM
    /// vectorises.
    @inline(__always)
    static func verticalPass(rows: UnsafeMutablePointer<UnsafePointer<UInt8>>, weights: UnsafePointer<Float>,
                             count: Int, length: Int, into accumulator: UnsafeMutablePointer<Float>) {
        var k = 0
        if count >= 2 {
            let r0 = rows[0], r1 = rows[1], w0 = weights[0], w1 = weights[1]
            for i in 0..<length { accumulator[i] = w0 * Float(r0[i]) + w1 * Float(r1[i]) }
            k = 2
        } else {
            let r0 = rows[0], w0 = weights[0]
            for i in 0..<length { accumulator[i] = w0 * Float(r0[i]) }
            k = 1
        }
        while k + 3 < count {
            let r0 = rows[k], r1 = rows[k + 1], r2 = rows[k + 2], r3 = rows[k + 3]
            let w0 = weights[k], w1 = weights[k + 1], w2 = weights[k + 2], w3 = weights[k + 3]
            for i in 0..<length {
                accumulator[i] += (w0 * Float(r0[i]) + w1 * Float(r1[i])) + (w2 * Float(r2[i]) + w3 * Float(r3[i]))
            }
            k += 4
        }
        while k + 1 < count {
            let r0 = rows[k], r1 = rows[k + 1], w0 = weights[k], w1 = weights[k + 1]
            for i in 0..<length { accumulator[i] += w0 * Float(r0[i]) + w1 * Float(r1[i]) }
            k += 2
        }
        if k < count {
            let r0 = rows[k], w0 = weights[k]
            for i in 0..<length { accumulator[i] += w0 * Float(r0[i]) }
        }
    }

    /// Filters one row of RGB floats horizontally and writes bytes: pixel x goes to
    /// `output + x * step`.
    @inline(__always)
    static func horizontalPass(_ row: UnsafeMutablePointer<Float>, weights: UnsafePointer<Float>, taps: Int,
                               starts: [Int], counts: [Int], outputWidth: Int,
                               into output: UnsafeMutablePointer<UInt8>, step: Int) {
        let raw = UnsafeRawPointer(row)
        starts.withUnsafeBufferPointer { startsBuffer in
            counts.withUnsafeBufferPointer { countsBuffer in
                var target = output
                for x in 0..<outputWidth {
                    let first = startsBuffer[x]
                    let count = countsBuffer[x]
                    let w = weights + x * taps
                    var pixel = raw + first * 12
                    var sum0 = SIMD4<Float>(), sum1 = SIMD4<Float>()
                    var k = 0
                    while k + 1 < count {
                        sum0 += pixel.loadUnaligned(as: SIMD4<Float>.self) * w[k]
                        sum1 += (pixel + 12).loadUnaligned(as: SIMD4<Float>.self) * w[k + 1]
                        pixel += 24
                        k += 2
                    }
                    if k < count { sum0 += pixel.loadUnaligned(as: SIMD4<Float>.self) * w[k] }
                    var value = sum0 + sum1 + 0.5
                    value.clamp(lowerBound: SIMD4<Float>(repeating: 0), upperBound: SIMD4<Float>(repeating: 255))
                    target[0] = UInt8(value[0])
                    target[1] = UInt8(value[1])
                    target[2] = UInt8(value[2])
                    target += step
                }
            }
        }
    }
}
