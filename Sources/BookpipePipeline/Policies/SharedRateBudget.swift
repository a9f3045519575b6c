/// A rate budget shared by every process that works on one library (issue 28: "one rate budget
/// for all"): a token bucket per host kept where every worker reaches it, on one clock.
///
/// A ``RateLimiter`` given one asks it for each request after its own per-process bucket: the
/// shared bucket says when the request may go, whatever the number of workers, so eight workers
/// against Open Library send 3 requests per second together, not 24. A 429 seen by one worker
/// pauses every worker (``pause(host:for:reason:)``).
///
/// The library's engines keep the bucket (PostgreSQL: one statement on the server's clock;
/// SQLite: one write transaction in the library file); see `docs/decisions/0029`.
public protocol SharedRateBudget: Sendable {
    /// Takes a token of `host`'s shared bucket, refilled at `limit`'s rate up to its burst.
    /// - Returns: zero when the request may go now (the token is taken); otherwise how long to
    ///   wait before asking again (nothing is taken).
    /// - Throws: when the budget cannot be reached; the limiter then waits one interval and asks again.
    func take(host: String, limit: RateLimit) async throws -> Duration

    /// Pauses every worker's requests to `host` for `duration` from now (a longer pause already
    /// set stands). Best effort: a pause that cannot be stored leaves each worker its own backoff.
    func pause(host: String, for duration: Duration, reason: String) async
}
