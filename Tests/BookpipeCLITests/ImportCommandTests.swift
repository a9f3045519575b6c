import BookpipeCore
import BookpipeStore
import Foundation
import Testing

@Suite(.serialized) struct ImportCommandTests {
    #if os(Linux)
    @Test("The tool allocates with jemalloc: every malloc of the process binds to libjemalloc (docs/decisions/0006)")
    func allocatorIsJemalloc() throws {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["--version"]
        process.environment = ProcessInfo.processInfo.environment.merging(["LD_DEBUG": "bindings"]) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let mallocBindings = text.split(separator: "\n").filter { $0.contains("normal symbol `malloc'") }
        #expect(mallocBindings.count > 1)
        #expect(mallocBindings.allSatisfy { $0.contains("libjemalloc.so") }, "\(mallocBindings.prefix(3))")
    }
    #endif

    @Test("Importing the samples stores every row, says which format it found, and a second run changes nothing",
          .timeLimit(.minutes(5)))
    func importSamples() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let sample = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        let first = try CLI.run(["import", sample, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        #expect(first.status == 0)
        #expect(first.stderr.contains("detected Goodreads library export (31-column header)"))
        #expect(first.stderr.contains("59 rows read, 59 imported, 0 rejected"))
        let second = try CLI.run(["import", sample, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        #expect(second.status == 0)
        #expect(second.stderr.contains("already imported (59 rows); nothing changed."), "\(second.stderr)")
        // A copy under another name is named as the earlier file of the same content.
        let copy = directory.appendingPathComponent("copy.csv").path
        try FileManager.default.copyItem(atPath: sample, toPath: copy)
        let third = try CLI.run(["import", copy, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        #expect(third.stderr.contains("already imported (59 rows, same content as \(sample)); nothing changed."),
                "\(third.stderr)")
        let counts = try LibraryStore(path: library).counts()
        #expect(counts.records == 59)
        #expect(counts.duplicateIDs == 0)
    }

    @Test("The JSON export follows the export contract", .timeLimit(.minutes(5)))
    func exportContract() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let sample = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        _ = try CLI.run(["import", sample, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        let output = directory.appendingPathComponent("out.json").path
        let export = try CLI.run(["export", "--format", "json", "--output", output, "--library", library], in: directory)
        #expect(export.status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        let objects = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(objects.count == 59)
        #expect(export.stderr == "wrote \(output) (59 entries)\n", "the file written is named, with its count")
        #expect(export.stdout.isEmpty)
        for key in ["id", "source", "title", "normalizedTitle", "authors", "isbn13", "status", "match", "reviewStatus"] {
            #expect(objects.allSatisfy { $0[key] != nil }, "every object has \(key)")
        }
        let first = try #require(objects.first)
        let source = try #require(first["source"] as? [String: Any])
        #expect(source["row"] as? Int == 1)
        #expect(source["line"] as? Int == 2)
        #expect(first["status"] as? String == "pending")
        #expect(first["reviewStatus"] is NSNull, "a CSV row nobody routed")
    }

    @Test("JSON exports escape what JSON must escape and nothing else, exactly as JSONSerialization does",
          .timeLimit(.minutes(5)))
    func jsonEscaping() throws {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("odd.csv")
        // Quotes, backslashes, slashes, every control character that survives import, DEL, a line
        // separator, emoji and right-to-left text; series and an invalid ISBN (findings).
        var rows = ["title,author,isbn,year"]
        rows.append("\"He said \"\"no\"\" \\ / back (Saga, #2)\",A/B \\ C,0441013590,2001")
        rows.append("\"tab\there\u{8}bell\u{C}form\u{1}one\u{1F}unit\u{7F}del\u{2028}sep\",\"Ünïcödé 📚\",,")
        rows.append("\"שלום עולם (ספר, #1)\",\"אבי\",9780441013593,-500")
        rows.append("\"multi\nline \r\n title\",x,,")
        try (rows.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        let result = try CLI.run(["import", input.path, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let export = try CLI.run(["export", "--format", "jsonl", "--library", library], in: directory)
        #expect(export.status == 0)
        #expect(export.stdout.split(separator: "\n").count == 4)
        #expect(try CLI.nonCanonicalJSONLines(export.stdout) == [])
        #expect(export.stdout.contains(#""title":"He said \"no\" \\ / back (Saga, #2)""#))
        #expect(export.stdout.contains(#"tab\there\bbell\fform\u0001one\u001funit"#))
        #expect(export.stdout.contains(#""seriesNumber":"2""#))
        #expect(export.stdout.contains(#""code":"isbn.invalid-checksum""#))
    }

    @Test("CSV exports neutralise cells that a spreadsheet would run as formulas", .timeLimit(.minutes(5)))
    func csvNeutralised() throws {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("formulas.csv")
        try "title,author\n\"=HYPERLINK(\"\"http://x\"\")\",@evil\n+plus,-minus\n".write(to: input, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        let result = try CLI.run(["import", input.path, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let export = try CLI.run(["export", "--format", "csv", "--library", library], in: directory)
        #expect(export.stdout.contains("\"'=HYPERLINK(\"\"http://x\"\")\""))
        #expect(export.stdout.contains(",'@evil,"))
        #expect(export.stdout.contains(",'+plus,"))
        // The library keeps them verbatim.
        let json = try CLI.run(["export", "--format", "jsonl", "--library", library], in: directory)
        #expect(json.stdout.contains("\"title\":\"=HYPERLINK(\\\"http://x\\\")\""))
    }

    @Test("The wingtip export writes the app's layout: one row per book, dated file name, dates as yyyy-MM-dd, no date made up",
          .timeLimit(.minutes(5)))
    func wingtipExport() throws {
        let directory = try CLI.temporaryDirectory()
        let first = directory.appendingPathComponent("a.csv")
        try """
            Title,Author,ISBN13,Binding,Date Added
            Dune,"Herbert, Frank",9780441013593,Paperback,2021/3/5
            =SUM(1),Someone,,Hardcover,not a date
            Untitled Notes,"Doe, Jane",,,

            """.write(to: first, atomically: true, encoding: .utf8)
        let second = directory.appendingPathComponent("b.csv")
        try """
            Title,Author,ISBN,Format,Date Added
            Dune (Dune #1),Frank Herbert,978-0-441-01359-3,hardcover,2022-01-02
            Untitled Notes,Jane Doe,,,2020-01-01
            Another Book,Jane Doe,,ebook,2020-01-01T10:00:00Z

            """.write(to: second, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        let imported = try CLI.run(["import", first.path, second.path, "--no-enrich", "--library", library, "--progress", "none"],
                                   in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let export = try CLI.run(["export", "--format", "wingtip", "--library", library], in: directory)
        #expect(export.status == 0, "\(export.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("wingtip_library_") }
        #expect(names.count == 1)
        let name = try #require(names.first)
        #expect(name.range(of: #"^wingtip_library_\d{4}-\d{2}-\d{2}\.csv$"#, options: .regularExpression) != nil)
        #expect(export.stderr == "wrote \(name) (4 books)\n"
                + "\(name): 2 of 4 books have no date added in the imported files; their Added Date is left empty.\n")
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        #expect(text.components(separatedBy: "\r\n") == [
            "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence",
            "9780441013593,Dune,Frank Herbert,Paperback,2021-03-05,,",
            ",'=SUM(1),Someone,Hardcover,,,",
            ",Untitled Notes,Jane Doe,,,,",
            ",Another Book,Jane Doe,ebook,2020-01-01,,",
            "",
        ])
        // A second export the same day does not replace the first (it may be edited, or not yet in
        // the app) unless the person names the file.
        let exported = try Data(contentsOf: directory.appendingPathComponent(name))
        try (text + "edited by hand\r\n").write(to: directory.appendingPathComponent(name), atomically: false, encoding: .utf8)
        let again = try CLI.run(["export", "--format", "wingtip", "--library", library], in: directory)
        #expect(again.status == 1)
        #expect(again.stderr.hasPrefix("\(name): exists already (an earlier export today?) and is left as it is. "
                                      + "To replace it, name it: --output \(name)"), "\(again.stderr)")
        #expect(try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8).hasSuffix("edited by hand\r\n"))
        let replaced = try CLI.run(["export", "--format", "wingtip", "--output", name, "--library", library], in: directory)
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try Data(contentsOf: directory.appendingPathComponent(name)) == exported)
        // --output naming a folder takes the app's file name there.
        let folder = directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(try CLI.run(["export", "--format", "wingtip", "--output", folder.path, "--library", library], in: directory).status == 0)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path))
    }

    @Test("An Open Library reading log's four books are four wingtip rows, with no date made up", .timeLimit(.minutes(5)))
    func readingLogWingtip() throws {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("reading-log.csv")
        try """
            Work Id,Edition Id,Bookshelf
            OL102749W,,Currently Reading
            OL361393W,OL7798182M,Currently Reading
            OL1652392W,OL7194114M,Want to Read
            OL17062644W,OL25726365M,Already Read

            """.write(to: input, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        let imported = try CLI.run(["import", input.path, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let output = directory.appendingPathComponent("app.csv").path
        let export = try CLI.run(["export", "--format", "wingtip", "--output", output, "--library", library], in: directory)
        #expect(export.status == 0)
        #expect(export.stderr == "wrote \(output) (4 books)\n"
                + "\(output): 4 of 4 books have no date added in the imported files; their Added Date is left empty.\n")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence\r\n"
            + String(repeating: ",,,,,,\r\n", count: 4))
    }

    @Test("Importing a file again with another --map reads it again and replaces its records, exactly once each",
          .timeLimit(.minutes(5)))
    func remappedFile() throws {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("books.csv")
        try "Spalte A;Spalte B;Nummer\nDune;Frank Herbert;9780441013593\nEmma;Jane Austen;\n"
            .write(to: input, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        func run(_ map: String) throws -> CLI.Result {
            try CLI.run(["import", input.path, "--map", map, "--no-enrich", "--library", library, "--progress", "none"],
                        in: directory)
        }
        func titles() throws -> [String] {
            var titles: [String] = []
            try LibraryStore(path: library).forEachRecord { titles.append($0.title + " / " + $0.authors.joined()) }
            return titles
        }
        // Wrong way round first.
        let first = try run("title=Spalte B,author=Spalte A,isbn=Nummer")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try titles() == ["Frank Herbert / Dune", "Jane Austen / Emma"])
        let fixed = try run("title=Spalte A,author=Spalte B,isbn=Nummer")
        #expect(fixed.status == 0, "\(fixed.stderr)")
        #expect(fixed.stderr.contains("imported before with other columns; reading all its rows again"))
        #expect(fixed.stderr.contains("2 rows read, 2 stored again with the new columns"))
        #expect(try titles() == ["Dune / Frank Herbert", "Emma / Jane Austen"])
        let counts = try LibraryStore(path: library).counts()
        #expect(counts.records == 2)
        #expect(counts.duplicateIDs == 0)
        // The same columns again: nothing to do.
        let again = try run("title=Spalte A,author=Spalte B,isbn=Nummer")
        #expect(again.stderr.contains("already imported"))
        #expect(try titles() == ["Dune / Frank Herbert", "Emma / Jane Austen"])
    }

    @Test("An unknown format explains --map, and exits 1 with nothing lost", .timeLimit(.minutes(5)))
    func unknownHeaders() throws {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("semi.csv")
        try "Spalte1;Spalte2\nFoo;Bar\n".write(to: input, atomically: true, encoding: .utf8)
        let result = try CLI.run(["import", input.path, "--no-enrich", "--library", directory.appendingPathComponent("l.sqlite").path,
                                  "--progress", "none"], in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("--map"))
        let mapped = try CLI.run(["import", input.path, "--no-enrich", "--map", "title=Spalte1,author=Spalte2", "--library",
                                  directory.appendingPathComponent("l.sqlite").path, "--progress", "none"], in: directory)
        #expect(mapped.status == 0, "\(mapped.stderr)")
        #expect(mapped.stderr.contains("1 rows read, 1 imported"))
    }

    @Test("The summary tells repairs (text changed to be read) from notes (what the file did not say, or was left empty)",
          .timeLimit(.minutes(5)))
    func repairsAndNotes() throws {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("plain.csv")
        // Latin-1 bytes (a repair); no author column and dates of either order (notes).
        var bytes = Data("Title,ISBN,Date Added\nCaf".utf8)
        bytes.append(0xE9)
        bytes.append(contentsOf: Data(",9780441013593,03/04/2021\nEmma,,05/06/2021\n".utf8))
        try bytes.write(to: input)
        let result = try CLI.run(["import", input.path, "--no-enrich", "--library", directory.appendingPathComponent("l.sqlite").path,
                                  "--progress", "none"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("  repaired: ") } == [
            "  repaired: 1 field had bytes that are not valid UTF-8; they were read as Latin-1 (Windows-1252), first at line 2",
        ])
        #expect(lines.filter { $0.hasPrefix("  note: ") }.map { String($0.prefix(60)) } == [
            "  note: no column of the header could be read as the author,",
            "  note: no date in the file tells whether dates such as 4/1/",
        ], "\(result.stderr)")
    }

    @Test("Killed with SIGKILL mid-import, a rerun stores every row exactly once", .timeLimit(.minutes(5)))
    func resumeAfterKill() throws {
        let (stopped, library, rerun) = try Self.importStoppedAndResumed(rows: 60_000, by: "BOOKPIPE_TEST_CRASH_AFTER_COMMITS")
        #expect(stopped.wasSignaled && stopped.status == SIGKILL, "the run ended before its fifth transaction")
        #expect(rerun.status == 0, "\(rerun.stderr)")
        var seen = Set<Int>()
        try LibraryStore(path: library).forEachRecord { seen.insert($0.origin.row) }
        #expect(seen == Set(1...60_000))
    }

    @Test("Ctrl-C stops with exit 130 and says how to resume; the rerun finishes", .timeLimit(.minutes(5)))
    func interruptAndResume() throws {
        let (stopped, _, rerun) = try Self.importStoppedAndResumed(rows: 60_000, by: "BOOKPIPE_TEST_INTERRUPT_AFTER_COMMITS")
        #expect(stopped.status == 130 && !stopped.wasSignaled, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("run the same command again to resume where it stopped"), "\(stopped.stderr)")
        #expect(rerun.status == 0, "\(rerun.stderr)")
    }

    /// Imports a generated export of `rows` rows, stopped by the signal that `variable` (a fault
    /// injection of the library's writer) sends right after the fifth committed transaction —
    /// three register the run and the file, then two of 8,192 to 16,384 records each — so
    /// wherever the machine's speed; then the same command again. Checks that the stopped run
    /// left some rows and not all, and that after the rerun every row is stored once.
    static func importStoppedAndResumed(rows: Int, by variable: String) throws
        -> (stopped: CLI.Result, library: String, rerun: CLI.Result) {
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("big.csv")
        try CLI.writeGoodreadsExport(rows: rows, to: input)
        let library = directory.appendingPathComponent("library.sqlite").path
        let arguments = ["import", input.path, "--no-enrich", "--library", library, "--progress", "none"]
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = "5"
        let stopped = try CLI.run(arguments, in: directory, environment: environment)
        let partial = try LibraryStore(path: library).counts().records
        #expect(partial > 0 && partial < rows, "stopped after some rows, before the end: \(partial)")
        let rerun = try CLI.run(arguments, in: directory)
        let counts = try LibraryStore(path: library).counts()
        #expect(counts.records == rows)
        #expect(counts.duplicateIDs == 0)
        return (stopped, library, rerun)
    }

    @Test("A misspelt stage in a pipeline file is reported at file:line:column with a suggestion", .timeLimit(.minutes(5)))
    func pipelineValidation() throws {
        let directory = try CLI.temporaryDirectory()
        let file = directory.appendingPathComponent("p.yaml")
        try "name: p\nsource:\n  stage: read-csv\n  with:\n    files: $inputs\nsteps:\n  - stage: normalise-records\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let result = try CLI.run(["pipelines", "validate", file.path], in: directory)
        #expect(result.status == 2)
        #expect(result.stderr.contains("p.yaml:7:12: error: unknown stage 'normalise-records'\n  did you mean 'normalize-records'?"))
    }
}
