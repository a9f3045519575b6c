/// What one metadata source did: requests, cache hits, retries, 429s, failed lookups and mean
/// latency. The same value is shown while a run goes on (progress), printed in its summary and
/// stored with the run for reports.
public struct SourceCounters: Sendable, Hashable, Codable {
    /// The source's name (`catalog`, `openlibrary`, `googlebooks`).
    public var name: String
    /// HTTP requests sent, retries included.
    public var requests: Int
    /// Questions answered from the library's cache.
    public var cacheHits: Int
    /// Attempts repeated.
    public var retries: Int
    /// 429 responses.
    public var rateLimited: Int
    /// Lookups that failed for good.
    public var failures: Int
    /// Mean request latency in milliseconds, when a request was made.
    public var meanLatencyMilliseconds: Double?

    /// Creates the counters of one source.
    public init(name: String, requests: Int, cacheHits: Int, retries: Int, rateLimited: Int, failures: Int,
                meanLatencyMilliseconds: Double?) {
        self.name = name
        self.requests = requests
        self.cacheHits = cacheHits
        self.retries = retries
        self.rateLimited = rateLimited
        self.failures = failures
        self.meanLatencyMilliseconds = meanLatencyMilliseconds
    }
}
