import ArgumentParser
import BookpipeCore
import BookpipeIngest
import BookpipePipeline
import BookpipePipelines
import BookpipeReview
import BookpipeScan
import BookpipeStages
import BookpipeStore
import Foundation

/// Runs a pipeline file against the library with progress, Ctrl-C handling and a summary.
///
/// It parses, provides the run's resources (the library, how to read inputs, the enrichment
/// settings, the run's entry) and calls the runner; everything the pipeline does — registering
/// files, storing rows, marking files complete, recording the run's status — is done by its steps.
/// The summary is made from the run's report only.
struct PipelineExecution {
    var file: BuiltinPipelineText
    var inputs: [String]
    var libraryPath: String
    var options: ImportOptions
    var progressMode: ProgressMode
    var commandLine: String
    var enrichment: EnrichmentSettings = EnrichmentSettings(isEnabled: false)
    /// Read, detect and normalise the inputs and report, without opening (or creating) the library.
    var dryRun = false
    /// How scans are read (`import-scan --photo`).
    var scanOptions = ScanReadOptions()
    /// Whether the summary says how many records wait for review and what to type next.
    var showsReviewQueue = false
    /// The vision backend of `bookpipe scan`, and the tally its summary is made from.
    var scanBackend: ScanBackendOptions?
    /// How a newer export of a list already in the library is imported.
    var reimport = ReimportOptions()

    /// The resources this run gives the stages (the contracts' ``StageResource``s).
    var providedResources: Set<StageResource> { scanBackend == nil ? [] : [.scanBackend] }

    func run() async throws {
        if dryRun {
            let code = await executeDryRun()
            if code != 0 { throw ExitCode(code) }
            return
        }
        let isNewLibrary = !LibraryLocation.isServer(libraryPath) && !FileManager.default.fileExists(atPath: libraryPath)
        let outcome = try await execute(isNewLibrary: isNewLibrary)
        // A first import that failed and stored nothing leaves no empty library behind: the next
        // attempt starts from nothing either way, and an empty file would look like a library.
        // Only the file goes, and only when it still holds nothing and no other process has it
        // open (a second import of the same new library): SQLite itself folds in and removes the
        // -wal first, so no -wal that holds rows is ever deleted.
        if outcome.removesLibrary, !LibraryLocation.isServer(libraryPath), !LibraryStore.removeIfEmpty(path: libraryPath),
           FileManager.default.fileExists(atPath: libraryPath) {
            printError("\(libraryPath): another process has just opened or written this new library, so it was left in place.")
        }
        if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
    }

    /// How a run ended: its exit code, and whether the library it created is to be removed
    /// again (the run failed and stored nothing: no record, no rejected row).
    private struct Outcome {
        var exitCode: Int32
        var removesLibrary = false
    }

