import BookpipePipeline
import Foundation
import PropertyBased
import Testing

/// The retry and rate-limit state machines never go past their limits, whatever the answers and
/// however the clock jumps (issue 24).
@Suite struct PolicyPropertyTests {
    /// One answer a request can get, as a small number the generator shrinks well.
    static func outcome(_ code: Int, retryAfterSeconds: Int?) -> RetryOutcome {
        let retryAfter = retryAfterSeconds.map { RetryAfter.seconds($0) }
        switch code % 14 {
        case 0: return .success
        case 1: return .timeout
        case 2: return .connectionError
        case 3: return .malformedBody
        case 4: return .status(404, retryAfter: nil)
        case 5: return .status(408, retryAfter: retryAfter)
        case 6: return .status(500, retryAfter: retryAfter)
        case 7: return .status(502, retryAfter: retryAfter)
        case 8: return .status(503, retryAfter: retryAfter)
        case 9: return .status(504, retryAfter: retryAfter)
        case 10: return .status(400, retryAfter: nil)
        default: return .status(429, retryAfter: retryAfter)
        }
    }

    static let answers = Gen.int(in: 0...13).array(of: 1...40)
    static let retryAfters = Gen.int(in: 0...900).optional.array(of: 40)
    static let policies = Gen.int(in: 0...6).array(of: 4)

    @Test("A request's retries, requeues and transport attempts never exceed the policy's, and every wait stays within it")
    func retryStateMachineStaysWithinItsLimits() async {
        await propertyCheck(count: 500, input: Self.answers, Self.retryAfters, Self.policies) { codes, retryAfters, limits in
            let policy = RetryPolicy(
                rateLimited: .init(initialBackoff: .seconds(1), multiplier: 2, maxRetries: limits[0], maxRetryAfter: .seconds(300)),
                unavailable: .init(requeueDelay: .seconds(30), maxRequeues: limits[1]),
                transport: .init(maxAttempts: max(1, limits[2]), retryDelay: .seconds(limits[3])))
            var machine = RetryStateMachine(policy: policy)
            let now = Date(timeIntervalSince1970: 1_700_000_000)
            let longestBackoff = policy.rateLimitedBackoff(beforeRetry: max(1, limits[0]))
            for (index, code) in codes.enumerated() {
                let action = machine.next(after: Self.outcome(code, retryAfterSeconds: retryAfters[index]), now: now)
                #expect(machine.rateLimitedRetries <= policy.rateLimited.maxRetries)
                #expect(machine.requeues <= policy.unavailable.maxRequeues)
                #expect(machine.transportFailures <= policy.transport.maxAttempts)
                #expect(machine.attempts <= policy.maxAttemptsPerRequest, "attempt \(machine.attempts) of at most \(policy.maxAttemptsPerRequest)")
                switch action {
                case .retry(let delay):
                    #expect(delay <= max(longestBackoff, policy.rateLimited.maxRetryAfter, policy.transport.retryDelay))
                case .requeue(let delay):
                    #expect(delay <= max(policy.unavailable.requeueDelay, policy.rateLimited.maxRetryAfter))
                case .succeed, .giveUp, .permanentNotFound:
                    return  // finished: nothing more is asked of this request
                }
            }
        }
    }

    /// One step of a host's life: the clock moves (forwards by up to 3 s, or backwards a little,
    /// as two threads reading a clock can see it), then a request asks for a token or an answer
    /// comes back.
    static let steps = Gen.int(in: -200...3000).array(of: 1...200)
    static let events = Gen.int(in: 0...9).array(of: 200)

    @Test("A host never gets more requests than its burst plus its configured rate allows, and none while a Retry-After pauses it")
    func tokenBucketStaysWithinItsRate() async {
        await propertyCheck(count: 300, input: Self.steps, Self.events, Gen.int(in: 1...4), Gen.int(in: 1...50)) {
            jumps, events, burst, tenthsPerSecond in
            let limit = RateLimit(requestsPerSecond: Double(tenthsPerSecond) / 10, burst: burst, successesBeforeSpeedUp: 3)
            var bucket = TokenBucket<ManualClock.Instant>(limit: limit)
            var now = ManualClock.Instant(offset: .seconds(100))
            // The window runs from the earliest instant the bucket can have seen (the clock may
            // step back below the start before the first request) to the latest.
            var earliest = now
            var latest = now
            var sent = 0
            for (index, jump) in jumps.enumerated() {
                now = now.advanced(by: .milliseconds(jump))
                earliest = min(earliest, now)
                latest = max(latest, now)
                let paused = bucket.pausedUntil
                switch events[index] {
                case 0..<6:
                    if case .send = bucket.acquire(now: now) {
                        sent += 1
                        let elapsed = earliest.duration(to: latest)
                        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                        #expect(Double(sent) <= Double(burst) + limit.requestsPerSecond * seconds + 1e-6,
                                "\(sent) requests in \(seconds) s at \(limit)")
                        if let paused { #expect(now >= paused, "sent at \(now) while paused until \(paused)") }
                    }
                case 6, 7: bucket.record(.success, now: now)
                case 8: bucket.record(.rateLimited(retryAfter: .seconds(jump % 5)), now: now)
                default: bucket.record(.serverLimit(requestsPerSecond: Double(jump) / 100), now: now)
                }
                #expect(bucket.currentRate <= limit.requestsPerSecond + 1e-9)
                #expect(bucket.currentRate >= limit.minimumRequestsPerSecond - 1e-9)
                #expect(bucket.tokens <= Double(burst) + 1e-9)
            }
        }
    }
}
