import Testing
import BookpipeImaging

@Suite struct CropRectangleTests {
    static let cases: [(NormalizedBox, PixelRect)] = [
        (NormalizedBox(x: 0.25, y: 0.5, width: 0.25, height: 0.25), PixelRect(x: 1008, y: 1512, width: 1008, height: 756)),
        (NormalizedBox(x: 0, y: 0, width: 1, height: 1), PixelRect(x: 0, y: 0, width: 4032, height: 3024)),
        (NormalizedBox(x: 0.1, y: 0.1, width: 0.2, height: 0.3), PixelRect(x: 403, y: 302, width: 807, height: 908)),
        // Clamped to the picture.
        (NormalizedBox(x: -0.1, y: 0.9, width: 0.3, height: 0.5), PixelRect(x: 0, y: 2722, width: 806, height: 302)),
        (NormalizedBox(x: 0.9, y: -1, width: 2, height: 3), PixelRect(x: 3629, y: 0, width: 403, height: 3024)),
        // A sliver keeps one pixel.
        (NormalizedBox(x: 0.5, y: 0.5, width: 0.00001, height: 0.00001), PixelRect(x: 2016, y: 1512, width: 1, height: 1)),
    ]

    @Test("A box selects the pixels its edges round to, clamped to the picture", arguments: cases)
    func geometry(box: NormalizedBox, expected: PixelRect) {
        let crop = CropRectangle(box: box, width: 4032, height: 3024)
        #expect(crop.rect == expected)
        #expect(crop.note == nil)
    }

    static let invalid: [(NormalizedBox, String)] = [
        (NormalizedBox(x: .nan, y: 0, width: 0.5, height: 0.5), "not a number"),
        (NormalizedBox(x: 0, y: 0, width: .infinity, height: 0.5), "not a number"),
        (NormalizedBox(x: 0.2, y: 0.2, width: 0, height: 0.5), "no area"),
        (NormalizedBox(x: 0.2, y: 0.2, width: 0.3, height: -0.1), "no area"),
        (NormalizedBox(x: 1.2, y: 0.2, width: 0.3, height: 0.1), "outside"),
        (NormalizedBox(x: 0.2, y: -0.5, width: 0.3, height: 0.5), "outside"),
    ]

    @Test("An invalid box selects the whole picture and says so", arguments: invalid)
    func invalidBox(box: NormalizedBox, reason: String) throws {
        let crop = CropRectangle(box: box, width: 400, height: 300)
        #expect(crop.rect == PixelRect(x: 0, y: 0, width: 400, height: 300))
        #expect(crop.isWholePictureFallback)
        let note = try #require(crop.note)
        #expect(note.contains(reason) && note.contains("used the whole picture"), "\(note)")
    }

    static let regions: [NormalizedBox] = [
        NormalizedBox(x: 0.3, y: 0.41, width: 0.33, height: 0.2),
        NormalizedBox(x: 0.0, y: 0.0, width: 0.1, height: 0.1),
        NormalizedBox(x: 0.77, y: 0.6, width: 0.5, height: 0.5),
        NormalizedBox(x: 0.5, y: 0.05, width: 0.02, height: 0.9),
    ]

    @Test("Decoding a box gives exactly the pixels of the full decode", arguments: regions)
    func decodeMatchesFullDecode(box: NormalizedBox) throws {
        let picture = TestImages.noisy(width: 203, height: 157, amplitude: 30)
        let bytes = try TestImages.jpeg(picture, quality: 90, subsamplesChroma: true)
        let full = try ImageDecoder().decode(bytes, file: "n.jpg")
        let crop = CropRectangle(box: box, width: 203, height: 157)
        let region = try ImageDecoder().decode(bytes, file: "n.jpg", box: box)
        #expect(region == full.cropped(to: crop.rect))
    }
}
