import BookpipeStore
import Foundation
import Testing

/// The library on disk, through the binary: after a command that wrote, `library.sqlite` alone is
/// the whole library; `bookpipe backup` makes a consistent copy while another run writes; every
/// command that only reads works on a read-only library; commands that only add to a library
/// refuse a path where none is, and create nothing.
///
/// Read-only for real: the tests run as root in CI, and root ignores file permissions, so the
/// commands on a read-only library run as `nobody` (`setpriv --reuid … --regid … --clear-groups`,
/// which root may always do, with no mount privilege needed); run as another user, the tests run
/// them as that user, for whom `chmod a-w` holds already.
@Suite(.timeLimit(.minutes(6)))
struct LibraryFileTests {
    /// A generic CSV of `rows` books, `Book 1` … `Book N`.
    static func writeCSV(rows: Int, to url: URL) throws {
        var text = "Title,Author\n"
        text.reserveCapacity(rows * 24)
        for row in 1...rows { text += "Book \(row),Author \(row % 97)\n" }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }

    /// The data rows an export of the library at `path` holds, in order (`source.row`).
    static func exportedRows(_ path: String, in directory: URL) throws -> [Int] {
        let export = try CLI.run(["export", "--format", "jsonl", "--library", path], in: directory)
        #expect(export.status == 0, "\(export.stderr)")
        return try export.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let source = try #require(object["source"] as? [String: Any])
            return try #require(source["row"] as? Int)
        }.sorted()
    }

    @Test("After import, import-scan and a review decision, library.sqlite alone (copied without -wal or -shm) holds every row, and no -wal is left")
    func checkpointAtClose() throws {
        let directory = try ReviewCommandTests.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writeCSV(rows: 1_500, to: directory.appendingPathComponent("books.csv"))
        let library = ["--library", "lib.sqlite", "--progress", "none"]
        let imported = try CLI.run(["import", "books.csv", "--no-enrich"] + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let libraryPath = directory.appendingPathComponent("lib.sqlite").path
        func copyAloneHolds(records: Int) throws {
            // Written in WAL mode and closed: the -wal is gone (or at least empty).
            #expect(Self.size(libraryPath + "-wal") ?? 0 == 0)
            let copy = try CLI.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.copyItem(atPath: libraryPath, toPath: copy.appendingPathComponent("alone.sqlite").path)
            let stats = try CLI.run(["stats", "--library", "alone.sqlite"], in: copy)
            #expect(stats.status == 0, "\(stats.stderr)")
            #expect(stats.stdout.hasPrefix("alone.sqlite: \(records) records, 0 rejected rows\n"), "\(stats.stdout)")
        }
        try copyAloneHolds(records: 1_500)
        #expect(!FileManager.default.fileExists(atPath: libraryPath + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: libraryPath + "-shm"))

        let scanned = try CLI.run(["import-scan", "scan.json", "--no-enrich"] + library, in: directory)
        #expect(scanned.status == 0, "\(scanned.stderr)")
        try copyAloneHolds(records: 1_512)
        let verified = try CLI.run(["review", "verify", "--all", "--yes", "--library", "lib.sqlite"], in: directory)
        #expect(verified.status == 0 && verified.stderr.contains("verified 3 detections"), "\(verified.stderr)")
        try copyAloneHolds(records: 1_512)
        let copy = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(atPath: libraryPath, toPath: copy.appendingPathComponent("alone.sqlite").path)
        let queue = try CLI.run(["review", "list", "--library", "alone.sqlite"], in: copy)
        #expect(queue.stdout.hasPrefix("0 items to review"), "the copy holds the decision: \(queue.stdout)")
    }

    @Test("A command that writes while another process reads an old snapshot still succeeds; the -wal keeps what the reader holds back until the next writing command ends")
    func checkpointIsBestEffortWhileAnotherProcessReads() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.writeCSV(rows: 20_000, to: directory.appendingPathComponent("books.csv"))
        try Self.writeCSV(rows: 500, to: directory.appendingPathComponent("more.csv"))
        let library = ["--progress", "none", "--library", "lib.sqlite"]
        #expect(try CLI.run(["import", "books.csv", "--no-enrich"] + library, in: directory).status == 0)
        let libraryPath = directory.appendingPathComponent("lib.sqlite").path
        // The export streams its one snapshot to a pipe nobody reads: it waits, the snapshot held.
        let (exporter, exportOutput, _) = try CLI.start(["export", "--format", "jsonl", "--library", "lib.sqlite"], in: directory)
        // Its first lines are out: it is inside its read, and 20,000 rows do not fit in a pipe.
        let first = exportOutput.fileHandleForReading.availableData
        #expect(!first.isEmpty)
        let more = try CLI.run(["import", "more.csv", "--no-enrich"] + library, in: directory)
        #expect(more.status == 0, "\(more.stderr)")
        #expect(more.stderr.contains("library lib.sqlite: 20500 records"), "\(more.stderr)")
        #expect((Self.size(libraryPath + "-wal") ?? 0) > 0, "the rows the reader's snapshot holds back are still in the -wal")
        let exported = first + exportOutput.fileHandleForReading.readDataToEndOfFile()
        exporter.waitUntilExit()
        #expect(exporter.terminationStatus == 0)
        #expect(exported.split(separator: UInt8(ascii: "\n")).count == 20_000, "the export is its snapshot")
        // The next command that writes (here one that finds nothing to do) folds the log in.
        #expect(try CLI.run(["import", "more.csv", "--no-enrich"] + library, in: directory).status == 0)
        #expect(!FileManager.default.fileExists(atPath: libraryPath + "-wal"))
        #expect(try LibraryStore(path: libraryPath, access: .readOnly).counts().records == 20_500)
    }

    @Test("backup while an import writes: each copy opens alone, holds whole committed batches (rows 1…N, counts agree), and the import goes on to store every row")
    func backupWhileWriting() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rows = 100_000
        try Self.writeCSV(rows: rows, to: directory.appendingPathComponent("books.csv"))
        let libraryPath = directory.appendingPathComponent("lib.sqlite").path
        let (importer, _, importErrors) = try CLI.start(["import", "books.csv", "--no-enrich", "--progress", "none",
                                                         "--library", "lib.sqlite"], in: directory)
        var copies: [Int] = []
        let deadline = Date().addingTimeInterval(120)
        for attempt in 1...3 {
            // Once rows are committed, the import is frozen wherever it is — perhaps in the middle of
            // a transaction, its frames in the -wal — and the backup taken then.
            var stored = 0
            while stored <= copies.last ?? 0, importer.isRunning, Date() < deadline {
                usleep(20_000)
                stored = (try? LibraryStore(path: libraryPath, access: .readOnly).counts().records) ?? 0
            }
            guard importer.isRunning else { break }
            kill(importer.processIdentifier, SIGSTOP)
            let backup = try CLI.run(["backup", "copy-\(attempt).sqlite", "--library", "lib.sqlite"], in: directory)
            kill(importer.processIdentifier, SIGCONT)
            #expect(backup.status == 0, "\(backup.stderr)")
            let copyPath = directory.appendingPathComponent("copy-\(attempt).sqlite").path
            #expect(!FileManager.default.fileExists(atPath: copyPath + "-wal"), "the copy is one file")
            let counts = try LibraryStore(path: copyPath, access: .readOnly).counts()
            let exported = try Self.exportedRows(copyPath, in: directory)
            #expect(exported == (0..<exported.count).map { $0 + 1 }, "rows 1…N, no gap")
            #expect(counts.records == exported.count, "the counts table and the records agree")
            #expect(backup.stderr == "wrote copy-\(attempt).sqlite (\(exported.count) records, \(Self.size(copyPath) ?? -1) bytes)\n",
                    "\(backup.stdout)")
            #expect(exported.count >= stored && exported.count > (copies.last ?? 0))
            copies.append(exported.count)
        }
        importer.waitUntilExit()
        let errors = String(decoding: importErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(importer.terminationStatus == 0, "\(errors)")
        #expect(!copies.isEmpty, "at least one backup was taken while the import ran")
        #expect(try LibraryStore(path: libraryPath, access: .readOnly).counts().records == rows)
    }

    @Test("backup refuses an existing destination (and the library itself), replaces it with --overwrite, and copies the managed photos beside the copy")
    func backupDestinationAndPhotos() throws {
        let directory = try ReviewCommandTests.scanFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let imported = try CLI.run(["import-scan", "scan.json", "--no-enrich", "--progress", "none", "--library", "lib.sqlite"],
                                   in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let photos = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib.sqlite.photos").path)
            .filter { $0.hasSuffix(".jpg") }
        #expect(photos.count == 1)

        try Data("a person's file".utf8).write(to: directory.appendingPathComponent("taken.sqlite"))
        let refused = try CLI.run(["backup", "taken.sqlite", "--library", "lib.sqlite"], in: directory)
        #expect(refused.status == 1)
        #expect(refused.stderr == "taken.sqlite exists already; bookpipe never overwrites a file it did not make. "
                + "Choose another destination, or pass --overwrite to replace it.\n")
        #expect(try String(contentsOf: directory.appendingPathComponent("taken.sqlite"), encoding: .utf8) == "a person's file")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("taken.sqlite.photos").path))
        let itself = try CLI.run(["backup", "./lib.sqlite", "--overwrite", "--library", "lib.sqlite"], in: directory)
        #expect(itself.status == 1 && itself.stderr == "./lib.sqlite is the library itself; choose another destination.\n")
        let missing = try CLI.run(["backup", "copy.sqlite", "--library", "none.sqlite"], in: directory)
        #expect(missing.status == 1 && missing.stderr == "none.sqlite: no library here. Import something first, or pass --library.\n")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("none.sqlite").path))

        let replaced = try CLI.run(["backup", "taken.sqlite", "--overwrite", "--library", "lib.sqlite"], in: directory)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let copy = directory.appendingPathComponent("taken.sqlite").path
        let photoBytes = try photos.map { try #require(Self.size(directory.appendingPathComponent("lib.sqlite.photos/" + $0).path)) }
            .reduce(0, +)
        #expect(replaced.stderr == "wrote taken.sqlite (12 records, \(Self.size(copy) ?? -1) bytes)\n"
                + "wrote taken.sqlite.photos (1 photo, \(photoBytes) bytes)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy + ".photos").filter { $0.hasSuffix(".jpg") } == photos)
        // The copy is a library that finds its photos: its review queue shows the spine crops.
        let list = try CLI.run(["review", "list", "--json", "--library", "taken.sqlite"], in: directory)
        let items = try CLI.jsonLines(list.stdout)
        #expect(items.count == 3 && items.allSatisfy { $0["photo"] as? Bool == true }, "\(list.stdout)")
        let id = try #require(items.first?["id"] as? String)
        let show = try CLI.run(["review", "show", id, "--crop", "crop.jpg", "--library", "taken.sqlite"], in: directory)
        #expect(show.status == 0 && FileManager.default.fileExists(atPath: directory.appendingPathComponent("crop.jpg").path),
                "\(show.stderr)")
    }

    @Test("enrich, run enrich, run reenrich-library and the review decisions on a path where no library is: exit 1, the path named, no file created",
          arguments: [["enrich"], ["enrich", "--all", "--stale", "30d"], ["run", "enrich"],
                      ["run", "reenrich-library"], ["review", "verify", "--all", "--yes"], ["review", "edit", "a:1", "--title", "T"],
                      ["review", "choose", "a:1", "--none"], ["review"]])
    func missingLibrary(arguments: [String]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(arguments + ["--library", "typo.sqlite"], in: directory, input: "")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr == "typo.sqlite: no library here. Import something first, or pass --library.\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "nothing created")
    }

    /// The folder layouts a read-only library comes in.
    enum ReadOnlyLayout: String, CaseIterable, CustomTestStringConvertible {
        /// `chmod a-w` on the file; the folder can be written (SQLite makes a -wal and -shm there).
        case readOnlyFile
        /// `chmod a-w` on the file and the folder, nothing beside the file (what a closed library is).
        case readOnlyFolder
        /// `chmod a-w` on the file, its empty -wal and its -shm, and the folder.
        case readOnlyFolderWithLog

        var testDescription: String { rawValue }
    }

    @Test("Every command that only reads works on a read-only library, and leaves it as it was", arguments: ReadOnlyLayout.allCases)
    func readOnlyLibrary(layout: ReadOnlyLayout) throws {
        let directory = try ReviewCommandTests.scanFolder()
        defer {
            chmod(directory.appendingPathComponent("lib").path, 0o755)
            try? FileManager.default.removeItem(at: directory)
        }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("lib"), withIntermediateDirectories: true)
        try Self.writeCSV(rows: 30, to: directory.appendingPathComponent("books.csv"))
        let library = ["--library", "lib/lib.sqlite"]
        for arguments in [["import", "books.csv"], ["import-scan", "scan.json"]] {
            let imported = try CLI.run(arguments + ["--no-enrich", "--progress", "none"] + library, in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let libraryPath = directory.appendingPathComponent("lib/lib.sqlite").path
        let queue = try CLI.run(["review", "list", "--json"] + library, in: directory)
        let queued = try CLI.jsonLines(queue.stdout)
        let id = try #require(queued.first?["id"] as? String)
        // A reader that may write the folder (the review list above) leaves an empty -wal and a -shm;
        // a closed library that nothing read since is the file alone.
        #expect(Self.size(libraryPath + "-wal") == 0 && Self.size(libraryPath + "-shm") != nil)
        if layout != .readOnlyFolderWithLog {
            try FileManager.default.removeItem(atPath: libraryPath + "-wal")
            try FileManager.default.removeItem(atPath: libraryPath + "-shm")
        }
        let output = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        chmod(output.path, 0o777)
        for file in [libraryPath, libraryPath + "-wal", libraryPath + "-shm"] { chmod(file, 0o444) }
        chmod(directory.appendingPathComponent("lib").path, layout == .readOnlyFile ? 0o777 : 0o555)
        let before = try Data(contentsOf: URL(fileURLWithPath: libraryPath))

        let commands: [(arguments: [String], expected: String)] = [
            (["stats"], "lib/lib.sqlite: 42 records, 0 rejected rows"),
            (["export", "--format", "jsonl"], "\"id\":\"\(id)\""),
            (["report", "--json", "out/report.json"], "data quality of lib/lib.sqlite"),
            (["search", "book", "17"], "Book 17"),
            (["search", "station", "eleven"], "STATION ELEVEN"),
            (["show", id], id),
            (["rejected", "--csv"], "file,line,row,column,reason,rawText"),
            (["review", "list"], "3 items to review"),
            (["review", "show", id, "--crop", "out/crop.jpg"], "title:"),
            (["review", "sheet", "--output", "out/sheet"], "review sheet: 3 items"),
            (["backup", "out/copy.sqlite"], "wrote out/copy.sqlite (42 records"),
        ]
        for (arguments, expected) in commands {
            let result = try Self.runAsReader(arguments + library, in: directory)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect((result.stdout + result.stderr).contains(expected), "\(arguments): \(result.stdout)")
            #expect(!result.stderr.contains("readonly"), "\(arguments): \(result.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: libraryPath)) == before, "the library is unchanged")
        let folder = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("lib").path).sorted()
        switch layout {
        case .readOnlyFile, .readOnlyFolderWithLog:
            #expect(folder == ["lib.sqlite", "lib.sqlite-shm", "lib.sqlite-wal", "lib.sqlite.photos"])
        case .readOnlyFolder:
            #expect(folder == ["lib.sqlite", "lib.sqlite.photos"])
        }
        // A command that writes says the library cannot be written, and changes nothing.
        let enrich = try Self.runAsReader(["enrich", "--progress", "none"] + library, in: directory)
        #expect(enrich.status == 1, "\(enrich.stderr)")
        #expect(enrich.stderr.hasPrefix("lib/lib.sqlite: cannot open the library: it is read-only here"), "\(enrich.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: libraryPath)) == before)
    }

    @Test("A read-only folder whose -wal still holds changes and has no -shm: a read command says why it cannot read it and what to do")
    func readOnlyFolderWithChangesInTheLog() throws {
        let directory = try CLI.temporaryDirectory()
        defer {
            chmod(directory.appendingPathComponent("lib").path, 0o755)
            try? FileManager.default.removeItem(at: directory)
        }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("lib"), withIntermediateDirectories: true)
        try Self.writeCSV(rows: 100_000, to: directory.appendingPathComponent("books.csv"))
        let libraryPath = directory.appendingPathComponent("lib/lib.sqlite").path
        // Killed right after its first transaction of records (the fourth), whatever the machine's speed.
        var environment = ProcessInfo.processInfo.environment
        environment["BOOKPIPE_TEST_CRASH_AFTER_COMMITS"] = "4"
        let killed = try CLI.run(["import", "books.csv", "--no-enrich", "--progress", "none", "--library", "lib/lib.sqlite"],
                                 in: directory, environment: environment)
        #expect(killed.wasSignaled && killed.status == SIGKILL, "\(killed.stderr)")
        try #require((Self.size(libraryPath + "-wal") ?? 0) > 0, "the killed import left changes in the -wal")
        try FileManager.default.removeItem(atPath: libraryPath + "-shm")
        chmod(libraryPath, 0o444)
        chmod(libraryPath + "-wal", 0o444)
        chmod(directory.appendingPathComponent("lib").path, 0o555)
        let stats = try Self.runAsReader(["stats", "--library", "lib/lib.sqlite"], in: directory)
        #expect(stats.status == 1)
        #expect(stats.stderr.hasPrefix("lib/lib.sqlite: cannot open the library: its latest changes are still in lib/lib.sqlite-wal, "
                                       + "which SQLite reads only with a lib/lib.sqlite-shm file beside it, and this folder is read-only."),
                "\(stats.stderr)")
    }

    /// Runs the binary as a user who cannot write what `chmod a-w` protects: `nobody` when the
    /// tests run as root, else the tests' own user.
    static func runAsReader(_ arguments: [String], in directory: URL) throws -> CLI.Result {
        guard getuid() == 0 else { return try CLI.run(arguments, in: directory) }
        let nobody = try #require(getpwnam("nobody")?.pointee)
        return try CLI.run(["--reuid=\(nobody.pw_uid)", "--regid=\(nobody.pw_gid)", "--clear-groups", "--", CLI.binary.path] + arguments,
                           in: directory, executable: URL(fileURLWithPath: "/usr/bin/setpriv"))
    }
}
