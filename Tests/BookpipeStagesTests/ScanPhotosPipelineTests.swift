import BookpipeCore
import BookpipeEnrichment
import BookpipeImaging
import BookpipeIngest
import BookpipePipeline
import BookpipeScan
import BookpipeStore
import BookpipeTesting
import Foundation
import Synchronization
import Testing
@testable import BookpipeStages

/// The scan stages in one process, as `pipelines/scan-photos.yaml` chains them (without
/// enrichment), on a real library file, against the fake vision backend over loopback.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ScanPhotosPipelineTests {
    /// A folder of real JPEGs and a library beside it.
    struct Workspace {
        let folder: URL
        var library: String { folder.appendingPathComponent("library.sqlite").path }

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-scan-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        /// A small striped JPEG, its colours taken from the name (no two photos alike).
        @discardableResult
        func photo(_ name: String) throws -> String {
            let seed = name.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
            var pixels = PixelBuffer(width: 320, height: 240, red: UInt8(seed % 256), green: 200, blue: UInt8(seed / 256))
            for x in 0..<320 where (x / 10) % 2 == 0 {
                for y in 0..<240 { pixels.setPixel(x: x, y: y, red: UInt8(x % 256), green: 40, blue: 90) }
            }
            let path = folder.appendingPathComponent(name).path
            try Data(try JPEGEncoder(quality: 80).encode(pixels, file: name)).write(to: URL(fileURLWithPath: path))
            return path
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// Holds records back after `store-records` once `count` detections of `photo` passed, and
    /// says so; stays suspended until the run is cancelled (a Ctrl-C in the middle of a job).
    struct HoldAfter: Stage {
        let photo: String
        let count: Int
        let reached: AsyncStream<Void>.Continuation
        let seen = Counter()
        var mayFailForBatch: Bool { false }

        func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
            let records = consume batch
            seen.add(records.filter { $0.origin.file == photo }.count, missing: 0)
            if seen.records >= count {
                reached.yield()
                while true { try await Task.sleep(for: .seconds(3600)) }
            }
            return records
        }
    }

    static func detections(_ titles: [(String, Double)]) -> [FakeScanBackend.Detection] {
        titles.map { FakeScanBackend.Detection(title: $0.0, author: "AUTHOR OF \($0.0)", confidence: $0.1) }
    }

    static func options(jobDuration: Duration = .milliseconds(150), _ detections: [String: [FakeScanBackend.Detection]],
                        faults: [String: [FakeScanBackend.Fault]] = [:]) -> FakeScanBackend.Options {
        FakeScanBackend.Options(jobDuration: jobDuration, detectionsByFilename: detections, faultsByFilename: faults)
    }

    /// Runs the scan stages over `photos` against `backend`.
    @discardableResult
    static func scan(_ photos: [String], backend: String, store: LibraryStore, settings: ScanSettings = ScanSettings(),
                     hold: HoldAfter? = nil,
                     clock: any Clock<Duration> = ContinuousClock(),
                     progress: any ProgressSink = NullProgressSink()) async throws -> RunReport {
        let options = ScanBackendOptions(baseURL: backend, settings: settings)
        let resources = StageResources().adding(store).adding(options).adding(ImportOptions())
        let context = StageContext(pipelineName: "scan-photos", progress: progress, clock: clock, resources: resources)
        if let hold {
            return try await PipelineRunner().run(Pipeline("scan-photos") {
                ScanPhotos(photos: photos)
                RouteForReview()
                CopyScanPhotos()
                NormalizeRecords()
                StoreRecords().onFailure(.stopRun)
                SaveScanJobs().onFailure(.stopRun)
                hold
            }, context: context)
        }
        return try await PipelineRunner().run(Pipeline("scan-photos") {
            ScanPhotos(photos: photos)
            RouteForReview()
            CopyScanPhotos()
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
            SaveScanJobs().onFailure(.stopRun)
        }, context: context)
    }

    /// The reasons of the run's `inputFailed` events, in order.
    static func failures(in report: RunReport) -> [String] {
        report.events.compactMap { event -> String? in
            if case .inputFailed(_, let reason) = event { return reason } else { return nil }
        }
    }

    /// The stored records of one photo (by its path as named), ordered by detection index.
    static func stored(_ store: LibraryStore, photo: String) throws -> [BookRecord] {
        var records: [BookRecord] = []
        try store.forEachRecord { if $0.origin.file == photo { records.append($0) } }
        return records.sorted { ($0.scan?.index ?? 0) < ($1.scan?.index ?? 0) }
    }

    @Test("Every detection is stored with a stable id per photo and index, unsure ones routed to review, each job recorded complete")
    func storesDetections() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let a = try workspace.photo("a.jpg"), b = try workspace.photo("b.jpg")
        let backend = FakeScanBackend(options: Self.options([
            "a.jpg": Self.detections([("DUNE", 0.93), ("EMMA", 0.41), ("IT", 0.77)]),
            "b.jpg": Self.detections([("BELOVED", 0.88), ("ULYSSES", 0.35)]),
        ]))
        let base = try backend.start()
        defer { backend.stop() }
        let store = try LibraryStore(path: workspace.library)
        let tally = ScanTally(report: try await Self.scan([workspace.folder.path], backend: base, store: store))

        let first = try Self.stored(store, photo: a)
        #expect(first.map(\.title) == ["DUNE", "EMMA", "IT"])
        #expect(first.map(\.reviewStatus) == [.verified, .needsReview, .verified])
        let hashA = try #require(first.first?.origin.fileHash)
        #expect(first.map(\.id) == (1...3).map { "\(hashA):\($0)" })
        #expect(try Self.stored(store, photo: b).map(\.title) == ["BELOVED", "ULYSSES"])
        #expect(try store.reviewCount(fileHash: hashA) == 1)
        #expect(try store.scanJobs().map(\.phase) == [.complete, .complete])
        #expect(backend.uploads.map(\.provider) == ["gemini", "gemini"])
        #expect(backend.cleanups.count == 2)
        #expect(tally.providers["gemini"]?.photos == 2)
        #expect(tally.providers["gemini"]?.books == 5)
    }

    @Test("A photo whose job fails after some results, and again with the fallback provider, keeps no detection")
    func failedPhotoKeepsNothing() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let a = try workspace.photo("a.jpg")
        let backend = FakeScanBackend(options: Self.options(
            ["a.jpg": Self.detections([("DUNE", 0.93), ("EMMA", 0.81), ("IT", 0.77), ("ULYSSES", 0.7)])],
            faults: ["a.jpg": [.jobError(code: "provider_failed", message: "gemini gave up", afterResults: 3),
                               .jobError(code: "provider_failed", message: "cloudflare gave up", afterResults: 1)]]))
        let base = try backend.start()
        defer { backend.stop() }
        let store = try LibraryStore(path: workspace.library)
        let report = try await Self.scan([a], backend: base, store: store,
                                         settings: ScanSettings(fallbackProvider: .cloudflare))

        #expect(try Self.stored(store, photo: a).isEmpty)
        #expect(backend.uploads.map(\.provider) == ["gemini", "cloudflare"])
        let discarded = report.events.filter { if case .inputDiscarded = $0 { true } else { false } }
        #expect(discarded.count == 2)   // before the fallback's attempt, and when the photo failed for good
        let failures = Self.failures(in: report)
        #expect(failures == ["\(a): the job failed on the backend (provider_failed: cloudflare gave up) (cloudflare)"])
        #expect(try store.scanJobs().map(\.phase) == [.failed])
    }

    @Test("The fallback provider's detections replace the first attempt's partial ones")
    func fallbackReplacesPartialDetections() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let a = try workspace.photo("a.jpg")
        let backend = FakeScanBackend(options: Self.options(
            ["a.jpg": Self.detections([("DUNE", 0.93), ("EMMA", 0.81), ("IT", 0.77)])],
            faults: ["a.jpg": [.jobError(code: "provider_failed", message: "gemini gave up", afterResults: 2)]]))
        let base = try backend.start()
        defer { backend.stop() }
        let store = try LibraryStore(path: workspace.library)
        let tally = ScanTally(report: try await Self.scan([a], backend: base, store: store,
                                                          settings: ScanSettings(fallbackProvider: .cloudflare)))

        #expect(try Self.stored(store, photo: a).map(\.title) == ["DUNE", "EMMA", "IT"])
        #expect(backend.uploads.map(\.provider) == ["gemini", "cloudflare"])
        #expect(backend.uploads.map(\.pixelWidth) == [320, 320])   // both presets keep a small photo's size
        let job = try #require(try store.scanJobs().first)
        #expect(job.phase == .complete)
        #expect(job.provider == "cloudflare")
        #expect(job.attempt == 2)
        #expect(tally.providers["gemini"]?.failures == 1)
        #expect(tally.providers["cloudflare"]?.photos == 1)
    }

    @Test("A photo that changed on disk before its fallback attempt fails by name, keeps nothing, and the run goes on")
    func photoChangedBeforeFallback() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let a = try workspace.photo("a.jpg"), b = try workspace.photo("b.jpg")
        let replacement = try Data(contentsOf: URL(fileURLWithPath: try workspace.photo("other.jpg")))
        try FileManager.default.removeItem(atPath: workspace.folder.appendingPathComponent("other.jpg").path)
        var options = Self.options(["a.jpg": Self.detections([("DUNE", 0.93), ("EMMA", 0.81)])])
        // a's first job fails after one result, and meanwhile the photo is replaced by another one.
        options.chooseFault = { upload in
            guard upload.filename == "a.jpg" && upload.attemptForFilename == 1 else { return nil }
            try? replacement.write(to: URL(fileURLWithPath: a))
            return .jobError(code: "provider_failed", message: "gemini gave up", afterResults: 1)
        }
        let backend = FakeScanBackend(options: options)
        let base = try backend.start()
        defer { backend.stop() }
        let store = try LibraryStore(path: workspace.library)
        let report = try await Self.scan([a, b], backend: base, store: store, settings: ScanSettings(fallbackProvider: .cloudflare))

        #expect(backend.uploads.compactMap(\.filename).sorted() == ["a.jpg", "b.jpg"])   // a is not sent again
        #expect(try Self.stored(store, photo: a).isEmpty)
        #expect(try Self.stored(store, photo: b).count == FakeScanBackend.Options().defaultDetections.count)
        let failures = Self.failures(in: report)
        #expect(failures == ["\(a): \(a) changed while it was being scanned; run the same command again (cloudflare)"])
    }

    @Test("A run cancelled mid-job resumes from the stored job states: the completed photo is skipped, the cut one sent again and its partial detections replaced")
    func resumesAfterCancellation() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let a = try workspace.photo("a.jpg"), b = try workspace.photo("b.jpg")
        let store = try LibraryStore(path: workspace.library)

        // Run 1, on a manual clock: a completes; b's stream drops after two of its six results, and
        // its reconnect waits on the clock, which never moves. Once both results are stored and the
        // reconnect waits, the run is cancelled (Ctrl-C in the middle of b's job).
        let first = FakeScanBackend(options: Self.options([
            "a.jpg": Self.detections([("DUNE", 0.93)]),
            "b.jpg": Self.detections([("B1", 0.9), ("B2", 0.9), ("B3", 0.9), ("B4", 0.9), ("B5", 0.9), ("B6", 0.9)]),
        ], faults: ["b.jpg": [.dropStream(afterResults: 2)]]))
        let firstBase = try first.start()
        defer { first.stop() }
        let clock = ManualClock()
        let (reached, reachedContinuation) = AsyncStream.makeStream(of: Void.self)
        let hold = HoldAfter(photo: b, count: 2, reached: reachedContinuation)
        let run = Task {
            try await Self.scan([a, b], backend: firstBase, store: store, settings: ScanSettings(concurrency: 1),
                                hold: hold, clock: clock)
        }
        var iterator = reached.makeAsyncIterator()
        _ = await iterator.next()
        await clock.waitForSleepers(count: 1)
        run.cancel()
        _ = try? await run.value

        #expect(first.streamConnections.count == 2)   // a's, and b's first (the reconnect never went)
        let hashB = try #require(try Self.stored(store, photo: b).first?.origin.fileHash)
        #expect(try store.scanJob(photoHash: hashB)?.phase == .running)
        #expect(try Self.stored(store, photo: b).map(\.title) == ["B1", "B2"])
        #expect(try Self.stored(store, photo: a).map(\.title) == ["DUNE"])

        // Run 2, the same photos: b's new job has fewer results than run 1 stored.
        let second = FakeScanBackend(options: Self.options(["b.jpg": Self.detections([("NEW", 0.95)])]))
        let secondBase = try second.start()
        defer { second.stop() }
        let report = try await Self.scan([a, b], backend: secondBase, store: store)

        #expect(second.uploads.map(\.filename) == ["b.jpg"])   // a was complete: not sent again
        #expect(try Self.stored(store, photo: a).map(\.title) == ["DUNE"])
        #expect(try Self.stored(store, photo: b).map(\.title) == ["NEW"])
        #expect(try store.scanJob(photoHash: hashB)?.phase == .complete)
        let discarded = report.events.compactMap { event -> String? in
            if case .inputDiscarded(let input, _) = event { return input.path } else { return nil }
        }
        #expect(discarded == [b])
    }

    // MARK: - A backend that cannot be reached

    /// Every progress event of a run, in order.
    final class ProgressLog: ProgressSink {
        private let events = Mutex<[ProgressEvent]>([])
        func emit(_ event: ProgressEvent) { events.withLock { $0.append(event) } }
        var all: [ProgressEvent] { events.withLock { $0 } }

        /// The photo of each `stage` event, in order (an upload attempt is one `uploading`).
        func photos(at stage: String) -> [String] {
            all.compactMap { event in
                if case .photoStage(let photo, stage, _) = event { photo } else { nil }
            }
        }

        /// The last photos-done count the run reported.
        var lastPhotosDone: Int? {
            all.compactMap { event in
                if case .scanAdvanced(let done, _, _) = event { done } else { nil }
            }.last
        }

        var messages: [String] {
            all.compactMap { event in if case .message(let text) = event { text } else { nil } }
        }
    }

    /// A base URL where nothing listens: a server started and stopped again, so its port refuses
    /// connections.
    static func refusedBaseURL() throws -> String {
        // A port bound and never listening, held for the whole test process: a port of a stopped
        // server could be taken by another test's server meanwhile.
        try #require(refusedPort).baseURL
    }

    static let refusedPort = try? ClosedPort()

    /// The photos that started (an `inputStarted` event), by path.
    static func started(in report: RunReport) -> [String] {
        report.events.compactMap { event in if case .inputStarted(let input) = event { input.path } else { nil } }
    }

    @Test("Against a port that refuses connections, two photos in a row fail and the run stops: no other photo is uploaded, started or recorded")
    func unreachableBackendStopsTheRun() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let photos = try ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg", "f.jpg"].map { try workspace.photo($0) }
        let refused = try Self.refusedBaseURL()
        let store = try LibraryStore(path: workspace.library)
        let log = ProgressLog()
        // One job at a time (so 2 in a row stop the run) and no retry: every upload attempt is one
        // `uploading` stage; the clock is never moved, so nothing may wait on it either.
        let report = try await Self.scan([workspace.folder.path], backend: refused, store: store,
                                         settings: ScanSettings(concurrency: 1, uploadRetryDelays: []),
                                         clock: ManualClock(), progress: log)
        let tally = ScanTally(report: report)

        let sent = Array(photos.prefix(2)), unsent = Array(photos.dropFirst(2))
        #expect(log.photos(at: "uploading") == sent)
        #expect(Self.started(in: report) == sent)
        #expect(Set(log.photos(at: "unsent")) == Set(unsent))
        // c and d may have been prepared ahead while a and b ran (when the loader got to them
        // before b gave up); e and f come after the stop in any order of events: not even read.
        let prepared = Set(log.photos(at: "preparing"))
        #expect(prepared.isSuperset(of: sent) && prepared.isSubset(of: photos.prefix(4)), "\(prepared)")
        #expect(try store.scanJobs().map(\.photo).sorted() == sent)
        #expect(try store.scanJobs().map(\.phase) == [.failed, .failed])
        #expect(Self.failures(in: report).count == 2)
        #expect(tally.failedPhotos.map(\.path) == sent)
        #expect(tally.photosUnsent == 4)
        #expect(log.lastPhotosDone == 2, "unsent photos are not done")
        let stop = try #require(tally.stop)
        #expect(stop == ScanStop(backendURL: refused, unreachable: UnreachableBackend(inARow: 2, cause: "connection refused"),
                                 photosUnsent: 4))
        #expect(stop.description == "stopped: the backend at \(refused) could not be reached (connection refused) for 2 photos "
                                    + "in a row; 4 photos not sent. Run the same command when it is reachable again.")
        #expect(log.messages.contains("error: the backend at \(refused) could not be reached (connection refused) for 2 photos "
                                      + "in a row; no new photo is sent (those in flight finish)."), "\(log.messages)")
    }

    @Test("With three jobs at a time against a refused port, the run stops after the first round; photos started meanwhile finish, the rest stay unrecorded")
    func unreachableBackendStopsConcurrentJobs() async throws {
        let concurrency = 3
        let workspace = try Workspace()
        defer { workspace.remove() }
        let photos = try (1...12).map { try workspace.photo(String(format: "shelf%02d.jpg", $0)) }
        let store = try LibraryStore(path: workspace.library)
        let log = ProgressLog()
        let report = try await Self.scan([workspace.folder.path], backend: try Self.refusedBaseURL(), store: store,
                                         settings: ScanSettings(concurrency: concurrency, uploadRetryDelays: []),
                                         clock: ManualClock(), progress: log)
        let tally = ScanTally(report: report)

        // The first `concurrency` photos give up together; a worker that finished first may have
        // started one more photo each before the last of them gave up (in flight: it finishes).
        let uploaded = log.photos(at: "uploading")
        #expect((concurrency...(2 * concurrency - 1)).contains(uploaded.count), "\(uploaded)")
        #expect(Set(uploaded).count == uploaded.count, "one attempt per photo")
        #expect(Set(Self.started(in: report)) == Set(uploaded))
        #expect(Set(try store.scanJobs().map(\.photo)) == Set(uploaded))
        #expect(try store.scanJobs().allSatisfy { $0.phase == .failed })
        let unsent = log.photos(at: "unsent")
        #expect(Set(unsent).isDisjoint(with: uploaded))
        #expect(Set(unsent).union(uploaded) == Set(photos))
        #expect(tally.stop?.unreachable.inARow == concurrency)
        #expect(tally.stop?.photosUnsent == photos.count - uploaded.count)
        #expect(log.lastPhotosDone == uploaded.count)
    }

    @Test("Uploads that time out between uploads the backend answers never stop the run: every photo is sent once")
    func timeoutsBetweenAnswersNeverStop() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let names = ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg", "f.jpg"]
        let photos = try names.map { try workspace.photo($0) }
        // a, c and e are never answered (their uploads time out); b, d and f complete.
        let backend = FakeScanBackend(options: Self.options(jobDuration: .milliseconds(50), [:], faults: [
            "a.jpg": [.stallUpload], "c.jpg": [.stallUpload], "e.jpg": [.stallUpload],
        ]))
        let base = try backend.start()
        defer { backend.stop() }
        let store = try LibraryStore(path: workspace.library)
        let log = ProgressLog()
        let report = try await Self.scan(photos, backend: base, store: store,
                                         settings: ScanSettings(concurrency: 1, uploadRetryDelays: [],
                                                                uploadTimeout: .milliseconds(400)),
                                         progress: log)
        let tally = ScanTally(report: report)

        #expect(backend.uploads.compactMap(\.filename) == names)
        #expect(backend.uploads.map(\.status) == [0, 202, 0, 202, 0, 202])
        #expect(tally.stop == nil)
        #expect(log.photos(at: "unsent").isEmpty)
        #expect(Self.failures(in: report).count == 3)
        #expect(Self.failures(in: report).allSatisfy { $0.contains("timed out (limit 0.4 seconds)") }, "\(Self.failures(in: report))")
        #expect(try store.scanJobs().map(\.phase).filter { $0 == .complete }.count == 3)
    }
}
