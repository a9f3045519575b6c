/// The rate limiter's decision for one request.
public enum RateLimitAction<Instant: InstantProtocol & Sendable>: Sendable, Hashable {
    /// Send now; a token has been taken.
    case send
    /// Do not send before this instant; then ask again.
    case wait(until: Instant)
}

/// What a response tells the rate limiter.
public enum RateLimitFeedback: Sendable, Hashable {
    /// The host answered normally (any status other than 429).
    case success
    /// The host answered 429; `retryAfter` (if it sent one) pauses every request to the host.
    case rateLimited(retryAfter: Duration?)
    /// The host announced its limit (for example in a `RateLimit-Limit` header), in requests per second.
    case serverLimit(requestsPerSecond: Double)
}

/// One host's token bucket. Pure: the caller passes the current instant.
///
/// Tokens refill at ``currentRate`` up to the burst size; a request takes one token. On 429 the
/// rate halves (not below the floor) and the ceiling drops to the rate that was refused; after
/// a run of successes the rate rises by a step, never above the ceiling (the configured rate
/// or the limit the server revealed, whichever is lower).
public struct TokenBucket<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    /// The configured rule.
    public let limit: RateLimit
    /// The rate in force now (requests per second).
    public private(set) var currentRate: Double
    /// The highest rate allowed now: the configured rate or a limit the server revealed.
    public private(set) var ceiling: Double
    /// Tokens available at ``lastUpdate``.
    public private(set) var tokens: Double
    /// No request is sent before this instant (set by a `Retry-After` on a 429).
    public private(set) var pausedUntil: Instant?
    /// 429s seen.
    public private(set) var rateLimitedCount = 0
    private var lastUpdate: Instant?
    private var successStreak = 0

    /// Creates a full bucket.
    public init(limit: RateLimit) {
        self.limit = limit
        currentRate = limit.requestsPerSecond
        ceiling = limit.requestsPerSecond
        tokens = Double(limit.burst)
    }

    /// Takes a token if one is available at `now`, or says when to ask again.
    public mutating func acquire(now: Instant) -> RateLimitAction<Instant> {
        refill(now: now)
        if let pausedUntil, now < pausedUntil { return .wait(until: pausedUntil) }
        // A tiny tolerance absorbs floating-point error when waking exactly on time.
        if tokens >= 1 - 1e-9 {
            tokens = max(0, tokens - 1)
            return .send
        }
        let missing = 1 - tokens
        let nanoseconds = (missing / currentRate * 1e9).rounded(.up)
        return .wait(until: now.advanced(by: .nanoseconds(Int64(max(1, nanoseconds)))))
    }

    /// Applies what a response said about the host's limit.
    public mutating func record(_ feedback: RateLimitFeedback, now: Instant) {
        refill(now: now)
        switch feedback {
        case .success:
            successStreak += 1
            if successStreak >= limit.successesBeforeSpeedUp, currentRate < ceiling {
                currentRate = min(ceiling, currentRate + limit.requestsPerSecond * limit.speedUpFraction)
                successStreak = 0
            }
        case .rateLimited(let retryAfter):
            rateLimitedCount += 1
            successStreak = 0
            ceiling = max(limit.minimumRequestsPerSecond, min(ceiling, currentRate))
            currentRate = max(limit.minimumRequestsPerSecond, currentRate / 2)
            tokens = 0
            if let retryAfter, retryAfter > .zero {
                let until = now.advanced(by: retryAfter)
                if pausedUntil.map({ until > $0 }) ?? true { pausedUntil = until }
            }
        case .serverLimit(let requestsPerSecond):
            guard requestsPerSecond > 0, requestsPerSecond.isFinite else { return }
            ceiling = max(limit.minimumRequestsPerSecond, min(ceiling, requestsPerSecond))
            currentRate = min(currentRate, ceiling)
        }
    }

    private mutating func refill(now: Instant) {
        guard let lastUpdate else {
            self.lastUpdate = now
            return
        }
        guard now > lastUpdate else { return }
        let elapsed = lastUpdate.duration(to: now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(Double(limit.burst), tokens + seconds * currentRate)
        self.lastUpdate = now
        if let pausedUntil, now >= pausedUntil { self.pausedUntil = nil }
    }
}

/// Token buckets for every host. Pure: the caller passes the current instant.
///
/// ```swift
/// var limiter = RateLimiterStateMachine<ContinuousClock.Instant>(limits: ["openlibrary.org": .openLibrary])
/// switch limiter.acquire(host: "openlibrary.org", now: .now) {
/// case .send: send()
/// case .wait(let until): sleep(until: until)  // then ask again
/// }
/// ```
public struct RateLimiterStateMachine<Instant: InstantProtocol & Sendable>: Sendable
where Instant.Duration == Duration {
    /// Rules by host name (lower case).
    public let limits: [String: RateLimit]
    /// The rule for hosts not in ``limits``.
    public let defaultLimit: RateLimit
    private var buckets: [String: TokenBucket<Instant>] = [:]

    /// Creates the limiter.
    /// - Parameters:
    ///   - limits: rules by host name (compared case-insensitively).
    ///   - defaultLimit: the rule for other hosts.
    public init(limits: [String: RateLimit] = [:], defaultLimit: RateLimit = .conservative) {
        self.limits = Dictionary(limits.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.defaultLimit = defaultLimit
    }

    /// Takes a token for `host` if one is available at `now`, or says when to ask again.
    public mutating func acquire(host: String, now: Instant) -> RateLimitAction<Instant> {
        let key = host.lowercased()
        var bucket = buckets[key] ?? TokenBucket(limit: limits[key] ?? defaultLimit)
        let action = bucket.acquire(now: now)
        buckets[key] = bucket
        return action
    }

    /// Applies what a response from `host` said about its limit.
    public mutating func record(_ feedback: RateLimitFeedback, host: String, now: Instant) {
        let key = host.lowercased()
        var bucket = buckets[key] ?? TokenBucket(limit: limits[key] ?? defaultLimit)
        bucket.record(feedback, now: now)
        buckets[key] = bucket
    }

    /// The bucket of `host` as it stands (a fresh one if the host was never used).
    public func bucket(host: String) -> TokenBucket<Instant> {
        let key = host.lowercased()
        return buckets[key] ?? TokenBucket(limit: limits[key] ?? defaultLimit)
    }
}
