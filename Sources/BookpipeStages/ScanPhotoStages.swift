import BookpipeCore
import BookpipeEnrichment
import BookpipeImaging
import BookpipeIngest
import BookpipePipeline
import BookpipeScan
import BookpipeLibrary
import Foundation
import Synchronization

/// The stages of `bookpipe scan` (`pipelines/scan-photos.yaml`): `scan-photos` (the source that
/// sends shelf photos through the vision backend) and `save-scan-jobs` (the sink that records
/// each photo's job state).
public enum ScanPhotoStages {
    /// `scan-photos` and `save-scan-jobs`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: "scan-photos",
            summary: "Sends shelf photos (files or folders of JPEGs) through the vision backend; one record per detected book.",
            kind: .source,
            parameters: [
                ParameterSpec("photos", .stringList, summary: "the photos and folders of photos"),
                ParameterSpec("concurrency", .integer, default: .integer(4),
                              summary: "jobs in flight at once (the command's --concurrency wins)"),
            ],
            contract: StageContract(reads: [.photos], writes: [.records], filesParameter: "photos", resources: [.scanBackend])
        ) { parameters in
            .source(ScanPhotos(photos: parameters.stringList("photos") ?? [],
                               concurrency: max(1, parameters.integer("concurrency") ?? 4)))
        },
        StageDescriptor(
            name: "save-scan-jobs",
            summary: "Records each photo's scan job state (running, complete, failed), so a rerun skips completed photos.",
            kind: .step, contract: StageContract(reads: [.storedRecords], writes: [.records, .scanJobs])
        ) { _ in .stage(SaveScanJobs()) },
    ]
}

/// What `bookpipe scan` gives the `scan-photos` source: the backend and how to talk to it.
public struct ScanBackendOptions: Sendable {
    /// The backend's base URL (`--backend`, `$BOOKPIPE_SCAN_URL`).
    public var baseURL: String
    /// Providers, concurrency (nil here: the pipeline file's), retries and time limits.
    public var settings: ScanSettings
    /// Whether the command set ``ScanSettings/concurrency`` (otherwise the pipeline file's value counts).
    public var concurrencyIsSet: Bool

    /// Creates options.
    public init(baseURL: String, settings: ScanSettings, concurrencyIsSet: Bool = true) {
        self.baseURL = baseURL
        self.settings = settings
        self.concurrencyIsSet = concurrencyIsSet
    }
}

/// What a scan run did, computed from the run's events (``PipelineEvent/scanPhoto(_:)``): per
/// provider, photos completed, books, 429s, failed attempts, job times, and the fingerprints of
/// the photos completed (to count their review items in the library); and per photo found, how it
/// ended — scanned, skipped (an earlier run completed it, or it has the same content as another
/// photo), failed (with its reason), could not be prepared (never sent), or left unsent because
/// the backend could not be reached — so that these add up to ``photosTotal``. Named inputs that
/// could not be read, and folders inside a named folder (not searched), are kept apart: their
/// photos are not counted.
public struct ScanTally: Sendable {
    /// One provider's figures.
    public struct Provider: Sendable, Hashable {
        /// Photos whose job completed with this provider.
        public var photos = 0
        /// Books they held.
        public var books = 0
        /// 429 answers.
        public var rateLimited = 0
        /// Attempts that failed with this provider (a photo sent again with the fallback provider
        /// after a failure counts here even when the second attempt completes).
        public var failures = 0
        /// Total job time of the completed photos.
        public var jobTime: Duration = .zero
        /// Fingerprints of the completed photos.
        public var photoHashes: [String] = []
        /// Mean job time of the completed photos.
        public var meanJobTime: Duration? { photos == 0 ? nil : jobTime / photos }
    }

    /// A photo (or named input) and why it ended the way it did, as the summary lists it.
    public struct Entry: Sendable, Hashable {
        /// The photo or input as named (a folder's photos as `folder/name`).
        public var path: String
        /// The message for people, starting with ``path``.
        public var reason: String

