import BookpipeImaging
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2)))
struct ReviewCommandTests {
    static let sample = CLI.repositoryRoot.appendingPathComponent("samples/shelf-scan/scan.json")

    /// A scan folder: the sample scan and a real JPEG as its photo.
    static func scanFolder() throws -> URL {
        let directory = try CLI.temporaryDirectory()
        try FileManager.default.copyItem(at: sample, to: directory.appendingPathComponent("scan.json"))
        var pixels = [UInt8](repeating: 90, count: 320 * 240 * 3)
        for index in pixels.indices where index % 7 == 0 { pixels[index] = 200 }
        let jpeg = try JPEGEncoder(quality: 85).encode(try PixelBuffer(width: 320, height: 240, bytes: pixels))
        try Data(jpeg).write(to: directory.appendingPathComponent("shelf.jpg"))
        return directory
    }

    @Test("import-scan stores every detection, says how many need review and what to type; review list, show --crop, edit and verify --all work through the binary")
    func importAndReview() throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "lib.sqlite"]
        let imported = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("12 rows read, 12 imported, 0 rejected"), "\(imported.stderr)")
        #expect(imported.stderr.contains("review: 3 detections need review. Next: bookpipe review list --library lib.sqlite"))
        let again = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(again.status == 0 && again.stderr.contains("already imported"), "\(again.stderr)")

        let list = try CLI.run(["review", "list"] + library, in: directory)
        #expect(list.status == 0)
        #expect(list.stdout.hasPrefix("3 items to review (newest first)\n"), "\(list.stdout)")
        let json = try CLI.run(["review", "list", "--json", "--kind", "scan"] + library, in: directory)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let ids = items.compactMap { $0["id"] as? String }
        #expect(ids.count == 3)
        #expect(items.compactMap { $0["confidence"] as? Double } == [0.31, 0.42, 0.58])
        let matches = try CLI.run(["review", "list", "--json", "--kind", "match"] + library, in: directory)
        #expect(matches.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]" || matches.stdout.contains("[]"))

        let show = try CLI.run(["review", "show", ids[1], "--crop", "spine.jpg"] + library, in: directory)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("title:      STATION ELEVEN"))
        let crop = try [UInt8](Data(contentsOf: directory.appendingPathComponent("spine.jpg")))
        #expect(try ImageDecoder().header(of: crop, file: "spine.jpg").height > 100)

        let unknown = try CLI.run(["review", "verify", "feed:99"] + library, in: directory)
        #expect(unknown.status == 1 && unknown.stderr.contains("No record has the id feed:99"))
        let usage = try CLI.run(["review", "choose", ids[0]] + library, in: directory)
        #expect(usage.status == 2)

        let edit = try CLI.run(["review", "edit", ids[1], "--title", "Station Eleven", "--author", "Emily St. John Mandel"] + library,
                               in: directory)
        #expect(edit.status == 0, "\(edit.stderr)")
        let verify = try CLI.run(["review", "verify", "--all", "--yes"] + library, in: directory)
        #expect(verify.status == 0 && verify.stderr.contains("verified 2 detections"), "\(verify.stderr)")
        let empty = try CLI.run(["review", "list"] + library, in: directory)
        #expect(empty.stdout.hasPrefix("0 items to review"))
        // Every detection reviewed: the managed copy is gone, the user's photo is not.
        let photos = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)) ?? []
        #expect(photos.filter { $0.hasSuffix(".jpg") }.isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("shelf.jpg").path))
        let after = try CLI.run(["review", "show", ids[1], "--crop", "gone.jpg"] + library, in: directory)
        #expect(after.stdout.contains("title:      Station Eleven  [from person]"))
        #expect(after.stdout.contains("text only"))
    }

    @Test("import-scan reports a non-JPEG photo by name and still imports the detections; truncated JSON exits 1 with line and column")
    func badInputs() throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("not a jpeg".utf8).write(to: directory.appendingPathComponent("shelf.jpg"))
        let result = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none", "--library", "lib.sqlite"],
                                 in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("shelf.jpg") && result.stderr.contains("12 imported"), "\(result.stderr)")
        try Data("{\"photo\": \"shelf.jpg\", \"detections\": [{\"title\": \"X\"".utf8)
            .write(to: directory.appendingPathComponent("cut.json"))
        let cut = try CLI.run(["import-scan", "cut.json", "--no-enrich", "--progress", "none", "--library", "lib.sqlite"],
                              in: directory)
        #expect(cut.status == 1)
        #expect(cut.stderr.contains("line 1"), "\(cut.stderr)")
    }
}
