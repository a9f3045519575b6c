import ArgumentParser
import BookpipeIngest
import BookpipeScan
import BookpipeStages
import BookpipeStore
import Foundation

extension ScanProvider: ExpressibleByArgument {}

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Sends shelf photos through the vision backend and stores every detected book; unsure ones wait for review.",
        discussion: """
            A folder means its .jpg/.jpeg files; folders inside it are not searched (the run says so once per folder and lists \
            them in the summary: name one to scan it). A photo with the same content as one before it is scanned once. \
            Each photo is prepared for the provider (gemini: 3072 px, quality 90; cloudflare: 1536 px, quality 85), \
            uploaded, and its job's events followed; every detected book is stored as it arrives, detections below \
            0.60 confidence go to the review queue, and the original photo is copied into <library>.photos/ (into the database on PostgreSQL). \
            Ctrl-C or kill, then the same command: completed photos are skipped, cut ones sent again (their partial \
            detections replaced). When the backend cannot be reached (no connection, or every upload times out) for \
            as many photos in a row as run at once, no new photo is sent: the rest stay unsent for the same command \
            to send later. The summary accounts for every photo found: scanned, scanned by an earlier run \
            (skipped), same content as another photo (skipped), failed, could not be prepared (never sent), or \
            not sent. Exit 1 when any photo failed or could not be prepared, a named photo or folder could not be \
            read, or photos were left unsent.
            """)

    @Argument(help: "Shelf photos (JPEG) and folders of them (not the folders inside them).")
    var photos: [String]

    @Option(help: "The vision backend's base URL (default $BOOKPIPE_SCAN_URL, then the configuration file's scan-backend).")
    var backend: String?

    @Option(help: "The AI provider: gemini or cloudflare.")
    var provider: ScanProvider = .gemini

    @Option(name: .customLong("fallback-provider"), help: "Send a photo that failed once more with this provider.")
    var fallbackProvider: ScanProvider?

    @Option(help: "Jobs in flight at once (default: the pipeline file's, 4).")
    var concurrency: Int?

    @Option(name: .customLong("stream-timeout"), help: ArgumentHelp("Seconds a job's stream may stay silent before the job has timed out.", visibility: .hidden))
    var streamTimeout: Double = 300

    @Option(name: .customLong("upload-retry-delays"), help: ArgumentHelp("Seconds between upload retries, comma-separated.", visibility: .hidden))
    var uploadRetryDelays: String = "1,2,4"

    @Flag(name: .customLong("no-enrich"), help: "Scan, route, normalise and store only; `bookpipe enrich` enriches later.")
    var noEnrich = false

    @OptionGroup var sources: EnrichmentOptionGroup

    @Option(help: "Progress on standard error: auto, bar, json or none.")
    var progress: ProgressMode = .auto

    @OptionGroup var library: LibraryOptions

    func validate() throws {
        if let concurrency, concurrency < 1 { throw ValidationError("--concurrency takes a number of jobs, 1 or more.") }
        if baseURL == nil {
            throw ValidationError("No vision backend: give --backend URL, set BOOKPIPE_SCAN_URL or scan-backend in bookpipe.yaml "
                                  + "(for a local demo: swift run bookpipe-fake-services scan-backend).")
        }
        if let baseURL, !(baseURL.hasPrefix("http://") || baseURL.hasPrefix("https://")) {
            throw ValidationError("--backend takes an http:// or https:// URL, not '\(baseURL)'.")
        }
        guard streamTimeout > 0, retryDelays != nil else {
            throw ValidationError("--stream-timeout and --upload-retry-delays take positive seconds.")
        }
    }

    private var baseURL: String? {
        LoadedConfiguration.value(.scanBackend, flag: backend)
    }

    private var retryDelays: [Duration]? {
        let parts = uploadRetryDelays.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.allSatisfy({ $0 != nil && $0! >= 0 }) else { return nil }
        return parts.map { .milliseconds(Int64(($0 ?? 0) * 1000)) }
    }

    func run() async throws {
        let settings = ScanSettings(provider: provider, fallbackProvider: fallbackProvider, concurrency: concurrency ?? 4,
                                    uploadRetryDelays: retryDelays ?? [],
                                    streamIdleTimeout: .milliseconds(Int64(streamTimeout * 1000)))
        var execution = PipelineExecution(
            file: try BuiltinPipelineText.load("scan-photos"), inputs: photos,
            libraryPath: library.libraryPath, options: ImportOptions(), progressMode: progress,
            commandLine: (["bookpipe"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            enrichment: try sources.settings(isEnabled: !noEnrich))
        execution.scanBackend = ScanBackendOptions(baseURL: baseURL ?? "", settings: settings,
                                                   concurrencyIsSet: concurrency != nil)
        execution.showsReviewQueue = true
        try await execution.run()
    }
}

/// The scan lines of the summary: how many photos were found and how each ended (scanned,
/// skipped by an earlier run, skipped as the same content as another photo, failed, could not be
/// prepared, not sent: these add up to the photos found); per provider, photos, books, review
/// items, mean job time, 429s and failed attempts (the provider lines' photos add up to those
/// scanned); then the photos that failed and those that could not be prepared, with their reasons,
/// the named inputs that could not be read, and the folders inside named folders, not searched.
enum ScanSummary {
    static func lines(_ tally: ScanTally, store: LibraryStore) -> [String] {
        var lines: [String] = []
        /// "1 photo", "2 photos".
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        let failed = tally.failedPhotos, unprepared = tally.unpreparedPhotos
        let parts = [(tally.photosScanned, "scanned"),
                     (tally.photosSkipped, "scanned by an earlier run (skipped)"),
                     (tally.photosWithSameContent, "same content as another photo (skipped)"),
                     (failed.count, "failed"),
                     (unprepared.count, "could not be prepared"),
                     (tally.photosUnsent, "not sent")].filter { $0.0 > 0 }
        // "scan: 4 photos" when every photo was scanned; otherwise how each ended.
        let ended = parts.map { "\($0.0) \($0.1)" }
        lines.append("scan: \(count(tally.photosTotal, "photo"))"
                     + (parts.count == 1 && parts[0].1 == "scanned" ? "" : ended.map { ", " + $0 }.joined()))
        for (name, figures) in tally.providers.sorted(by: { $0.key < $1.key }) {
            let review = figures.photoHashes.reduce(0) { $0 + ((try? store.reviewCount(fileHash: $1)) ?? 0) }
            let mean = figures.meanJobTime.map { String(format: "%.1f s", Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) } ?? "-"
            lines.append("  \(name): \(count(figures.photos, "photo")), \(count(figures.books, "book")), "
                         + "\(count(review, "review item")), mean job time \(mean), \(figures.rateLimited) × 429, "
                         + "\(count(figures.failures, "failure"))")
        }
        func list(_ entries: [ScanTally.Entry], _ header: String) {
            guard !entries.isEmpty else { return }
            lines.append("  " + header)
            for entry in entries.sorted(by: { $0.path < $1.path }) { lines.append("    \(entry.reason)") }
        }
        list(failed, "\(count(failed.count, "photo")) failed (no detection kept); run the same command again to retry them:")
        list(unprepared, "\(count(unprepared.count, "photo")) could not be prepared (never sent); "
             + "replace or remove them, then run the same command again:")
        let unreadable = tally.unreadableInputs
        list(unreadable, "\(unreadable.count) \(unreadable.count == 1 ? "photo or folder" : "photos or folders") "
             + "could not be read:")
        let folders = tally.foldersNotSearched
        list(folders, "\(count(folders.count, "folder")) not searched:")
        return lines
    }
}