        /// Creates an entry.
        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// The figures per provider name.
    public private(set) var providers: [String: Provider] = [:]
    /// Photos found in the inputs: the sum of ``photosScanned``, ``photosSkipped``,
    /// ``photosWithSameContent``, ``failedPhotos``, ``unpreparedPhotos`` and ``photosUnsent``
    /// once the run has ended.
    public private(set) var photosTotal = 0
    /// Photos whose job completed in this run (the providers' ``Provider/photos`` together).
    public private(set) var photosScanned = 0
    /// Photos skipped because an earlier run completed their content.
    public private(set) var photosSkipped = 0
    /// Photos skipped because an earlier photo of this run has the same content (each named in
    /// its progress message with the photo it duplicates).
    public private(set) var photosWithSameContent = 0
    /// Photos that were sent and failed for good, with their reasons (no detection kept).
    public private(set) var failedPhotos: [Entry] = []
    /// Photos that could not be read or prepared for the provider (never sent), with their reasons.
    public private(set) var unpreparedPhotos: [Entry] = []
    /// Named photos and folders that could not be read at all (missing, a folder without read
    /// permission), with their reasons; the photos a folder may hold are not in ``photosTotal``.
    public private(set) var unreadableInputs: [Entry] = []
    /// Folders found inside a named folder: not searched (name one to scan it); their photos are not
    /// in ``photosTotal``.
    public private(set) var foldersNotSearched: [Entry] = []
    /// Photos left unsent because the backend could not be reached (neither done nor failed).
    public private(set) var photosUnsent = 0
    private var stoppedBy: (backendURL: String, unreachable: UnreachableBackend)?

    /// The tally of `report`'s scan events.
    public init(report: RunReport) {
        for event in report.events {
            guard case .scanPhoto(let scan) = event else { continue }
            switch scan {
            case .found(let photos):
                photosTotal += photos
            case .completed(let provider, let books, let jobTime, let photoHash):
                photosScanned += 1
                providers[provider, default: Provider()].photos += 1
                providers[provider, default: Provider()].books += books
                providers[provider, default: Provider()].jobTime += jobTime
                providers[provider, default: Provider()].photoHashes.append(photoHash)
            case .skippedEarlierRun:
                photosSkipped += 1
            case .sameContent:
                photosWithSameContent += 1
            case .failed(let photo, let message, let sent):
                if sent {
                    failedPhotos.append(Entry(path: photo, reason: message))
                } else {
                    unpreparedPhotos.append(Entry(path: photo, reason: message))
                }
            case .unsent:
                photosUnsent += 1
            case .unreadableInput(let path, let message):
                unreadableInputs.append(Entry(path: path, reason: message))
            case .folderNotSearched(let path, let message):
                foldersNotSearched.append(Entry(path: path, reason: message))
            case .rateLimited(let provider):
                providers[provider, default: Provider()].rateLimited += 1
            case .attemptFailed(let provider):
                providers[provider, default: Provider()].failures += 1
            case .stoppedSending(let backendURL, let cause, let photosInARow):
                stoppedBy = (backendURL, UnreachableBackend(inARow: photosInARow, cause: cause))
            }
        }
    }

    /// Why the run stopped sending photos, and how many it left unsent; nil when it did not stop.
    public var stop: ScanStop? {
        stoppedBy.map { ScanStop(backendURL: $0.backendURL, unreachable: $0.unreachable, photosUnsent: photosUnsent) }
    }
}

/// Where a scan run stands while it works, for its progress line: photos done of those found, and
/// books found. The run's own counter (the summary is made from its events, ``ScanTally``).
private final class ScanProgressCounter: Sendable {
    private let counts = Mutex((found: 0, done: 0, books: 0))

    func found(_ photos: Int) { counts.withLock { $0.found += photos } }

    /// Counts a photo that is done (with its books) and returns the progress event.
    func photoDone(books: Int = 0) -> ProgressEvent {
        counts.withLock { counts in
            counts.done += 1
            counts.books += books
            return .scanAdvanced(photosDone: counts.done, photosTotal: counts.found, books: counts.books)
        }
    }
}

/// Why a scan run stopped sending photos before the end: the backend could not be reached for
/// ``ScanSettings/photosUnreachableInARowToStop`` photos in a row (see
/// ``ReachabilityStateMachine`` for the rule). Its description is the summary's line.
public struct ScanStop: Sendable, Hashable, CustomStringConvertible {
    /// The backend's base URL (user name, password and keys removed).
    public var backendURL: String
    /// How many photos in a row could not reach it, and why.
    public var unreachable: UnreachableBackend
    /// Photos never sent: no job, no record, no `scan_jobs` row, so the same command sends them.
    public var photosUnsent: Int

