import BookpipeImaging
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)))
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
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out/shelf.jpg").path))
    }
}
