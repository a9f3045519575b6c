import BookpipeHTTP
import BookpipePipeline
import Foundation

/// How `bookpipe scan` talks to the backend: providers, concurrency, retries and time limits.
public struct ScanSettings: Sendable, Hashable {
    /// The provider every photo is sent to first (default gemini).
    public var provider: ScanProvider
    /// The provider a photo that failed is sent to once more (its own preset); nil: none.
    public var fallbackProvider: ScanProvider?
    /// Jobs in flight at once (default 4).
    public var concurrency: Int
    /// Waits before retrying an upload that failed with a 5xx or a transport error (1, 2, 4 s).
    public var uploadRetryDelays: [Duration]
    /// Silence on a stream after which the job has timed out (5 minutes).
    public var streamIdleTimeout: Duration
    /// Reconnects to a dropped stream in a row without a new result (default 5).
    public var maxReconnects: Int
    /// The wait before reconnecting when the stream set no `retry:` (default 1 s).
    public var reconnectDelay: Duration
    /// The longest `Retry-After` waited out (default 15 minutes).
    public var longestRateLimitWait: Duration
    /// The longest a job may run from its upload to its `complete` (default 30 minutes): a stream
    /// that keeps sending heartbeats but never completes fails the photo after it.
    public var longestJob: Duration
    /// The longest an upload may take, connecting included, before it has timed out (default 2
    /// minutes): the request timeout of the runner's HTTP client, set by whoever creates it (the
    /// `scan-photos` source does). A timed-out upload did not reach the backend.
    public var uploadTimeout: Duration

    /// Photos in a row whose uploads could not reach the backend after which the run stops
    /// sending new ones: ``concurrency``, at least 2 (see ``ReachabilityStateMachine``).
    ///
    /// As many as run at once, because against a backend that is down the photos in flight all
    /// give up together, after the same retries: the first round decides, and no photo after it
    /// waits out its retries for nothing. At least 2, so one unlucky photo never stops a run.
    public var photosUnreachableInARowToStop: Int { max(2, concurrency) }

    /// Creates settings; every argument defaults to the documented value.
    public init(provider: ScanProvider = .gemini, fallbackProvider: ScanProvider? = nil, concurrency: Int = 4,
                uploadRetryDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(4)],
                streamIdleTimeout: Duration = .seconds(300), maxReconnects: Int = 5,
                reconnectDelay: Duration = .seconds(1), longestRateLimitWait: Duration = .seconds(900),
                longestJob: Duration = .seconds(1800), uploadTimeout: Duration = .seconds(120)) {
        self.longestJob = longestJob
        self.uploadTimeout = uploadTimeout
        self.provider = provider
        self.fallbackProvider = fallbackProvider
        self.concurrency = max(1, concurrency)
        self.uploadRetryDelays = uploadRetryDelays
        self.streamIdleTimeout = streamIdleTimeout
        self.maxReconnects = max(0, maxReconnects)
        self.reconnectDelay = reconnectDelay
        self.longestRateLimitWait = longestRateLimitWait
    }
}

/// What happens to one photo's job, as it happens; ``ScanJobRunner`` reports these in order.
public enum ScanJobUpdate: Sendable, Hashable {
    /// An attempt starts with this provider (1: the first; 2: the fallback). Whatever an
    /// earlier attempt reported as detections is to be forgotten.
    case attemptStarted(provider: ScanProvider, attempt: Int)
    /// A stage of the work: `preparing`, `uploading`, `waiting` (rate limited), or the backend's
    /// (`looking`, `reading`, `enriching`), with how far it is when known.
    case stage(String, progress: Double?)
    /// The backend answered an upload with 429.
    case rateLimited
    /// The backend accepted the photo as this job.
    case accepted(jobID: String)
    /// One detected book, with its 1-based index among the job's results.
    case detection(index: Int, ScanBackendDetection)
    /// The job completed with `books` detections, after `jobTime` (upload to `complete`).
    case completed(books: Int, jobTime: Duration)
    /// The attempt failed; `retryingWith` is the fallback provider it is sent to next, if any.
    case attemptFailed(ScanFailure, retryingWith: ScanProvider?)
    /// This photo was given up because its uploads could not reach the backend, and it is the
    /// one that met ``ScanSettings/photosUnreachableInARowToStop``: from now on
    /// ``BackendReachability/stop`` is set and no new photo is to be started. Reported once per
    /// runner, after the photo's last ``attemptFailed(_:retryingWith:)``.
    case backendUnreachable(UnreachableBackend)
    /// The job is over (after its `complete` or `error`, or once its stream was given up): it is
    /// the caller's to clean up with ``ScanBackendClient/cleanUp(jobID:)``, fire-and-forget — the
    /// runner does not wait for it, so the photo's next attempt or the next photo goes at once.
    case ended(jobID: String)
}

