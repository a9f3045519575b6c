import Foundation

/// What to do when a request fails: the retry table of DESIGN.md §4, as a value.
///
/// | outcome | action (defaults) |
/// |---|---|
/// | 429 | back off 1 s, 2 s, 4 s, 8 s (at most 4 retries); a larger `Retry-After` wins; then give up |
/// | 503 (and 500, 502, 504) | put back in the queue after 30 s (at most 5 times); then give up |
/// | timeout / connection error (and 408) | retry at once, at most 3 attempts in total |
/// | 404 / 410 | permanent: not found, no retry |
/// | malformed or cut-off body | retried like a 503 (shares its requeue count) |
/// | any other status | give up, no retry |
///
/// Every value can be set in the pipeline file. Durations are written in seconds:
///
/// ```yaml
/// retry:
///   rateLimited: { initialBackoff: 1, multiplier: 2, maxRetries: 4, maxRetryAfter: 300 }
///   unavailable: { requeueDelay: 30, maxRequeues: 5 }
///   transport:   { maxAttempts: 3, retryDelay: 0 }
/// ```
/// Keys left out keep their defaults. ``RetryStateMachine`` applies the policy to one request.
public struct RetryPolicy: Sendable, Codable, Equatable, CustomStringConvertible {
    /// Backoff for `429 Too Many Requests`.
    public struct RateLimited: Sendable, Codable, Equatable {
        /// The wait before the first retry (default 1 s).
        public var initialBackoff: Duration
        /// Each further wait is the previous one times this factor (default 2: 1, 2, 4, 8 s).
        public var multiplier: Double
        /// Retries after the first 429 before giving up (default 4).
        public var maxRetries: Int
        /// A `Retry-After` longer than this is not waited out: the request gives up so the
        /// caller can record the host as blocked (see ``HostQuota``). Default 300 s.
        public var maxRetryAfter: Duration

        /// Creates the 429 rules; the defaults are the documented ones.
        public init(initialBackoff: Duration = .seconds(1), multiplier: Double = 2, maxRetries: Int = 4,
                    maxRetryAfter: Duration = .seconds(300)) {
            self.initialBackoff = initialBackoff
            self.multiplier = multiplier
            self.maxRetries = maxRetries
            self.maxRetryAfter = maxRetryAfter
        }
    }

    /// Requeueing for `503 Service Unavailable` (and 500, 502, 504, malformed bodies).
    public struct Unavailable: Sendable, Codable, Equatable {
        /// How long the request stays out of the queue (default 30 s). A longer `Retry-After` wins.
        public var requeueDelay: Duration
        /// Requeues before giving up (default 5).
        public var maxRequeues: Int

        /// Creates the 503 rules; the defaults are the documented ones.
        public init(requeueDelay: Duration = .seconds(30), maxRequeues: Int = 5) {
            self.requeueDelay = requeueDelay
            self.maxRequeues = maxRequeues
        }
    }

    /// Retries for timeouts and connection errors (and `408 Request Timeout`).
    public struct Transport: Sendable, Codable, Equatable {
        /// Attempts in total, the first one included (default 3).
        public var maxAttempts: Int
        /// Wait before each retry (default zero: "retry at once").
        public var retryDelay: Duration
        /// Requests in a row given up without ever connecting (refused, not resolved, no route,
        /// TLS, timed out), none answered in between, after which the host is not asked again in
        /// the run (default 3; at least 2). See BookpipeHTTP's `ReachabilityStateMachine`.
        public var unreachableAfter: Int

        /// Creates the transport rules; the defaults are the documented ones.
        public init(maxAttempts: Int = 3, retryDelay: Duration = .zero, unreachableAfter: Int = 3) {
            self.maxAttempts = maxAttempts
            self.retryDelay = retryDelay
            self.unreachableAfter = max(2, unreachableAfter)
        }
    }

    /// Rules for 429.
    public var rateLimited: RateLimited
    /// Rules for 503, other 5xx gateway errors and malformed bodies.
    public var unavailable: Unavailable
    /// Rules for timeouts and connection errors.
    public var transport: Transport

    /// Creates a policy; every argument defaults to the documented value.
    public init(rateLimited: RateLimited = RateLimited(), unavailable: Unavailable = Unavailable(),
                transport: Transport = Transport()) {
        self.rateLimited = rateLimited
        self.unavailable = unavailable
        self.transport = transport
    }

    /// The documented defaults of DESIGN.md §4.
    public static let `default` = RetryPolicy()

    /// The backoff before the `retry`-th retry after a 429 (1-based), ignoring `Retry-After`:
    /// `initialBackoff × multiplier^(retry − 1)`.
    public func rateLimitedBackoff(beforeRetry retry: Int) -> Duration {
        let exponent = max(0, retry - 1)
        let factor = pow(max(1, rateLimited.multiplier), Double(exponent))
        return rateLimited.initialBackoff * factor
    }

    /// The most attempts one request can make, the first included: each kind of failure is
    /// counted on its own, so a request can use up every kind's allowance (1 + 4 + 5 + 2 = 12 with
    /// the defaults). Forecasts of a run's requests multiply by this for their upper bound.
    public var maxAttemptsPerRequest: Int {
        1 + max(0, rateLimited.maxRetries) + max(0, unavailable.maxRequeues) + max(0, transport.maxAttempts - 1)
    }