    /// Creates a value.
    public init(backendURL: String, unreachable: UnreachableBackend, photosUnsent: Int) {
        self.backendURL = backendURL
        self.unreachable = unreachable
        self.photosUnsent = photosUnsent
    }

    /// `stopped: the backend at http://127.0.0.1:9 could not be reached (connection refused) for 4
    /// photos in a row; 196 photos not sent. Run the same command when it is reachable again.`
    /// (`error:` instead of `stopped:`, and no count, when every photo had been sent already.)
    public var description: String {
        let reached = "the backend at \(backendURL) could not be reached (\(unreachable.cause)) "
            + "for \(unreachable.inARow) photos in a row"
        let again = "Run the same command when it is reachable again."
        guard photosUnsent > 0 else { return "error: \(reached). \(again)" }
        return "stopped: \(reached); \(photosUnsent) \(photosUnsent == 1 ? "photo" : "photos") not sent. \(again)"
    }
}

/// Sends shelf photos through the vision backend (``ScanJobRunner``) and emits one record per
/// detected book the moment its `result` event arrives — a source: it never writes to the library.
///
/// The photos are the named files and the `.jpg`/`.jpeg` files of the named folders, in order; a
/// folder inside a named folder is not searched (a progress message names it, and
/// ``ScanTally/foldersNotSearched`` lists it), and a named input that cannot be read gets an
/// ``PipelineEvent/inputFailed(path:reason:)`` (and ``ScanTally/unreadableInputs``).
///
/// For each photo, in order: read it and take its fingerprint (a photo an earlier run completed,
/// or with the same content as an earlier photo of this run, is skipped with a progress message
/// naming why, and no event); prepare it with the provider's preset (one photo ahead of the jobs,
/// on this task group); then, in one of ``concurrency`` workers, its job: an
/// ``PipelineEvent/inputStarted(_:)`` (format `scan-photo`), a ``PipelineEvent/scanJob(_:)`` per
/// phase, an ``PipelineEvent/inputDiscarded(_:reason:)`` before an attempt whose photo may hold
/// detections from an earlier attempt or run, the records, and ``PipelineEvent/inputFinished(_:rowsRead:)``
/// when the job completed — or, when it failed for good, an ``PipelineEvent/inputDiscarded(_:reason:)``
/// and ``PipelineEvent/inputFailed(path:reason:)`` naming the photo and the reason.
///
/// When the backend cannot be reached (``ScanSettings/photosUnreachableInARowToStop`` photos in a
/// row gave up because no connection could be made or their uploads timed out; the rule is
/// ``ReachabilityStateMachine``'s), no new photo is started: the photos in flight finish
/// their own retries, and every other photo is left unsent — no event, no record, no `scan_jobs`
/// row (so the same command sends it later), and beyond the few prepared ahead not even read —
/// with a progress stage `unsent`. The run itself ends normally; ``ScanTally/stop`` says why it
/// stopped and how many photos it left.
///
/// A record's id is `<photo fingerprint>:<index>` (the 1-based position among the job's results),
/// its `source.file` the photo as named on the command line, its photo the original photo (which
/// `copy-scan-photos` copies into the managed folder).
public struct ScanPhotos: SourceStage {
    /// The photos and folders of photos.
    public var photos: [String]
    /// Jobs in flight at once, unless the command says.
    public var concurrency: Int
    /// The run's progress line (photos done, books); the summary counts the run's events.
    private let progressCounter = ScanProgressCounter()

    /// Creates the source.
    public init(photos: [String], concurrency: Int = 4) {
        self.photos = photos
        self.concurrency = concurrency
    }

    /// A photo read and prepared for the first provider (only the prepared JPEG is held: the
    /// original is read again for a fallback provider, so waiting photos cost their upload size).
    struct LoadedPhoto: Sendable {
        var path: String
        var hash: String
        var prepared: [UInt8]
        var hadEarlierJob: Bool
        var input: InputFile
    }