/// Runs one photo's scan job through the backend: upload (through the backend's ``UploadGate``,
/// retrying 5xx and transport errors after 1, 2, 4 s), the event stream (reconnecting with
/// `Last-Event-ID` when it drops, counting result indexes across reconnects), and once more with
/// the fallback provider when the first attempt failed. Each job that was accepted ends with a
/// ``ScanJobUpdate/ended(jobID:)`` update: the caller cleans it up without holding the photo back.
///
/// Share one runner (and so one gate and one ``reachability``) between every photo sent to the
/// same backend. Every upload attempt and every photo given up is reported to ``reachability``;
/// once it has a ``BackendReachability/stop`` (``ScanSettings/photosUnreachableInARowToStop``
/// photos in a row could not reach the backend), the caller starts no new photo. The runner
/// itself never refuses one: a photo already in flight finishes its own retries.
///
/// Every wait (a 429 pause, the 1, 2, 4 s before an upload is retried, the delay before a
/// reconnect) sleeps on the injected clock, and job times are measured on it; tests pass a
/// ``ManualClock``. Only the stream's idle timeout is measured by the HTTP client.
public struct ScanJobRunner<C: Clock<Duration>>: Sendable {
    /// The protocol client.
    public let client: ScanBackendClient
    /// The settings.
    public let settings: ScanSettings
    /// The backend's upload gate (429 pauses).
    public let gate: UploadGate<C>
    /// Whether the backend can still be reached: ask its ``BackendReachability/stop`` before
    /// starting a photo.
    public let reachability: BackendReachability
    /// The clock every wait sleeps on.
    public var clock: C { gate.clock }

    /// Creates a runner.
    /// - Parameters:
    ///   - client: The protocol client.
    ///   - settings: Providers, retries and time limits.
    ///   - clock: The clock every wait sleeps on (tests pass a ``ManualClock``).
    ///   - now: Wall-clock time, to read `Retry-After` dates (default `Date()`).
    public init(client: ScanBackendClient, settings: ScanSettings, clock: C,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.settings = settings
        self.gate = UploadGate(clock: clock, longestWait: settings.longestRateLimitWait, now: now)
        self.reachability = BackendReachability(photosInARowToStop: settings.photosUnreachableInARowToStop)
    }

    /// Scans one photo. When its last attempt's upload was given up because the backend could not
    /// be reached, the photo counts towards ``reachability``'s stop (and reports
    /// ``ScanJobUpdate/backendUnreachable(_:)`` when it is the one that stops the run).
    /// - Parameters:
    ///   - filename: The photo's file name (sent as the upload's `filename`).
    ///   - prepare: Prepares the photo for a provider's preset (called per attempt; may throw an
    ///     imaging error, which fails the photo without any upload).
    ///   - report: Receives every update, in order; it may suspend (back-pressure).
    /// - Returns: nil when the photo's job completed, otherwise the last attempt's failure.
    /// - Throws: what `prepare` or `report` throw; `CancellationError`.
    public func scan(filename: String, prepare: @Sendable (ScanProvider) async throws -> [UInt8],
                     report: (ScanJobUpdate) async throws -> Void) async throws -> ScanFailure? {
        var providers = [settings.provider]
        if let fallback = settings.fallbackProvider, fallback != settings.provider { providers.append(fallback) }
        var lastFailure: FailedAttempt?
        for (number, provider) in providers.enumerated() {
            try await report(.attemptStarted(provider: provider, attempt: number + 1))
            try await report(.stage("preparing", progress: nil))
            let jpeg = try await prepare(provider)
            let failed = try await attempt(jpeg: jpeg, filename: filename, provider: provider, report: report)
            guard let failed else { return nil }
            lastFailure = failed
            let next = number + 1 < providers.count ? providers[number + 1] : nil
            try await report(.attemptFailed(failed.failure, retryingWith: next))
        }
        if let cause = lastFailure?.unreachableCause, let stop = reachability.photoGaveUp(cause: cause) {
            try await report(.backendUnreachable(stop))
        }
        return lastFailure?.failure
    }

