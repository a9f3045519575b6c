import Testing
@testable import BookpipeImaging

@Suite struct ImagePreparerTests {
    static func photo(width: Int = 640, height: Int = 480, amplitude: Int = 60) throws -> [UInt8] {
        try TestImages.jpeg(TestImages.noisy(width: width, height: height, amplitude: amplitude), quality: 95, subsamplesChroma: true)
    }

    @Test("Built-in presets have the documented edges, qualities and targets")
    func presets() {
        #expect(ImagePreset.named("gemini") == .gemini && ImagePreset.gemini.longEdge == 3072 && ImagePreset.gemini.quality == 90)
        #expect(ImagePreset.gemini.targetBytes == 400_000...600_000)
        #expect(ImagePreset.cloudflare.longEdge == 1536 && ImagePreset.cloudflare.quality == 85)
        #expect(ImagePreset.cloudflare.targetBytes == 150_000...300_000)
        #expect(ImagePreset.upload.longEdge == 1920 && ImagePreset.upload.quality == 85 && ImagePreset.upload.targetBytes == nil)
        #expect(ImagePreset.named("nope") == nil)
    }

    @Test("Fixed quality encodes once at the preset quality")
    func fixedQuality() throws {
        let preset = ImagePreset(name: "t", longEdge: 320, quality: 90, targetBytes: 1_000...2_000, qualityFloor: 30)
        let prepared = try ImagePreparer().prepare(photo: try Self.photo(), file: "p.jpg", preset: preset, fixedQuality: true)
        #expect(prepared.width == 320 && prepared.height == 240)
        #expect(prepared.quality == 90 && prepared.encodeCount == 1 && prepared.note == nil)
        #expect(try ImageDecoder().header(of: prepared.jpeg, file: "out.jpg").width == 320)
    }

    @Test("Too large at the preset quality: quality goes down until the size fits, each encode counted")
    func reachesTarget() throws {
        let photo = try Self.photo()
        let preset0 = ImagePreset(name: "t", longEdge: 320, quality: 92, targetBytes: nil, qualityFloor: 92)
        let full = try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: preset0).jpeg.count
        let target = (full / 2)...(full * 2 / 3)
        let preset = ImagePreset(name: "t", longEdge: 320, quality: 92, targetBytes: target, qualityFloor: 20)
        let prepared = try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: preset)
        #expect(target.contains(prepared.jpeg.count), "\(prepared.jpeg.count) bytes for target \(target)")
        #expect(prepared.quality < 92 && prepared.quality > 20)
        #expect(prepared.encodeCount >= 2 && prepared.encodeCount <= 4)
        #expect(prepared.isWithinTarget && prepared.note == nil)
    }

    @Test("A target out of reach at the floor is reported plainly")
    func unreachable() throws {
        let preset = ImagePreset(name: "t", longEdge: 320, quality: 90, targetBytes: 100...200, qualityFloor: 60)
        let prepared = try ImagePreparer().prepare(photo: try Self.photo(), file: "p.jpg", preset: preset)
        #expect(prepared.quality == 60 && prepared.encodeCount == 2 && !prepared.isWithinTarget)
        let note = try #require(prepared.note)
        #expect(note.contains("even at the quality floor 60") && note.contains("cannot be reached"), "\(note)")
    }

    @Test("A result below the target is kept and reported")
    func belowTarget() throws {
        let preset = ImagePreset(name: "t", longEdge: 64, quality: 85, targetBytes: 1_000_000...2_000_000, qualityFloor: 60)
        let prepared = try ImagePreparer().prepare(photo: try Self.photo(), file: "p.jpg", preset: preset)
        #expect(prepared.quality == 85 && prepared.encodeCount == 1)
        #expect(prepared.note?.contains("below the 1000 KB–2000 KB target") == true, "\(prepared.note ?? "")")
    }

    @Test("Large reductions shrink on load; small ones decode at full size")
    func shrinkOnLoad() throws {
        let photo = try Self.photo()
        let small = ImagePreset(name: "t", longEdge: 100, quality: 85, targetBytes: nil, qualityFloor: 85)
        let medium = ImagePreset(name: "t", longEdge: 320, quality: 85, targetBytes: nil, qualityFloor: 85)
        #expect(try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: small).decodeScale == .half)
        #expect(try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: medium).decodeScale == .full)
    }

    @Test("Streaming decode + resize equals decoding fully and then resizing")
    func streamingMatches() throws {
        let photo = try Self.photo(width: 300, height: 200)
        let preset = ImagePreset(name: "t", longEdge: 120, quality: 100, targetBytes: nil, qualityFloor: 100)
        let prepared = try ImagePreparer().prepare(photo: photo, file: "p.jpg", preset: preset)
        let reference = Resizer().resize(try ImageDecoder().decode(photo, file: "p.jpg"), width: 120, height: 80)
        let expected = try ImageDecoder().decode(try JPEGEncoder(quality: 100).encode(reference), file: "r.jpg")
        #expect(try ImageDecoder().decode(prepared.jpeg, file: "o.jpg") == expected)
    }
}
