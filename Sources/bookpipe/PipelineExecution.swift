import ArgumentParser
import BookpipeCore
import BookpipeIngest
import BookpipePipeline
import BookpipeStages
import BookpipeStore
import Foundation

/// Runs a pipeline file against the library with progress, Ctrl-C handling and a summary.
struct PipelineExecution {
    var fileText: String
    var fileName: String
    var inputs: [String]
    var libraryPath: String
    var options: ImportOptions
    var progressMode: ProgressMode
    var commandLine: String
    var enrichment: EnrichmentSettings = EnrichmentSettings(isEnabled: false)

    func run() async throws {
        let file: PipelineFile
        do {
            file = try PipelineFile.parse(fileText, fileName: fileName)
        } catch {
            printError(error.description)
            throw ExitCode(2)
        }
        let store: LibraryStore
        do {
            store = try LibraryStore(path: libraryPath)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        let runID = try store.beginRun(command: commandLine, pipeline: file.name)
        let summary = ImportSummary()
        let environment = ImportEnvironment(store: store, options: options, runID: runID, summary: summary,
                                            enrichment: enrichment)
        let pipeline: Pipeline
        do {
            pipeline = try BuiltinStages.registry.build(file, arguments: ["inputs": .stringList(inputs),
                                                                          "library": .string(libraryPath)],
                                                        environment: environment)
        } catch {
            printError(error.description)
            try? store.finishRun(runID, status: .failed, summary: nil)
            throw ExitCode(2)
        }
        let display = ProgressDisplay(mode: progressMode)
        if enrichment.isEnabled && !enrichment.run.sources.isEmpty {
            display.emit(.message(enrichmentPlan(store: store)))
        }
        let context = StageContext(pipelineName: pipeline.name, progress: display)
        let task = Task { try await PipelineRunner().run(pipeline, context: context) }
        let signals = SignalCancellation { task.cancel() }
        let result = await task.result
        enrichment.run.shutdown()
        display.clearBar()
        // Whatever happened: commit the records already queued (they are complete rows) and sync
        // them to the disk (a no-op when the last step already did).
        let finishError: StoreError?
        do {
            try store.finishBulkInsert()
            finishError = nil
        } catch {
            finishError = error
        }
        let files = summary.snapshot
        // Files read to their end are complete once every row is stored or rejected.
        for file in files where file.isReadCompletely && !file.fileHash.isEmpty {
            _ = try? store.finishSourceFile(hash: file.fileHash, rowsTotal: file.rowsRead, reading: file.reading)
        }
        let counts = try? store.counts()
        switch result {
        case .success where finishError != nil:
            try? store.finishRun(runID, status: .failed, summary: nil)
            printError("error: \(finishError.map(\.description) ?? "")")
            printError("Rows stored before the failure are kept; fix the problem and run the same command again to continue.")
            throw ExitCode(1)
        case .success:
            printSummary(files, counts: counts)
            let failedFiles = files.filter { $0.error != nil }
            try store.finishRun(runID, status: failedFiles.isEmpty ? .finished : .failed, summary: nil)
            if !failedFiles.isEmpty { throw ExitCode(1) }
        case .failure(let error) where error is CancellationError || signals.receivedSignal != nil:
            try? store.finishRun(runID, status: .interrupted, summary: nil)
            let stored = counts?.records ?? 0
            printError("Interrupted. \(stored) rows are safely in \(libraryPath); run the same command again to resume where it stopped.")
            throw ExitCode(130)
        case .failure(let error):
            try? store.finishRun(runID, status: .failed, summary: nil)
            printError("error: \(error)")
            printError("Rows stored before the failure are kept; fix the problem and run the same command again to continue.")
            throw ExitCode(1)
        }
    }

    private func printSummary(_ files: [FileSummary], counts: LibraryCounts?) {
        var lines: [String] = []
        for file in files {
            if let error = file.error {
                lines.append("\(file.path): not imported: \(error)")
                continue
            }
            if file.wasAlreadyImported {
                lines.append("\(file.path): already imported; nothing changed.")
                continue
            }
            let imported = file.rowsRead - file.rowsAlreadyStored - file.rejected.count
            var line = "\(file.path): \(file.format), \(file.encoding): \(file.rowsRead) rows read, \(imported) "
                + (file.wasReread ? "stored again with the new columns" : "imported")
            if file.rowsAlreadyStored > 0 { line += ", \(file.rowsAlreadyStored) already stored by an earlier run" }
            line += ", \(file.rejected.count) rejected"
            lines.append(line)
            if file.rowsRead == 0 { lines.append("  the file has a header but no data rows") }
            for rejected in file.rejected.prefix(20) { lines.append("  rejected \(rejected.location): \(rejected.reason)") }
            if file.rejected.count > 20 { lines.append("  … and \(file.rejected.count - 20) more (see `bookpipe export`)") }
            for repair in file.repairs { lines.append("  repaired: \(repair)") }
        }
        if enrichment.isEnabled, !enrichment.run.sources.isEmpty {
            lines.append(contentsOf: enrichmentSummary())
        }
        if let counts {
            let statuses = RecordStatus.allCases.compactMap { status in
                counts.byStatus[status].map { "\($0) \(status.rawValue)" }
            }
            lines.append("library \(libraryPath): \(counts.records) records (\(statuses.joined(separator: ", "))), \(counts.rejected) rejected rows")
        }
        printError(lines.joined(separator: "\n"))
    }
}

extension PipelineExecution {
    /// Rows this run will enrich, estimated before it starts: stored rows waiting in the
    /// chosen statuses plus the data lines of the inputs not imported yet.
    func expectedRows(store: LibraryStore) -> Int {
        var rows = (try? store.countRecords(statuses: enrichment.statuses)) ?? 0
        for input in inputs {
            rows += max(0, InputLineCounter.lines(in: input) - 1)
        }
        return rows
    }

