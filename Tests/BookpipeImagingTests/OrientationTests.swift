import Testing
@testable import BookpipeImaging

@Suite struct OrientationTests {
    /// Upright 96×64 with a red marker at columns 60..<76, rows 8..<24.
    static let marker = PixelRect(x: 60, y: 8, width: 16, height: 16)
    static let markerBox = NormalizedBox(x: 60.0 / 96, y: 8.0 / 64, width: 16.0 / 96, height: 16.0 / 64)

    static func photo(orientation: Int, littleEndian: Bool = false) throws -> [UInt8] {
        let upright = TestImages.marked(width: 96, height: 64, marker: marker)
        let stored = TestImages.stored(for: upright, orientation: orientation)
        return TestImages.withOrientation(try TestImages.jpeg(stored), orientation, littleEndian: littleEndian)
    }

    @Test("Reads the EXIF orientation in big- and little-endian TIFF", arguments: 1...8)
    func readsOrientation(value: Int) throws {
        for littleEndian in [false, true] {
            let header = try ImageDecoder().header(of: try Self.photo(orientation: value, littleEndian: littleEndian), file: "o.jpg")
            #expect(header.orientation.rawValue == value)
            #expect(header.width == 96 && header.height == 64)
        }
    }

    @Test("A photo without EXIF is upright")
    func noEXIF() throws {
        let bytes = try TestImages.jpeg(PixelBuffer(width: 8, height: 8, red: 1, green: 2, blue: 3))
        #expect(try ImageDecoder().header(of: bytes, file: "plain.jpg").orientation == .topLeft)
    }

    @Test("Decoding turns the photo upright: the marker is where it was drawn", arguments: 1...8)
    func decodeUpright(value: Int) throws {
        let picture = try ImageDecoder().decode(try Self.photo(orientation: value), file: "o.jpg")
        #expect(picture.width == 96 && picture.height == 64)
        let inside = try #require(picture.pixel(x: 68, y: 16))
        #expect(inside.red > 200 && inside.green < 60, "marker centre is \(inside)")
        let outside = try #require(picture.pixel(x: 20, y: 40))
        #expect(abs(Int(outside.red) - 128) < 8 && abs(Int(outside.green) - 128) < 8)
    }

    @Test("A crop of the marker's box lands on the marker in every orientation", arguments: 1...8)
    func cropLandsOnMarker(value: Int) throws {
        let bytes = try Self.photo(orientation: value)
        let region = try ImageDecoder().decode(bytes, file: "o.jpg", box: Self.markerBox)
        #expect(region.width == 16 && region.height == 16)
        let mean = TestImages.mean(region)
        #expect(mean.red > 200 && mean.green < 50 && mean.blue < 50, "mean colour \(mean)")

        let crops = try SpineCropper().crops(photo: bytes, file: "o.jpg", boxes: [Self.markerBox], maxEdge: 8)
        let crop = try #require(crops.first)
        #expect(crop.width == 8 && crop.height == 8)
        #expect(crop.rect == Self.marker)
        let decoded = TestImages.mean(try ImageDecoder().decode(crop.jpeg, file: "crop.jpg"))
        #expect(decoded.red > 190 && decoded.green < 70, "crop colour \(decoded)")
    }

    @Test("Several crops from one decode keep their order and land on their targets", arguments: [1, 6, 8])
    func severalCrops(value: Int) throws {
        let bytes = try Self.photo(orientation: value)
        let grey = NormalizedBox(x: 0.05, y: 0.5, width: 0.2, height: 0.4)
        let crops = try SpineCropper().crops(photo: bytes, file: "o.jpg", boxes: [Self.markerBox, grey, Self.markerBox], maxEdge: 800)
        #expect(crops.count == 3)
        let colours = try crops.map { TestImages.mean(try ImageDecoder().decode($0.jpeg, file: "c.jpg")) }
        #expect(colours[0].red > 190 && colours[2].red > 190)
        #expect(abs(colours[1].red - 128) < 6 && abs(colours[1].green - 128) < 6)
        #expect(crops[1].width == 19 && crops[1].height == 26)
    }

