import ArgumentParser
import BookpipeCore
import BookpipeIngest
import BookpipePipeline
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

            Overnight: `bookpipe enrich --stale 30d --until 07:00 --contact mailto:you@example.org` asks again
            about records whose answers are older than 30 days, failed lookups whose retry time has come first,
            then records never enriched, then the stalest; it stops at 07:00 (answers in flight saved, exit 0)
            and the same command continues the next night. What changed is kept per record and counted.
            """)

    @Flag(help: "Also retry records whose lookup failed (server errors, timeouts, quota).")
    var failed = false

    @Flag(help: "Also retry records that were not found or need a candidate chosen.")
    var unmatched = false

    @Flag(help: "Re-enrich every record except those a person edited.")
    var all = false

    @Option(help: "Also ask again about records whose answers are older than this (e.g. 30d); their old cached answers are bypassed.")
    var stale: String?

    @Option(help: "Stop at this local time (HH:MM, e.g. 07:00; tomorrow when it has passed today). Rows left are asked by the same command next time.")
    var until: String?

    @Option(name: .customLong("max-duration"), help: "Stop after this long (e.g. 8h, 90m).")
    var maxDuration: String?

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
        var settings = try sources.settings(isEnabled: true, statuses: statuses)
        if let stale {
            guard let age = DurationSyntax.parse(stale), age > .zero else {
                throw ValidationError("--stale takes a duration such as 30d or 12h, not '\(stale)'.")
            }
            settings.staleAfter = age
        }
        var allowed: Duration?
        if let until {
            guard let duration = EnrichmentDeadline.untilClockTime(until) else {
                throw ValidationError("--until takes a local time HH:MM such as 07:00, not '\(until)'.")
            }
            allowed = duration
        }
        if let maxDuration {
            guard let duration = DurationSyntax.parse(maxDuration), duration > .zero else {
                throw ValidationError("--max-duration takes a duration such as 8h or 90m, not '\(maxDuration)'.")
            }
            allowed = min(allowed ?? duration, duration)
        }
        settings.deadline = allowed.map { EnrichmentDeadline(after: $0) }
        try await PipelineExecution(
            file: try BuiltinPipelineText.load(pipeline ?? "enrich"), inputs: [], libraryPath: library.libraryPath, options: ImportOptions(),
            progressMode: progress, commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: settings
        ).run()
    }
}