    /// The chain and the time the rate limits allow, shown before the run starts.
    func enrichmentPlan(store: LibraryStore) -> String {
        let rows = expectedRows(store: store)
        enrichment.run.expect(rows: rows)
        var text = "Enriching about \(rows) rows from " + enrichment.run.sources.map(\.name).joined(separator: " → ") + "."
        for budget in enrichment.run.budgets {
            let requests = Int((Double(rows) * budget.requestsPerRow).rounded(.up))
            let seconds = Double(requests) / budget.requestsPerSecond
            text += "\n  \(budget.source): at most \(requests) requests at \(budget.requestsPerSecond.formatted())/s "
                + "≈ \(Self.formatSeconds(seconds)) at most (cached answers and earlier sources need none)"
        }
        return text
    }

    func enrichmentSummary() -> [String] {
        var lines: [String] = []
        let outcomes = enrichment.run.outcomes
        let parts = [RecordStatus.enriched, .needsCandidateSelection, .notFound, .failed].compactMap { status in
            outcomes[status].map { "\($0) \(status.rawValue)" }
        }
        lines.append("enriched in this run: \(enrichment.run.rowsDone) rows" + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))"))
        for source in enrichment.run.progress.sources {
            var line = "  \(source.name): \(source.requests) requests, \(source.cacheHits) cache hits, "
                + "\(source.retries) retries, \(source.rateLimited) × 429, \(source.failures) failed lookups"
            if let latency = source.meanLatencyMilliseconds { line += ", mean latency \(Int(latency.rounded())) ms" }
            lines.append(line)
        }
        if (outcomes[.failed] ?? 0) > 0 {
            lines.append("  failed lookups are kept as failed (never as not found); retry them with `bookpipe enrich --failed`.")
        }
        return lines
    }

    static func formatSeconds(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total / 60 % 60) min"
    }
}

/// Counts lines of an input quickly (for estimates only: quoted fields may span lines).
enum InputLineCounter {
    static func lines(in path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        var count = 0
        var lastByte: UInt8 = 10
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            chunk.withUnsafeBytes { buffer in
                for byte in buffer where byte == 10 { count += 1 }
            }
            lastByte = chunk.last ?? lastByte
        }
        return count + (lastByte == 10 ? 0 : 1)
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Imports CSV/TSV exports (Goodreads, StoryGraph, LibraryThing, Calibre, Open Library, generic).",
        discussion: "Ctrl-C stops cleanly; running the same command again resumes without losing or duplicating a row.")

    @Argument(help: "The export files.")
    var files: [String]

    @Option(help: "Force a format: \(DetectedFormat.knownNames.joined(separator: ", ")).")
    var format: String?

    @Option(help: "Column map for unknown headers, e.g. title=Titel,author=Autor (fields: \(ImportOptions.mappableFields.joined(separator: ", "))).")
    var map: [String] = []

    @Option(name: .customLong("map-file"), help: "A file of field=header lines, one per line.")
    var mapFile: String?

    @Option(help: "Field delimiter: a single character, or 'tab'.")
    var delimiter: String?

    @Flag(name: .customLong("no-enrich"), help: "Parse, normalise, validate and store only; `bookpipe enrich` (or importing again) enriches later.")
    var noEnrich = false

    @OptionGroup var sources: EnrichmentOptionGroup

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        let options = try ImportOptionsParser.parse(format: format, map: map, mapFile: mapFile, delimiter: delimiter)
        try await PipelineExecution(
            fileText: BuiltinPipelines.csvImport, fileName: "pipelines/csv-import.yaml", inputs: files,
            libraryPath: library.libraryPath, options: options, progressMode: progress,
            commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: try sources.settings(isEnabled: !noEnrich)
        ).run()
    }
}