    @Test("Preparing a rotated photo gives upright output dimensions", arguments: [1, 6])
    func preparedDimensions(value: Int) throws {
        let preset = ImagePreset(name: "t", longEdge: 48, quality: 90, targetBytes: nil, qualityFloor: 90)
        let prepared = try ImagePreparer().prepare(photo: try Self.photo(orientation: value), file: "o.jpg", preset: preset)
        #expect(prepared.width == 48 && prepared.height == 32)
        let picture = try ImageDecoder().decode(prepared.jpeg, file: "p.jpg")
        let inside = try #require(picture.pixel(x: 34, y: 8))
        #expect(inside.red > 180 && inside.green < 90, "marker centre \(inside)")
    }
}

@Suite struct SpineCropperTests {
    /// A 480 x 360 stored photo (tall enough for the decoding thread) with `orientation`.
    static func photo(orientation: Int) throws -> [UInt8] {
        let upright = TestImages.noisy(width: orientation >= 5 ? 360 : 480, height: orientation >= 5 ? 480 : 360,
                                       amplitude: 50, seed: UInt64(orientation))
        let stored = TestImages.stored(for: upright, orientation: orientation)
        return TestImages.withOrientation(try TestImages.jpeg(stored, quality: 92, subsamplesChroma: true), orientation)
    }

    /// 30 spine-like boxes on three shelves, overlapping in rows, listed out of vertical order.
    static let boxes: [NormalizedBox] = (0..<30).map { index in
        let shelf = [2, 0, 1][index % 3]
        let column = index / 3
        return NormalizedBox(x: 0.02 + Double(column) * 0.095, y: 0.03 + Double(shelf) * 0.32 + Double(column % 4) * 0.01,
                             width: 0.05 + Double(column % 3) * 0.01, height: 0.25 - Double(column % 5) * 0.02)
    }

    @Test("30 crops cut in one pass come back in box order, each the same file as cutting that box alone",
          arguments: [1, 3, 6, 8])
    func onePassMatchesSingleCrops(orientation: Int) throws {
        let photo = try Self.photo(orientation: orientation)
        let header = try ImageDecoder().header(of: photo, file: "s.jpg")
        for maxEdge in [800, 40] {
            let crops = try SpineCropper().crops(photo: photo, file: "s.jpg", boxes: Self.boxes, maxEdge: maxEdge)
            #expect(crops.count == 30)
            for (index, crop) in crops.enumerated() {
                let rect = CropRectangle(box: Self.boxes[index], width: header.width, height: header.height).rect
                #expect(crop.rect == rect, "box \(index + 1)")
                let (width, height) = Resizer.fittingSize(width: rect.width, height: rect.height, longEdge: maxEdge)
                #expect(crop.width == width && crop.height == height, "box \(index + 1)")
                let alone = try SpineCropper().crops(photo: photo, file: "s.jpg", boxes: [Self.boxes[index]], maxEdge: maxEdge)
                if maxEdge == 800 {
                    #expect(crop.jpeg == alone.first?.jpeg, "box \(index + 1)")
                } else {
                    // A single box may shrink on load by itself; the one-pass decode is at full size.
                    #expect(crop.width == alone.first?.width && crop.height == alone.first?.height)
                }
            }
        }
    }
}

extension SpineCropperTests {
    @Test("A crop that needs no resize is the decoded box itself, turned upright, in every orientation",
          arguments: 1...8)
    func unresizedCropIsTheBox(orientation: Int) throws {
        let photo = try Self.photo(orientation: orientation)
        let boxes = [Self.boxes[4], Self.boxes[7], NormalizedBox(x: 0.3, y: 0.2, width: 0.25, height: 0.3)]
        let crops = try SpineCropper().crops(photo: photo, file: "s.jpg", boxes: boxes, maxEdge: 800)
        for (crop, box) in zip(crops, boxes) {
            let region = try ImageDecoder().decode(photo, file: "s.jpg", box: box)
            #expect(crop.width == region.width && crop.height == region.height)
            #expect(crop.jpeg == (try JPEGEncoder(quality: 85).encode(region)))
        }
        // One tall, narrow box alone: decoded on the pump thread, columns left out of the decode.
        let tall = NormalizedBox(x: 0.3, y: 0.04, width: 0.2, height: 0.92)
        let alone = try #require(try SpineCropper().crops(photo: photo, file: "s.jpg", boxes: [tall], maxEdge: 800).first)
        #expect(alone.jpeg == (try JPEGEncoder(quality: 85).encode(try ImageDecoder().decode(photo, file: "s.jpg", box: tall))))
    }
}
