import BookpipeImaging
import Foundation
import Synchronization

/// A vision backend for shelf photos on loopback, speaking the protocol of issue 15, for tests,
/// the benchmark and docs/review.md's walkthrough.
///
/// | request | answer |
/// |---|---|
/// | `POST /v3/jobs/scans` (multipart, part `image`, `X-AI-Provider`) | `202 {"jobId", "streamUrl"}`; `429` + `Retry-After` beyond ``Options/maxConcurrentJobs``; `400 {"error"}` without an `image` part or for an unreadable JPEG; scripted faults |
/// | `GET /v3/jobs/scans/{jobId}/events` (`Accept: text/event-stream`; `Last-Event-ID`) | the job's events: `progress`, `result` (with `id:`), `complete` or `error`, each when due, heartbeats while quiet; after a `Last-Event-ID`, the events after that id |
/// | `DELETE /v3/jobs/scans/{jobId}/cleanup` | `204`; `404` for an unknown job |
///
/// A job's events are due at fixed times after its upload (``Options/jobDuration``), so a
/// client that connects late gets what is already due at once and the rest on time.
///
/// ```swift
/// let backend = FakeScanBackend(options: .init(jobDuration: .milliseconds(300),
///                                              faultsByFilename: ["shelf2.jpg": [.serverError()]]))
/// let baseURL = try backend.start()
/// defer { backend.stop() }
/// // … bookpipe scan photos/ --backend baseURL …
/// #expect(backend.uploads.map(\.provider) == ["gemini", "gemini", "gemini"])
/// #expect(backend.peakConcurrentJobs <= 4)
/// ```
///
/// Connections are served by one thread each (``LoopbackHTTPServer``). Always call ``stop()``.
///
/// Thread safety: all state is behind a `Mutex`; every member may be used from any thread.
public final class FakeScanBackend: Sendable {
    /// One `POST` to the upload endpoint, as received.
    public struct Upload: Sendable, Hashable {
        /// 1 for the first upload.
        public var ordinal: Int
        /// `X-AI-Provider`, if sent.
        public var provider: String?
        /// The `image` part's multipart filename, if any.
        public var filename: String?
        /// The uploaded JPEG's stored width from its frame (SOF) header; `nil` when unreadable.
        public var pixelWidth: Int?
        /// The uploaded JPEG's stored height from its frame header; `nil` when unreadable.
        public var pixelHeight: Int?
        /// Bytes of the `image` part (0 without one).
        public var byteCount: Int
        /// Whether the JPEG carries an EXIF orientation tag (an upload should not).
        public var hasOrientationTag: Bool
        /// When it arrived, since ``start()``.
        public var arrival: Duration
        /// The status answered (`202`, `429`, …; `0`: none, ``Fault/stallUpload``).
        public var status: Int
        /// The job created, for a `202` that named one.
        public var jobID: String?
        /// The scripted fault applied, if any (the concurrency limit's `429` is not a fault).
        public var fault: Fault?
    }

    /// One `GET` of a job's event stream.
    public struct StreamConnection: Sendable, Hashable {
        /// The job.
        public var jobID: String
        /// `Last-Event-ID`, if sent.
        public var lastEventID: String?
        /// When it arrived, since ``start()``.
        public var arrival: Duration
    }

    struct Job: Sendable {
        var id: String
        var filename: String?
        /// When the job's clock started: at its upload, or at ``FakeScanBackend/releaseJobs()``
        /// for a held job (nil while it is held).
        var startedAt: ContinuousClock.Instant?
        var timeline: ScanJobTimeline
        var fault: Fault?
        var streamConnections = 0
        var isCleanedUp = false
        /// When the job stops running; nil while it is held (it runs until released and after).
        var endsAt: ContinuousClock.Instant? { startedAt?.advanced(by: timeline.end) }

        /// Whether the job is running at `now` (a held job is).
        func isRunning(at now: ContinuousClock.Instant) -> Bool { endsAt.map { $0 > now } ?? true }
    }

    struct State {
        var baseURL = ""
        var startedAt = ContinuousClock.now
        var uploads: [Upload] = []
        var uploadsPerFilename: [String: Int] = [:]
        var streamConnections: [StreamConnection] = []
        var cleanups: [String] = []
        var jobs: [String: Job] = [:]
        var tooManyRequestsSent = 0
        var peakConcurrentJobs = 0
    }

    /// The behaviour chosen at creation.
    public var options: Options { handler.options }
    private let handler: Handler
    private let server: LoopbackHTTPServer

    /// Creates a backend; call ``start()`` to listen.
    public init(options: Options = Options()) {
        // The server holds the handler, not `self`, so it does not keep the backend alive.
        let handler = Handler(options: options)
        self.handler = handler
        server = LoopbackHTTPServer(recordsRequestBodies: false) { request in handler.respond(to: request) }
    }

    deinit {
        server.stop()
    }

    /// Starts listening on 127.0.0.1 on a free port (or on `port` when it is not 0).
    /// - Returns: the base URL, `http://127.0.0.1:PORT`.
    /// - Throws: ``LoopbackServerError`` if the socket cannot be set up.
    @discardableResult
    public func start(port: UInt16 = 0) throws -> String {
        let port = try server.start(port: port)
        let base = "http://127.0.0.1:\(port)"
        handler.state.withLock {
            if $0.baseURL.isEmpty { $0.startedAt = .now }
            $0.baseURL = base
        }
        return base
    }

    /// Stops listening, closes every connection (streams included) and waits for the server's
    /// threads. Safe to call more than once.
    public func stop() {
        server.stop()
    }

    /// `http://127.0.0.1:PORT` once started (empty before).
    public var baseURL: String { handler.state.withLock { $0.baseURL } }

    /// Every upload, in arrival order (refused ones included).
    public var uploads: [Upload] { handler.state.withLock { $0.uploads } }

    /// Every event-stream request, in arrival order.
    public var streamConnections: [StreamConnection] { handler.state.withLock { $0.streamConnections } }

    /// The job ids of every `DELETE …/cleanup`, in arrival order (unknown ones included).
    public var cleanups: [String] { handler.state.withLock { $0.cleanups } }

    /// `429` answers sent (scripted and for the concurrency limit).
    public var tooManyRequestsSent: Int { handler.state.withLock { $0.tooManyRequestsSent } }

    /// The most jobs that were running at the same moment.
    public var peakConcurrentJobs: Int { handler.state.withLock { $0.peakConcurrentJobs } }

    /// Jobs created so far (`202` with a job id).
    public var jobsCreated: Int { handler.state.withLock { $0.jobs.count } }

    /// Jobs whose `complete` was due by now (failed jobs not counted).
    public var jobsCompleted: Int {
        let now = ContinuousClock.now
        return handler.state.withLock { state in
            state.jobs.values.filter { !$0.isRunning(at: now) && $0.timeline.entries.last?.event.name == "complete" }.count
        }
    }

    /// Starts the clock of every held job (``Options/holdsJobsUntilReleased``): their events are
    /// due from now on, as if they had been uploaded now.
    public func releaseJobs() {
        let now = ContinuousClock.now
        handler.state.withLock { state in
            for (id, job) in state.jobs where job.startedAt == nil { state.jobs[id]?.startedAt = now }
        }
    }

    /// All the detections the backend would send for a photo of this filename.
    public func detections(forFilename filename: String?) -> [Detection] {
        handler.detections(forFilename: filename)
    }
}