    /// Runs the pipeline and prints its summary or what stopped it. Everything that holds the
    /// library is released when this returns.
    private func execute(isNewLibrary: Bool) async throws -> Outcome {
        let pipelineFile: PipelineFile
        let pipeline: Pipeline
        do {
            pipelineFile = try PipelineFile.parse(file.text, fileName: file.fileName)
            // Checked against the stages' contracts before anything is opened: a source that reads
            // files and is given none, or a resource this command does not give, is a usage error.
            pipeline = try StandardStages.registry.build(pipelineFile, arguments: ["inputs": .stringList(inputs),
                                                                                   "library": .string(libraryPath)],
                                                         provided: providedResources)
        } catch {
            printError(error.description)
            return Outcome(exitCode: 2)
        }
        // A pipeline that reads the library's records (`enrich`, `run reenrich-library`) adds
        // no row: on a path where no library is, it would only create an empty one.
        if isNewLibrary, pipelineFile.source.stage == "library-records" {
            printError(ExistingLibrary.missingMessage(libraryPath))
            return Outcome(exitCode: 1)
        }
        // A pipeline none of whose stages reads or writes the library (read, normalise, write an
        // export) needs none: a library it would create holds nothing and is removed again.
        let libraryData: Set<StageData> = [.storedRecords, .library, .enrichment, .scanJobs, .managedPhotos]
        let usesLibrary = ([pipelineFile.source] + pipelineFile.steps).contains { entry in
            guard let contract = StandardStages.registry.descriptor(named: entry.stage)?.contract else { return true }
            return !libraryData.isDisjoint(with: contract.reads) || !libraryData.isDisjoint(with: contract.writes)
        }
        // The inputs' fingerprint pass (the whole of each file read once) runs on the other core
        // while the library opens: benchmarks/import/README.md, item 33.
        if pipelineFile.source.stage == "read-csv" { FingerprintPrefetch.shared.start(paths: inputs) }
        let store: any Library
        do {
            store = try LibraryLocation.open(libraryPath, access: .readWrite)
        } catch {
            printError(error.description)
            return Outcome(exitCode: 1)
        }
        var outcome = await execute(pipeline, store: store, isNewLibrary: isNewLibrary, usesLibrary: usesLibrary,
                                    readsLibraryRecords: pipelineFile.source.stage == "library-records")
        if isNewLibrary, !usesLibrary { outcome.removesLibrary = true }
        // Every write committed and the write-ahead log folded into the file: the library is
        // whole in library.sqlite alone (see LibraryStore.close()).
        do {
            try await store.close()
        } catch where outcome.exitCode == 0 {
            printError("error: \(error.description)")
            return Outcome(exitCode: 1)
        } catch {
            // A failed write stopped the run, which said so already.
        }
        return outcome
    }

    /// Runs the pipeline on the open library and prints its summary or what stopped it.
    private func execute(_ pipeline: Pipeline, store: any Library, isNewLibrary: Bool, usesLibrary: Bool = true,
                         readsLibraryRecords: Bool = false) async -> Outcome {
        let display = ProgressDisplay(mode: progressMode)
        // Managed photos whose detections are all reviewed and looked up go at the start of every run.
        await PhotoCleanupLog.run(store: store)
        if enrichment.isEnabled && scanBackend == nil {
            // A run over the library's records whose filter steps drop records before the lookups
            // expects only the records that pass them (a run over files cannot know before reading).
            let filters = readsLibraryRecords ? EnrichmentEstimate.filtersBeforeLookups(in: pipeline) : []
            var rows: Int? = nil
            if !filters.isEmpty {
                rows = await EnrichmentEstimate.rowsToEnrich(in: store, statuses: enrichment.statuses, passing: filters)
            }
            if rows == nil {
                rows = await EnrichmentEstimate.rowsToEnrich(in: store, statuses: enrichment.statuses, importing: inputs)
            }
            enrichment.run.expect(rows: rows)
        }
        var resources = StageResources()
            .adding(store as any Library)
            .adding(EnrichmentClaim(command: commandLine))
            .adding(options)
            .adding(enrichment)
            .adding(LibraryRun(command: commandLine))
            .adding(scanOptions)
            .adding(reimport)
        if let scanBackend { resources = resources.adding(scanBackend) }
        let context = StageContext(pipelineName: pipeline.name, progress: display, resources: resources)
        let task = Task { await PipelineRunner().execute(pipeline, context: context) }
        let signals = SignalCancellation { task.cancel() }
        let result = await task.value
        display.clearBar()
        let counts = try? await store.counts()
        let removesIfFailed = isNewLibrary && counts.map { $0.records == 0 && $0.rejected == 0 } == true
        switch result.outcome {
        case .finished:
            // And at its end: a run that answered the last lookups of a reviewed photo's detections
            // lets its copy go now rather than at the next command.
            await PhotoCleanupLog.run(store: store)
            let summary = RunSummary(report: result.report)
            let enriching = EnrichmentSummary(report: result.report)
            let failure = summary.failedInputs > 0 || !enrichment.isEnabled ? nil
                : enriching.noSourceLeftMessage(catalogPath: enrichment.catalogPath) ?? enriching.everyLookupFailedMessage
            // A scan that stopped because the backend could not be reached: said last, exit 1.
            let scanTally = scanBackend == nil ? nil : ScanTally(report: result.report)
            let scanStop = scanTally?.stop
            let failed = summary.failedInputs > 0 || failure != nil || scanStop != nil
            let removes = removesIfFailed && failed
            await printSummary(summary, enrichment: enriching, scan: scanTally, counts: removes || !usesLibrary ? nil : counts,
                               store: store)
            if removes { printError("\(libraryPath): nothing was stored, so no library was created.") }
            if let failure { printError(failure) }
            if let scanStop { printError(scanStop.description) }
            return Outcome(exitCode: failed ? 1 : 0, removesLibrary: removes)
        case .cancelled:
            printError(interruptedMessage(EnrichmentSummary(report: result.report), counts: counts))
            return Outcome(exitCode: 130)
        case .failed:
            if signals.receivedSignal != nil {
                printError(interruptedMessage(EnrichmentSummary(report: result.report), counts: counts))
                return Outcome(exitCode: 130)
            }
            printError("error: \(result.error.map { "\($0)" } ?? "the run failed")")
            if removesIfFailed {
                printError("\(libraryPath): nothing was stored, so no library was created; fix the problem and run the same command again.")
            } else if Self.isDamage(result.error) {
                // The message already says to restore or rebuild the library.
            } else {
                printError("Rows stored before the failure are kept; fix the problem and run the same command again to continue.")
            }
            return Outcome(exitCode: 1, removesLibrary: removesIfFailed)
        }
    }

