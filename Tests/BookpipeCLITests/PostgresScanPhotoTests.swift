import BookpipeCore
import BookpipeImaging
import BookpipeLibrary
import BookpipePostgres
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Scan photos on a PostgreSQL library (issue 28 item 5, docs/decisions/0031): `import-scan` keeps
/// the photo's copy in the database with its detections; `review show` and `review serve`, each a
/// process of its own (another machine, as far as the library can tell), cut the crop from the
/// copy they read from the database, the same crop as on SQLite; reviewing the last detection
/// deletes the copy's row.
@Suite(.serialized) struct PostgresScanPhotoTests {
    /// A scan folder with samples/shelf-scan/shelf.jpg and a scan of three unsure detections of
    /// books no catalogue knows (their lookups end `notFound`, so a review settles them).
    static func scanFolder() throws -> URL {
        let directory = try CLI.temporaryDirectory()
        try FileManager.default.copyItem(at: CLI.repositoryRoot.appendingPathComponent("samples/shelf-scan/shelf.jpg"),
                                         to: directory.appendingPathComponent("shelf.jpg"))
        let scan = """
            {"photo": "shelf.jpg", "detections": [
              {"title": "QWERTYUIOP ZXCV", "author": "NOBODY KNOWN", "confidence": 0.31, "box": {"x": 0.02, "y": 0.08, "width": 0.06, "height": 0.86}},
              {"title": "ASDFGH JKL", "author": "NOONE ATALL", "confidence": 0.42, "box": {"x": 0.3, "y": 0.1, "width": 0.05, "height": 0.8}},
              {"title": "POIUY TREWQ", "author": "NEVER WRITTEN", "confidence": 0.58}
            ]}
            """
        try Data(scan.utf8).write(to: directory.appendingPathComponent("scan.json"))
        return directory
    }

