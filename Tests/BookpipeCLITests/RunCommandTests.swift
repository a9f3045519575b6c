import BookpipeStore
import Foundation
import Testing

/// `bookpipe run`, `run --plan` and `pipelines …` on every built-in pipeline file, and a pipeline
/// file that does what a built-in command does, run as the built binary.
@Suite struct RunCommandTests {
    static let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path

    /// Every pipeline file in `pipelines/`, by name.
    static let builtinPipelines: [String] = {
        let folder = CLI.repositoryRoot.appendingPathComponent("pipelines")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()
    }()

    /// Writes a pipeline file that reads CSV inputs and runs `steps`, and returns its path.
    static func writeCSVPipeline(named name: String, steps: [String], in directory: URL) throws -> String {
        let url = directory.appendingPathComponent("\(name).yaml")
        let text = "name: \(name)\nsource:\n  stage: read-csv\n  with:\n    files: $inputs\nsteps:\n"
            + steps.map { "  - stage: \($0)\n" }.joined()
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("pipelines/ holds the built-in pipelines this suite covers")
    func pipelinesFolder() {
        #expect(Self.builtinPipelines.contains("csv-import"))
        #expect(Self.builtinPipelines.contains("enrich"))
    }

    @Test("Each built-in pipeline the binary runs is the file in pipelines/, and it validates and plans",
          .timeLimit(.minutes(5)), arguments: builtinPipelines)
    func builtinPipeline(name: String) throws {
        let path = CLI.repositoryRoot.appendingPathComponent("pipelines/\(name).yaml").path
        let file = try String(contentsOfFile: path, encoding: .utf8)
        let shown = try CLI.run(["pipelines", "show", name], in: CLI.repositoryRoot)
        #expect(shown.status == 0)
        #expect(shown.stdout == file, "the binary embeds pipelines/\(name).yaml as it is")
        let validated = try CLI.run(["pipelines", "validate", path], in: CLI.repositoryRoot)
        #expect(validated.status == 0, "\(validated.stderr)")
        for target in [name, path] {
            // `--backend`: scan-photos needs the scan backend (the plan checks that the command gives it).
            let plan = try CLI.run(["run", "--plan", target, "a.csv", "--backend", "http://127.0.0.1:9"], in: CLI.repositoryRoot)
            #expect(plan.status == 0, "\(plan.stderr)")
            #expect(plan.stdout.hasPrefix("pipeline \(name)\n"), "\(plan.stdout)")
            #expect(plan.stdout.contains("(pipelines/\(name).yaml:") || plan.stdout.contains("(\(path):"))
        }
    }

    @Test("`run --plan` opens no library and writes nothing", .timeLimit(.minutes(5)))
    func planWritesNothing() throws {
        let directory = try CLI.temporaryDirectory()
        let plan = try CLI.run(["run", "--plan", "csv-import", "x.csv", "--library", "lib.sqlite"], in: directory)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("store-records"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("lib.sqlite").path))
    }

    @Test("`bookpipe run` of a file with the import's steps stores and reports exactly what `import` does",
          .timeLimit(.minutes(5)))
    func runEqualsImport() throws {
        let directory = try CLI.temporaryDirectory()
        let pipeline = try Self.writeCSVPipeline(named: "my-import", steps: ["normalize-records", "store-records"], in: directory)
        let viaRun = try CLI.run(["run", pipeline, Self.goodreads, "--library", "run.sqlite", "--progress", "none"],
                                 in: directory)
        let viaImport = try CLI.run(["import", Self.goodreads, "--no-enrich", "--library", "import.sqlite",
                                     "--progress", "none"], in: directory)
        #expect(viaRun.status == 0, "\(viaRun.stderr)")
        #expect(viaImport.status == 0, "\(viaImport.stderr)")
        func summaryLine(_ text: String) -> String? {
            text.split(separator: "\n").map(String.init).first { $0.contains("rows read") }
        }
        #expect(summaryLine(viaRun.stderr) == summaryLine(viaImport.stderr))
        #expect(summaryLine(viaRun.stderr)?.hasSuffix("59 rows read, 59 imported, 0 rejected") == true)
        let fromRun = try LibraryStore(path: directory.appendingPathComponent("run.sqlite").path)
        let fromImport = try LibraryStore(path: directory.appendingPathComponent("import.sqlite").path)
        #expect(try fromRun.counts() == fromImport.counts())
        #expect(try fromRun.sourceFiles().map(\.isComplete) == [true], "the sink marked the file complete")
        #expect(try fromRun.records(ids: ["x"]).isEmpty)
        var runRecords: [String] = [], importRecords: [String] = []
        try fromRun.forEachRecord { runRecords.append("\($0.id) \($0.title) \($0.normalized?.isbn13 ?? "-")") }
        try fromImport.forEachRecord { importRecords.append("\($0.id) \($0.title) \($0.normalized?.isbn13 ?? "-")") }
        #expect(runRecords == importRecords)
        // Again: both say the file is already imported.
        let again = try CLI.run(["run", pipeline, Self.goodreads, "--library", "run.sqlite", "--progress", "none"],
                                in: directory)
        #expect(again.stderr.contains("already imported (59 rows); nothing changed."),
                "\(again.stderr)")
        #expect(again.stderr.components(separatedBy: "already imported").count == 2, "said once")
        #expect(try LibraryStore(path: directory.appendingPathComponent("run.sqlite").path).counts().records == 59)
    }

    @Test("A pipeline that reads rows but neither stores nor reports them is refused before anything is opened",
          .timeLimit(.minutes(5)))
    func noStoreStep() throws {
        let directory = try CLI.temporaryDirectory()
        let pipeline = try Self.writeCSVPipeline(named: "look-only", steps: ["normalize-records"], in: directory)
        let result = try CLI.run(["run", pipeline, Self.goodreads, "--library", "l.sqlite", "--progress", "none"],
                                 in: directory)
        #expect(result.status == 2)
        #expect(result.stderr.contains("look-only.yaml:7:12: error: pipeline 'look-only' reads rows with 'read-csv' but no step "
                                       + "stores them, and it does not end in a step that writes output"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("l.sqlite").path))
    }

    @Test("A pipeline file whose steps do not fit together is refused before reading anything", .timeLimit(.minutes(5)))
    func typeMismatch() throws {
        let directory = try CLI.temporaryDirectory()
        let pipeline = try Self.writeCSVPipeline(named: "wrong", steps: ["library-records"], in: directory)
        let result = try CLI.run(["pipelines", "validate", pipeline], in: directory)
        #expect(result.status == 2)
        #expect(result.stderr.contains("wrong.yaml:7:12: error: stage 'library-records' reads input; it can only be the pipeline's source"),
                "\(result.stderr)")
    }
}