    /// `import --dry-run`: the import's reading steps built in code (read-csv, normalize-records)
    /// and a tally of the findings; no store step, no enrichment, no library. Prints the summary
    /// and returns the exit code.
    private func executeDryRun() async -> Int32 {
        // An existing library is read (never written) to say what the files would change in it.
        var store: LibraryStore?
        if FileManager.default.fileExists(atPath: libraryPath) {
            do {
                store = try LibraryStore.openedForReadingOnly(path: libraryPath)
                if store == nil {
                    printError("\(libraryPath): made by an earlier version of bookpipe; the next import upgrades it. "
                               + "This dry run reads the files only (without comparing them with the library).")
                }
            } catch {
                printError("\(error.description)\nThis dry run reads the files only (without comparing them with the library).")
            }
        }
        let pipeline = store == nil
            ? Pipeline("csv-import-dry-run") {
                ReadCSV(files: inputs)
                NormalizeRecords()
                CountFindings()
            }
            : Pipeline("csv-import-dry-run") {
                ReadCSV(files: inputs)
                NormalizeRecords()
                CountFindings()
                StoreRecords()
            }
        let display = ProgressDisplay(mode: progressMode)
        var resources = StageResources().adding(options).adding(ReimportOptions(
            prune: reimport.prune, confirmed: reimport.confirmed, dryRun: true))
        if let store { resources = resources.adding(store as any Library) }
        let context = StageContext(pipelineName: pipeline.name, progress: display, resources: resources)
        let task = Task { await PipelineRunner().execute(pipeline, context: context) }
        let signals = SignalCancellation { task.cancel() }
        let result = await task.value
        if let store { try? await store.close() }
        display.clearBar()
        switch result.outcome {
        case .finished:
            let summary = RunSummary(report: result.report)
            let tally = FindingTally(report: result.report)
            var lines = summary.lines(dryRun: true) { input in
                tally.entries(file: input.path).map { "  finding: \($0.count) × \($0.code) (\($0.severity.rawValue))" }
            }
            lines.append(store == nil ? "dry run: nothing was written (\(libraryPath) was not opened)."
                                      : "dry run: nothing was written (\(libraryPath) was read only).")
            printError(lines.joined(separator: "\n"))
            return summary.failedInputs > 0 ? 1 : 0
        case .cancelled:
            printError("Interrupted; nothing was written.")
            return 130
        case .failed:
            if signals.receivedSignal != nil {
                printError("Interrupted; nothing was written.")
                return 130
            }
            printError("error: \(result.error.map { "\($0)" } ?? "the run failed")")
            return 1
        }
    }

