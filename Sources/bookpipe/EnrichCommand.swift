import ArgumentParser
import BookpipeCore
import BookpipeIngest
import BookpipeStages

/// `bookpipe enrich`: enriches stored records (pending ones, and on request failed or unmatched ones).
struct EnrichCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enrich",
        abstract: "Enriches the library's stored records from the sources (runs pipelines/enrich.yaml).",
        discussion: """
            By default only pending records (imported with --no-enrich, or left by an interrupted run) are looked up.
            Answers are cached in the library, so running again never asks a source the same question twice
            (--refresh asks again). Ctrl-C stops cleanly; run the same command again to continue.
            """)

    @Flag(help: "Also retry records whose lookup failed (server errors, timeouts, quota).")
    var failed = false

    @Flag(help: "Also retry records that were not found or need a candidate chosen.")
    var unmatched = false

    @Flag(help: "Re-enrich every record except those a person edited.")
    var all = false

    @Option(help: "A pipeline file to run instead of the built-in enrich pipeline.")
    var pipeline: String?

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    @OptionGroup var sources: EnrichmentOptionGroup

    func run() async throws {
        var statuses: [RecordStatus] = [.pending]
        if failed || all { statuses.append(.failed) }
        if unmatched || all { statuses += [.notFound, .needsCandidateSelection] }
        if all { statuses.append(.enriched) }
        try await PipelineExecution(
            file: try BuiltinPipelineText.load(pipeline ?? "enrich"), inputs: [], libraryPath: library.libraryPath, options: ImportOptions(),
            progressMode: progress, commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: try sources.settings(isEnabled: true, statuses: statuses)
        ).run()
    }
}
