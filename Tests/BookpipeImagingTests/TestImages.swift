import BookpipeImaging
#if canImport(Glibc)
import Glibc
#endif

/// Builds real JPEG files for the tests.
enum TestImages {
    /// A grey picture with a coloured square marker.
    static func marked(width: Int, height: Int, marker: PixelRect, red: UInt8 = 230, green: UInt8 = 20, blue: UInt8 = 20) -> PixelBuffer {
        var picture = PixelBuffer(width: width, height: height, red: 128, green: 128, blue: 128)
        for y in marker.y..<(marker.y + marker.height) {
            for x in marker.x..<(marker.x + marker.width) {
                picture.setPixel(x: x, y: y, red: red, green: green, blue: blue)
            }
        }
        return picture
    }

    /// A picture with smooth colour ramps and deterministic noise, which compresses like a photo.
    static func noisy(width: Int, height: Int, amplitude: Int = 40, seed: UInt64 = 1) -> PixelBuffer {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<3 {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    let noise = Int((state >> 33) % UInt64(2 * amplitude + 1)) - amplitude
                    let base = (x * 200 / width + y * 50 / height + c * 30) % 256
                    bytes[(y * width + x) * 3 + c] = UInt8(clamping: base + noise)
                }
            }
        }
        return (try? PixelBuffer(width: width, height: height, bytes: bytes))
            ?? PixelBuffer(width: width, height: height, red: 0, green: 0, blue: 0)
    }

    /// A JPEG of `picture` (4:4:4 at high quality by default, so colours stay clean).
    static func jpeg(_ picture: PixelBuffer, quality: Int = 95, subsamplesChroma: Bool = false) throws -> [UInt8] {
        try JPEGEncoder(quality: quality, subsamplesChroma: subsamplesChroma).encode(picture)
    }

    /// `jpeg` with an EXIF APP1 segment holding `orientation`, right after SOI.
    static func withOrientation(_ jpeg: [UInt8], _ orientation: Int, littleEndian: Bool = false) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { littleEndian ? u16(v & 0xFFFF) + u16(v >> 16) : u16(v >> 16) + u16(v & 0xFFFF) }
        var tiff: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        tiff += u16(42) + u32(8)
        // IFD0: two entries (an unrelated one first), then no next IFD.
        tiff += u16(2)
        tiff += u16(0x010F) + u16(2) + u32(4) + [0x41, 0x43, 0x4D, 0x00]  // Make = "ACM"
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0]
        tiff += u32(0)
        let payload: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }

    /// The stored picture a camera would write for `upright` with EXIF `orientation`: the
    /// inverse of the turn a viewer applies, written with whole-picture turns.
    static func stored(for upright: PixelBuffer, orientation: Int) -> PixelBuffer {
        switch orientation {
        case 2: return mirrorLeftRight(upright)
        case 3: return rotateClockwise(rotateClockwise(upright))
        case 4: return mirrorTopBottom(upright)
        case 5: return transpose(upright)                       // a viewer transposes back
        case 6: return rotateCounterClockwise(upright)          // a viewer turns it clockwise
        case 7: return rotateClockwise(rotateClockwise(transpose(upright)))  // transverse
        case 8: return rotateClockwise(upright)                 // a viewer turns it counter-clockwise
        default: return upright
        }
    }

    static func map(_ a: PixelBuffer, width: Int, height: Int, _ from: (Int, Int) -> (Int, Int)) -> PixelBuffer {
        var result = PixelBuffer(width: width, height: height, red: 0, green: 0, blue: 0)
        for y in 0..<height {
            for x in 0..<width {
                let (sx, sy) = from(x, y)
                if let p = a.pixel(x: sx, y: sy) { result.setPixel(x: x, y: y, red: p.red, green: p.green, blue: p.blue) }
            }
        }
        return result
    }

    static func rotateClockwise(_ a: PixelBuffer) -> PixelBuffer {
        map(a, width: a.height, height: a.width) { x, y in (y, a.height - 1 - x) }
    }
    static func rotateCounterClockwise(_ a: PixelBuffer) -> PixelBuffer {
        map(a, width: a.height, height: a.width) { x, y in (a.width - 1 - y, x) }
    }
    static func mirrorLeftRight(_ a: PixelBuffer) -> PixelBuffer {
        map(a, width: a.width, height: a.height) { x, y in (a.width - 1 - x, y) }
    }
    static func mirrorTopBottom(_ a: PixelBuffer) -> PixelBuffer {
        map(a, width: a.width, height: a.height) { x, y in (x, a.height - 1 - y) }
    }
    static func transpose(_ a: PixelBuffer) -> PixelBuffer {
        map(a, width: a.height, height: a.width) { x, y in (y, x) }
    }

    /// The mean colour of a picture.
    static func mean(_ picture: PixelBuffer) -> (red: Double, green: Double, blue: Double) {
        var sums = [0.0, 0.0, 0.0]
        for (index, byte) in picture.bytes.enumerated() { sums[index % 3] += Double(byte) }
        let n = Double(picture.width * picture.height)
        return (sums[0] / n, sums[1] / n, sums[2] / n)
    }

    /// A fresh temporary directory, under `TMPDIR` when it is set (the test run's own folder).
    static func temporaryDirectory() -> String {
        var parent = "/tmp"
        if let value = getenv("TMPDIR"), value.pointee != 0 { parent = String(cString: value) }
        var template = Array((parent + "/bookpipe-imaging-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return nil }
            return String(cString: base)
        }
        return made ?? parent
    }

    static func write(_ bytes: [UInt8], to path: String) {
        guard let file = fopen(path, "wb") else { return }
        _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
}