    /// True when the run failed because the library is damaged.
    static func isDamage(_ error: (any Error)?) -> Bool {
        if case .stepFailed(_, _, let underlying)? = error as? PipelineError { return isDamage(underlying) }
        return (error as? StoreError)?.isDamage == true
    }

    /// What an interrupted run says: what it did (rows enriched when it enriches stored rows; rows
    /// stored, and how many of them were enriched, when it imports), and how to go on.
    func interruptedMessage(_ enriching: EnrichmentSummary, counts: LibraryCounts?) -> String {
        let resume = "run the same command again to resume where it stopped."
        let enriched = enriching.rowsDone
        guard enrichment.isEnabled, enriching.enrichmentRan else {
            return "Interrupted. \(counts?.records ?? 0) rows are safely in \(libraryPath); \(resume)"
        }
        if inputs.isEmpty {
            return "Interrupted. \(enriched) \(enriched == 1 ? "row was" : "rows were") enriched in this run; \(resume)"
        }
        return "Interrupted. \(counts?.records ?? 0) rows are safely in \(libraryPath), \(enriched) enriched in this run; \(resume)"
    }

    private func printSummary(_ summary: RunSummary, enrichment enriching: EnrichmentSummary, scan: ScanTally?,
                              counts: LibraryCounts?, store: any Library) async {
        var lines = summary.lines()
        if enrichment.isEnabled, enriching.enrichmentRan {
            lines.append(contentsOf: enriching.lines())
        }
        if let counts {
            let statuses = RecordStatus.allCases.compactMap { status in
                counts.byStatus[status].map { "\($0) \(status.rawValue)" }
            }
            let byStatus = statuses.isEmpty ? "" : " (\(statuses.joined(separator: ", ")))"
            lines.append("library \(PostgresLibraryName.redacted(libraryPath)): \(counts.records) records\(byStatus), \(counts.rejected) rejected rows")
        }
        if let scan, let store = store as? LibraryStore {
            lines += ScanSummary.lines(scan, store: store)
        }
        if showsReviewQueue {
            lines += await ReviewSummary.lines(store: store, libraryPath: libraryPath)
        } else if enrichment.isEnabled {
            // An import or enrich that matched: say what waits for a person, if anything does.
            lines += await ReviewSummary.lines(store: store, libraryPath: libraryPath, whenEmpty: false)
        }
        printError(lines.joined(separator: "\n"))
    }
}

/// A pipeline file's text and the name used in its messages.
struct BuiltinPipelineText {
    var text: String
    var fileName: String

