import BookpipeStore
import BookpipeTesting
import Foundation
import Testing

/// Stage contracts, checked by `bookpipe pipelines validate` and `run` as the built binary: over the
/// built-in pipeline files and the corpus in `Tests/pipeline-corpus`, a file validates exactly when
/// it runs, and each broken file is refused with its `file:line:column` error before anything is
/// opened or written.
@Suite struct PipelineContractTests {
    static let corpus = CLI.repositoryRoot.appendingPathComponent("Tests/pipeline-corpus")
    static let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
    static let scanResult = CLI.repositoryRoot.appendingPathComponent("samples/scan-photos/shelf1.json").path
    static let shelfPhoto = CLI.repositoryRoot.appendingPathComponent("samples/scan-photos/shelf1.jpg").path

    /// The corpus files of a folder (`good`, `broken`), as paths.
    static func corpusFiles(_ folder: String) -> [String] {
        let url = corpus.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { url.appendingPathComponent($0).path }
    }

    /// A broken file's expected error: its first line, `# expect: LINE:COLUMN: MESSAGE`.
    static func expectedError(of path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let first = text.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("# expect: "), "\(path) starts with its expected error")
        return "\(path):" + first.dropFirst("# expect: ".count)
    }

    @Test("The corpus holds each mistake the contracts catch, and good files")
    func corpusIsComplete() {
        let broken = Self.corpusFiles("broken").map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(broken.count >= 6, "\(broken)")
        for name in ["report-html-only.yaml", "enrich-without-store.yaml", "stores-nothing.yaml", "missing-files.yaml",
                     "unknown-parameter.yaml"] {
            #expect(broken.contains(name))
        }
        #expect(Self.corpusFiles("good").count >= 2)
    }

    @Test("Each broken file fails validation, run --plan and run with its file:line:column error; run creates no library",
          .timeLimit(.minutes(5)), arguments: corpusFiles("broken"))
    func brokenFileIsRefused(path: String) throws {
        let expected = try Self.expectedError(of: path)
        let directory = try CLI.temporaryDirectory()
        let validated = try CLI.run(["pipelines", "validate", path], in: directory)
        #expect(validated.status == 2)
        #expect(validated.stderr.hasPrefix(expected + "\n"), "\(validated.stderr)")
        let plan = try CLI.run(["run", "--plan", path, Self.goodreads], in: directory)
        #expect(plan.status == 2)
        #expect(plan.stderr.hasPrefix(expected + "\n"), "\(plan.stderr)")
        let run = try CLI.run(["run", path, Self.goodreads, "--library", "l.sqlite", "--progress", "none"], in: directory)
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix(expected + "\n"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("l.sqlite").path))
    }

    @Test("Validates ⇔ runs: the built-in files and the corpus, run against a fresh library, fake book services and a fake scan backend",
          .timeLimit(.minutes(6)))
    func validatesExactlyWhenItRuns() throws {
        let services = FakeBookServices(books: [])
        try services.start()
        defer { services.stop() }
        let backend = FakeScanBackend(options: .init(jobDuration: .milliseconds(100)))
        let backendURL = try backend.start()
        defer { backend.stop() }
        let directory = try CLI.temporaryDirectory()
        let photo = directory.appendingPathComponent("shelf1.jpg").path
        try FileManager.default.copyItem(atPath: Self.shelfPhoto, toPath: photo)
        let enrichment = ["--sources", "openlibrary", "--openlibrary-url", services.baseURL, "--openlibrary-rate", "1000"]
        // csv-import first: the library pipelines after it read what it stored.
        let builtins = ["csv-import", "enrich", "reenrich-library", "scan-import", "scan-photos"]
            .map { CLI.repositoryRoot.appendingPathComponent("pipelines/\($0).yaml").path }
        let files = builtins + Self.corpusFiles("good") + Self.corpusFiles("broken")
        for path in files {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let inputs: [String]
            switch name {
            case "enrich", "reenrich-library": inputs = []
            case "scan-import", "scan-jobs-before-store": inputs = [Self.scanResult]
            case "scan-photos": inputs = [photo, "--backend", backendURL]
            default: inputs = [Self.goodreads]
            }
            let validated = try CLI.run(["pipelines", "validate", path], in: directory)
            let run = try CLI.run(["run", path] + inputs + enrichment + ["--library", "library.sqlite", "--progress", "none"],
                                  in: directory)
            #expect((validated.status == 0) == (run.status == 0),
                    "\(name): validate \(validated.status), run \(run.status)\n\(validated.stderr)\n\(run.stderr)")
            #expect(validated.status == 0 || run.status == 2, "\(name): a refused file is a usage error\n\(run.stderr)")
        }
        #expect(try LibraryStore(path: directory.appendingPathComponent("library.sqlite").path).counts().records > 59,
                "the good files stored rows")
    }

    @Test("read-csv reads as `import` does: a file saying format, map, delimiter, key and list stores the same library as the flags",
          .timeLimit(.minutes(5)))
    func readingOptionsInAFileMatchTheFlags() throws {
        let directory = try CLI.temporaryDirectory()
        // A German semicolon export with its own id column: nothing to detect it by.
        let rows = "Nr;Titel;Autor;Jahr\n7;Der Process;Franz Kafka;1925\n8;Effi Briest;Theodor Fontane;1895\n"
        try rows.write(to: directory.appendingPathComponent("liste.csv"), atomically: true, encoding: .utf8)
        let pipeline = """
            name: german-list
            source:
              stage: read-csv
              with:
                files: $inputs
                format: generic
                map: [title=Titel, author=Autor, year=Jahr]
                delimiter: ";"
                key: Nr
                list: bücher
            steps:
              - stage: normalize-records
              - stage: store-records
            """
        try pipeline.write(to: directory.appendingPathComponent("german.yaml"), atomically: true, encoding: .utf8)
        let byFile = try CLI.run(["run", "german.yaml", "liste.csv", "--library", "file.sqlite", "--progress", "none"], in: directory)
        #expect(byFile.status == 0, "\(byFile.stderr)")
        let byFlags = try CLI.run(["import", "liste.csv", "--format", "generic", "--map", "title=Titel,author=Autor,year=Jahr",
                                   "--delimiter", ";", "--key", "Nr", "--list", "bücher", "--no-enrich",
                                   "--library", "flags.sqlite", "--progress", "none"], in: directory)
        #expect(byFlags.status == 0, "\(byFlags.stderr)")
        func exported(_ library: String) throws -> [String] {
            try CLI.run(["export", "--format", "jsonl", "--library", library], in: directory).stdout
                .split(separator: "\n").map(String.init)
        }
        let fromFile = try exported("file.sqlite")
        #expect(fromFile.count == 2)
        #expect(fromFile == (try exported("flags.sqlite")))
        #expect(fromFile.first?.contains("\"title\":\"Der Process\"") == true, "\(fromFile)")
        let id = try CLI.run(["list", "title:process", "--fields", "id", "--library", "file.sqlite"], in: directory).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = try CLI.run(["show", id, "--library", "file.sqlite"], in: directory)
        #expect(shown.stdout.contains("entry id:7 of the list \"bücher\""), "the key and list named in the file: \(shown.stdout)")
    }

    @Test("write-export ends a pipeline that stores nothing: the file is byte for byte what import then export writes; a file there is replaced only when the run ends",
          .timeLimit(.minutes(5)))
    func exportStage() throws {
        let directory = try CLI.temporaryDirectory()
        let pipeline = Self.corpus.appendingPathComponent("good/convert-to-jsonl.yaml").path
        let converted = try CLI.run(["run", pipeline, Self.goodreads, "--progress", "none"], in: directory)
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(converted.stderr.contains("wrote converted.jsonl (jsonl, 59 records)"), "\(converted.stderr)")
        // No stage of it reads or writes a library: none is left behind, and the summary names none.
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("library.sqlite").path))
        #expect(!converted.stderr.contains("library library.sqlite"), "\(converted.stderr)")
        let imported = try CLI.run(["import", Self.goodreads, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                                   in: directory)
        #expect(imported.status == 0)
        let exported = try CLI.run(["export", "--format", "jsonl", "--library", "lib.sqlite"], in: directory)
        let file = try String(contentsOf: directory.appendingPathComponent("converted.jsonl"), encoding: .utf8)
        #expect(file == exported.stdout)
        #expect(file.split(separator: "\n").count == 59)
        // An input that cannot be read: the export would lack its rows, so the file stays as it was.
        let failed = try CLI.run(["run", pipeline, Self.goodreads, "missing.csv", "--progress", "none"], in: directory)
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("converted.jsonl was not written (left as it was): missing.csv could not be read"),
                "\(failed.stderr)")
        #expect(try String(contentsOf: directory.appendingPathComponent("converted.jsonl"), encoding: .utf8) == file)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("converted.jsonl.partial").path))
    }

    @Test("A pipeline that stores and then exports writes the file's rows every time: again unchanged, and from a newer export",
          .timeLimit(.minutes(5)))
    func storeThenExportWritesTheFilesRows() throws {
        let directory = try CLI.temporaryDirectory()
        try """
            name: import-and-export
            source:
              stage: read-csv
              with:
                files: $inputs
            steps:
              - stage: normalize-records
              - stage: store-records
                on-failure: stop
              - stage: write-export
                with:
                  format: jsonl
                  output: out.jsonl
            """.write(to: directory.appendingPathComponent("import-and-export.yaml"), atomically: true, encoding: .utf8)
        func exportedTitles() throws -> [String] {
            try CLI.jsonLines(try String(contentsOf: directory.appendingPathComponent("out.jsonl"), encoding: .utf8))
                .compactMap { $0["title"] as? String }
        }
        let arguments = ["--library", "library.sqlite", "--progress", "none"]
        let first = try CLI.run(["run", "import-and-export.yaml", Self.goodreads] + arguments, in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        let firstTitles = try exportedTitles()
        #expect(firstTitles.count == 59)
        // The same file again stores nothing new, and the export still holds its 59 rows, as stored.
        let again = try CLI.run(["run", "import-and-export.yaml", Self.goodreads] + arguments, in: directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("wrote out.jsonl (jsonl, 59 records)"), "\(again.stderr)")
        #expect(try exportedTitles() == firstTitles)
        // A newer export of the list: the rows of that file, one gone from it and one added.
        let december = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export-december.csv").path
        let newer = try CLI.run(["run", "import-and-export.yaml", december] + arguments, in: directory)
        #expect(newer.status == 0, "\(newer.stderr)")
        let newerTitles = try exportedTitles()
        #expect(newerTitles.count == 59, "\(newer.stderr)")
        #expect(newerTitles.contains { $0.hasPrefix("Kafka on the Shore") })
        #expect(!newerTitles.contains { $0.hasPrefix("Children of Dune") })
    }

    @Test("`run FILE` without inputs for a source that reads files: exit 2, no library created, report files untouched",
          .timeLimit(.minutes(5)))
    func noInputsIsAUsageError() throws {
        let directory = try CLI.temporaryDirectory()
        let pipeline = directory.appendingPathComponent("my-import.yaml")
        try FileManager.default.copyItem(atPath: Self.corpus.appendingPathComponent("good/import-and-report.yaml").path,
                                         toPath: pipeline.path)
        for report in ["report.html", "report.json", "report.csv"] {
            try "a person's report\n".write(to: directory.appendingPathComponent(report), atomically: true, encoding: .utf8)
        }
        let result = try CLI.run(["run", pipeline.path, "--library", "lib.sqlite", "--progress", "none"], in: directory)
        #expect(result.status == 2)
        #expect(result.stderr.contains("my-import.yaml:6:12: error: stage 'read-csv' reads files, but none are given"),
                "\(result.stderr)")
        #expect(result.stderr.contains("bookpipe run \(pipeline.path) INPUT…"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("lib.sqlite").path))
        for report in ["report.html", "report.json", "report.csv"] {
            #expect(try String(contentsOf: directory.appendingPathComponent(report), encoding: .utf8) == "a person's report\n")
        }
        let builtin = try CLI.run(["run", "csv-import", "--library", "lib.sqlite", "--progress", "none"], in: directory)
        #expect(builtin.status == 2)
        #expect(builtin.stderr.contains("pipelines/csv-import.yaml:7:12: error: stage 'read-csv' reads files, but none are given"),
                "\(builtin.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("lib.sqlite").path))
    }

    @Test("scan-photos without a scan backend: run and run --plan name the resource and how to give it; nothing is created",
          .timeLimit(.minutes(5)))
    func missingResourceIsNamed() throws {
        let directory = try CLI.temporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["BOOKPIPE_SCAN_URL"] = nil
        for arguments in [["run", "--plan", "scan-photos", Self.shelfPhoto],
                          ["run", "scan-photos", Self.shelfPhoto, "--library", "lib.sqlite", "--progress", "none"]] {
            let result = try CLI.run(arguments, in: directory, environment: environment)
            #expect(result.status == 2)
            #expect(result.stderr.contains("pipelines/scan-photos.yaml:5:10: error: stage 'scan-photos' needs the scan backend, "
                                           + "which this command is not given\n  give --backend URL, or set BOOKPIPE_SCAN_URL"),
                    "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("lib.sqlite").path))
        let validated = try CLI.run(["pipelines", "validate", "scan-photos"], in: directory, environment: environment)
        #expect(validated.status == 0, "`run --backend` can give it: \(validated.stderr)")
    }

    @Test("`pipelines list` shows each stage's inputs, outputs, required parameters and needs")
    func listShowsContracts() throws {
        let result = try CLI.run(["pipelines", "list"], in: CLI.repositoryRoot)
        #expect(result.status == 0)
        let text = result.stdout
        #expect(text.contains("""
              write-report (step)  At the end of the run, writes the library's data-quality report (HTML, JSON, CSV of problem rows).
                  reads: records, library; writes: report files
                  required: html (string), json (string), csv (string)
                  optional: scope (string, default all)
            """), "\(text)")
        #expect(text.contains("""
                  reads: input files; writes: records
                  required: files (list of strings)
                  optional: batchSize (integer, default 1024)
            """))
        #expect(text.contains("      needs: the scan backend (--backend URL, or set BOOKPIPE_SCAN_URL)"))
        #expect(text.contains("      after: a step that stores records"))
    }
}
