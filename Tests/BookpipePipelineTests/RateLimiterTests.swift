import Foundation
import Synchronization
import Testing
@testable import BookpipePipeline

@Suite struct RateLimiterTests {
    typealias Instant = ManualClock.Instant

    /// Drives the pure state machine for `duration`, sending whenever it allows; returns send times.
    static func simulate(_ machine: inout RateLimiterStateMachine<Instant>, host: String, for duration: Duration,
                         from start: Instant = Instant(offset: .zero),
                         onSend: (inout RateLimiterStateMachine<Instant>, Instant) -> Void = { _, _ in }) -> [Instant] {
        var now = start
        var sends: [Instant] = []
        let end = start.advanced(by: duration)
        while now < end {
            switch machine.acquire(host: host, now: now) {
            case .send:
                sends.append(now)
                onSend(&machine, now)
            case .wait(let until):
                #expect(until > now, "a wait must move time forward")
                now = until
            }
        }
        return sends
    }

    /// The most sends inside any half-open window [t, t + window) that starts at a send.
    static func maxInWindow(_ sends: [Instant], window: Duration) -> Int {
        var best = 0
        for (index, start) in sends.enumerated() {
            let end = start.advanced(by: window)
            best = max(best, sends[index...].prefix { $0 < end }.count)
        }
        return best
    }

    @Test("At 3 requests/s, a simulated minute sends about 180 requests and never more than 3 in any second")
    func neverExceedsRate() {
        var machine = RateLimiterStateMachine<Instant>(limits: ["openlibrary.org": .openLibrary])
        let sends = Self.simulate(&machine, host: "openlibrary.org", for: .seconds(60))
        #expect(Self.maxInWindow(sends, window: .seconds(1)) == 3)
        #expect((178...181).contains(sends.count), "sent \(sends.count)")
    }

    @Test("A burst allowance lets that many requests out back to back, then the rate holds")
    func burst() {
        var machine = RateLimiterStateMachine<Instant>(defaultLimit: RateLimit(requestsPerSecond: 2, burst: 4))
        let sends = Self.simulate(&machine, host: "example.org", for: .seconds(30))
        #expect(sends.prefix(4).allSatisfy { $0.offset == .zero })
        #expect(Self.maxInWindow(sends, window: .seconds(1)) <= 4 + 2 - 1)
        #expect(sends.count <= 4 + 2 * 30)
    }