    /// Reads a pipeline file, or the built-in pipeline of that name.
    static func load(_ nameOrPath: String) throws -> BuiltinPipelineText {
        if let builtin = BuiltinPipelines.named(nameOrPath) { return BuiltinPipelineText(text: builtin.text, fileName: builtin.path) }
        guard let text = try? String(contentsOfFile: nameOrPath, encoding: .utf8) else {
            throw ValidationError("\(nameOrPath): no such pipeline file, and no built-in pipeline of that name "
                                  + "(built-in: \(BuiltinPipelines.files.keys.sorted().joined(separator: ", "))).")
        }
        return BuiltinPipelineText(text: text, fileName: nameOrPath)
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

    @Option(help: "The column that holds each row's id in its list, for a file whose format has none (a newer export updates the rows with the same id).")
    var key: String?

    @Option(help: "The name of the list the files are exports of (default: the format's name, or the file's name for generic files).")
    var list: String?

    @Flag(help: "Remove the records that a newer export of their list no longer holds (without it they are kept and marked gone).")
    var prune = false

    @Flag(help: "Import a file even when it looks like another list (most of the entries it shares with the list would change), or older than the list in the library (books of the list added after its newest book are missing from it).")
    var yes = false

    @Flag(name: .customLong("dry-run"), help: "Read the files and report what an import would do (new, changed, unchanged and gone rows, findings); write nothing.")
    var dryRun = false

    @OptionGroup var sources: EnrichmentOptionGroup

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        var options = try ImportOptionsParser.parse(format: format, map: map, mapFile: mapFile, delimiter: delimiter)
        options.keyColumn = key
        options.listName = list
        var execution = PipelineExecution(
            file: try BuiltinPipelineText.load("csv-import"), inputs: files,
            libraryPath: library.libraryPath, options: options, progressMode: progress,
            commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: dryRun ? EnrichmentSettings(isEnabled: false) : try sources.settings(isEnabled: !noEnrich),
            dryRun: dryRun)
        execution.reimport = ReimportOptions(prune: prune, confirmed: yes, dryRun: dryRun)
        try await execution.run()
    }
}

struct ImportScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-scan",
        abstract: "Imports bookshelf scan results (JSON): one record per detected spine; unsure ones wait for review.",
        discussion: """
            Detections below 0.60 confidence go to the review queue (`bookpipe review`). Photos are copied into <library>.photos/ (into the database on PostgreSQL). Running the same command again never duplicates a detection.
            """)

    @Argument(help: "The scan result files (JSON).")
    var files: [String]

    @Option(help: "The shelf photo for scans that name none (a bare list of detections); inside the scan file's folder.")
    var photo: String?

    @Flag(name: .customLong("no-enrich"), help: "Read, route, normalise and store only; `bookpipe enrich` enriches later.")
    var noEnrich = false

    @OptionGroup var sources: EnrichmentOptionGroup

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        var execution = PipelineExecution(
            file: try BuiltinPipelineText.load("scan-import"), inputs: files,
            libraryPath: library.libraryPath, options: ImportOptions(), progressMode: progress,
            commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: try sources.settings(isEnabled: !noEnrich))
        execution.scanOptions = ScanReadOptions(photo: photo)
        execution.showsReviewQueue = true
        try await execution.run()
    }
}

/// Runs the photo cleanup and logs failures (retried at the next run).
enum PhotoCleanupLog {
    static func run(store: any Library) async {
        do {
            let cleanup = try await store.cleanUpReviewedPhotos()
            for failure in cleanup.failures { printError("warning: \(failure)") }
        } catch {
            printError("warning: photo cleanup: \(error.description)")
        }
    }
}