    /// Emits every photo's records and events (see the type's discussion).
    /// - Throws: ``PipelineError/missingResource(step:resource:)`` without ``ScanBackendOptions``;
    ///   `CancellationError`. A photo's failure is an event, never a throw.
    public func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        var options = try context.require(ScanBackendOptions.self, for: name)
        if !options.concurrencyIsSet { options.settings.concurrency = concurrency }
        let settings = options.settings
        let store = context.resource((any Library).self)
        var paths: [String] = []
        for input in photos {
            let listing = Self.listPhotos(in: input)
            paths += listing.photos
            for folder in listing.folders {
                let note = "\(folder): a folder inside \(input), not searched (name it to scan it)"
                context.progress.emit(.message(note))
                context.report(.scanPhoto(.folderNotSearched(path: folder, message: note)))
            }
            if let unreadable = listing.unreadable {
                context.progress.emit(.message("error: \(unreadable.reason)"))
                context.report(.scanPhoto(.unreadableInput(path: unreadable.path, message: unreadable.reason)))
                try await emit.event(.inputFailed(path: input, reason: unreadable.reason))
            }
        }
        context.report(.scanPhoto(.found(photos: paths.count)))
        progressCounter.found(paths.count)
        var configuration = HTTPClientConfiguration(requestTimeout: settings.uploadTimeout,
                                                    maxRequestsPerHost: settings.concurrency * 2 + 4)
        configuration.acceptsCompressedResponses = false
        let http = try HTTPClient(configuration: configuration)
        do {
            try await run(paths, http: http, clock: context.clock, emit: emit, options: options, store: store,
                          context: context)
        } catch {
            await http.shutdown()
            throw error
        }
        await http.shutdown()
    }

