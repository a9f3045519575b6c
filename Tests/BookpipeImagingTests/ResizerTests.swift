import Testing
import BookpipeImaging
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ResizerTests {
    static let fitting: [((Int, Int, Int), (Int, Int))] = [
        ((4032, 3024, 1536), (1536, 1152)),
        ((3024, 4032, 1536), (1152, 1536)),
        ((4032, 3024, 3072), (3072, 2304)),
        ((4000, 3000, 1920), (1920, 1440)),
        ((1000, 333, 800), (800, 266)),   // 266.4 rounds down
        ((1000, 335, 800), (800, 268)),   // 268.0
        ((999, 3, 100), (100, 1)),        // never below 1
        ((640, 480, 1536), (640, 480)),   // not enlarged
    ]

    @Test("Fitting a long edge keeps the aspect ratio and rounds the short side", arguments: fitting)
    func fittingSize(input: (Int, Int, Int), expected: (Int, Int)) {
        let size = Resizer.fittingSize(width: input.0, height: input.1, longEdge: input.2)
        #expect(size.width == expected.0 && size.height == expected.1)
    }

    @Test("Output has exactly the requested dimensions for every filter", arguments: ResizeFilter.allCases)
    func dimensions(filter: ResizeFilter) {
        let picture = TestImages.noisy(width: 101, height: 77)
        for (w, h) in [(50, 38), (1, 1), (101, 77), (202, 154), (33, 70)] {
            let out = Resizer(filter: filter).resize(picture, width: w, height: h)
            #expect(out.width == w && out.height == h && out.bytes.count == w * h * 3)
        }
    }

    @Test("A flat colour stays exactly that colour", arguments: ResizeFilter.allCases)
    func flat(filter: ResizeFilter) {
        let picture = PixelBuffer(width: 90, height: 70, red: 200, green: 17, blue: 99)
        let out = Resizer(filter: filter).resize(picture, width: 31, height: 23)
        #expect(out == PixelBuffer(width: 31, height: 23, red: 200, green: 17, blue: 99))
    }

    @Test("The box filter averages exactly at 2×")
    func boxAverage() throws {
        let picture = try PixelBuffer(width: 2, height: 2, bytes: [0, 10, 20, 100, 110, 120, 50, 60, 70, 250, 250, 250])
        let out = Resizer(filter: .box).resize(picture, width: 1, height: 1)
        #expect(out.bytes == [100, 108, 115])  // (0+100+50+250)/4 = 100, 107.5 → 108, 115
    }

    @Test("Same size with Lanczos-3 is an exact copy")
    func identity() {
        let picture = TestImages.noisy(width: 40, height: 30)
        #expect(Resizer().resize(picture, width: 40, height: 30) == picture)
    }

    /// A 1-pixel checkerboard has all its energy above the Nyquist frequency of a 4× reduction,
    /// so a good kernel outputs flat grey; nearest-neighbour would output pure black or white.
    @Test("Lanczos-3 suppresses detail finer than the output can hold", arguments: [ResizeFilter.lanczos3, .box, .bilinear])
    func antiAliasing(filter: ResizeFilter) throws {
        var bytes = [UInt8](repeating: 0, count: 256 * 256 * 3)
        for y in 0..<256 { for x in 0..<256 where (x + y) % 2 == 0 {
            bytes[(y * 256 + x) * 3] = 255; bytes[(y * 256 + x) * 3 + 1] = 255; bytes[(y * 256 + x) * 3 + 2] = 255
        } }
        let out = Resizer(filter: filter).resize(try PixelBuffer(width: 256, height: 256, bytes: bytes), width: 64, height: 64)
        let spread = out.bytes.map { abs(Int($0) - 128) }.max() ?? 255
        #expect(spread <= 2, "largest departure from grey: \(spread)")
    }

    /// A smooth sine (period 64 px) reduced 3× must stay a sine: compare with the exact values.
    @Test("Lanczos-3 reproduces a smooth pattern within 45 dB PSNR")
    func smoothPattern() throws {
        let size = 384
        func value(_ t: Double) -> Double { 128 + 100 * sin(2 * Double.pi * t / 64) }
        var bytes = [UInt8](repeating: 0, count: size * size * 3)
        for y in 0..<size { for x in 0..<size {
            let v = UInt8(value(Double(x) + 0.5).rounded())
            bytes[(y * size + x) * 3] = v; bytes[(y * size + x) * 3 + 1] = v; bytes[(y * size + x) * 3 + 2] = v
        } }
        let out = Resizer().resize(try PixelBuffer(width: size, height: size, bytes: bytes), width: 128, height: 128)
        var squared = 0.0, n = 0.0
        // Skip the borders, where the kernel is cut off.
        for y in 4..<124 { for x in 4..<124 {
            let expected = value((Double(x) + 0.5) * 3)
            let got = Double(out.bytes[(y * 128 + x) * 3])
            // A 3× reduction of a sine keeps its phase; the amplitude drops slightly with the low-pass.
            squared += (got - expected) * (got - expected); n += 1
        } }
        let psnr = 10 * log10(255 * 255 / (squared / n))
        #expect(psnr > 45, "PSNR \(psnr) dB")
    }

    @Test("Resizing a region uses only that region")
    func region() {
        var picture = PixelBuffer(width: 100, height: 100, red: 0, green: 0, blue: 255)
        for y in 20..<60 { for x in 30..<70 { picture.setPixel(x: x, y: y, red: 255, green: 255, blue: 0) } }
        let out = Resizer().resize(picture, region: PixelRect(x: 30, y: 20, width: 40, height: 40), width: 10, height: 10)
        #expect(out == PixelBuffer(width: 10, height: 10, red: 255, green: 255, blue: 0))
    }
}
