import Synchronization

/// Counters of one source's work, shared by the tasks that use it (thread-safe).
public final class SourceStatistics: Sendable {
    /// A copy of the counters at one moment.
    public struct Snapshot: Sendable, Hashable, Codable {
        /// HTTP requests sent (every attempt counts, retries included).
        public var requests = 0
        /// Questions answered from the library's cache without asking the source.
        public var cacheHits = 0
        /// Attempts repeated after a 429, 503, timeout, connection error or malformed body.
        public var retries = 0
        /// Responses with status 429.
        public var rateLimited = 0
        /// Lookups that failed for good.
        public var failures = 0
        /// Sum of the request latencies, for the mean.
        public var totalLatency: Duration = .zero

        /// Creates empty counters.
        public init() {}

        /// Mean latency of a request, or nil before the first one.
        public var meanLatency: Duration? { requests > 0 ? totalLatency / requests : nil }
    }

    private let counters = Mutex(Snapshot())

    /// Creates empty counters.
    public init() {}

    /// The counters now.
    public var snapshot: Snapshot { counters.withLock { $0 } }

    /// Changes the counters.
    public func update(_ change: (inout Snapshot) -> Void) {
        counters.withLock { change(&$0) }
    }
}