    /// The photos' jobs, on the run's clock (``StageContext/clock``; opened from the existential
    /// so the runner's waits and job times use its instants).
    private func run<C: Clock<Duration>>(_ photoPaths: [String], http: HTTPClient, clock: C,
                                         emit: BatchEmitter<BookRecord>, options runOptions: ScanBackendOptions,
                                         store: (any Library)?, context: StageContext) async throws {
        let settings = runOptions.settings
        let runner = ScanJobRunner(client: ScanBackendClient(baseURL: runOptions.baseURL, http: http,
                                                             streamIdleTimeout: settings.streamIdleTimeout),
                                   settings: settings, clock: clock)
        // Prepared photos wait here for a free job: as many as run at once, so jobs that end close
        // together all find their next photo ready.
        let queue = BatchChannel<LoadedPhoto>(capacity: settings.concurrency)
        // Jobs to clean up, fire-and-forget: one per accepted job, so the buffer stays small.
        let (endedJobs, cleanUps) = AsyncStream<(jobID: String, photo: String)>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Each cleanup runs beside the jobs; a failure is a warning, never the photo's.
                // Pending ones are finished before the run ends, dropped when it is cancelled.
                await withTaskGroup(of: Void.self) { cleaning in
                    for await ended in endedJobs {
                        cleaning.addTask {
                            if let problem = await runner.client.cleanUp(jobID: ended.jobID) {
                                context.progress.emit(.message("warning: \(ended.photo): \(problem) (the photo is not affected)."))
                            }
                        }
                    }
                }
            }
            defer { cleanUps.finish() }
            try await scanPhotos(photoPaths, runner: runner, queue: queue, cleanUps: cleanUps, emit: emit,
                                 options: runOptions, store: store, context: context)
            cleanUps.finish()
            try await group.waitForAll()
        }
    }

    /// Prepares the photos ahead of the jobs and runs up to ``ScanSettings/concurrency`` jobs.
    private func scanPhotos<C: Clock<Duration>>(_ photoPaths: [String], runner: ScanJobRunner<C>,
                                                queue: BatchChannel<LoadedPhoto>,
                                                cleanUps: AsyncStream<(jobID: String, photo: String)>.Continuation,
                                                emit: BatchEmitter<BookRecord>, options runOptions: ScanBackendOptions,
                                                store: (any Library)?, context: StageContext) async throws {
        let settings = runOptions.settings
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { queue.finish() }
                var seen: [String: String] = [:]  // fingerprint → the first path with that content
                for path in photoPaths {
                    try Task.checkCancellation()
                    if runner.reachability.stop != nil {
                        leaveUnsent(path, options: runOptions, context: context)
                        continue
                    }
                    if let photo = try await load(path, provider: settings.provider, store: store, emit: emit,
                                                  options: runOptions, context: context, seen: &seen) {
                        try await queue.send(photo)
                    }
                }
            }
            for _ in 0..<settings.concurrency {
                group.addTask {
                    while let photo = try await queue.receive() {
                        // Asked as late as possible: a photo prepared before the stop is not sent either.
                        if runner.reachability.stop != nil {
                            leaveUnsent(photo.path, options: runOptions, context: context)
                            continue
                        }
                        try await scan(photo, runner: runner, cleanUps: cleanUps, emit: emit, options: runOptions,
                                       context: context)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// What one input names: its photos and the folders inside it, which are not searched; or
    /// why it cannot be read.
    struct Listing: Equatable {
        /// The file itself, or a folder's `.jpg`/`.jpeg` files, sorted.
        var photos: [String] = []
        /// The folders inside a named folder, sorted: not searched, so that what is scanned is
        /// exactly what was named (the summary lists them).
        var folders: [String] = []
        /// Why the input cannot be read (missing, a folder without read permission); nil when it can.
        var unreadable: ScanTally.Entry?
    }

    /// The photos an input names: the file itself, or a folder's `.jpg`/`.jpeg` files (not
    /// hidden ones, not folders), sorted, and the folders inside it (not hidden ones); or why the
    /// input cannot be read (``Listing/unreadable``).
    static func listPhotos(in input: String) -> Listing {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else {
            return Listing(unreadable: ScanTally.Entry(path: input, reason: "\(input): no such photo or folder"))
        }
        guard isFolder.boolValue else { return Listing(photos: [input]) }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: input)
        } catch {
            return Listing(unreadable: ScanTally.Entry(path: input, reason: "\(input): the folder cannot be read "
                                                       + "(\((error as NSError).localizedDescription)); check its permissions"))
        }
        var listing = Listing()
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = input.hasSuffix("/") ? input + name : input + "/" + name
            var isSubfolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isSubfolder)
            let lower = name.lowercased()
            if isSubfolder.boolValue {
                listing.folders.append(path)
            } else if lower.hasSuffix(".jpg") || lower.hasSuffix(".jpeg") {
                listing.photos.append(path)
            }
        }
        return listing
    }

    /// Reads a photo, skips it when an earlier run completed its job, and prepares it for the
    /// first provider. Returns nil when the photo is done (skipped or failed; reported here).
    private func load(_ path: String, provider: ScanProvider, store: (any Library)?, emit: BatchEmitter<BookRecord>,
                      options: ScanBackendOptions, context: StageContext,
                      seen: inout [String: String]) async throws -> LoadedPhoto? {
        context.progress.emit(.photoStage(photo: path, stage: "preparing", progress: nil))
        let bytes: [UInt8]
        do {
            bytes = try FileIO.read(path)
        } catch {
            try await fail(path, reason: "\(error)", input: nil, emit: emit, options: options, context: context,
                           sent: false)
            return nil
        }
        var fingerprint = ContentFingerprint()
        bytes.withUnsafeBytes { fingerprint.update($0) }
        let hash = fingerprint.finalize()
        if let first = seen[hash] {
            // The same photo twice (a copy under another name): only its first name counts; it is
            // scanned, skipped or failed as that one.
            context.progress.emit(.photoStage(photo: path, stage: "skipped", progress: nil))
            context.progress.emit(.message("\(path): same content as \(first); skipped."))
            context.report(.scanPhoto(.sameContent(photo: path)))
            context.progress.emit(progressCounter.photoDone())
            return nil
        }
        seen[hash] = path
        let input = InputFile(path: path, fileHash: hash, format: "scan-photo", formatDescription: "shelf photo",
                              encoding: "JPEG", size: bytes.count)
        let earlier = try await store?.scanJob(photoHash: hash)
        if let earlier, earlier.phase == .complete {
            // Nothing of it reaches the store step, so the summary has this line only (not also
            // "already imported").
            context.progress.emit(.photoStage(photo: path, stage: "skipped", progress: nil))
            let name = earlier.photo == path ? "" : " as \(earlier.photo)"
            context.progress.emit(.message("\(path): scanned by an earlier run\(name) (\(earlier.books ?? 0) books); skipped."))
            context.report(.scanPhoto(.skippedEarlierRun(photo: path)))
            context.progress.emit(progressCounter.photoDone())
            return nil
        }
        let knownFile = try await store?.sourceFile(hash: hash)
        let hadEarlierJob = earlier != nil || knownFile != nil
        do {
            let prepared = try ImagePreparer().prepare(photo: bytes, file: path, preset: provider.preset, fixedQuality: true)
            return LoadedPhoto(path: path, hash: hash, prepared: prepared.jpeg,
                               hadEarlierJob: hadEarlierJob, input: input)
        } catch {
            try await fail(path, reason: error.description, input: nil, emit: emit, options: options, context: context,
                           sent: false)
            return nil
        }
    }

    /// Runs one photo's job and turns its updates into records and events.
    private func scan<C: Clock<Duration>>(_ photo: LoadedPhoto, runner: ScanJobRunner<C>,
                                          cleanUps: AsyncStream<(jobID: String, photo: String)>.Continuation,
                                          emit: BatchEmitter<BookRecord>, options: ScanBackendOptions,
                                          context: StageContext) async throws {
        let input = photo.input
        let path = photo.path
        try await emit.event(.inputStarted(input))
        let filename = path.split(separator: "/").last.map(String.init) ?? path
        let firstProvider = runner.settings.provider, firstJPEG = photo.prepared, hash = photo.hash
        var job = ScanJobState(photo: path, photoHash: photo.hash, provider: firstProvider.rawValue, attempt: 1, phase: .running)
        var provider = firstProvider
        var mayHoldDetections = photo.hadEarlierJob
        var failure: String?
        var stoppedSending: UnreachableBackend?
        var completedBooks = 0
        do {
            failure = try await runner.scan(filename: filename, prepare: { provider in
                if provider == firstProvider { return firstJPEG }
                do {
                    let bytes = try FileIO.read(path)
                    var fingerprint = ContentFingerprint()
                    bytes.withUnsafeBytes { fingerprint.update($0) }
                    guard fingerprint.finalize() == hash else { throw ScanPhotoChanged(path: path) }
                    return try ImagePreparer().prepare(photo: bytes, file: path, preset: provider.preset,
                                                       fixedQuality: true).jpeg
                } catch {
                    throw ScanPhotoPreparationFailed(reason: "\(error)")
                }
            }, report: { update in
                switch update {
                case .attemptStarted(let next, let attempt):
                    provider = next
                    if mayHoldDetections {
                        try await emit.event(.inputDiscarded(input, reason: "sent again (attempt \(attempt), \(next))"))
                    }
                    mayHoldDetections = true
                    job = ScanJobState(photo: path, photoHash: photo.hash, provider: next.rawValue, attempt: attempt,
                                       phase: .running, rateLimited: job.rateLimited)
                    try await emit.event(.scanJob(job))
                case .stage(let stage, let progress):
                    context.progress.emit(.photoStage(photo: path, stage: stage, progress: progress))
                case .rateLimited:
                    job.rateLimited += 1
                    context.report(.scanPhoto(.rateLimited(provider: provider.rawValue)))
                case .accepted(let jobID):
                    job.jobID = jobID
                case .detection(let index, let detection):
                    switch Self.record(detection, index: index, photo: photo) {
                    case .success(let record): try await emit([record])
                    case .failure(let rejection):
                        try await emit.event(.rowsRejected([RejectedRow(
                            fileHash: photo.hash, file: photo.path, line: index, row: index, column: nil,
                            reason: rejection.reason, rawText: String(detection.json.prefix(RejectedRow.rawTextLimit)))]))
                    }
                case .completed(let books, let jobTime):
                    job.phase = .complete
                    job.books = books
                    job.jobTime = jobTime
                    try await emit.event(.inputFinished(input, rowsRead: books))
                    try await emit.event(.scanJob(job))
                    context.report(.scanPhoto(.completed(provider: provider.rawValue, books: books, jobTime: jobTime,
                                                         photoHash: photo.hash)))
                    completedBooks = books
                    context.progress.emit(.photoStage(photo: path, stage: "complete", progress: 1))
                case .attemptFailed(let failure, let next):
                    context.report(.scanPhoto(.attemptFailed(provider: provider.rawValue)))
                    if let next {
                        context.progress.emit(.message("warning: \(path): \(failure) (\(provider)); sending it again with \(next)."))
                    }
                case .ended(let jobID):
                    cleanUps.yield((jobID: jobID, photo: path))
                case .backendUnreachable(let unreachable):
                    stoppedSending = unreachable
                }
            })?.description
        } catch let preparation as ScanPhotoPreparationFailed {
            // The fallback provider's preparation failed: the photo fails, the run goes on.
            failure = preparation.reason
        }
        if let failure {
            job.phase = .failed
            job.failure = failure
            try await fail(path, reason: "\(path): \(failure) (\(provider))", input: input, emit: emit, options: options,
                           context: context, sent: true, job: job)
            if let stoppedSending {
                context.report(.scanPhoto(.stoppedSending(backendURL: URLRedaction.redact(options.baseURL),
                                                          cause: stoppedSending.cause, photosInARow: stoppedSending.inARow)))
                context.progress.emit(.message(
                    "error: the backend at \(URLRedaction.redact(options.baseURL)) could not be reached (\(stoppedSending.cause)) "
                    + "for \(stoppedSending.inARow) photos in a row; no new photo is sent (those in flight finish)."))
            }
            return
        }
        context.progress.emit(progressCounter.photoDone(books: completedBooks))
    }

    /// Reports a photo that failed for good: its detections discarded, the reason by name; `sent`
    /// says whether it reached the backend (otherwise it could not be read or prepared).
    private func fail(_ path: String, reason: String, input: InputFile?, emit: BatchEmitter<BookRecord>,
                      options: ScanBackendOptions, context: StageContext, sent: Bool,
                      job: ScanJobState? = nil) async throws {
        let message = reason.hasPrefix(path) ? reason : "\(path): \(reason)"
        context.progress.emit(.message("error: \(message)"))
        context.progress.emit(.photoStage(photo: path, stage: "failed", progress: nil))
        if let input { try await emit.event(.inputDiscarded(input, reason: message)) }
        try await emit.event(.inputFailed(path: path, reason: message))
        if let job { try await emit.event(.scanJob(job)) }
        context.report(.scanPhoto(.failed(photo: path, message: message, sent: sent)))
        context.progress.emit(progressCounter.photoDone())
    }

    /// Leaves a photo unsent after the run stopped sending: progress says so, nothing else
    /// happens (no event reaches the library, so the same command sends it later).
    private func leaveUnsent(_ path: String, options: ScanBackendOptions, context: StageContext) {
        context.progress.emit(.photoStage(photo: path, stage: "unsent", progress: nil))
        context.report(.scanPhoto(.unsent(photo: path)))
    }

    /// The record of one detection, by the rules a scan file's detection follows
    /// (``ScanDetectionRules``): nothing but what the backend sent; or why it cannot be a record
    /// (no title), which is stored as a rejected row.
    static func record(_ detection: ScanBackendDetection, index: Int,
                       photo: LoadedPhoto) -> Result<BookRecord, ScanDetectionRules.Rejection> {
        let origin = RecordOrigin(file: photo.path, fileHash: photo.hash, row: index, line: index, format: "scan",
                                  rawFields: [detection.json], scan: photo.path)
        return ScanDetectionRules.record(json: detection.json, named: "the backend's detection \(index) of \(photo.path)",
                                         origin: origin, photoPath: photo.path, index: index)
    }
}