    /// An attempt that failed, and when its upload was given up because the backend could not be
    /// reached, why.
    private struct FailedAttempt {
        var failure: ScanFailure
        var unreachableCause: String?
    }

    private func attempt(jpeg: [UInt8], filename: String, provider: ScanProvider,
                         report: (ScanJobUpdate) async throws -> Void) async throws -> FailedAttempt? {
        let started = clock.now
        let job: ScanJobHandle
        switch try await upload(jpeg: jpeg, filename: filename, provider: provider, report: report) {
        case .accepted(let accepted): job = accepted
        case .gaveUp(let failed): return failed
        }
        try await report(.accepted(jobID: job.jobID))
        let failure = try await follow(job, started: started, report: report)
        try await report(.ended(jobID: job.jobID))
        return failure.map { FailedAttempt(failure: $0) }
    }

    private enum UploadOutcome {
        case accepted(ScanJobHandle)
        case gaveUp(FailedAttempt)
    }

    private func upload(jpeg: [UInt8], filename: String, provider: ScanProvider,
                        report: (ScanJobUpdate) async throws -> Void) async throws -> UploadOutcome {
        var failures = 0
        while true {
            let permit: UploadGate<C>.Permit
            do {
                permit = try await gate.acquire()
            } catch let failure as ScanFailure {
                return .gaveUp(FailedAttempt(failure: failure))
            }
            try await report(.stage("uploading", progress: nil))
            // The permit goes back whatever happens, so a probe never stays out (waiters would hang).
            let answer: Result<ScanUploadAnswer, any Error>
            do {
                answer = .success(try await client.upload(jpeg, filename: filename, provider: provider))
            } catch {
                answer = .failure(error)
            }
            if case .success(.rateLimited(let retryAfter)) = answer {
                gate.finished(permit, rateLimited: .some(retryAfter))
            } else {
                gate.finished(permit, rateLimited: nil)
            }
            let reach: UploadReach
            switch answer {
            case .success: reach = .reachedBackend
            case .failure(let error): reach = UploadReach(failure: error)
            }
            reachability.record(reach)
            let problem: String
            switch answer {
            case .success(.accepted(let job)):
                return .accepted(job)
            case .success(.rateLimited):
                try await report(.rateLimited)
                try await report(.stage("waiting", progress: nil))
                continue
            case .success(.serverError(let status, let reason)):
                problem = "HTTP \(status)" + (reason.isEmpty ? "" : ": \(reason)")
            case .failure(let failure as ScanFailure):
                return .gaveUp(FailedAttempt(failure: failure))
            case .failure(let error as HTTPError):
                guard error.retryOutcome != nil else {
                    return .gaveUp(FailedAttempt(failure: .uploadFailed(attempts: failures + 1, lastError: error.description)))
                }
                problem = error.description
            case .failure(let error):
                throw error
            }
            guard failures < settings.uploadRetryDelays.count else {
                let cause: String? = if case .couldNotReachBackend(let cause) = reach { cause } else { nil }
                return .gaveUp(FailedAttempt(failure: .uploadFailed(attempts: failures + 1, lastError: problem),
                                             unreachableCause: cause))
            }
            try await clock.sleep(for: settings.uploadRetryDelays[failures])
            failures += 1
        }
    }

