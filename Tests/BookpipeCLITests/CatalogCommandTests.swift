import Foundation
import Testing

@Suite(.serialized) struct CatalogCommandTests {
    static let sample = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path

    @Test("catalog import stores the sample dump and prints its summary; a second run changes nothing",
          .timeLimit(.minutes(5)))
    func importSample() throws {
        let directory = try CLI.temporaryDirectory()
        let first = try CLI.run(["catalog", "import", Self.sample, "--progress", "none"], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("\(Self.sample): 299 lines"))
        #expect(first.stdout.contains("121 editions, 103 works, 75 authors"))
        #expect(first.stdout.contains("299 records stored or replaced, 0 unchanged, 0 lines skipped"))
        #expect(first.stdout.contains("catalogue catalog.sqlite: 121 editions, 103 works, 75 authors, 104 ISBN-13s"))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("catalog.sqlite").path),
                "the default catalogue is ./catalog.sqlite")

        let second = try CLI.run(["catalog", "import", Self.sample, "--progress", "none"], in: directory)
        #expect(second.status == 0)
        #expect(second.stdout.contains("0 records stored or replaced, 299 unchanged, 0 lines skipped; 0 works/editions re-indexed"))

        let stats = try CLI.run(["catalog", "stats"], in: directory)
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("editions        121"))
        #expect(stats.stdout.contains("ISBN-13s        104"))
        #expect(stats.stdout.contains("imports         2"))
        let json = try CLI.run(["catalog", "stats", "--json"], in: directory)
        #expect(json.stdout.split(separator: "\n").count == 1, "one object, one line: \(json.stdout)")
        let counts = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(counts["works"] as? Int == 103)
    }

    @Test("catalog search answers ISBN lookups and title/author searches", .timeLimit(.minutes(5)))
    func search() throws {
        let directory = try CLI.temporaryDirectory()
        _ = try CLI.run(["catalog", "import", Self.sample, "--progress", "none"], in: directory)
        let result = try CLI.run(["catalog", "search", "--isbn", "0441013597", "--isbn", "9780441104024",
                                  "--title", "Harry Potter and the Sorcerer's Stone", "--author", "Rowling, J.K."], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            ISBN 0441013597: 1 found
              /works/OL900004W /books/OL900008M  Dune — Frank Herbert (1965)
            ISBN 9780441104024: not found
            "Harry Potter and the Sorcerer's Stone" by Rowling, J.K.: 1 found
              /works/OL900005W /books/OL900011M  Harry Potter and the Sorcerer's Stone — J. K. Rowling (1997)

            """)
        #expect(result.stderr.contains("2 queries"))
        let usage = try CLI.run(["catalog", "search", "--author", "Frank Herbert"], in: directory)
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("--author ranks title matches: pass --title too."))
    }

    @Test("--catalog and BOOKPIPE_CATALOG choose the file", .timeLimit(.minutes(5)))
    func catalogPath() throws {
        let directory = try CLI.temporaryDirectory()
        let chosen = directory.appendingPathComponent("books/openlibrary.sqlite").path
        try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("books").path,
                                                withIntermediateDirectories: true)
        let result = try CLI.run(["catalog", "import", Self.sample, "--catalog", chosen, "--progress", "none"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: chosen))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("catalog.sqlite").path))

        let stats = try runWithEnvironment(["catalog", "stats"], in: directory, environment: ["BOOKPIPE_CATALOG": chosen])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("catalogue \(chosen)"))
    }

    @Test("Malformed lines are listed with file:line and the import still succeeds", .timeLimit(.minutes(5)))
    func malformedLines() throws {
        let directory = try CLI.temporaryDirectory()
        var lines = try String(contentsOfFile: Self.sample, encoding: .utf8).split(separator: "\n").map(String.init)
        lines.insert("/type/work\t/works/OL1W\t1", at: 4)
        let dump = directory.appendingPathComponent("dump.txt")
        try (lines.joined(separator: "\n") + "\n").write(to: dump, atomically: true, encoding: .utf8)
        let result = try CLI.run(["catalog", "import", dump.path, "--progress", "none"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 lines skipped"))
        #expect(result.stdout.contains(
            "\(dump.path):5: expected 5 tab-separated fields (type, key, revision, last_modified, JSON), found 3; line skipped"))
    }

    @Test("Missing files and files that are not dumps fail with exit 1 and a message naming the file",
          .timeLimit(.minutes(5)))
    func failures() throws {
        let directory = try CLI.temporaryDirectory()
        let missing = directory.appendingPathComponent("nope.txt.gz").path
        let result = try CLI.run(["catalog", "import", missing], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: \(missing): no such file. Pass an Open Library dump (.txt or .txt.gz)."))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("catalog.sqlite").path),
                "nothing is created when a file is missing")

        let csv = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        let notDump = try CLI.run(["catalog", "import", csv, Self.sample, "--progress", "none"], in: directory)
        #expect(notDump.status == 1)
        #expect(notDump.stderr.contains("error: \(csv): not an Open Library dump: line 1: expected 5 tab-separated fields"))
        #expect(notDump.stdout.contains("\(Self.sample): 299 lines"), "the other files still import")

        let noCatalogue = try CLI.run(["catalog", "stats", "--catalog", directory.appendingPathComponent("x.sqlite").path],
                                      in: directory)
        #expect(noCatalogue.status == 1)
        #expect(noCatalogue.stderr.contains("no catalogue here"))

        let usage = try CLI.run(["catalog", "import"], in: directory)
        #expect(usage.status == 2)
        let unknown = try CLI.run(["catalog", "import", Self.sample, "--bogus"], in: directory)
        #expect(unknown.status == 2)
    }

    /// Runs the binary like ``CLI/run(_:in:)`` with extra environment variables.
    func runWithEnvironment(_ arguments: [String], in directory: URL, environment: [String: String]) throws -> CLI.Result {
        try CLI.run(arguments, in: directory,
                    environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new })
    }
}