enum ImportOptionsParser {
    static func parse(format: String?, map: [String], mapFile: String?, delimiter: String?) throws -> ImportOptions {
        var lines: [String] = []
        if let mapFile {
            guard let text = try? String(contentsOfFile: mapFile, encoding: .utf8) else {
                throw ValidationError("\(mapFile): cannot read the map file.")
            }
            lines = text.split(whereSeparator: \.isNewline).map(String.init)
        }
        do {
            return try ImportOptions.parsing(format: format, map: map, mapLines: lines, delimiter: delimiter)
        } catch {
            throw ValidationError("--\(error.setting) \(error.problem).")
        }
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

    @Option(help: "The vision backend's base URL, for a pipeline that scans photos (default $BOOKPIPE_SCAN_URL, then the configuration file's scan-backend).")
    var backend: String?

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    @OptionGroup var sources: EnrichmentOptionGroup

    /// What `bookpipe run` can give a pipeline's stages at most (with `--backend`); what
    /// `pipelines validate` checks against.
    static let resourcesRunCanGive: Set<StageResource> = [.scanBackend]

    /// The scan backend, when `--backend`, `$BOOKPIPE_SCAN_URL` or the configuration file names one.
    private var scanBackend: ScanBackendOptions? {
        LoadedConfiguration.value(.scanBackend, flag: backend).map { baseURL in
            ScanBackendOptions(baseURL: baseURL, settings: ScanSettings(provider: .gemini), concurrencyIsSet: false)
        }
    }

    func validate() throws {
        if let baseURL = LoadedConfiguration.value(.scanBackend, flag: backend),
           !(baseURL.hasPrefix("http://") || baseURL.hasPrefix("https://")) {
            throw ValidationError("--backend takes an http:// or https:// URL, not '\(baseURL)'.")
        }
    }

    func run() async throws {
        let file = try BuiltinPipelineText.load(pipeline)
        if plan {
            do {
                let parsed = try PipelineFile.parse(file.text, fileName: file.fileName)
                let built = try StandardStages.registry.build(
                    parsed, arguments: ["inputs": .stringList(inputs.isEmpty ? ["INPUT…"] : inputs),
                                        "library": .string(library.libraryPath)],
                    provided: scanBackend == nil ? [] : [.scanBackend])
                print(built.plan)
            } catch {
                printError(error.description)
                throw ExitCode(2)
            }
            return
        }
        var execution = PipelineExecution(
            file: file, inputs: inputs, libraryPath: library.libraryPath, options: ImportOptions(),
            progressMode: progress, commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: try sources.settings(isEnabled: true))
        execution.scanBackend = scanBackend
        try await execution.run()
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
                let description = (try? PipelineFile.parse(BuiltinPipelines.files[name]?.text ?? "", fileName: name))?.description ?? ""
                print("  \(name)  \(description)")
            }
            print("Stages:")
            for descriptor in StandardStages.registry.descriptors {
                print(Self.lines(descriptor).joined(separator: "\n"))
            }
        }

        /// A stage's entry: its name and summary, then what it reads and writes, its required and
        /// optional parameters, and what it needs from the command.
        static func lines(_ descriptor: StageDescriptor) -> [String] {
            let contract = descriptor.contract
            func names(_ data: [StageData]) -> String { data.map(\.rawValue).joined(separator: ", ") }
            var lines = ["  \(descriptor.name) (\(descriptor.kind.rawValue))  \(descriptor.summary)",
                         "      reads: \(names(contract.reads)); writes: \(names(contract.writes))"]
            let required = descriptor.requiredParameters.map { "\($0.name) (\($0.type.rawValue))" }
            lines.append("      required: " + (required.isEmpty ? "none" : required.joined(separator: ", ")))
            let optional = descriptor.parameters.compactMap { spec in
                spec.defaultValue.map { "\(spec.name) (\(spec.type.rawValue), default \($0))" }
            }
            if !optional.isEmpty { lines.append("      optional: " + optional.joined(separator: ", ")) }
            if contract.needsStoredRecords { lines.append("      after: a step that stores records") }
            if contract.dropsRecords {
                lines.append("      passes on: only some of its records (after a step that stores rows read from files, or in a pipeline that stores none)")
            }
            if contract.isSequential { lines.append("      concurrency: 1 (it takes its batches in order)") }
            for resource in contract.resources { lines.append("      needs: \(resource.name) (\(resource.howToGive))") }
            return lines
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prints a built-in pipeline's file.")
        @Argument(help: "A built-in pipeline name or a file.") var pipeline: String
        func run() async throws { print(try BuiltinPipelineText.load(pipeline).text, terminator: "") }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Checks pipeline files against the stage catalogue.")
        @Argument(help: "Pipeline files.") var files: [String]
        func run() async throws {
            var failed = false
            for path in files {
                do {
                    let file = try BuiltinPipelineText.load(path)
                    try StandardStages.registry.validate(try PipelineFile.parse(file.text, fileName: file.fileName),
                                                         provided: RunCommand.resourcesRunCanGive)
                    print("\(file.fileName): ok")
                } catch {
                    printError("\(error)")
                    failed = true
                }
            }
            if failed { throw ExitCode(2) }
        }
    }
}