/// Records each photo's scan job state in the library (``LibraryStore/saveScanJob(_:runID:)``)
/// as its ``PipelineEvent/scanJob(_:)`` event passes. Placed after `store-records`: the library's
/// writer commits in submission order, so a job is recorded complete only after its detections.
public struct SaveScanJobs: Stage {
    /// Creates the stage.
    public init() {}

    /// Passes records on unchanged.
    public var mayFailForBatch: Bool { false }

    /// Passes the batch on.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        batch
    }

    /// Stores a job state event, and passes every event on.
    /// - Throws: ``StoreError`` when the write fails; ``PipelineError/missingResource(step:resource:)``
    ///   when no library is open.
    public func observe(_ event: PipelineEvent, in context: StageContext) async throws -> [PipelineEvent] {
        if case .scanJob(let state) = event {
            let store = try context.require((any Library).self, for: name)
            let runID = try await context.resource(LibraryRun.self)?.id(in: store, pipeline: context.pipelineName)
            try await store.saveScanJob(state, runID: runID)
        }
        return [event]
    }
}

/// A photo whose content changed between its first attempt and its fallback attempt: its
/// detections would no longer belong to the fingerprint they are stored under.
struct ScanPhotoChanged: Error, CustomStringConvertible {
    let path: String
    var description: String { "\(path) changed while it was being scanned; run the same command again" }
}

/// Why a photo could not be prepared for its fallback provider (the photo fails by name).
struct ScanPhotoPreparationFailed: Error {
    let reason: String
}