    /// GETs `path` of the server at `base` (the URL `review serve` printed), as the page does
    /// once the printed address set its cookie (the token).
    static func get(_ base: String, _ path: String) async throws -> (status: Int, body: Data) {
        let parts = base.components(separatedBy: "/?token=")
        var request = URLRequest(url: try #require(URL(string: parts[0] + path)))
        request.setValue("bookpipe_review=\(parts.count > 1 ? parts[1] : "")", forHTTPHeaderField: "Cookie")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test("import-scan on a PostgreSQL library: the photo in the database, crops shown and served by other processes as on SQLite; the last review deletes it",
          .timeLimit(.minutes(5)))
    func photosInTheDatabase() async throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        let dump = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path
        #expect(try CLI.run(["catalog", "import", dump, "--catalog", catalog], in: directory).status == 0)
        let url = try PostgresLibraryCommandTests.newLibraryURL()
        var crops: [String: [UInt8]] = [:]
        for library in ["lib.sqlite", url] {
            let options = ["--library", library]
            let imported = try CLI.run(["import-scan", "scan.json", "--catalog", catalog, "--offline", "--progress", "none"] + options,
                                       in: directory)
            #expect(imported.status == 0, "\(library): \(imported.stderr)")
            #expect(imported.stderr.contains("3 rows read, 3 imported, 0 rejected"), "\(imported.stderr)")
            let list = try CLI.run(["review", "list", "--json"] + options, in: directory)
            let items = try CLI.jsonLines(list.stdout)
            #expect(items.count == 3 && items.allSatisfy { $0["photo"] as? Bool == true }, "\(list.stdout)")
            let id = try #require(items.first { $0["confidence"] as? Double == 0.31 }?["id"] as? String)
            let show = try CLI.run(["review", "show", id, "--crop", "spine.jpg"] + options, in: directory)
            #expect(show.status == 0, "\(show.stderr)")
            #expect(show.stdout.contains("  crop:       spine.jpg ("), "\(show.stdout)")
            crops[library] = try [UInt8](Data(contentsOf: directory.appendingPathComponent("spine.jpg")))
            try FileManager.default.removeItem(at: directory.appendingPathComponent("spine.jpg"))
        }
        let sqliteCrop = try #require(crops["lib.sqlite"])
        #expect(crops[url] == sqliteCrop, "the same copy, so the same crop, byte for byte")
        #expect(try ImageDecoder().header(of: sqliteCrop, file: "spine.jpg").height > 100)

        // The copy is a row of the database, not a file: no folder beside anything on this machine.
        let library = try PostgresLibrary(url: url)
        let names = try await library.storedPhotoNames()
        #expect(names.count == 1)
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".photos") }
        #expect(copies == ["lib.sqlite.photos"], "only the SQLite library keeps a folder")
        let sqliteCopy = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/lib.sqlite.photos").first)
        #expect(names == [sqliteCopy], "named by the photo's bytes on both engines")
        let stored = try #require(try await library.scanPhoto(storedAt: "postgres:photos/" + sqliteCopy))
        #expect(stored == [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.path + "/lib.sqlite.photos/" + sqliteCopy))),
                "the database holds the same bytes as the SQLite library's file")

        // `review serve`, another process: the crop it serves decodes, and is the one SQLite serves.
        let queued = try await library.reviewQueueEntries(kind: .scan)
        let id = try #require(queued.first { $0.confidence == 0.31 }?.id)
        var served: [String: [UInt8]] = [:]
        for location in ["lib.sqlite", url] {
            let (server, out, _) = try CLI.start(["review", "serve", "--port", "0", "--library", location], in: directory)
            defer { if server.isRunning { server.terminate() }; server.waitUntilExit() }
            var line = Data()
            while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([0x0A]) { line += byte }
            let address = String(decoding: line, as: UTF8.self)
            #expect(address.hasPrefix("http://127.0.0.1:") && address.contains("/?token="), "\(address)")
            let answer = try await Self.get(address, "/crop?id=\(id)")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            served[location] = [UInt8](answer.body)
        }
        let servedCrop = try #require(served[url])
        #expect(try ImageDecoder().header(of: servedCrop, file: "served.jpg").height > 100)
        #expect(servedCrop.count == served["lib.sqlite"]?.count && servedCrop == served["lib.sqlite"],
                "served from the database: \(servedCrop.count) bytes; from the SQLite library's file: \(served["lib.sqlite"]?.count ?? 0)")

        // Reviewed and looked up: the copy's row goes, in the transaction that finds it due.
        let verified = try CLI.run(["review", "verify", "--all", "--yes", "--library", url], in: directory)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(try await library.storedPhotoNames().isEmpty, "the photo row is deleted")
        let records = try await library.records(ids: queued.map(\.id))
        #expect(records.count == 3 && records.allSatisfy { $0.reviewStatus == .verified && $0.scan?.photoPath == nil })
        let after = try CLI.run(["review", "show", id, "--crop", "gone.jpg", "--library", url], in: directory)
        #expect(after.stdout.contains("the photo's copy was deleted once every detection from it was reviewed"), "\(after.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("gone.jpg").path))
    }

    @Test("import-scan killed with SIGKILL at any moment on a PostgreSQL library: a photo row exists exactly when detections name it; the rerun stores every detection and photo once",
          .timeLimit(.minutes(5)))
    func killedImportKeepsPhotosWithTheirDetections() async throws {
        let directory = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scan = try String(contentsOf: directory.appendingPathComponent("scan.json"), encoding: .utf8)
        var files: [String] = []
        for (shelf, photo) in ["shelf1.jpg", "shelf2.jpg", "shelf3-portrait.jpg", "shelf4.jpg"].enumerated().map({ ($0.offset + 1, $0.element) }) {
            try FileManager.default.copyItem(at: CLI.repositoryRoot.appendingPathComponent("samples/scan-photos/" + photo),
                                             to: directory.appendingPathComponent("shelf\(shelf).jpg"))
            try Data(scan.replacingOccurrences(of: "\"shelf.jpg\"", with: "\"shelf\(shelf).jpg\"").utf8)
                .write(to: directory.appendingPathComponent("scan\(shelf).json"))
            files.append("scan\(shelf).json")
        }
        // Killed early, in the middle and late (where exactly depends on the machine; the check holds at any point).
        for delay in [0.05, 0.2, 0.4, 0.7, 1.0] {
            let url = try PostgresLibraryCommandTests.newLibraryURL()
            let arguments = ["import-scan"] + files + ["--no-enrich", "--progress", "none", "--library", url]
            let (process, _, _) = try CLI.start(arguments, in: directory)
            try await Task.sleep(for: .seconds(delay))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let library = try PostgresLibrary(url: url)
            func check(_ moment: String) async throws -> (records: Int, photos: Int) {
                var named: Set<String> = []
                var records = 0
                try await library.forEachRecord { record in
                    records += 1
                    if let path = record.scan?.photoPath, let name = ManagedPhotos.name(inStoredPath: path) { named.insert(name) }
                }
                let stored = Set(try await library.storedPhotoNames())
                #expect(stored == named, "\(moment) (killed after \(delay) s): photo rows \(stored.count), named by detections \(named.count)")
                return (records, stored.count)
            }
            _ = try await check("after the kill")
            let rerun = try CLI.run(arguments, in: directory)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            let after = try await check("after the rerun")
            #expect(after.records == 12 && after.photos == 4, "killed after \(delay) s: \(after)")
        }
    }
}