enum ImportOptionsParser {
    static func parse(format: String?, map: [String], mapFile: String?, delimiter: String?) throws -> ImportOptions {
        var columnMap: [String: String] = [:]
        var entries = map.flatMap { $0.split(separator: ",").map(String.init) }
        if let mapFile {
            guard let text = try? String(contentsOfFile: mapFile, encoding: .utf8) else {
                throw ValidationError("\(mapFile): cannot read the map file.")
            }
            entries += text.split(whereSeparator: \.isNewline).map(String.init)
                .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }
        }
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--map takes field=header pairs, e.g. title=Titel,author=Autor; '\(entry)' is not one.")
            }
            columnMap[parts[0].lowercased()] = parts[1]
        }
        var delimiterByte: UInt8?
        if let delimiter {
            if delimiter == "tab" || delimiter == "\\t" {
                delimiterByte = UInt8(ascii: "\t")
            } else if delimiter.utf8.count == 1, let byte = delimiter.utf8.first {
                delimiterByte = byte
            } else {
                throw ValidationError("--delimiter takes one character (',' ';' '|') or 'tab', not '\(delimiter)'.")
            }
        }
        return ImportOptions(formatName: format, columnMap: columnMap, delimiter: delimiterByte)
    }
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Runs a pipeline file (or a built-in pipeline by name) on inputs.")

    @Argument(help: "A pipeline file (.yaml) or a built-in pipeline name.")
    var pipeline: String

    @Argument(help: "Inputs, available to the file as $inputs.")
    var inputs: [String] = []

    @Flag(help: "Print the plan and stop.")
    var plan = false

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    @OptionGroup var sources: EnrichmentOptionGroup

    func run() async throws {
        let (text, name) = try PipelineSource.load(pipeline)
        if plan {
            let file: PipelineFile
            do {
                file = try PipelineFile.parse(text, fileName: name)
                try BuiltinStages.registry.validate(file)
            } catch {
                printError(error.description)
                throw ExitCode(2)
            }
            let store = try LibraryStore(path: ":memory:")
            let built = try BuiltinStages.registry.build(
                file, arguments: ["inputs": .stringList(inputs.isEmpty ? ["INPUT…"] : inputs), "library": .string(library.libraryPath)],
                environment: ImportEnvironment(store: store, enrichment: EnrichmentSettings(isEnabled: false)))
            print(built.plan)
            return
        }
        try await PipelineExecution(
            fileText: text, fileName: name, inputs: inputs, libraryPath: library.libraryPath, options: ImportOptions(),
            progressMode: progress, commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: try sources.settings(isEnabled: true)
        ).run()
    }
}

enum PipelineSource {
    /// Reads a pipeline file, or the built-in pipeline of that name.
    static func load(_ nameOrPath: String) throws -> (text: String, fileName: String) {
        if let builtin = BuiltinPipelines.files[nameOrPath] { return (builtin, "pipelines/\(nameOrPath).yaml") }
        guard let text = try? String(contentsOfFile: nameOrPath, encoding: .utf8) else {
            throw ValidationError("\(nameOrPath): no such pipeline file, and no built-in pipeline of that name "
                                  + "(built-in: \(BuiltinPipelines.files.keys.sorted().joined(separator: ", "))).")
        }
        return (text, nameOrPath)
    }
}

struct PipelinesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipelines", abstract: "Lists, shows and validates pipeline files.",
        subcommands: [List.self, Show.self, Validate.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the built-in pipelines and the stage catalogue.")
        func run() async throws {
            print("Built-in pipelines:")
            for name in BuiltinPipelines.files.keys.sorted() {
                let description = (try? PipelineFile.parse(BuiltinPipelines.files[name] ?? "", fileName: name))?.description ?? ""
                print("  \(name)  \(description)")
            }
            print("Stages:")
            for descriptor in BuiltinStages.registry.descriptors {
                let parameters = descriptor.parameters.map { "\($0.name): \($0.type.rawValue)" }.joined(separator: ", ")
                print("  \(descriptor.name) (\(descriptor.kind.rawValue))  \(descriptor.summary)"
                      + (parameters.isEmpty ? "" : "  [\(parameters)]"))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prints a built-in pipeline's file.")
        @Argument(help: "A built-in pipeline name or a file.") var pipeline: String
        func run() async throws { print(try PipelineSource.load(pipeline).text, terminator: "") }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Checks pipeline files against the stage catalogue.")
        @Argument(help: "Pipeline files.") var files: [String]
        func run() async throws {
            var failed = false
            for path in files {
                do {
                    let (text, name) = try PipelineSource.load(path)
                    try BuiltinStages.registry.validate(try PipelineFile.parse(text, fileName: name))
                    print("\(name): ok")
                } catch {
                    printError("\(error)")
                    failed = true
                }
            }
            if failed { throw ExitCode(2) }
        }
    }
}