    public var description: String {
        let schedule = (1...max(1, rateLimited.maxRetries)).prefix(rateLimited.maxRetries)
            .map { formatSeconds(rateLimitedBackoff(beforeRetry: $0)) }.joined(separator: ", ")
        return "429: back off \(schedule.isEmpty ? "never" : schedule) (Retry-After wins up to "
            + "\(formatSeconds(rateLimited.maxRetryAfter))); 503: requeue after "
            + "\(formatSeconds(unavailable.requeueDelay)), at most \(unavailable.maxRequeues) times; "
            + "timeout/connection error: at most \(transport.maxAttempts) attempts; 404: permanent"
    }
}

// MARK: - Codable with durations in seconds

extension RetryPolicy {
    private enum CodingKeys: String, CodingKey { case rateLimited, unavailable, transport }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            rateLimited: try container.decodeIfPresent(RateLimited.self, forKey: .rateLimited) ?? RateLimited(),
            unavailable: try container.decodeIfPresent(Unavailable.self, forKey: .unavailable) ?? Unavailable(),
            transport: try container.decodeIfPresent(Transport.self, forKey: .transport) ?? Transport())
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rateLimited, forKey: .rateLimited)
        try container.encode(unavailable, forKey: .unavailable)
        try container.encode(transport, forKey: .transport)
    }
}

extension RetryPolicy.RateLimited {
    private enum CodingKeys: String, CodingKey { case initialBackoff, multiplier, maxRetries, maxRetryAfter }

    public init(from decoder: any Decoder) throws {
        let defaults = Self()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            initialBackoff: try container.decodeSeconds(.initialBackoff) ?? defaults.initialBackoff,
            multiplier: try container.decodeIfPresent(Double.self, forKey: .multiplier) ?? defaults.multiplier,
            maxRetries: try container.decodeCount(.maxRetries) ?? defaults.maxRetries,
            maxRetryAfter: try container.decodeSeconds(.maxRetryAfter) ?? defaults.maxRetryAfter)
        guard multiplier >= 1, multiplier.isFinite else {
            throw DecodingError.dataCorruptedError(
                forKey: .multiplier, in: container,
                debugDescription: "retry.rateLimited.multiplier must be a number ≥ 1 (got \(multiplier)); use 2 to double each wait")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(initialBackoff.inSeconds, forKey: .initialBackoff)
        try container.encode(multiplier, forKey: .multiplier)
        try container.encode(maxRetries, forKey: .maxRetries)
        try container.encode(maxRetryAfter.inSeconds, forKey: .maxRetryAfter)
    }
}

extension RetryPolicy.Unavailable {
    private enum CodingKeys: String, CodingKey { case requeueDelay, maxRequeues }

    public init(from decoder: any Decoder) throws {
        let defaults = Self()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(requeueDelay: try container.decodeSeconds(.requeueDelay) ?? defaults.requeueDelay,
                  maxRequeues: try container.decodeCount(.maxRequeues) ?? defaults.maxRequeues)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(requeueDelay.inSeconds, forKey: .requeueDelay)
        try container.encode(maxRequeues, forKey: .maxRequeues)
    }
}

extension RetryPolicy.Transport {
    private enum CodingKeys: String, CodingKey { case maxAttempts, retryDelay, unreachableAfter }

    public init(from decoder: any Decoder) throws {
        let defaults = Self()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(maxAttempts: try container.decodeCount(.maxAttempts) ?? defaults.maxAttempts,
                  retryDelay: try container.decodeSeconds(.retryDelay) ?? defaults.retryDelay,
                  unreachableAfter: try container.decodeCount(.unreachableAfter) ?? defaults.unreachableAfter)
        guard maxAttempts >= 1 else {
            throw DecodingError.dataCorruptedError(
                forKey: .maxAttempts, in: container,
                debugDescription: "retry.transport.maxAttempts must be at least 1 (the first attempt counts); got \(maxAttempts)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(maxAttempts, forKey: .maxAttempts)
        try container.encode(retryDelay.inSeconds, forKey: .retryDelay)
        try container.encode(unreachableAfter, forKey: .unreachableAfter)
    }
}

extension KeyedDecodingContainer {
    /// Decodes a non-negative number of seconds as a `Duration`.
    func decodeSeconds(_ key: Key) throws -> Duration? {
        guard let seconds = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        guard seconds >= 0, seconds.isFinite else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self,
                debugDescription: "\(key.stringValue) must be a number of seconds ≥ 0 (got \(seconds))")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Decodes a non-negative count.
    func decodeCount(_ key: Key) throws -> Int? {
        guard let count = try decodeIfPresent(Int.self, forKey: key) else { return nil }
        guard count >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "\(key.stringValue) must be ≥ 0 (got \(count))")
        }
        return count
    }
}

extension Duration {
    /// The duration as (fractional) seconds (shared with the modules built on the pipeline).
    package var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// Formats a duration for messages: `1 s`, `0.5 s`, `30 s`.
func formatSeconds(_ duration: Duration) -> String {
    let seconds = duration.inSeconds
    if seconds == seconds.rounded() && abs(seconds) < 1e15 { return "\(Int64(seconds)) s" }
    return "\((seconds * 1000).rounded() / 1000) s"
}
