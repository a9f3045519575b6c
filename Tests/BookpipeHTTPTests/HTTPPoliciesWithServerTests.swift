import Foundation
import Synchronization
import Testing
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeHTTP

/// The retry and rate-limit state machines in front of the real client and a real server,
/// on a manual clock: the server stamps each arrival with the manual clock's time.
@Suite(.timeLimit(.minutes(5)))
struct HTTPPoliciesWithServerTests {
    /// Advances `clock` to its next deadline whenever every unfinished worker sleeps on it (so a
    /// request in flight is stamped with the instant it was sent), until all workers are done.
    static func drive(_ clock: ManualClock, workers: Int, finished: @Sendable () -> Int) async {
        // Stops at cancellation (a time limit): a driver spinning on would starve every other test.
        while finished() < workers, !Task.isCancelled {
            if clock.sleeperCount >= workers - finished() {
                clock.advanceToNextDeadline()
            } else {
                await Task.yield()
            }
        }
    }

    @Test("Against a server that always answers 429, requests arrive at 0, 1, 3, 7 and 15 s and then stop")
    func retryScheduleSeenByServer() async throws {
        let clock = ManualClock()
        let server = LoopbackHTTPServer(timeSource: { clock.now.offset }) { _ in .tooManyRequests() }
        try server.start()
        let client = try HTTPClient()
        defer {
            client.close()
            server.stop()
        }
        let done = Flag()
        async let result: RetryAction = {
            defer { done.set() }
            var machine = RetryStateMachine(policy: .default)
            let (action, _) = try await machine.perform(clock: clock, now: Date.init) { () -> (RetryOutcome, Int) in
                do {
                    let response = try await client.get(server.baseURL + "/api/books?bibkeys=ISBN:9780140328721")
                    return (response.retryOutcome, response.status)
                } catch let error as HTTPError {
                    return (error.retryOutcome ?? .connectionError, 0)
                }
            }
            return action
        }()
        await Self.drive(clock, workers: 1) { done.isSet ? 1 : 0 }
        let action = try await result
        guard case .giveUp(let reason) = action else {
            Issue.record("expected giveUp, got \(action)")
            return
        }
        #expect(reason.hasPrefix("HTTP 429 (Too Many Requests) after 4 retries"))
        #expect(server.requests.map(\.arrival) == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
    }

    @Test("Behind the rate limiter, 30 requests reach the server at exactly 3 per second")
    func rateSeenByServer() async throws {
        let clock = ManualClock()
        let server = LoopbackHTTPServer(timeSource: { clock.now.offset }) { _ in .json("{}") }
        try server.start()
        let client = try HTTPClient()
        defer {
            client.close()
            server.stop()
        }
        let limiter = RateLimiter(clock: clock, limits: ["127.0.0.1": .openLibrary])
        let finished = Counter()
        async let sent: Void = {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<3 {
                    group.addTask {
                        for index in 0..<10 {
                            try await limiter.acquire(host: "127.0.0.1")
                            let response = try await client.get(server.baseURL + "/search.json?q=\(worker)-\(index)")
                            limiter.record(response.status == 429 ? .rateLimited(retryAfter: nil) : .success, host: "127.0.0.1")
                        }
                        finished.increment()
                    }
                }
                try await group.waitForAll()
            }
        }()
        await Self.drive(clock, workers: 3) { finished.value }
        try await sent
        let arrivals = server.requests.map(\.arrival).sorted()
        #expect(arrivals.count == 30)
        for (index, arrival) in arrivals.enumerated() {
            let end = arrival + .seconds(1)
            let inWindow = arrivals[index...].prefix { $0 < end }.count
            #expect(inWindow <= 3, "\(inWindow) requests in the second after \(arrival)")
        }
        #expect(arrivals.last.map { $0 >= .milliseconds(9_600) } == true, "30 requests at 3/s span ~9.7 s")
    }
}

/// A one-way flag shared between tasks.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// A counter shared between tasks.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
