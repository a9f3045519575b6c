import BookpipeImaging
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
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
        #expect(imported.stderr.contains("review: 3 detections need review. Next: bookpipe review --library lib.sqlite (walks the queue;"))
        let again = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(again.status == 0 && again.stderr.contains("already imported"), "\(again.stderr)")

        let list = try CLI.run(["review", "list"] + library, in: directory)
        #expect(list.status == 0)
        #expect(list.stdout.hasPrefix("3 items to review (newest first)\n"), "\(list.stdout)")
        let json = try CLI.run(["review", "list", "--json", "--kind", "scan"] + library, in: directory)
        let items = try CLI.jsonLines(json.stdout)
        let ids = items.compactMap { $0["id"] as? String }
        #expect(ids.count == 3)
        #expect(items.compactMap { $0["confidence"] as? Double } == [0.31, 0.42, 0.58])
        let matches = try CLI.run(["review", "list", "--json", "--kind", "match"] + library, in: directory)
        #expect(matches.status == 0 && matches.stdout.isEmpty, "\(matches.stdout)")
        // JSON Lines: one compact object a line, as search --json prints.
        #expect(json.stdout.split(separator: "\n").count == 3)
        #expect(try CLI.nonCanonicalJSONLines(json.stdout).isEmpty)

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
        // No terminal to ask on: a piped "n" (or "y") is not a person's answer; --all needs --yes.
        let piped = try CLI.run(["review", "verify", "--all"] + library, in: directory, input: "y\n")
        #expect(piped.status == 2 && piped.stderr.contains("add --yes. Nothing changed."), "\(piped.stderr)")
        #expect(try CLI.run(["review", "list"] + library, in: directory).stdout.hasPrefix("2 items to review"))
        let verify = try CLI.run(["review", "verify", "--all", "--yes"] + library, in: directory)
        #expect(verify.status == 0 && verify.stderr.contains("verified 2 detections"), "\(verify.stderr)")
        let empty = try CLI.run(["review", "list"] + library, in: directory)
        #expect(empty.stdout.hasPrefix("0 items to review"))
        // Every detection reviewed but not yet looked up: `enrich` may still queue a match for one,
        // which needs the crop, so the copy stays.
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)) ?? []
        #expect(kept.filter { $0.hasSuffix(".jpg") }.count == 1, "\(kept)")
        // Looked up (an offline enrich with the sample catalogue): the managed copy is gone, the user's photo is not.
        let dump = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path
        let catalog = try CLI.run(["catalog", "import", dump, "--catalog", "catalog.sqlite", "--progress", "none"], in: directory)
        #expect(catalog.status == 0, "\(catalog.stderr)")
        let enrich = try CLI.run(["enrich", "--catalog", "catalog.sqlite", "--offline", "--progress", "none"] + library, in: directory)
        #expect(enrich.status == 0, "\(enrich.stderr)")
        // The lookup queued an uncertain match for a detection of this photo: its crop is still
        // there to decide by. Once it is decided, nothing from the photo can come back.
        let queuedMatches = try CLI.run(["review", "list", "--json", "--kind", "match"] + library, in: directory).stdout
            .split(separator: "\n").compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(String(line).utf8))) as? [String: Any]
            }
        #expect(!queuedMatches.isEmpty)
        for match in queuedMatches {
            #expect(match["photo"] as? Bool == true, "\(match)")
            let id = try #require(match["id"] as? String)
            let none = try CLI.run(["review", "choose", id, "--none"] + library, in: directory)
            #expect(none.status == 0, "\(none.stderr)")
        }
        let photos = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)) ?? []
        #expect(photos.filter { $0.hasSuffix(".jpg") }.isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("shelf.jpg").path))
        let after = try CLI.run(["review", "show", ids[1], "--crop", "gone.jpg"] + library, in: directory)
        #expect(after.stdout.contains("title:      Station Eleven  [from person]"))
        #expect(after.stdout.contains("text only"))
        // The same scan again changes nothing, and brings back no copy that nothing would delete.
        let rerun = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(rerun.status == 0 && rerun.stderr.contains("already imported"), "\(rerun.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)) ?? []
        #expect(left.filter { $0.hasSuffix(".jpg") }.isEmpty, "\(left)")
    }

    @Test("export shows each field's supplier: what review edit typed is the person's, the rest the scan file's")
    func exportShowsProvenance() throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "lib.sqlite"]
        #expect(try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory).status == 0)
        let json = try CLI.run(["review", "list", "--json"] + library, in: directory)
        let items = try CLI.jsonLines(json.stdout)
        let id = try #require(items.first { $0["title"] as? String == "STATION ELEVEN" }?["id"] as? String)
        let edit = try CLI.run(["review", "edit", id, "--author", "Emily St. John Mandel"] + library, in: directory)
        #expect(edit.status == 0, "\(edit.stderr)")
        let export = try CLI.run(["export", "--format", "jsonl"] + library, in: directory)
        #expect(export.status == 0, "\(export.stderr)")
        let objects = try export.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 12)
        let edited = try #require(objects.first { $0["id"] as? String == id }?["provenance"] as? [String: String])
        #expect(edited["authors"] == "person" && edited["title"] == "file" && edited["confidence"] == "file", "\(edited)")
        for object in objects where object["id"] as? String != id {
            let provenance = try #require(object["provenance"] as? [String: String])
            #expect(Set(provenance.values) == ["file"], "\(provenance)")
        }
        let csv = try CLI.run(["export", "--format", "csv"] + library, in: directory)
        #expect(csv.stdout.contains("authors=person; confidence=file; normalizedTitle=file; title=file,\r\n"), "\(csv.stdout)")
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

    @Test("import-scan refuses a cut-off photo by name (its detections import without it, nothing is copied); a photo with bytes after its end marker is accepted")
    func truncatedPhoto() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let shelf = try Data(contentsOf: CLI.repositoryRoot.appendingPathComponent("samples/shelf-scan/shelf.jpg"))
        try shelf.prefix(20000).write(to: directory.appendingPathComponent("cut.jpg"))
        let scan = try String(contentsOf: Self.sample, encoding: .utf8)
        try scan.replacingOccurrences(of: "\"shelf.jpg\"", with: "\"cut.jpg\"")
            .write(to: directory.appendingPathComponent("scan.json"), atomically: true, encoding: .utf8)
        let library = ["--library", "lib.sqlite"]
        let imported = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let cut = directory.appendingPathComponent("cut.jpg").path
        #expect(imported.stderr.contains("warning: scan \"scan.json\": photo \(cut): refused: \(cut): the JPEG data ends before the image does "
                                         + "(Premature end of JPEG file)."), "\(imported.stderr)")
        #expect(imported.stderr.contains("12 rows read, 12 imported, 0 rejected"), "\(imported.stderr)")
        let copies = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)) ?? []
        #expect(copies.isEmpty, "\(copies)")
        let list = try CLI.run(["review", "list", "--json"] + library, in: directory)
        let items = try CLI.jsonLines(list.stdout)
        #expect(items.count == 3 && items.allSatisfy { $0["photo"] as? Bool == false }, "\(list.stdout)")
        let id = try #require(items.first?["id"] as? String)
        let show = try CLI.run(["review", "show", id, "--crop", "c.jpg"] + library, in: directory)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("  title:      The Left Hand of Darkness"), "\(show.stdout)")
        #expect(show.stdout.contains("refused"), "\(show.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("c.jpg").path))

        // Some cameras append bytes after the end-of-image marker: still a whole photo.
        try (shelf + Data("MAKERNOTE-TRAILER".utf8)).write(to: directory.appendingPathComponent("trailed.jpg"))
        try scan.replacingOccurrences(of: "\"shelf.jpg\"", with: "\"trailed.jpg\"")
            .write(to: directory.appendingPathComponent("trailed.json"), atomically: true, encoding: .utf8)
        let trailed = try CLI.run(["import-scan", "trailed.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(trailed.status == 0 && !trailed.stderr.contains("warning"), "\(trailed.stderr)")
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)
        #expect(stored.filter { $0.hasSuffix(".jpg") }.count == 1, "\(stored)")
    }

    @Test("Every rejected detection of a minified (one-line) scan result is kept: bookpipe rejected lists each, the report counts each")
    func rejectedDetectionsOfOneLine() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"[{"title":"ok","author":"A","confidence":0.9},{"author":"x"},{"title":"","author":"y"},{"title":null}]"#.utf8)
            .write(to: directory.appendingPathComponent("min.json"))
        let library = ["--library", "m.sqlite"]
        let imported = try CLI.run(["import-scan", "min.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(imported.status == 0 && imported.stderr.contains("4 rows read, 1 imported, 3 rejected"), "\(imported.stderr)")
        let reasons = (2...4).map { #"detection \#($0) of scan "min.json" has no title; skipped. A detection needs the spine's "title" as text"# }
        let expected = zip([47, 62, 88], reasons).map { "min.json:1:\($0): \($1)" }
        let rejected = try CLI.run(["rejected"] + library, in: directory)
        #expect(rejected.status == 0 && rejected.stdout == expected.joined(separator: "\n") + "\n", "\(rejected.stdout)")
        let again = try CLI.run(["import-scan", "min.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(again.status == 0 && again.stderr.contains("already imported"), "\(again.stderr)")
        let csv = try CLI.run(["rejected", "--csv"] + library, in: directory)
        #expect(csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }.map { $0.split(separator: ",").prefix(4).joined(separator: ",") }
                == ["file,line,row,column", "min.json,1,2,47", "min.json,1,3,62", "min.json,1,4,88"], "\(csv.stdout)")
        let report = try CLI.run(["report", "--json", "report.json"] + library, in: directory)
        #expect(report.status == 0, "\(report.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("report.json")))
            as? [String: Any])
        let findings = try #require(json["findings"] as? [String: Any])
        let byCode = try #require(findings["byCode"] as? [[String: Any]])
        #expect(byCode.first { $0["code"] as? String == "row.rejected" }?["count"] as? Int == 3, "\(byCode)")
        let items = try #require(findings["items"] as? [[String: Any]])
        #expect(items.filter { $0["code"] as? String == "row.rejected" }.compactMap { $0["message"] as? String } == reasons)
    }

    @Test("import-scan reads each detection's isbn (samples/scan-photos): the export has the valid ISBN-13, as bookpipe scan stores it")
    func isbnOfDetections() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["shelf1.json", "shelf1.jpg"] {
            try FileManager.default.copyItem(at: CLI.repositoryRoot.appendingPathComponent("samples/scan-photos/" + name),
                                             to: directory.appendingPathComponent(name))
        }
        let library = ["--library", "lib.sqlite"]
        let imported = try CLI.run(["import-scan", "shelf1.json", "--photo", "shelf1.jpg", "--no-enrich", "--progress", "none"] + library,
                                   in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let export = try CLI.run(["export", "--format", "jsonl"] + library, in: directory)
        let objects = try export.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let hailMary = try #require(objects.first { $0["title"] as? String == "PROJECT HAIL MARY" })
        #expect(hailMary["isbn13"] as? String == "9780593135204", "\(hailMary)")
        #expect(objects.filter { $0["isbn13"] is String }.count == 1)
    }

    @Test("A refused photo of an envelope's scan is named with the scan file, the scan and the photo")
    func refusedPhotoNamesItsFile() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("s"), withIntermediateDirectories: true)
        let shelf = try Data(contentsOf: CLI.repositoryRoot.appendingPathComponent("samples/shelf-scan/shelf.jpg"))
        try shelf.prefix(20000).write(to: directory.appendingPathComponent("s/cut.jpg"))
        try #"{"format":"bookshelf-scan","version":1,"scans":[{"scanId":"b","originalImagePath":"cut.jpg","books":[{"title":"B","author":"X","confidence":0.3}]}]}"#
            .write(to: directory.appendingPathComponent("s/scan.json"), atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import-scan", "s/scan.json", "--no-enrich", "--progress", "none", "--library", "l.sqlite"],
                                   in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("warning: s/scan.json: scan \"b\": photo "), "\(imported.stderr)")
        #expect(imported.stderr.contains("1 rows read, 1 imported"), "\(imported.stderr)")
    }

    /// Runs a command line as printed for people (`bookpipe …`) with a POSIX shell, `bookpipe` being the built binary.
    static func runPrinted(_ command: String, in directory: URL) throws -> CLI.Result {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = CLI.binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        return try CLI.run(["-c", command], in: directory, executable: URL(fileURLWithPath: "/bin/sh"), environment: environment)
    }

    @Test("The sheet's commands run as printed, for a title and an author that start with - (--title=… / --author=…)")
    func sheetCommandsRunAsPrinted() throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"photo": "shelf.jpg", "detections": [{"title": "--all", "author": "-v", "confidence": 0.2}, {"title": "It's -1", "author": "--yes", "confidence": 0.3}]}"#.utf8)
            .write(to: directory.appendingPathComponent("dashes.json"))
        let library = ["--library", "my lib.sqlite"]
        let imported = try CLI.run(["import-scan", "dashes.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try CLI.run(["review", "sheet", "--output", "sheet"] + library, in: directory).status == 0)
        let html = try String(contentsOf: directory.appendingPathComponent("sheet/index.html"), encoding: .utf8)
        let commands = html.components(separatedBy: "<pre>").dropFirst().compactMap { $0.components(separatedBy: "</pre>").first }
            .map { $0.replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&amp;", with: "&") }
        let edits = commands.filter { $0.hasPrefix("bookpipe review edit ") }
        #expect(edits.count == 2)
        #expect(edits.contains { $0.contains(" --title=--all --author=-v --library 'my lib.sqlite'") }, "\(edits)")
        for edit in edits {
            let result = try Self.runPrinted(edit, in: directory)
            #expect(result.status == 0, "\(edit): \(result.stderr)")
        }
        let export = try CLI.run(["export", "--format", "jsonl"] + library, in: directory)
        let objects = try export.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(Set(objects.compactMap { $0["title"] as? String }) == ["--all", "It's -1"])
        #expect(Set(objects.compactMap { ($0["authors"] as? [String])?.first }) == ["-v", "--yes"])
        #expect(objects.allSatisfy { $0["reviewStatus"] as? String == "userEdited" }, "\(objects)")
    }

    @Test("Review commands on a path with no library say so and exit 1, creating nothing (no library, no photo folder, no sheet)")
    func noLibrary() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "typo.sqlite"]
        for arguments in [["review", "list"], ["review", "list", "--json"], ["review", "show", "abc:1"], ["review", "verify", "--all", "--yes"],
                          ["review", "edit", "abc:1", "--title", "X"], ["review", "choose", "abc:1", "--none"],
                          ["review", "sheet", "--output", "sheet"], ["review"]] {
            let result = try CLI.run(arguments + library, in: directory)
            #expect(result.status == 1, "\(arguments): \(result.status)")
            #expect(result.stderr == "typo.sqlite: no library here. Import something first, or pass --library.\n",
                    "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// Runs the binary with `input` piped into its standard input (not a terminal: a scripted walk).
    static func run(_ arguments: [String], input: String, in directory: URL) throws -> CLI.Result {
        try CLI.run(arguments, in: directory, input: input)
    }

    @Test("bookpipe review alone reads v / s / e (title and author lines) / q from piped standard input and writes each decision at once")
    func scriptedWalk() throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "lib.sqlite"]
        let imported = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let before = try CLI.run(["review", "list", "--json"] + library, in: directory)
        let ids = try CLI.jsonLines(before.stdout)
            .compactMap { $0["id"] as? String }
        #expect(ids.count == 3)

        // Verify the first, skip the second, edit the third.
        let walk = try Self.run(["review"] + library, input: "v\ns\ne\nIt\nStephen King\n", in: directory)
        #expect(walk.status == 0, "\(walk.stderr)")
        #expect(walk.stdout.contains("[1/3]") && walk.stdout.contains("[3/3]"), "\(walk.stdout)")
        #expect(walk.stdout.contains("review: 1 verified, 1 edited, 0 chosen, 1 skipped"), "\(walk.stdout)")
        let after = try CLI.run(["review", "list", "--json"] + library, in: directory)
        let left = try CLI.jsonLines(after.stdout)
        #expect(left.compactMap { $0["id"] as? String } == [ids[1]])
        let show = try CLI.run(["review", "show", ids[2]] + library, in: directory)
        #expect(show.stdout.contains("title:      It  [from"), "\(show.stdout)")
        #expect(show.stdout.contains("review status userEdited"), "\(show.stdout)")

        // Quit at once: nothing changes, the item stays queued.
        let quit = try Self.run(["review"] + library, input: "q\n", in: directory)
        #expect(quit.status == 0 && quit.stdout.contains("stopped early"), "\(quit.stdout)")
        let still = try CLI.run(["review", "list"] + library, in: directory)
        #expect(still.stdout.hasPrefix("1 item to review"), "\(still.stdout)")
    }

    @Test("review sheet writes one page with a crop per item with a photo, escaped text and quoted commands")
    func sheet() throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "my lib.sqlite"]
        let imported = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none"] + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let sheet = try CLI.run(["review", "sheet", "--output", "sheet"] + library, in: directory)
        #expect(sheet.status == 0, "\(sheet.stderr)")
        #expect(sheet.stderr.contains("review sheet: 3 items, 3 with a crop"), "\(sheet.stderr)")
        let html = try String(contentsOf: directory.appendingPathComponent("sheet/index.html"), encoding: .utf8)
        #expect(html.components(separatedBy: "<img src=\"data:image/jpeg;base64,").count - 1 == 3)
        #expect(html.contains("--library &#39;my lib.sqlite&#39;"))
        #expect(html.contains("STATION ELEVEN"))

        // Pages of at most --page-size items, linked.
        let paged = try CLI.run(["review", "sheet", "--output", "paged", "--page-size", "2"] + library, in: directory)
        #expect(paged.status == 0 && paged.stderr == "wrote paged/index.html (review sheet: 3 items on 2 pages of up to 2, 3 with a crop)\n",
                "\(paged.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("paged").path).sorted()
                == ["index.html", "page-2.html"])
        let zero = try CLI.run(["review", "sheet", "--output", "paged", "--page-size", "0"] + library, in: directory)
        #expect(zero.status != 0 && zero.stderr.contains("--page-size must be 1 or more, not 0."), "\(zero.stderr)")

        // --output naming a file: what is wrong and what to pass; the file stays.
        let taken = try CLI.run(["review", "sheet", "--output", "sheet/index.html"] + library, in: directory)
        #expect(taken.status == 1)
        #expect(taken.stderr == "error: sheet/index.html is a file, and --output takes a folder (the page is written as index.html in it). "
                + "Pass a folder, new or existing, e.g. --output review-sheet; the file was left as it was.\n", "\(taken.stderr)")
        #expect(try String(contentsOf: directory.appendingPathComponent("sheet/index.html"), encoding: .utf8) == html)
    }
}
