import BookpipeImaging
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ImageCommandTests {
    /// A 600 x 400 photo stored turned (EXIF orientation 6), so it is 400 x 600 upright.
    static func writePhoto(to url: URL) throws {
        var bytes = [UInt8](repeating: 0, count: 600 * 400 * 3)
        var state: UInt32 = 7
        for index in bytes.indices {
            state = state &* 1_664_525 &+ 1_013_904_223
            bytes[index] = UInt8(truncatingIfNeeded: (index / 3 % 600) / 3 + Int(state >> 27))
        }
        let jpeg = try JPEGEncoder(quality: 90).encode(try PixelBuffer(width: 600, height: 400, bytes: bytes))
        // An APP1 "Exif" segment with orientation 6 (big-endian TIFF, one IFD entry), right after SOI.
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        let payload: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] + tiff
        let segment: [UInt8] = [0xFF, 0xE1, 0, UInt8(payload.count + 2)] + payload
        try Data(Array(jpeg[0..<2]) + segment + Array(jpeg[2...])).write(to: url)
    }

    static let boxes = (0..<12).map { index in
        "{\"x\": \(0.02 + Double(index) * 0.08), \"y\": \(index % 2 == 0 ? 0.05 : 0.5), \"width\": 0.06, \"height\": 0.4}"
    }

    @Test("image crops writes spine_01…spine_12 in box order; option spellings and extra box members change nothing")
    func cropsInBoxOrder() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpg"))
        try ("[" + Self.boxes.joined(separator: ",\n ") + "]\n").write(to: directory.appendingPathComponent("boxes.json"),
                                                                       atomically: true, encoding: .utf8)
        // Boxes may carry other members (a detector's label); they are ignored.
        let labelled = Self.boxes.map { $0.dropLast() + ", \"label\": \"spine\"}" }
        try ("[" + labelled.joined(separator: ",") + "]").write(to: directory.appendingPathComponent("boxes-labelled.json"),
                                                               atomically: true, encoding: .utf8)
        let fast = try CLI.run(["image", "crops", "shelf.jpg", "--boxes", "boxes.json", "--output-dir", "fast",
                                "--max-edge", "100"], in: directory)
        let parsed = try CLI.run(["image", "crops", "shelf.jpg", "--boxes=boxes-labelled.json", "--output-dir=parsed",
                                  "--max-edge=100"], in: directory)
        #expect(fast.status == 0 && parsed.status == 0, "\(fast.stderr) \(parsed.stderr)")
        #expect(fast.stderr.isEmpty && parsed.stderr.isEmpty)
        let lines = fast.stdout.split(separator: "\n")
        #expect(lines.count == 12)
        #expect(lines.first?.hasPrefix("fast/spine_01.jpg: 10x100, ") == true, "\(lines.first ?? "")")
        #expect(lines.first?.hasSuffix(" bytes, from 24x240 at (8,30)") == true)
        #expect(lines.last?.hasPrefix("fast/spine_12.jpg: ") == true)
        #expect(fast.stdout.replacingOccurrences(of: "fast/", with: "") == parsed.stdout.replacingOccurrences(of: "parsed/", with: ""))
        for index in 1...12 {
            let name = String(format: "spine_%02d.jpg", index)
            let a = try Data(contentsOf: directory.appendingPathComponent("fast/" + name))
            let b = try Data(contentsOf: directory.appendingPathComponent("parsed/" + name))
            #expect(a == b && !a.isEmpty, "\(name)")
        }
    }

    @Test("image crops usage errors exit 2 with a message naming the problem; a missing photo exits 1")
    func cropsUsageErrors() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpg"))
        try "[{\"x\": 0.1, \"y\": 0.1, \"width\": 0.2, \"height\": 0.5}]".write(
            to: directory.appendingPathComponent("boxes.json"), atomically: true, encoding: .utf8)
        try "[{\"x\": \"left\"}]".write(to: directory.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let edge = try CLI.run(["image", "crops", "shelf.jpg", "--boxes", "boxes.json", "--output-dir", "out",
                                "--max-edge", "0"], in: directory)
        #expect(edge.status == 2 && edge.stderr == "error: --max-edge must be positive, not 0\n", "\(edge.stderr)")
        let json = try CLI.run(["image", "crops", "shelf.jpg", "--boxes", "bad.json", "--output-dir", "out"], in: directory)
        #expect(json.status == 2 && json.stderr.hasPrefix("error: bad.json: not a JSON array of {x, y, width, height}"),
                "\(json.stderr)")
        let missing = try CLI.run(["image", "crops", "nope.jpg", "--boxes", "boxes.json", "--output-dir", "out"], in: directory)
        #expect(missing.status == 1 && missing.stderr.hasPrefix("error: nope.jpg"), "\(missing.stderr)")
    }

    @Test("image prepare writes one upright .jpg per photo at the preset's size and prints what it wrote")
    func prepare() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpeg"))
        let result = try CLI.run(["image", "prepare", "shelf.jpeg", "--output-dir", "out/nested", "--fixed-quality"],
                                 in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("shelf.jpeg -> out/nested/shelf.jpg: 400x600, "), "\(result.stdout)")
        #expect(result.stdout.hasSuffix(" bytes, quality 85\n"), "\(result.stdout)")
        let written = try FileIO.read(directory.appendingPathComponent("out/nested/shelf.jpg").path)
        let header = try ImageDecoder().header(of: written, file: "shelf.jpg")
        #expect(header.width == 400 && header.height == 600)
    }

    @Test("image prepare usage errors exit 2 with a message: unknown preset, no output folder, colliding names, a limit")
    func prepareUsageErrors() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpg"))
        let preset = try CLI.run(["image", "prepare", "shelf.jpg", "--preset", "huge", "--output-dir", "out"], in: directory)
        #expect(preset.status == 2 && preset.stderr == "error: unknown preset \"huge\"; use gemini, cloudflare or upload\n",
                "\(preset.stderr)")
        let folder = try CLI.run(["image", "prepare", "shelf.jpg"], in: directory)
        #expect(folder.status == 2 && folder.stderr.contains("Missing expected argument '--output-dir <output-dir>'"),
                "\(folder.stderr)")
        let collision = try CLI.run(["image", "prepare", "shelf.jpg", "./shelf.jpg", "--output-dir", "out"], in: directory)
        #expect(collision.status == 2
                && collision.stderr == "error: ./shelf.jpg and shelf.jpg would both be written to shelf.jpg; rename one\n",
                "\(collision.stderr)")
        let limit = try CLI.run(["image", "prepare", "shelf.jpg", "--output-dir", "out", "--max-pixels", "many"],
                                in: directory)
        #expect(limit.status == 2 && limit.stderr.contains("'many' is invalid for '--max-pixels <max-pixels>'"),
                "\(limit.stderr)")
        let tooLarge = try CLI.run(["image", "prepare", "shelf.jpg", "--output-dir", "out", "--max-pixels", "1000"],
                                   in: directory)
        #expect(tooLarge.status == 1 && tooLarge.stderr.hasPrefix("error: shelf.jpg"), "\(tooLarge.stderr)")
        #expect(tooLarge.stderr.contains("Nothing was decoded; if it is a real photo, shrink it below the limit first. "
                                         + "--max-pixels raises the limit; use it only for a file you trust."),
                "the option this command has: \(tooLarge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out/shelf.jpg").path))
    }

    @Test("image prepare never writes over a photo it reads: same file, a hard link, a symbolic link; even with --overwrite")
    func prepareRefusesInput() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("same.jpg")
        try Self.writePhoto(to: photo)
        let original = try Data(contentsOf: photo)
        for extra in [[], ["--overwrite"]] {
            let same = try CLI.run(["image", "prepare", "same.jpg", "--output-dir", "."] + extra, in: directory)
            #expect(same.status == 2)
            #expect(same.stderr == "error: ./same.jpg is the photo same.jpg (the same file); "
                    + "bookpipe never writes over a file it reads. Choose another --output-dir.\n")
            #expect(same.stdout.isEmpty)
        }
        // Another name in the output folder for the same file.
        let links = directory.appendingPathComponent("links")
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        try FileManager.default.linkItem(at: photo, to: links.appendingPathComponent("same.jpg"))
        let hard = try CLI.run(["image", "prepare", "same.jpg", "--output-dir", "links", "--overwrite"], in: directory)
        #expect(hard.status == 2)
        #expect(hard.stderr == "error: links/same.jpg is the photo same.jpg (the same file); "
                + "bookpipe never writes over a file it reads. Choose another --output-dir.\n")
        let symbolic = directory.appendingPathComponent("symbolic")
        try FileManager.default.createDirectory(at: symbolic, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: symbolic.appendingPathComponent("same.jpg").path,
                                                   withDestinationPath: photo.path)
        let soft = try CLI.run(["image", "prepare", "same.jpg", "--output-dir", "symbolic", "--overwrite"], in: directory)
        #expect(soft.status == 2)
        #expect(soft.stderr.hasPrefix("error: symbolic/same.jpg is the photo same.jpg (the same file)"), "\(soft.stderr)")
        // The photo read through the link, written next to the real file.
        let throughLink = try CLI.run(["image", "prepare", "symbolic/same.jpg", "--output-dir", "."], in: directory)
        #expect(throughLink.status == 2)
        #expect(throughLink.stderr.hasPrefix("error: ./same.jpg is the photo symbolic/same.jpg (the same file)"), "\(throughLink.stderr)")
        #expect(try Data(contentsOf: photo) == original)
    }

    @Test("image prepare never replaces an existing output without --overwrite, and replaces it with it")
    func prepareExistingOutput() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpeg"))
        try Self.writePhoto(to: directory.appendingPathComponent("desk.jpeg"))
        let out = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try "keep me".write(to: out.appendingPathComponent("shelf.jpg"), atomically: true, encoding: .utf8)
        let refused = try CLI.run(["image", "prepare", "shelf.jpeg", "desk.jpeg", "--output-dir", "out"], in: directory)
        #expect(refused.status == 2)
        #expect(refused.stderr == "error: out/shelf.jpg exists already; pass --overwrite to replace it, or choose another --output-dir.\n")
        #expect(try String(contentsOf: out.appendingPathComponent("shelf.jpg"), encoding: .utf8) == "keep me")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("desk.jpg").path), "nothing written")
        try "keep me too".write(to: out.appendingPathComponent("desk.jpg"), atomically: true, encoding: .utf8)
        let both = try CLI.run(["image", "prepare", "shelf.jpeg", "desk.jpeg", "--output-dir", "out"], in: directory)
        #expect(both.stderr == "error: 2 outputs exist already (out/shelf.jpg, out/desk.jpg); "
                + "pass --overwrite to replace them, or choose another --output-dir.\n")
        let replaced = try CLI.run(["image", "prepare", "shelf.jpeg", "desk.jpeg", "--output-dir", "out", "--overwrite"],
                                   in: directory)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let header = try ImageDecoder().header(of: try FileIO.read(out.appendingPathComponent("shelf.jpg").path), file: "shelf.jpg")
        #expect(header.width == 400 && header.height == 600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["desk.jpg", "shelf.jpg"],
                "no temporary file left")
    }

    @Test("image crops into a folder with an earlier run's crops refuses; --overwrite replaces them and removes only its own leftovers")
    func cropsOverEarlierCrops() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpg"))
        try ("[" + Self.boxes.prefix(2).joined(separator: ",") + "]").write(
            to: directory.appendingPathComponent("two.json"), atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        for name in ["spine_01.jpg", "spine_02.jpg", "spine_03.jpg", "notes.txt", "spine_cover.jpg"] {
            try "older".write(to: out.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let refused = try CLI.run(["image", "crops", "shelf.jpg", "--boxes", "two.json", "--output-dir", "out"], in: directory)
        #expect(refused.status == 2)
        #expect(refused.stderr == "error: out already holds 3 spine crops (spine_01.jpg … spine_03.jpg) from an earlier run; "
                + "pass --overwrite to replace them (and remove those the new boxes do not replace), or choose another --output-dir.\n")
        #expect(try String(contentsOf: out.appendingPathComponent("spine_01.jpg"), encoding: .utf8) == "older")
        let replaced = try CLI.run(["image", "crops", "shelf.jpg", "--boxes", "two.json", "--output-dir", "out", "--overwrite"],
                                   in: directory)
        #expect(replaced.status == 0)
        #expect(replaced.stdout.split(separator: "\n").count == 2)
        #expect(replaced.stderr == "out: removed 1 earlier crop (spine_03.jpg) that the new boxes do not replace.\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
                == ["notes.txt", "spine_01.jpg", "spine_02.jpg", "spine_cover.jpg"])
        #expect(try FileIO.read(out.appendingPathComponent("spine_01.jpg").path).prefix(2) == [0xFF, 0xD8])
    }

    @Test("image crops never writes over or removes its photo, even named like a crop in the output folder")
    func cropsRefuseInput() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("spine_02.jpg")
        try Self.writePhoto(to: photo)
        let original = try Data(contentsOf: photo)
        try ("[" + Self.boxes.prefix(3).joined(separator: ",") + "]").write(
            to: directory.appendingPathComponent("three.json"), atomically: true, encoding: .utf8)
        let result = try CLI.run(["image", "crops", "spine_02.jpg", "--boxes", "three.json", "--output-dir", ".", "--overwrite"],
                                 in: directory)
        #expect(result.status == 2)
        #expect(result.stderr == "error: ./spine_02.jpg is the photo spine_02.jpg (the same file); "
                + "bookpipe never writes over a file it reads. Choose another --output-dir.\n")
        #expect(try Data(contentsOf: photo) == original)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("spine_01.jpg").path))
    }

    @Test("image crops with an empty box list says so and writes nothing")
    func cropsEmptyList() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writePhoto(to: directory.appendingPathComponent("shelf.jpg"))
        try "[]".write(to: directory.appendingPathComponent("none.json"), atomically: true, encoding: .utf8)
        let result = try CLI.run(["image", "crops", "shelf.jpg", "--boxes", "none.json", "--output-dir", "out"], in: directory)
        #expect(result.status == 0)
        #expect(result.stderr == "none.json: the list holds no boxes; no crops written.\n")
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out").path))
    }
}
