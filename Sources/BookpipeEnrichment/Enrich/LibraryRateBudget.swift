import BookpipeLibrary
import BookpipePipeline

/// The rate budget every run on one library shares (``SharedRateBudget``), kept by the library:
/// a token bucket per host (``LibraryEnrichmentStore/takeHostToken(_:rate:burst:)``) and the
/// pauses a 429 sets. On a PostgreSQL library every worker on every machine asks the same
/// bucket on the server's clock; on a SQLite library, every process on the file.
public struct LibraryRateBudget: SharedRateBudget {
    /// The library.
    public let store: any LibraryEnrichmentStore

    /// Creates the budget.
    public init(store: any LibraryEnrichmentStore) {
        self.store = store
    }

    /// Takes a token of `host`'s bucket at `limit`'s configured rate and burst.
    /// - Throws: ``StoreError`` when the library cannot be asked.
    public func take(host: String, limit: RateLimit) async throws -> Duration {
        try await store.takeHostToken(host, rate: limit.requestsPerSecond, burst: Double(limit.burst))
    }

    /// Pauses every run's requests to `host` (best effort: a failed write leaves each run its own backoff).
    public func pause(host: String, for duration: Duration, reason: String) async {
        try? await store.pauseHost(host, for: duration, reason: reason)
    }
}