    /// Follows the job's stream to its `complete` or `error`, reconnecting when it drops; gives
    /// the job up once it has run for ``ScanSettings/longestJob`` (heartbeats keep a stream
    /// alive, not a job: the limit is checked as each piece of the stream arrives).
    ///
    /// Each connection is parsed as a new stream that resumes after the last event dispatched
    /// (an event the connection's end cut off is discarded, its id never sent). A `result` that
    /// cannot be read before any other result of a reconnected stream is asked for again once
    /// (a reconnect with the same `Last-Event-ID`): what a broken connection left behind must
    /// not fail the photo. Read wrong twice from the same point, it fails the attempt.
    private func follow(_ job: ScanJobHandle, started: C.Instant,
                        report: (ScanJobUpdate) async throws -> Void) async throws -> ScanFailure? {
        let deadline = started.advanced(by: settings.longestJob)
        let clock = self.clock
        func ranTooLong() -> Bool { clock.now >= deadline }
        var parser = ServerSentEventParser()
        var received = 0
        var drops = 0
        var connections = 0
        var askedAgainAfter: String?  // the Last-Event-ID a bad result was asked for again after
        var outcome: ScanFailure??  // nil: still running; .some(nil): completed; .some(failure): failed
        while outcome == nil {
            let before = received
            connections += 1
            let isReconnect = connections > 1
            let resumeID = parser.lastEventID
            var askAgain = false
            var lastProblem = "the stream ended before the job completed"
            do {
                let status = try await client.follow(job, parser: &parser, giveUp: ranTooLong) { event in
                    let decoded: ScanBackendEvent
                    switch Result(catching: { () throws(ScanFailure) in try ScanBackendEvent(event) }) {
                    case .success(let value): decoded = value
                    case .failure(let failure):
                        if isReconnect, event.type == "result", received == before, askedAgainAfter != resumeID {
                            askAgain = true
                            lastProblem = "a result could not be read right after a reconnect (\(failure))"
                        } else {
                            outcome = .some(failure)
                        }
                        return false
                    }
                    switch decoded {
                    case .progress(let stage, let progress, _):
                        try await report(.stage(stage, progress: progress))
                    case .result(let detection):
                        received += 1
                        try await report(.detection(index: received, detection))
                    case .complete(let books):
                        if books != received {
                            outcome = .some(.badEvent("the job completed with books: \(books), but \(received) results arrived"))
                        } else {
                            try await report(.completed(books: books, jobTime: started.duration(to: clock.now)))
                            outcome = .some(nil)
                        }
                        return false
                    case .failed(let code, let message):
                        outcome = .some(.jobFailed(code: code, message: message))
                        return false
                    case .other:
                        break
                    }
                    return true
                }
                if outcome == nil, !(200..<300).contains(status) {
                    if (400..<500).contains(status) && status != 429 {
                        return .streamLost("GET \(job.streamURL) answered HTTP \(status)")
                    }
                    lastProblem = "GET \(job.streamURL) answered HTTP \(status)"
                }
            } catch let error as HTTPError {
                if case .timedOut(_, let limit, _, _) = error, limit == client.streamIdleTimeout {
                    return .streamTimedOut(limit)
                }
                lastProblem = error.description
            }
            guard outcome == nil else { break }
            if askAgain {
                askedAgainAfter = resumeID
                parser.startNewConnection(resumingFrom: resumeID)
            }
            if ranTooLong() { return .jobTooLong(settings.longestJob) }
            drops = received > before ? 1 : drops + 1
            guard drops <= settings.maxReconnects else {
                return .streamLost("\(lastProblem); gave up after \(settings.maxReconnects) reconnects without a new result")
            }
            try await report(.stage("reconnecting", progress: nil))
            try await clock.sleep(for: min(parser.reconnectionTime ?? settings.reconnectDelay, .seconds(30)))
            if ranTooLong() { return .jobTooLong(settings.longestJob) }
        }
        return outcome ?? nil
    }
}

extension ScanJobRunner where C == ContinuousClock {
    /// Creates a runner on the real (continuous) clock.
    public init(client: ScanBackendClient, settings: ScanSettings) {
        self.init(client: client, settings: settings, clock: ContinuousClock())
    }
}
