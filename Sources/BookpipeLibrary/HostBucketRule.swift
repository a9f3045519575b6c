import Foundation

/// The shared token bucket of one host (``LibraryEnrichmentStore/takeHostToken(_:rate:burst:)``),
/// as a rule over values: the SQLite engine applies it in one write transaction; the PostgreSQL
/// engine runs the same arithmetic in `take_host_token` (migration 2), on the server's clock.
public enum HostBucketRule {
    /// The outcome of asking for a token.
    public struct Take: Sendable, Equatable {
        /// Tokens left in the bucket.
        public var tokens: Double
        /// Seconds to wait before asking again; zero when the token was taken.
        public var wait: Double

        /// Creates an outcome.
        public init(tokens: Double, wait: Double) {
            self.tokens = tokens
            self.wait = wait
        }
    }

    /// Asks for a token at `now` (seconds since 1970).
    /// - Parameters:
    ///   - tokens: the tokens stored at `updatedAt` (nil: a new bucket, full).
    ///   - updatedAt: when they were stored.
    ///   - pausedUntil: the end of a pause, if one is set.
    ///   - rate: tokens per second (at least 10⁻⁹).
    ///   - burst: the most tokens held (at least 1).
    public static func take(tokens: Double?, updatedAt: Double, pausedUntil: Double?, now: Double,
                            rate: Double, burst: Double) -> Take {
        let rate = max(rate, 1e-9), burst = max(burst, 1)
        let available = tokens.map { min(burst, $0 + max(0, now - updatedAt) * rate) } ?? burst
        if let pausedUntil, pausedUntil > now { return Take(tokens: available, wait: pausedUntil - now) }
        if available >= 1 { return Take(tokens: available - 1, wait: 0) }
        return Take(tokens: available, wait: (1 - available) / rate)
    }
}
