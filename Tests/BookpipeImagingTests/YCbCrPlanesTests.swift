import Testing
@testable import BookpipeImaging

@Suite struct YCbCrPlanesTests {
    /// Sizes with odd and even sides, a single pixel, and sides that are not whole blocks or MCUs.
    static let sizes: [(Int, Int)] = [(1, 1), (2, 1), (17, 9), (33, 47), (64, 48), (37, 2), (5, 70), (130, 33)]

    /// Feeds `picture` into planes line by line: rows or columns, forwards or backwards.
    static func planes(of picture: PixelBuffer, columns: Bool, backwards: Bool) throws -> YCbCrPlanes {
        let planes = try YCbCrPlanes(width: picture.width, height: picture.height, linesAreColumns: columns, file: "t")
        let count = columns ? picture.width : picture.height
        let length = columns ? picture.height : picture.width
        var line = [UInt8](repeating: 0, count: length * 3)
        for step in 0..<count {
            let index = backwards ? count - 1 - step : step
            for position in 0..<length {
                let pixel = columns ? picture.pixel(x: index, y: position) : picture.pixel(x: position, y: index)
                guard let pixel else { continue }
                line[position * 3] = pixel.red
                line[position * 3 + 1] = pixel.green
                line[position * 3 + 2] = pixel.blue
            }
            #expect(!planes.isComplete)
            try line.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                try planes.putLine(index, pixels: base)
            }
        }
        #expect(planes.isComplete)
        return planes
    }

    @Test("Planes fed by rows or columns, in either order, encode to exactly TurboJPEG's 4:2:0 file",
          arguments: [(false, false), (false, true), (true, false), (true, true)])
    func sameFileAsTurboJPEG(columns: Bool, backwards: Bool) throws {
        for (index, (width, height)) in Self.sizes.enumerated() {
            let picture = TestImages.noisy(width: width, height: height, amplitude: 90, seed: UInt64(index + 1))
            let planes = try Self.planes(of: picture, columns: columns, backwards: backwards)
            for quality in [75, 90, 97] {
                let expected = try JPEGEncoder(quality: quality, subsamplesChroma: true).encode(picture)
                #expect(try planes.encode(quality: quality) == expected, "\(width)x\(height) at quality \(quality)")
            }
        }
    }

    @Test("Lines out of order, repeated or out of range are refused; an incomplete picture is not encoded")
    func refusesBadLines() throws {
        let planes = try YCbCrPlanes(width: 4, height: 6, linesAreColumns: false, file: "t.jpg")
        let row = [UInt8](repeating: 100, count: 12)
        try row.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            try planes.putLine(0, pixels: base)
            #expect(throws: ImagingError.self) { try planes.putLine(2, pixels: base) }
            #expect(throws: ImagingError.self) { try planes.putLine(0, pixels: base) }
            #expect(throws: ImagingError.self) { try planes.putLine(6, pixels: base) }
            #expect(throws: ImagingError.self) { try planes.putLine(-1, pixels: base) }
        }
        #expect(throws: ImagingError.self) { try planes.encode(quality: 90) }
        #expect(throws: ImagingError.self) { try planes.encode(quality: 0) }
    }

    /// The photo resized to `width` x `height` (upright) and held as RGB, the way it was before planes.
    static func resizedRGB(_ photo: [UInt8], width: Int, height: Int) throws -> PixelBuffer {
        let header = try ImageDecoder().header(of: photo, file: "o.jpg")
        let (storedWidth, storedHeight) = header.orientation.uprightSize(width: width, height: height)
        let region = PixelRect(x: 0, y: 0, width: header.storedWidth, height: header.storedHeight)
        let picture = try photo.withUnsafeBufferPointer { buffer in
            try StreamingResize(decoder: ImageDecoder(), resizer: Resizer())
                .run(buffer, file: "o.jpg", header: header, scale: .full, region: region,
                     outputWidth: storedWidth, outputHeight: storedHeight, readsEveryRow: true)
        }
        #expect(picture.width == width && picture.height == height)
        return picture
    }

    @Test("Every EXIF orientation: the held-planes path writes the same file as resizing to RGB and encoding",
          arguments: 1...8)
    func orientationsMatchRGBPath(value: Int) throws {
        // Odd output sides (151 x 101) so every edge case of the padding is crossed.
        let upright = TestImages.noisy(width: 301, height: 201, amplitude: 70, seed: UInt64(value))
        let stored = TestImages.stored(for: upright, orientation: value)
        let photo = TestImages.withOrientation(try TestImages.jpeg(stored, quality: 92, subsamplesChroma: true), value)
        let preset = ImagePreset(name: "t", longEdge: 151, quality: 88, targetBytes: nil, qualityFloor: 88)
        let prepared = try ImagePreparer().prepare(photo: photo, file: "o.jpg", preset: preset, fixedQuality: true)
        #expect(prepared.width == 151 && prepared.height == 101)

        let picture = try Self.resizedRGB(photo, width: 151, height: 101)
        #expect(prepared.jpeg == (try JPEGEncoder(quality: 88).encode(picture)))
    }

    @Test("Size targeting re-encodes the held planes: each try equals encoding the RGB picture at that quality")
    func targetingMatchesRGB() throws {
        let upright = TestImages.noisy(width: 320, height: 240, amplitude: 60, seed: 9)
        let photo = TestImages.withOrientation(
            try TestImages.jpeg(TestImages.stored(for: upright, orientation: 6), quality: 95, subsamplesChroma: true), 6)
        let open = ImagePreset(name: "t", longEdge: 160, quality: 92, targetBytes: nil, qualityFloor: 92)
        let full = try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: open).jpeg.count
        let preset = ImagePreset(name: "t", longEdge: 160, quality: 92, targetBytes: (full / 2)...(full * 2 / 3),
                                 qualityFloor: 20)
        let prepared = try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: preset)
        #expect(prepared.encodeCount >= 2 && prepared.quality < 92)
        #expect(prepared.width == 160 && prepared.height == 120)
        let resized = try Self.resizedRGB(photo, width: 160, height: 120)
        #expect(prepared.jpeg == (try JPEGEncoder(quality: prepared.quality).encode(resized)))
    }
}
