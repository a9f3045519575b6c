import Testing
import BookpipeImaging

@Suite struct ImageDecoderTests {
    static func sample() throws -> [UInt8] {
        try TestImages.jpeg(TestImages.noisy(width: 160, height: 120), quality: 90, subsamplesChroma: true)
    }

    /// `jpeg` with the frame header's size replaced (the SOF0 segment after the marker).
    static func claiming(width: Int, height: Int, in jpeg: [UInt8]) -> [UInt8] {
        var bytes = jpeg
        var i = 2
        while i + 9 < bytes.count {
            if bytes[i] == 0xFF, bytes[i + 1] == 0xC0 {
                bytes[i + 5] = UInt8(height >> 8); bytes[i + 6] = UInt8(height & 0xFF)
                bytes[i + 7] = UInt8(width >> 8); bytes[i + 8] = UInt8(width & 0xFF)
                return bytes
            }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            i += 2 + length
        }
        return bytes
    }

    @Test("Decodes at each DCT scale to ceil(size / n)", arguments: DecodeScale.allCases)
    func scales(scale: DecodeScale) throws {
        let picture = try ImageDecoder().decodeStored(try Self.sample(), file: "s.jpg", scale: scale)
        #expect(picture.width == (160 + scale.denominator - 1) / scale.denominator)
        #expect(picture.height == (120 + scale.denominator - 1) / scale.denominator)
    }

    @Test("A decoded picture is close to what was encoded")
    func roundTrip() throws {
        let original = TestImages.noisy(width: 160, height: 120, amplitude: 2)
        let decoded = try ImageDecoder().decode(try TestImages.jpeg(original, quality: 98), file: "r.jpg")
        let worst = zip(original.bytes, decoded.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(worst <= 8, "largest difference \(worst)")
    }

    @Test("Shrink-on-load leaves at least 2× for the filter", arguments: [
        (1.0, DecodeScale.full), (2.625, .full), (3.99, .full), (4.0, .half), (7.9, .half), (8, .quarter), (16, .eighth), (100, .eighth),
    ])
    func shrinkRule(reduction: Double, expected: DecodeScale) {
        #expect(DecodeScale.shrinkOnLoad(forReduction: reduction) == expected)
    }

    @Test("A header claiming 60000×60000 is refused before decoding")
    func bomb() throws {
        let bytes = Self.claiming(width: 60000, height: 60000, in: try Self.sample())
        let error = try #require(throws: ImagingError.self) { try ImageDecoder().decode(bytes, file: "bomb.jpg") }
        #expect(error.code == .tooManyPixels)
        #expect(error.description == "bomb.jpg: the image is too large (the header claims 60000x60000 = 3600000000 pixels; the limit is 100000000). Nothing was decoded; if it is a real photo, shrink it below the limit first.")
    }

    @Test("The pixel limit is configurable")
    func limit() throws {
        let bytes = try Self.sample()
        #expect(throws: ImagingError(.tooManyPixels, file: "s.jpg", detail: "the header claims 160x120 = 19200 pixels; the limit is 19199")) {
            try ImageDecoder(maxPixels: 19_199).header(of: bytes, file: "s.jpg")
        }
        #expect(try ImageDecoder(maxPixels: 19_200).header(of: bytes, file: "s.jpg").width == 160)
    }

    @Test("A truncated JPEG is an error, not a half-grey picture", arguments: [0.5, 0.9, 0.999])
    func truncated(fraction: Double) throws {
        let bytes = try Self.sample()
        let cut = Array(bytes[0..<Int(Double(bytes.count) * fraction)])
        let error = try #require(throws: ImagingError.self) { try ImageDecoder().decode(cut, file: "cut.jpg") }
        #expect(error.code == .truncated)
        #expect(error.description.hasPrefix("cut.jpg: the JPEG data ends before the image does"))
        let prepare = try #require(throws: ImagingError.self) {
            try ImagePreparer().prepare(photo: cut, file: "cut.jpg", preset: .cloudflare)
        }
        #expect(prepare.code == .truncated)
    }

    @Test("Zero bytes are refused with a message naming the file")
    func empty() {
        #expect(throws: ImagingError(.emptyFile, file: "empty.jpg")) { try ImageDecoder().decode([], file: "empty.jpg") }
        #expect(ImagingError(.emptyFile, file: "empty.jpg").description == "empty.jpg: the file is empty (0 bytes). Copy the photo again.")
    }

    @Test("A PNG named .jpg is refused as not a JPEG")
    func png() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        let error = try #require(throws: ImagingError.self) { try ImageDecoder().decode(png, file: "photo.jpg") }
        #expect(error.description == "photo.jpg: not a JPEG file (it is a PNG file (starts with 0x89 0x50 0x4E 0x47)). Convert it to JPEG first; bookpipe reads JPEG photos only.")
    }

    @Test("Random bytes and a bare JPEG signature are refused", arguments: [
        [UInt8](arrayLiteral: 0x01, 0x02, 0x03, 0x04, 0x05), [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46],
        (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) },
    ])
    func garbage(bytes: [UInt8]) throws {
        let error = try #require(throws: ImagingError.self) { try ImageDecoder().decode(bytes, file: "junk.jpg") }
        #expect([.notJPEG, .corrupt, .truncated].contains(error.code))
        #expect(error.description.hasPrefix("junk.jpg: "))
    }

    @Test("A missing file names the path")
    func missing() throws {
        let error = try #require(throws: ImagingError.self) {
            try ImagePreparer().prepare(photoAt: "/nonexistent/shelf.jpg", preset: .cloudflare)
        }
        #expect(error.description == "/nonexistent/shelf.jpg: cannot read the file (No such file or directory). Check the path and its permissions.")
    }
}
