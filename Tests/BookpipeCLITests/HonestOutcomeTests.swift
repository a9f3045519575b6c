import BookpipeStore
import BookpipeTesting
import Foundation
import Testing

/// What a run says and how it exits when things go wrong: each file-level error once, no empty
/// library left by a failed first import, advice that fits a damaged library or a missing folder,
/// a non-zero exit when every lookup failed, and what an interrupted `enrich` did.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HonestOutcomeTests {
    static let storygraph = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path

    @Test("A file that cannot be read is reported once; a first import that stored nothing leaves no library file")
    func failedFirstImport() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["import", "missing.csv", "--no-enrich", "--library", "new.sqlite", "--progress", "none"],
                                 in: directory)
        #expect(result.status == 1)
        #expect(result.stderr == """
            error: missing.csv: cannot open the file (No such file or directory). Check the path and that you may read the file.
            missing.csv: not imported (see the error above)
            new.sqlite: nothing was stored, so no library was created.

            """)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    @Test("A failed file beside a good one keeps the library with the good one's rows and exits 1")
    func failedFileBesideGoodOne() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["import", "missing.csv", Self.storygraph, "--no-enrich", "--library", "lib.sqlite",
                                  "--progress", "none"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.components(separatedBy: "missing.csv: cannot open the file").count == 2, "printed once")
        #expect(result.stderr.hasSuffix("library lib.sqlite: 11 records (11 pending), 0 rejected rows\n"), "\(result.stderr)")
        #expect(try LibraryStore(path: directory.appendingPathComponent("lib.sqlite").path).counts().records == 11)
    }

    @Test("A library in a missing folder names the folder, and nothing is created")
    func missingFolder() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["import", Self.storygraph, "--no-enrich", "--library", "no/such/lib.sqlite",
                                  "--progress", "none"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr == "no/such/lib.sqlite: cannot create the library: the folder no/such does not exist. "
                + "Create it (mkdir -p no/such), or pass another --library.\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    @Test("A file that is not a database gets advice to restore or rebuild the library, and is left unchanged")
    func notADatabase() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = directory.appendingPathComponent("lib.sqlite")
        let garbage = String(repeating: "not a database at all\n", count: 300)
        try garbage.write(to: library, atomically: true, encoding: .utf8)
        let result = try CLI.run(["import", Self.storygraph, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                                 in: directory)
        #expect(result.status == 1)
        #expect(result.stderr == "lib.sqlite: the library is damaged or is not a bookpipe library (file is not a database). "
                + "Restore it from a copy (a backup, or the file from before it broke), or move it aside and import your "
                + "exports again into a new library.\n")
        #expect(try String(contentsOf: library, encoding: .utf8) == garbage)
    }

    @Test("A library whose pages are damaged (\"malformed\") gets the same advice when exported or imported into")
    func malformedLibrary() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        #expect(try CLI.run(["import", goodreads, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                            in: directory).status == 0)
        // The rows may still be in the write-ahead log: move them into the file first (SQLite's own
        // checkpoint, through Python's sqlite3), so the pages to damage are there.
        let checkpoint = Process()
        checkpoint.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        checkpoint.arguments = ["python3", "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                                + "c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()",
                                directory.appendingPathComponent("lib.sqlite").path]
        try checkpoint.run()
        checkpoint.waitUntilExit()
        #expect(checkpoint.terminationStatus == 0)
        // Everything after the first two pages (header, schema) overwritten.
        let handle = try FileHandle(forUpdating: directory.appendingPathComponent("lib.sqlite"))
        let size = try handle.seekToEnd()
        try #require(size > 2 * 16384, "the library holds more than its first two pages")
        try handle.seek(toOffset: 2 * 16384)
        handle.write(Data(repeating: 0xFF, count: Int(size) - 2 * 16384))
        try handle.close()
        let advice = "Restore it from a copy (a backup, or the file from before it broke), or move it aside and import "
            + "your exports again into a new library."
        let export = try CLI.run(["export", "--library", "lib.sqlite"], in: directory)
        #expect(export.status == 1)
        // Whether the damage shows when the library is opened (its schema reaches past the pages
        // kept) or when its records are read, the message names the library, the damage and the advice.
        #expect(export.stderr.contains("lib.sqlite: the library is damaged") && export.stderr.contains("(database disk image is malformed)")
                && export.stderr.hasSuffix("\(advice)\n"), "\(export.stderr)")
        let more = try CLI.run(["import", Self.storygraph, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                               in: directory)
        #expect(more.status == 1)
        #expect(more.stderr.contains("the library is damaged") && more.stderr.contains("(database disk image is malformed)")
                && more.stderr.hasSuffix("\(advice)\n"), "\(more.stderr)")
    }

    @Test("An interrupted enrich says how many rows it enriched, not how many the library holds", .timeLimit(.minutes(5)))
    func interruptedEnrich() async throws {
        let books = FakeBook.generated(count: 200, seed: 5)
        let services = FakeBookServices(books: books, configuration: .init(latency: .milliseconds(20)))
        try services.start()
        defer { services.stop() }
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("export.csv")
        try EnrichCommandTests.writeExport(books, to: input, isbnOnEveryRow: false)
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try CLI.run(["import", input.path, "--no-enrich", "--library", library, "--progress", "none"],
                            in: directory).status == 0)
        let pipeline = directory.appendingPathComponent("slow.yaml")
        try """
            name: slow-enrich
            source:
              stage: library-records
              with:
                batchSize: 10
            steps:
              - stage: enrich-records
                with:
                  sources: [openlibrary]
                  openlibraryRate: 20
              - stage: save-enrichment
                on-failure: stop

            """.write(to: pipeline, atomically: true, encoding: .utf8)
        let (process, _, err) = try CLI.start(["enrich", "--pipeline", pipeline.path, "--openlibrary-url", services.baseURL,
                                               "--library", library, "--progress", "none"], in: directory)
        for _ in 0..<1000 {
            usleep(10_000)
            if ((try? LibraryStore(path: library).counts().byStatus[.enriched]) ?? 0) > 0 { break }
        }
        kill(process.processIdentifier, SIGINT)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130, "\(stderr)")
        let last = try #require(stderr.split(separator: "\n").last.map(String.init))
        let match = try #require(last.wholeMatch(of: /Interrupted\. (\d+) rows? (?:was|were) enriched in this run; run the same command again to resume where it stopped\./),
                                 "\(last)")
        let enriched = try #require(Int(match.1))
        #expect(enriched > 0 && enriched < books.count, "rows enriched in this run, not the \(books.count) stored")
    }
}

/// A network that cannot be reached stops being asked (issue 23).
@Suite(.serialized, .timeLimit(.minutes(5))) struct UnreachableSourcesTests {

    @Test("With no source reachable, an 11-row import stops asking each after 3 lookups in a row, names the hosts, says what to check, and exits 1; the rows stay failed (retryable)")
    func importWithNoNetwork() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let closedOpenLibrary = try ClosedPort(), closedGoogle = try ClosedPort()
        defer {
            closedOpenLibrary.close()
            closedGoogle.close()
        }
        let openLibrary = "127.0.0.1:\(closedOpenLibrary.port)", googleBooks = "127.0.0.1:\(closedGoogle.port)"
        let result = try CLI.run(["import", HonestOutcomeTests.storygraph, "--library", "library.sqlite", "--progress", "none",
                                  "--openlibrary-url", "http://\(openLibrary)", "--googlebooks-url", "http://\(googleBooks)"],
                                 in: directory)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("""
              openlibrary: \(openLibrary) could not be reached (connection refused) for 3 lookups in a row, so it was not asked \
            again; its lookups are failed (retryable), the other sources went on
              googlebooks: \(googleBooks) could not be reached (connection refused) for 3 lookups in a row, so it was not asked \
            again; its lookups are failed (retryable), the other sources went on
            """), "\(result.stderr)")
        #expect(result.stderr.hasSuffix("""
            error: no source could be reached: openlibrary at \(openLibrary) (connection refused), googlebooks at \(googleBooks) \
            (connection refused). Check the network connection (a proxy, a firewall, DNS) and the sources' base URLs \
            (--openlibrary-url, --googlebooks-url), then run the same command again; bookpipe enrich --failed retries the rows \
            whose lookups failed.

            """), "\(result.stderr)")
        let store = try LibraryStore(path: directory.appendingPathComponent("library.sqlite").path)
        let counts = try store.counts()
        #expect(counts.records == 11)
        #expect(counts.byStatus[.notFound] == nil, "a lookup that could not be made is never not found")
        #expect((counts.byStatus[.failed] ?? 0) + (counts.byStatus[.pending] ?? 0) == 11)
    }

    @Test("With a catalogue configured but left out of the chain, the same stop suggests --offline")
    func suggestsOffline() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        #expect(try CLI.run(["catalog", "import", EnrichCommandTests.catalogDump, "--catalog", catalog], in: directory).status == 0)
        let closed = try ClosedPort()
        defer { closed.close() }
        let openLibrary = "127.0.0.1:\(closed.port)"
        let result = try CLI.run(["import", HonestOutcomeTests.storygraph, "--library", "library.sqlite", "--progress", "none",
                                  "--catalog", catalog, "--sources", "openlibrary", "--openlibrary-url", "http://\(openLibrary)"],
                                 in: directory)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasSuffix("""
            bookpipe enrich --failed retries the rows whose lookups failed. A local catalogue is configured (\(catalog)): add \
            --offline to look rows up in it alone, with no network.

            """), "\(result.stderr)")
    }
}
