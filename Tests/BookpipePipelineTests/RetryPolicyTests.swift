import Foundation
import Synchronization
import Testing
@testable import BookpipePipeline

@Suite struct RetryPolicyTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("A request that meets every kind of failure makes exactly maxAttemptsPerRequest attempts (12 by default)",
          arguments: [RetryPolicy.default, RetryPolicy(rateLimited: .init(maxRetries: 1), unavailable: .init(maxRequeues: 0),
                                                       transport: .init(maxAttempts: 1))])
    func attemptsPerRequest(_ policy: RetryPolicy) {
        var machine = RetryStateMachine(policy: policy)
        // Each kind used up in turn: 429s, then 503s, then timeouts, until the machine gives up.
        var outcomes = Array(repeating: RetryOutcome.status(429, retryAfter: nil), count: policy.rateLimited.maxRetries)
            + Array(repeating: .status(503, retryAfter: nil), count: policy.unavailable.maxRequeues)
            + Array(repeating: .timeout, count: 100)
        var finished = false
        while !finished, !outcomes.isEmpty {
            if case .giveUp = machine.next(after: outcomes.removeFirst(), now: now) { finished = true }
        }
        #expect(finished)
        #expect(machine.attempts == policy.maxAttemptsPerRequest)
        #expect(RetryPolicy.default.maxAttemptsPerRequest == 12)
    }

    @Test("429 backs off 1, 2, 4, 8 seconds and then gives up")
    func rateLimitedSchedule() {
        var machine = RetryStateMachine(policy: .default)
        var actions: [RetryAction] = []
        for _ in 0..<5 { actions.append(machine.next(after: .status(429, retryAfter: nil), now: now)) }
        #expect(Array(actions.prefix(4)) == [.retry(after: .seconds(1)), .retry(after: .seconds(2)),
                                              .retry(after: .seconds(4)), .retry(after: .seconds(8))])
        guard case .giveUp(let reason) = actions[4] else {
            Issue.record("expected giveUp, got \(actions[4])")
            return
        }
        #expect(reason.hasPrefix("HTTP 429 (Too Many Requests) after 4 retries"))
        #expect(machine.rateLimitedRetries == 4)
        #expect(machine.attempts == 5)
    }

    @Test("Driven by a manual clock, 429s are retried at 0, 1, 3, 7 and 15 s, then the request gives up",
          .timeLimit(.minutes(5)))
    func rateLimitedScheduleOnManualClock() async throws {
        let clock = ManualClock()
        let attemptTimes = Locked<[Duration]>([])
        async let result: (action: RetryAction, value: Int) = {
            var machine = RetryStateMachine(policy: .default)
            return try await machine.perform(clock: clock, now: { self.now }) {
                let count = attemptTimes.withLock { times -> Int in
                    times.append(clock.now.offset)
                    return times.count
                }
                return (.status(429, retryAfter: nil), count)
            }
        }()
        var waits: [Duration] = []
        for _ in 0..<4 {
            await clock.waitForSleepers(count: 1)
            let before = clock.now
            let deadline = try #require(clock.advanceToNextDeadline())
            waits.append(before.duration(to: deadline))
        }
        let (action, attempts) = try await result
        #expect(waits == [.seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(attemptTimes.withLock { $0 } == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
        #expect(attempts == 5)
        guard case .giveUp = action else {
            Issue.record("expected giveUp, got \(action)")
            return
        }
    }

    static let retryAfterCases: [(retryAfter: RetryAfter?, previous429s: Int, expected: Duration)] = [
        (.seconds(10), 1, .seconds(10)),   // Retry-After 10 beats the 2 s backoff
        (.seconds(10), 0, .seconds(10)),   // ... and the 1 s one
        (.seconds(1), 2, .seconds(4)),     // a shorter Retry-After loses to the 4 s backoff
        (.seconds(0), 0, .seconds(1)),
        (nil, 3, .seconds(8)),
    ]

    @Test("The larger of the backoff and Retry-After wins", arguments: retryAfterCases)
    func retryAfterWins(retryAfter: RetryAfter?, previous429s: Int, expected: Duration) {
        var machine = RetryStateMachine(policy: .default)
        for _ in 0..<previous429s { _ = machine.next(after: .status(429, retryAfter: nil), now: now) }
        #expect(machine.next(after: .status(429, retryAfter: retryAfter), now: now) == .retry(after: expected))
    }

    @Test("A Retry-After given as an HTTP date waits until that date")
    func retryAfterHTTPDate() throws {
        let header = HTTPDate.format(now.addingTimeInterval(10))
        let retryAfter = try #require(RetryAfter(headerValue: header))
        var machine = RetryStateMachine(policy: .default)
        #expect(machine.next(after: .status(429, retryAfter: retryAfter), now: now) == .retry(after: .seconds(10)))
        // A date in the past does not shorten the documented backoff.
        let past = try #require(RetryAfter(headerValue: "Sun, 06 Nov 1994 08:49:37 GMT"))
        #expect(machine.next(after: .status(429, retryAfter: past), now: now) == .retry(after: .seconds(2)))
    }

    @Test("A Retry-After longer than the policy waits gives up at once, naming the wait")
    func retryAfterTooLong() {
        var machine = RetryStateMachine(policy: .default)
        let action = machine.next(after: .status(429, retryAfter: .seconds(3600)), now: now)
        #expect(action == .giveUp(reason: "HTTP 429 (Too Many Requests): the server asks to wait 3600 s "
                                  + "(Retry-After 3600 s), longer than the 300 s this policy waits; "
                                  + "retry later (bookpipe enrich --failed)"))
    }

    static let httpDates: [(String, Double?)] = [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),   // IMF-fixdate
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),  // RFC 850
        ("Sun Nov  6 08:49:37 1994", 784_111_777),        // asctime
        ("Thu, 29 Feb 2024 23:59:59 GMT", 1_709_251_199),
        ("Fri, 30 Feb 2024 00:00:00 GMT", nil),
        ("Sun, 06 Nov 1994 08:49:37 PST", nil),
        ("Sun, 06 Foo 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 25:49:37 GMT", nil),
        ("soon", nil),
        ("", nil),
        ("-5", nil),
        ("1.5", nil),
    ]

    @Test("HTTP dates are read in all three RFC 9110 forms; anything else is rejected", arguments: httpDates)
    func parsesHTTPDates(text: String, epoch: Double?) {
        #expect(HTTPDate.parse(text)?.timeIntervalSince1970 == epoch)
    }

    @Test("Retry-After reads delay-seconds and dates, and formats dates back as IMF-fixdate")
    func retryAfterParsing() {
        #expect(RetryAfter(headerValue: " 120 ") == .seconds(120))
        #expect(RetryAfter(headerValue: "0") == .seconds(0))
        #expect(RetryAfter(headerValue: "Sun, 06 Nov 1994 08:49:37 GMT")
                == .date(Date(timeIntervalSince1970: 784_111_777)))
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(RetryAfter(headerValue: "later") == nil)
    }

    @Test("503 puts the request back in the queue after 30 s, five times, then gives up")
    func unavailableRequeues() {
        var machine = RetryStateMachine(policy: .default)
        for _ in 0..<5 {
            #expect(machine.next(after: .status(503, retryAfter: nil), now: now) == .requeue(after: .seconds(30)))
        }
        #expect(machine.next(after: .status(503, retryAfter: nil), now: now) == .giveUp(
            reason: "HTTP 503 (Service Unavailable) after 5 requeues; the source may be down, "
                + "retry later (bookpipe enrich --failed)"))
    }

    @Test("A 503 with a longer Retry-After is requeued for that long")
    func unavailableRetryAfter() {
        var machine = RetryStateMachine(policy: .default)
        #expect(machine.next(after: .status(503, retryAfter: .seconds(90)), now: now) == .requeue(after: .seconds(90)))
        #expect(machine.next(after: .status(503, retryAfter: .seconds(5)), now: now) == .requeue(after: .seconds(30)))
    }

    @Test("A malformed body is requeued like a 503 and shares its count")
    func malformedBody() {
        var machine = RetryStateMachine(policy: RetryPolicy(unavailable: .init(requeueDelay: .seconds(30), maxRequeues: 2)))
        #expect(machine.next(after: .malformedBody, now: now) == .requeue(after: .seconds(30)))
        #expect(machine.next(after: .status(503, retryAfter: nil), now: now) == .requeue(after: .seconds(30)))
        guard case .giveUp(let reason) = machine.next(after: .malformedBody, now: now) else {
            Issue.record("expected giveUp")
            return
        }
        #expect(reason.hasPrefix("the response body was malformed or cut off after 2 requeues"))
        #expect(machine.malformedBodies == 2)
    }

    @Test("Timeouts and connection errors retry at once, at most 3 attempts in total",
          arguments: [RetryOutcome.timeout, .connectionError, .status(408, retryAfter: nil)])
    func transportFailures(outcome: RetryOutcome) {
        var machine = RetryStateMachine(policy: .default)
        #expect(machine.next(after: outcome, now: now) == .retry(after: .zero))
        #expect(machine.next(after: outcome, now: now) == .retry(after: .zero))
        guard case .giveUp(let reason) = machine.next(after: outcome, now: now) else {
            Issue.record("expected giveUp after the third attempt")
            return
        }
        #expect(reason.contains("on attempt 3 of 3"))
        #expect(machine.attempts == 3)
    }

    @Test("Timeouts and connection errors count together")
    func mixedTransportFailures() {
        var machine = RetryStateMachine(policy: .default)
        #expect(machine.next(after: .timeout, now: now) == .retry(after: .zero))
        #expect(machine.next(after: .status(429, retryAfter: nil), now: now) == .retry(after: .seconds(1)))
        #expect(machine.next(after: .connectionError, now: now) == .retry(after: .zero))
        #expect(machine.next(after: .timeout, now: now) == .giveUp(
            reason: "timed out on attempt 3 of 3; check the network and the source's base URL, "
                + "then retry (bookpipe enrich --failed)"))
    }

    static let finalStatusCases: [(Int, RetryAction)] = [
        (200, .succeed), (204, .succeed), (304, .succeed),
        (404, .permanentNotFound), (410, .permanentNotFound),
        (400, .giveUp(reason: "HTTP 400 (Bad Request): not retried; check the request and the source's base URL")),
        (403, .giveUp(reason: "HTTP 403 (Forbidden): not retried; check the request and the source's base URL")),
    ]

    @Test("404 is permanent, 2xx succeeds, other client errors give up without retry", arguments: finalStatusCases)
    func finalStatus(status: Int, expected: RetryAction) {
        var machine = RetryStateMachine(policy: .default)
        #expect(machine.next(after: .status(status, retryAfter: nil), now: now) == expected)
        #expect(machine.attempts == 1)
        #expect(machine.rateLimitedRetries + machine.requeues + machine.transportFailures == 0)
    }

    @Test("perform waits on the clock only for retries and hands a requeue back to the caller",
          .timeLimit(.minutes(5)))
    func performReturnsRequeue() async throws {
        let clock = ManualClock()
        var machine = RetryStateMachine(policy: .default)
        var outcomes: [RetryOutcome] = [.timeout, .status(503, retryAfter: nil)]
        let (action, _) = try await machine.perform(clock: clock, now: { now }) {
            (outcomes.removeFirst(), ())
        }
        #expect(action == .requeue(after: .seconds(30)))
        #expect(clock.now.offset == .zero)
        #expect(machine.attempts == 2)
    }

    @Test("Cancelling a task that waits between retries throws CancellationError at once",
          .timeLimit(.minutes(5)))
    func performCancellation() async throws {
        let clock = ManualClock()
        let task = Task {
            var machine = RetryStateMachine(policy: .default)
            return try await machine.perform(clock: clock, now: { Date() }) { (RetryOutcome.status(429, retryAfter: nil), ()) }
        }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
    }

    @Test("A pipeline file may set only some values; the rest keep the documented defaults")
    func decodesPartialPolicy() throws {
        let json = #"{"rateLimited": {"maxRetries": 2, "initialBackoff": 0.5}, "unavailable": {"requeueDelay": 60}}"#
        let policy = try JSONDecoder().decode(RetryPolicy.self, from: Data(json.utf8))
        #expect(policy.rateLimited.maxRetries == 2)
        #expect(policy.rateLimited.initialBackoff == .milliseconds(500))
        #expect(policy.rateLimited.multiplier == 2)
        #expect(policy.unavailable.requeueDelay == .seconds(60))
        #expect(policy.unavailable.maxRequeues == 5)
        #expect(policy.transport == RetryPolicy.Transport())
        let roundTrip = try JSONDecoder().decode(RetryPolicy.self, from: JSONEncoder().encode(policy))
        #expect(roundTrip == policy)
        #expect(try JSONDecoder().decode(RetryPolicy.self, from: Data("{}".utf8)) == .default)
    }

    @Test("Invalid policy values are rejected with a message naming the key")
    func rejectsInvalidPolicy() {
        for json in [#"{"rateLimited": {"multiplier": 0.5}}"#, #"{"transport": {"maxAttempts": 0}}"#,
                     #"{"unavailable": {"requeueDelay": -1}}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(RetryPolicy.self, from: Data(json.utf8)) }
        }
    }

    @Test("The default policy describes itself with the documented schedule")
    func describesDefaults() {
        #expect(RetryPolicy.default.description.hasPrefix("429: back off 1 s, 2 s, 4 s, 8 s"))
        #expect(RetryPolicy.default.description.contains("503: requeue after 30 s"))
    }
}

/// A value shared between test tasks, guarded by a `Mutex`.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