    @Test("The async limiter never lets concurrent tasks exceed the rate over a simulated minute",
          .timeLimit(.minutes(5)))
    func asyncLimiterUnderConcurrency() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock, limits: ["openlibrary.org": .openLibrary])
        let sends = Locked<[Instant]>([])
        let finished = Locked(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<45 {
                        try await limiter.acquire(host: "OpenLibrary.org")
                        sends.withLock { $0.append(clock.now) }
                    }
                    finished.withLock { $0 += 1 }
                }
            }
            // Move time only when every unfinished task is waiting on the clock.
            // Stops at cancellation (a time limit): a driver spinning on would starve every other test.
            while finished.withLock({ $0 }) < 4, !Task.isCancelled {
                let waiting = 4 - finished.withLock { $0 }
                if clock.sleeperCount >= waiting {
                    clock.advanceToNextDeadline()
                } else {
                    await Task.yield()
                }
            }
            try await group.waitForAll()
        }
        let times = sends.withLock { $0 }.sorted()
        #expect(times.count == 180)
        #expect(Self.maxInWindow(times, window: .seconds(1)) <= 3)
        // 180 requests at 3/s need just under a minute of simulated time.
        #expect(clock.now.offset >= .milliseconds(59_600))
        #expect(clock.now.offset <= .seconds(61))
    }

    @Test("A limiter on the real clock lets the first request out at once")
    func continuousClockLimiter() async throws {
        let limiter = RateLimiter(limits: ["openlibrary.org": .openLibrary])
        try await limiter.acquire(host: "openlibrary.org")
        #expect(limiter.bucket(host: "openlibrary.org").tokens < 1)
        #expect(limiter.bucket(host: "elsewhere.org").limit == .conservative)
    }

    @Test("A 429 halves the rate, repeated 429s stop at the floor")
    func slowsDownOn429() {
        var bucket = TokenBucket<Instant>(limit: RateLimit(requestsPerSecond: 3, minimumRequestsPerSecond: 0.5))
        let now = Instant(offset: .zero)
        bucket.record(.rateLimited(retryAfter: nil), now: now)
        #expect(bucket.currentRate == 1.5)
        bucket.record(.rateLimited(retryAfter: nil), now: now)
        #expect(bucket.currentRate == 0.75)
        bucket.record(.rateLimited(retryAfter: nil), now: now)
        bucket.record(.rateLimited(retryAfter: nil), now: now)
        #expect(bucket.currentRate == 0.5)
        #expect(bucket.rateLimitedCount == 4)
    }

    @Test("After a slow-down the rate recovers step by step after runs of successes, never above the refused rate")
    func recoversSlowly() {
        var bucket = TokenBucket<Instant>(limit: .openLibrary)
        let now = Instant(offset: .zero)
        bucket.record(.rateLimited(retryAfter: nil), now: now)   // refused at 3/s
        #expect(bucket.currentRate == 1.5)
        for _ in 0..<19 { bucket.record(.success, now: now) }
        #expect(bucket.currentRate == 1.5, "no speed-up before 20 successes in a row")
        bucket.record(.success, now: now)
        #expect(abs(bucket.currentRate - 1.8) < 1e-9)
        for _ in 0..<1000 { bucket.record(.success, now: now) }
        #expect(bucket.currentRate == 3)
        #expect(bucket.ceiling == 3)
        // Refused again at 3/s, then at 1.5/s: recovery now stops at 1.5/s.
        bucket.record(.rateLimited(retryAfter: nil), now: now)
        bucket.record(.rateLimited(retryAfter: nil), now: now)
        #expect(bucket.currentRate == 0.75)
        for _ in 0..<1000 { bucket.record(.success, now: now) }
        #expect(bucket.currentRate == 1.5)
    }

    @Test("A limit announced by the server caps the rate for good")
    func serverRevealedLimit() {
        var bucket = TokenBucket<Instant>(limit: .openLibrary)
        let now = Instant(offset: .zero)
        bucket.record(.serverLimit(requestsPerSecond: 2), now: now)
        #expect(bucket.currentRate == 2)
        for _ in 0..<1000 { bucket.record(.success, now: now) }
        #expect(bucket.currentRate == 2)
        bucket.record(.serverLimit(requestsPerSecond: 10), now: now)
        #expect(bucket.currentRate == 2, "a higher announcement never raises the configured or revealed limit")
    }

    @Test("Sends slow to the halved rate after a 429 and come back after successes, over a simulated minute")
    func adaptiveSendsOverTime() {
        var machine = RateLimiterStateMachine<Instant>(limits: ["ol": .openLibrary])
        // The server refuses the 10th request; everything else succeeds.
        var count = 0
        let sends = Self.simulate(&machine, host: "ol", for: .seconds(60)) { machine, now in
            count += 1
            machine.record(count == 10 ? .rateLimited(retryAfter: nil) : .success, host: "ol", now: now)
        }
        let afterRefusal = sends[10...].prefix(20)
        #expect(Self.maxInWindow(Array(afterRefusal), window: .seconds(1)) <= 2, "1.5/s right after the 429")
        #expect(Self.maxInWindow(sends, window: .seconds(1)) <= 3)
        #expect(machine.bucket(host: "ol").currentRate == 3, "recovered by the end of the minute")
    }

    @Test("Retry-After on a 429 pauses every request to the host until then")
    func retryAfterPausesHost() {
        var machine = RateLimiterStateMachine<Instant>(limits: ["ol": .openLibrary])
        let start = Instant(offset: .zero)
        #expect(machine.acquire(host: "ol", now: start) == .send)
        machine.record(.rateLimited(retryAfter: .seconds(5)), host: "ol", now: start)
        #expect(machine.acquire(host: "ol", now: start.advanced(by: .seconds(1))) == .wait(until: start.advanced(by: .seconds(5))))
        #expect(machine.acquire(host: "other", now: start) == .send, "other hosts are not affected")
        // At the end of the pause the bucket has refilled at the halved rate.
        #expect(machine.acquire(host: "ol", now: start.advanced(by: .seconds(5))) == .send)
    }

    @Test("A host's daily quota blocks it until the next midnight Pacific time")
    func dailyQuota() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2026-11-22T12:00:00Z"))
        let quota = HostQuota.dailyQuotaExhausted(host: "WWW.googleapis.com", now: now)
        #expect(quota.host == "www.googleapis.com")
        #expect(quota.blockedUntil == ISO8601DateFormatter().date(from: "2026-11-23T08:00:00Z"))
        #expect(quota.isBlocked(at: now))
        #expect(quota.remaining(at: now) == .seconds(20 * 3600))
        #expect(!quota.isBlocked(at: quota.blockedUntil))
        #expect(quota.remaining(at: quota.blockedUntil.addingTimeInterval(5)) == .zero)
        #expect(quota.description == "www.googleapis.com is blocked until Mon, 23 Nov 2026 08:00:00 GMT "
                + "(daily quota exceeded); bookpipe will not ask it before then; rerun later with bookpipe enrich --failed")
    }

    @Test("A quota survives a round trip through the store's encoding, and the later block wins")
    func quotaCodableAndMerge() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let short = HostQuota.retryAfter(.seconds(60), host: "h", now: now, reason: "429")
        let long = HostQuota.retryAfter(.seconds(600), host: "h", now: now, reason: "429 again")
        #expect(short.merged(with: long) == long)
        #expect(long.merged(with: short) == long)
        let decoded = try JSONDecoder().decode(HostQuota.self, from: JSONEncoder().encode(long))
        #expect(decoded == long)
    }

    @Test("Rate limits decode from a pipeline file with defaults for missing keys and reject a zero rate")
    func rateLimitCodable() throws {
        let limit = try JSONDecoder().decode(RateLimit.self, from: Data(#"{"requestsPerSecond": 5}"#.utf8))
        #expect(limit == RateLimit(requestsPerSecond: 5))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(RateLimit.self, from: Data(#"{"requestsPerSecond": 0}"#.utf8))
        }
    }
}

@Suite struct ManualClockPolicyTests {
    @Test("A sleeper resumes only when the clock reaches its deadline", .timeLimit(.minutes(5)))
    func sleepsUntilAdvanced() async throws {
        let clock = ManualClock()
        let woke = Locked(false)
        async let sleeper: Void = {
            try await clock.sleep(for: .seconds(2))
            woke.withLock { $0 = true }
        }()
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        #expect(clock.sleeperCount == 1)
        #expect(!woke.withLock { $0 })
        clock.advance(by: .seconds(1))
        try await sleeper
        #expect(woke.withLock { $0 })
        #expect(clock.now.offset == .seconds(2))
    }

    @Test("Sleeping until a past deadline returns at once")
    func pastDeadline() async throws {
        let clock = ManualClock(start: .init(offset: .seconds(10)))
        try await clock.sleep(until: .init(offset: .seconds(5)))
        #expect(clock.sleeperCount == 0)
    }
}
