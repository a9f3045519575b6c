import BookpipeHTTP
import BookpipePipeline
import BookpipeScan
import BookpipeTesting
import Foundation
import Synchronization
import Testing

/// ``ScanJobRunner`` against the fake backend over loopback (real HTTP through libcurl), its waits
/// on a ``ManualClock``: the test moves time, so retry and 429 schedules are checked exactly.
@Suite(.timeLimit(.minutes(5))) struct ScanJobRunnerTests {
    /// A fake backend, a client for it and a runner on a manual clock.
    struct Setup {
        let backend: FakeScanBackend
        let http: HTTPClient
        let clock = ManualClock()
        let runner: ScanJobRunner<ManualClock>

        init(_ options: FakeScanBackend.Options, settings: ScanSettings = ScanSettings(),
             now: @escaping @Sendable () -> Date = { Date() }) throws {
            backend = FakeScanBackend(options: options)
            let base = try backend.start()
            http = try HTTPClient()
            runner = ScanJobRunner(client: ScanBackendClient(baseURL: base, http: http), settings: settings, clock: clock,
                                   now: now)
        }

        /// Scans one photo (any bytes: the fake is told not to read them) and collects its updates.
        func scan(_ name: String, updates: UpdateLog) async throws -> ScanFailure? {
            try await runner.scan(filename: name, prepare: { _ in Array("not read".utf8) },
                                  report: { update in updates.append(update) })
        }

        func close() async {
            await http.shutdown()
            backend.stop()
        }
    }

    /// The updates a scan reported, in order.
    final class UpdateLog: Sendable {
        private let updates = Mutex<[ScanJobUpdate]>([])
        init() {}
        func append(_ update: ScanJobUpdate) { updates.withLock { $0.append(update) } }
        var all: [ScanJobUpdate] { updates.withLock { $0 } }
    }

    static func options(faults: [Int: FakeScanBackend.Fault] = [:]) -> FakeScanBackend.Options {
        FakeScanBackend.Options(jobDuration: .milliseconds(30), rejectsUnreadableImages: false,
                                faultsByUploadOrdinal: faults)
    }

    @Test("An upload answered 503 is retried after 1 s, 2 s, 4 s on the clock, then the photo fails naming the last answer")
    func uploadRetriesThenFailure() async throws {
        let setup = try Setup(Self.options(faults: [1: .serverError(status: 503), 2: .serverError(status: 503),
                                                    3: .serverError(status: 503), 4: .serverError(status: 503)]))
        let updates = UpdateLog()
        async let outcome = setup.scan("a.jpg", updates: updates)
        for (number, wait) in [1, 2, 4].enumerated() {
            await setup.clock.waitForSleepers(count: 1)
            #expect(setup.backend.uploads.count == number + 1)
            #expect(setup.clock.nextDeadline == setup.clock.now.advanced(by: .seconds(wait)))
            setup.clock.advance(by: .seconds(wait))
        }
        let failure = try await outcome
        #expect(failure == .uploadFailed(attempts: 4, lastError: "HTTP 503: \"upstream vision provider failed\""))
        #expect(setup.backend.uploads.count == 4)
        #expect(setup.clock.now == ManualClock.Instant(offset: .seconds(7)))
        #expect(!updates.all.contains { if case .accepted = $0 { true } else { false } })
        await setup.close()
    }

    @Test("An upload that succeeds on its second try is one job; nothing was stored from the failed try")
    func uploadRetrySucceeds() async throws {
        let setup = try Setup(Self.options(faults: [1: .serverError(status: 502)]))
        let updates = UpdateLog()
        async let outcome = setup.scan("a.jpg", updates: updates)
        await setup.clock.waitForSleepers(count: 1)
        #expect(setup.clock.nextDeadline == ManualClock.Instant(offset: .seconds(1)))
        setup.clock.advance(by: .seconds(1))
        #expect(try await outcome == nil)
        #expect(setup.backend.uploads.map(\.status) == [502, 202])
        let detections = updates.all.filter { if case .detection = $0 { true } else { false } }
        #expect(detections.count == FakeScanBackend.Options().defaultDetections.count)
        // The job ends with `ended`: its cleanup is the caller's, fire-and-forget; the runner sent none.
        let jobID = try #require(setup.backend.uploads.last?.jobID)
        #expect(updates.all.suffix(2).first.map { if case .completed = $0 { true } else { false } } == true)
        #expect(updates.all.last == .ended(jobID: jobID))
        #expect(setup.backend.cleanups.isEmpty)
        await setup.close()
    }

    @Test("A 429 holds the photo until Retry-After on the clock; the probe then goes and the job completes")
    func rateLimitedThenProbe() async throws {
        let setup = try Setup(Self.options(faults: [1: .tooManyRequests(retryAfter: .seconds(20))]))
        let updates = UpdateLog()
        async let outcome = setup.scan("a.jpg", updates: updates)
        await setup.clock.waitForSleepers(count: 1)
        #expect(setup.clock.nextDeadline == ManualClock.Instant(offset: .seconds(20)))
        #expect(setup.backend.uploads.count == 1)
        setup.clock.advance(by: .seconds(20))
        #expect(try await outcome == nil)
        #expect(setup.backend.uploads.map(\.status) == [429, 202])
        #expect(setup.runner.gate.rateLimitedCount == 1)
        #expect(updates.all.contains(.rateLimited))
        await setup.close()
    }

    @Test("A 429 with an HTTP-date Retry-After pauses until that date")
    func rateLimitedUntilDate() async throws {
        // The runner reads the date against a wall clock frozen before the fake wrote it (in whole
        // seconds, 40 s after its own now): the pause is over 39 s, and at most 40 s plus the time
        // the test took to get there.
        let before = Date()
        let setup = try Setup(Self.options(faults: [1: .tooManyRequests(retryAfter: .httpDate(secondsFromNow: 40))]),
                              now: { before })
        let updates = UpdateLog()
        async let outcome = setup.scan("a.jpg", updates: updates)
        await setup.clock.waitForSleepers(count: 1)
        let deadline = try #require(setup.clock.nextDeadline)
        #expect(deadline.offset > .seconds(39))
        #expect(deadline.offset <= .seconds(40) + .milliseconds(Int64(Date().timeIntervalSince(before) * 1000) + 1))
        setup.clock.advance(to: deadline)
        #expect(try await outcome == nil)
        #expect(setup.backend.uploads.map(\.status) == [429, 202])
        await setup.close()
    }

    @Test("A job whose stream sends only heartbeats is given up once it has run for the longest a job may; it is still cleaned up")
    func heartbeatsButNoComplete() async throws {
        // The held job never starts: its stream sends nothing but heartbeats.
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(30), heartbeatInterval: .milliseconds(20),
                                              rejectsUnreadableImages: false, holdsJobsUntilReleased: true)
        let setup = try Setup(options, settings: ScanSettings(longestJob: .seconds(1800)))
        let updates = UpdateLog()
        async let outcome = setup.scan("a.jpg", updates: updates)
        let connected = ContinuousClock.now.advanced(by: .seconds(30))
        while setup.backend.streamConnections.isEmpty && ContinuousClock.now < connected {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(setup.backend.streamConnections.count == 1)
        setup.clock.advance(by: .seconds(1799))
        try await Task.sleep(for: .milliseconds(100))   // heartbeats arrive; the job is not too long yet
        #expect(!updates.all.contains { if case .ended = $0 { true } else { false } })
        setup.clock.advance(by: .seconds(1))
        #expect(try await outcome == .jobTooLong(.seconds(1800)))
        #expect(setup.backend.streamConnections.count == 1)   // given up, not reconnected
        #expect(updates.all.contains { if case .ended = $0 { true } else { false } })
        await setup.close()
    }

    // MARK: - A backend that cannot be reached

    /// A base URL where nothing listens: a server started and stopped again, so its port refuses
    /// connections.
    static func refusedBaseURL() throws -> String {
        // A port bound and never listening, held for the whole test process: a port of a stopped
        // server could be taken by another test's server meanwhile.
        try #require(refusedPort).baseURL
    }

    static let refusedPort = try? ClosedPort()

    /// How many upload attempts a photo's updates show (one `uploading` stage per attempt).
    static func uploadAttempts(_ updates: [ScanJobUpdate]) -> Int {
        updates.filter { $0 == .stage("uploading", progress: nil) }.count
    }

    static func isBackendUnreachable(_ update: ScanJobUpdate) -> Bool {
        if case .backendUnreachable = update { true } else { false }
    }

    @Test("Against a port that refuses connections each photo gives up after its retries on the clock; the second in a row stops the run, said once")
    func refusedUploadsStopTheRun() async throws {
        let http = try HTTPClient()
        let clock = ManualClock()
        let runner = ScanJobRunner(client: ScanBackendClient(baseURL: try Self.refusedBaseURL(), http: http),
                                   settings: ScanSettings(concurrency: 1), clock: clock)
        #expect(runner.reachability.photosInARowToStop == 2)
        for (number, name) in ["a.jpg", "b.jpg"].enumerated() {
            #expect(runner.reachability.stop == nil, "\(name) may start")
            let updates = UpdateLog()
            async let outcome = runner.scan(filename: name, prepare: { _ in Array("not read".utf8) },
                                            report: { updates.append($0) })
            for wait in [1, 2, 4] {
                await clock.waitForSleepers(count: 1)
                #expect(clock.nextDeadline == clock.now.advanced(by: .seconds(wait)))
                clock.advance(by: .seconds(wait))
            }
            let failure = try await outcome
            guard case .uploadFailed(let attempts, let lastError)? = failure else {
                Issue.record("expected uploadFailed, got \(String(describing: failure))")
                return
            }
            #expect(attempts == 4)
            #expect(lastError.contains("failed: could not connect (connection refused)"), "\(lastError)")
            #expect(Self.uploadAttempts(updates.all) == 4)
            #expect(runner.reachability.photosUnreachableInARow == number + 1)
            if number == 0 {
                #expect(runner.reachability.stop == nil)
                #expect(!updates.all.contains(where: Self.isBackendUnreachable))
            } else {
                let stop = UnreachableBackend(inARow: 2, cause: "connection refused")
                #expect(runner.reachability.stop == stop)
                #expect(updates.all.filter(Self.isBackendUnreachable) == [.backendUnreachable(stop)])
                #expect(updates.all.last == .backendUnreachable(stop))
            }
        }
        #expect(clock.now == ManualClock.Instant(offset: .seconds(14)))
        await http.shutdown()
    }

    @Test("Photos refused with a 5xx or a 4xx, or whose job fails, are their own failures: they never count towards the stop")
    func answeredFailuresNeverStopTheRun() async throws {
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(30), rejectsUnreadableImages: false, faultsByFilename: [
            "busy.jpg": [.serverError(status: 503)], "big.jpg": [.payloadTooLarge],
            "failing.jpg": [.jobError(code: "E_MODEL", message: "model overloaded")],
        ])
        let setup = try Setup(options, settings: ScanSettings(concurrency: 1, uploadRetryDelays: []))
        for name in ["busy.jpg", "big.jpg", "failing.jpg"] {
            let failure = try await setup.scan(name, updates: UpdateLog())
            #expect(failure != nil, "\(name) fails")
            #expect(setup.runner.reachability.photosUnreachableInARow == 0, "\(name)")
        }
        #expect(setup.runner.reachability.stop == nil)
        #expect(setup.backend.uploads.map(\.status) == [503, 413, 202])
        await setup.close()
    }

    @Test("Uploads that time out, interleaved with uploads the backend answers, never stop the run; two timeouts in a row do")
    func timeoutsBetweenAnswersNeverStopTheRun() async throws {
        let stalls = ["s1.jpg", "s2.jpg", "s3.jpg", "s4.jpg", "s5.jpg"]
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(30), rejectsUnreadableImages: false,
                                              faultsByFilename: Dictionary(uniqueKeysWithValues: stalls.map { ($0, [.stallUpload]) }))
        let backend = FakeScanBackend(options: options)
        let base = try backend.start()
        let http = try HTTPClient(configuration: HTTPClientConfiguration(requestTimeout: .milliseconds(400)))
        let runner = ScanJobRunner(client: ScanBackendClient(baseURL: base, http: http),
                                   settings: ScanSettings(concurrency: 1, uploadRetryDelays: []), clock: ManualClock())
        func scan(_ name: String) async throws -> ScanFailure? {
            try await runner.scan(filename: name, prepare: { _ in Array("not read".utf8) }, report: { _ in })
        }
        for name in ["s1.jpg", "ok1.jpg", "s2.jpg", "ok2.jpg", "s3.jpg", "ok3.jpg"] {
            let failure = try await scan(name)
            if name.hasPrefix("s") {
                guard case .uploadFailed(1, let lastError)? = failure else {
                    Issue.record("\(name): expected uploadFailed, got \(String(describing: failure))")
                    continue
                }
                #expect(lastError.contains("timed out (limit 0.4 seconds)"), "\(lastError)")
                #expect(runner.reachability.photosUnreachableInARow == 1)
            } else {
                #expect(failure == nil, "\(name) completes")
                #expect(runner.reachability.photosUnreachableInARow == 0)
            }
            #expect(runner.reachability.stop == nil, "after \(name)")
        }
        #expect(backend.uploads.map(\.status) == [0, 202, 0, 202, 0, 202])
        // The same timeouts with no answer between them: the second stops the run.
        _ = try await scan("s4.jpg")
        #expect(runner.reachability.stop == nil)
        _ = try await scan("s5.jpg")
        #expect(runner.reachability.stop == UnreachableBackend(inARow: 2, cause: "timed out after 0.4 seconds"))
        await http.shutdown()
        backend.stop()
    }

    @Test("A result that cannot be read right after a reconnect is asked for again with the same Last-Event-ID; the photo completes with every result once")
    func unreadableResultAfterReconnectIsAskedAgain() async throws {
        let setup = try Setup(Self.options(faults: [1: .halfResultAfterReconnect(afterResults: 2)]),
                              settings: ScanSettings(fallbackProvider: .cloudflare, reconnectDelay: .zero))
        let updates = UpdateLog()
        #expect(try await setup.scan("a.jpg", updates: updates) == nil)
        let detections = updates.all.compactMap { update -> String? in
            if case .detection(let index, let detection) = update { "\(index) \(detection.title ?? "")" } else { nil }
        }
        #expect(detections == FakeScanBackend.Detection.defaultSet.enumerated().map { "\($0.offset + 1) \($0.element.title)" })
        #expect(setup.backend.streamConnections.map(\.lastEventID) == [nil, "2", "2"])
        #expect(setup.backend.uploads.map(\.provider) == ["gemini"])
        await setup.close()
    }

    @Test("A result that cannot be read on a first connection fails the attempt: it is the backend's, not a cut's")
    func unreadableResultOnFirstConnectionFails() async throws {
        let setup = try Setup(Self.options(faults: [1: .invalidJSONEvent]), settings: ScanSettings(reconnectDelay: .zero))
        let failure = try await setup.scan("a.jpg", updates: UpdateLog())
        guard case .badEvent(let detail)? = failure else {
            Issue.record("expected a bad event, got \(String(describing: failure))")
            await setup.close()
            return
        }
        #expect(detail.contains("is not a JSON object"))
        #expect(setup.backend.streamConnections.count == 1)
        await setup.close()
    }

    @Test("A stream cut at every byte of a result event, closed or reset, chunked or not: every job completes with each result once, none by the fallback provider",
          arguments: [StreamedBody.Framing.chunked, .untilClose])
    func streamCutAtEveryByte(framing: StreamedBody.Framing) async throws {
        let detections = ["DUNE", "EMMA", "IT"].map { FakeScanBackend.Detection(title: $0, author: "AUTHOR OF \($0)", confidence: 0.9) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let cutEvent = FakeServerSentEvent(name: "result", id: "2",
                                           data: String(decoding: try encoder.encode(detections[1]), as: UTF8.self))
        var faults: [String: [FakeScanBackend.Fault]] = [:]
        for offset in 0...cutEvent.encoded(lineEnding: "\n").utf8.count {
            for cut in FakeScanBackend.StreamCut.allCases {
                faults["cut-\(offset)-\(cut).jpg"] = [.cutStream(inResult: 2, afterBytes: offset, ending: cut)]
            }
        }
        let options = FakeScanBackend.Options(jobDuration: .zero, maxConcurrentJobs: 16, defaultDetections: detections,
                                              streamFraming: framing, rejectsUnreadableImages: false, faultsByFilename: faults)
        let setup = try Setup(options, settings: ScanSettings(fallbackProvider: .cloudflare, concurrency: 8, reconnectDelay: .zero))
        let outcomes = try await withThrowingTaskGroup(of: (String, ScanFailure?, [String]).self) { group in
            var names = faults.keys.sorted().makeIterator()
            var results: [(String, ScanFailure?, [String])] = []
            func start(_ name: String) {
                group.addTask {
                    let updates = UpdateLog()
                    let failure = try await setup.scan(name, updates: updates)
                    let titles = updates.all.compactMap { update -> String? in
                        if case .detection(let index, let detection) = update { "\(index) \(detection.title ?? "")" } else { nil }
                    }
                    return (name, failure, titles)
                }
            }
            for _ in 0..<8 { if let name = names.next() { start(name) } }
            while let result = try await group.next() {
                results.append(result)
                if let name = names.next() { start(name) }
            }
            return results
        }
        #expect(outcomes.count == faults.count)
        for (name, failure, titles) in outcomes {
            #expect(failure == nil, "\(name)")
            #expect(titles == ["1 DUNE", "2 EMMA", "3 IT"], "\(name)")
        }
        #expect(setup.backend.uploads.allSatisfy { $0.provider == "gemini" })
        #expect(setup.backend.uploads.count == faults.count)
        #expect(setup.backend.streamConnections.count == 2 * faults.count)
        await setup.close()
    }
}
