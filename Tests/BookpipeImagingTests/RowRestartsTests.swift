import BookpipeImaging
import Testing

/// Managed photo copies carry a restart marker at every MCU row, so a crop decodes only the rows it
/// needs. The re-encode must not change a pixel, and the crops cut from the short window must be
/// the crops of the whole file, byte for byte.
@Suite struct RowRestartsTests {
    /// A photo-like 4:2:0 JPEG (as cameras write) whose height is not a multiple of the MCU.
    static func photo(width: Int = 1203, height: Int = 907, subsamplesChroma: Bool = true) throws -> [UInt8] {
        try TestImages.jpeg(TestImages.noisy(width: width, height: height, amplitude: 50), quality: 88,
                            subsamplesChroma: subsamplesChroma)
    }

    /// The restart interval (DRI) of a JPEG, or nil when it has none.
    static func restartInterval(_ jpeg: [UInt8]) -> Int? {
        var index = 2
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker == 0xDD { return Int(jpeg[index + 4]) << 8 | Int(jpeg[index + 5]) }
            if marker == 0xDA { return nil }
            index += 2 + length
        }
        return nil
    }

    @Test("The re-encode adds a restart marker every MCU row and keeps every decoded pixel, 4:2:0 and 4:4:4")
    func losslessReencode() throws {
        for subsampled in [true, false] {
            let original = try Self.photo(subsamplesChroma: subsampled)
            #expect(Self.restartInterval(original) == nil)
            let copy = try RowRestarts.addingRowRestarts(to: original, file: "photo.jpg")
            let mcuWidth = subsampled ? 16 : 8
            #expect(Self.restartInterval(copy) == (1203 + mcuWidth - 1) / mcuWidth)
            let decoder = ImageDecoder()
            #expect(try decoder.decode(copy, file: "copy.jpg") == (try decoder.decode(original, file: "photo.jpg")))
            #expect(try decoder.decode(copy, file: "copy.jpg", scale: .quarter)
                    == (try decoder.decode(original, file: "photo.jpg", scale: .quarter)))
        }
    }

    @Test("Crops from the copy (only the needed rows decoded) are the crops of the original, byte for byte, at every height and scale")
    func cropsMatchTheOriginal() throws {
        let original = try Self.photo()
        let copy = try RowRestarts.addingRowRestarts(to: original, file: "photo.jpg")
        let boxes = [
            NormalizedBox(x: 0.9, y: 0.75, width: 0.03, height: 0.2),   // near the bottom
            NormalizedBox(x: 0.4, y: 0.0, width: 0.05, height: 0.1),    // the top rows
            NormalizedBox(x: 0.1, y: 0.3, width: 0.04, height: 0.3),    // the middle
            NormalizedBox(x: 0.5, y: 0.9, width: 0.2, height: 0.1),     // to the last row
            NormalizedBox(x: 0.2, y: 0.017, width: 0.01, height: 0.01), // a few rows at an MCU boundary
            NormalizedBox(x: 0.0, y: 0.1, width: 1.0, height: 0.8),     // wide: scaled down on decode
        ]
        let cropper = SpineCropper()
        for box in boxes {
            for maxEdge in [800, 120] {
                let fromOriginal = try cropper.crops(photo: original, file: "photo.jpg", boxes: [box], maxEdge: maxEdge)
                let fromCopy = try cropper.crops(photo: copy, file: "copy.jpg", boxes: [box], maxEdge: maxEdge)
                #expect(fromCopy.map(\.jpeg) == fromOriginal.map(\.jpeg), "box \(box), max edge \(maxEdge)")
            }
        }
        // All at once (decoded once, the union of the boxes) as the review sheet does.
        #expect(try cropper.crops(photo: copy, file: "copy.jpg", boxes: boxes).map(\.jpeg)
                == (try cropper.crops(photo: original, file: "photo.jpg", boxes: boxes).map(\.jpeg)))
    }

    /// Where the entropy-coded data of a JPEG's first scan starts (just after its SOS segment).
    static func scanStart(_ jpeg: [UInt8]) -> Int? {
        var index = 2
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF {
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if jpeg[index + 1] == 0xDA { return index + 2 + length }
            index += 2 + length
        }
        return nil
    }

    @Test("A crop below the first MCU row never decodes it: the copy with that row's data removed still crops, the whole file does not decode")
    func rowsAboveAreNotDecoded() throws {
        let copy = try RowRestarts.addingRowRestarts(to: try Self.photo(), file: "photo.jpg")
        let start = try #require(Self.scanStart(copy))
        let firstRestart = try #require((start..<(copy.count - 1)).first { copy[$0] == 0xFF && copy[$0 + 1] == 0xD0 })
        let damaged = Array(copy[..<start]) + Array(copy[firstRestart...])
        let box = NormalizedBox(x: 0.3, y: 0.5, width: 0.05, height: 0.3)
        #expect(try SpineCropper().crops(photo: damaged, file: "damaged.jpg", boxes: [box]).map(\.jpeg)
                == (try SpineCropper().crops(photo: copy, file: "copy.jpg", boxes: [box]).map(\.jpeg)))
        #expect(throws: ImagingError.self) { try ImageDecoder().decode(damaged, file: "damaged.jpg") }
    }

    @Test("The Exif orientation survives the re-encode, and crops of the turned photo match")
    func markersAndGrey() throws {
        let turned = TestImages.withOrientation(try Self.photo(width: 400, height: 300), 6)
        let copy = try RowRestarts.addingRowRestarts(to: turned, file: "turned.jpg")
        let header = try ImageDecoder().header(of: copy, file: "copy.jpg")
        #expect(header.orientation == .rightTop && header.width == 300 && header.height == 400)
        let box = NormalizedBox(x: 0.6, y: 0.7, width: 0.2, height: 0.25)
        #expect(try SpineCropper().crops(photo: copy, file: "copy.jpg", boxes: [box]).map(\.jpeg)
                == (try SpineCropper().crops(photo: turned, file: "turned.jpg", boxes: [box]).map(\.jpeg)))
    }

    @Test("A truncated or non-JPEG file is an error (the import refuses the photo)")
    func refusesBrokenFiles() throws {
        let original = try Self.photo(width: 320, height: 240)
        let cut = #expect(throws: ImagingError.self) {
            try RowRestarts.addingRowRestarts(to: Array(original.prefix(original.count / 2)), file: "cut.jpg")
        }
        #expect(cut?.code == .truncated)
        #expect(cut?.description.hasPrefix("cut.jpg: the JPEG data ends before the image does") == true)
        #expect(throws: ImagingError.self) { try RowRestarts.addingRowRestarts(to: Array("not a jpeg".utf8), file: "text.jpg") }
        #expect(throws: ImagingError.self) { try RowRestarts.addingRowRestarts(to: [], file: "empty.jpg") }
    }

    @Test("Damaged coded data that a decoder only warns about (a restart marker out of sequence) fails the re-encode as corrupt")
    func refusesDamagedData() throws {
        let restarted = try RowRestarts.addingRowRestarts(to: try Self.photo(width: 320, height: 240), file: "photo.jpg")
        let start = try #require(Self.scanStart(restarted))
        let markers = (start..<(restarted.count - 1)).filter { restarted[$0] == 0xFF && (0xD0...0xD7).contains(restarted[$0 + 1]) }
        // A restart marker numbered four ahead: libjpeg only warns ("found marker … instead of
        // RSTn") and resynchronises, so intervals land in the wrong rows.
        var damaged = restarted
        let misnumbered = markers[markers.count / 2] + 1
        damaged[misnumbered] = 0xD0 + (damaged[misnumbered] - 0xD0 + 4) % 8
        // A decoder goes on…
        _ = try ImageDecoder().decode(damaged, file: "damaged.jpg")
        // …the import's re-encode does not.
        let error = #expect(throws: ImagingError.self) { try RowRestarts.addingRowRestarts(to: damaged, file: "damaged.jpg") }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(error?.detail.contains("Corrupt JPEG data") == true, "\(String(describing: error))")
    }

    @Test("Bytes after the end-of-image marker (some cameras append them) are no failure: the copy has the photo's pixels")
    func acceptsBytesAfterTheEnd() throws {
        let original = try Self.photo(width: 320, height: 240)
        let trailed = original + Array("camera trailer \u{0}\u{1}".utf8) + [0xFF, 0xD8, 0x00]
        let copy = try RowRestarts.addingRowRestarts(to: trailed, file: "trailed.jpg")
        #expect(try ImageDecoder().decode(copy, file: "copy.jpg") == (try ImageDecoder().decode(original, file: "photo.jpg")))
    }
}
