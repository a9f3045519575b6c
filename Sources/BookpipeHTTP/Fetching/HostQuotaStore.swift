import BookpipePipeline
import Synchronization

/// Where ``PolicyHTTPFetcher`` keeps the quotas hosts have announced (Google's daily quota, a
/// `Retry-After` longer than the retry policy waits), so that no request is sent to a blocked
/// host, in this run or, with a persistent store, the next one.
///
/// Hosts are named as ``PolicyHTTPFetcher/hostKey(of:)`` names them: the lower-case host name
/// (`www.googleapis.com`), followed by `:port` when the URL names a port (`127.0.0.1:8080`), so
/// two test servers on one machine do not block each other.
///
/// Implementations must be safe to call from many tasks at once. ``InMemoryHostQuotaStore``
/// keeps quotas for one process; a store backed by the library keeps them between runs.
public protocol HostQuotaStore: Sendable {
    /// The quota recorded for `host`, if any, whether or not it has expired.
    ///
    /// - Parameter host: the host key (see ``PolicyHTTPFetcher/hostKey(of:)``).
    func quota(forHost host: String) async -> HostQuota?

    /// Records a quota. When the host already has one, the store keeps the later block
    /// (``HostQuota/merged(with:)``). Asynchronous: a store backed by the library writes through
    /// its writer, in order with the run's other writes, and returns once it is committed.
    func save(_ quota: HostQuota) async
}

/// A ``HostQuotaStore`` in memory: quotas live as long as the store.
///
/// ```swift
/// let quotas = InMemoryHostQuotaStore()
/// quotas.save(.dailyQuotaExhausted(host: "www.googleapis.com", now: Date()))
/// quotas.quota(forHost: "www.googleapis.com")?.isBlocked(at: Date())   // true
/// ```
///
/// Thread safety: the quotas live in a `Mutex`; every method may be called from any task.
public final class InMemoryHostQuotaStore: HostQuotaStore {
    private let quotas: Mutex<[String: HostQuota]>

    /// Creates a store holding `quotas` (later blocks win for a repeated host).
    public init(_ quotas: [HostQuota] = []) {
        var byHost: [String: HostQuota] = [:]
        for quota in quotas {
            byHost[quota.host] = byHost[quota.host].map { $0.merged(with: quota) } ?? quota
        }
        self.quotas = Mutex(byHost)
    }

    /// The quota recorded for `host` (compared case-insensitively), expired or not.
    public func quota(forHost host: String) -> HostQuota? {
        let key = host.lowercased()
        return quotas.withLock { $0[key] }
    }

    /// Records `quota`, keeping the later block when the host already has one.
    public func save(_ quota: HostQuota) {
        quotas.withLock { quotas in
            quotas[quota.host] = quotas[quota.host].map { $0.merged(with: quota) } ?? quota
        }
    }

    /// Every quota recorded, sorted by host.
    public var all: [HostQuota] {
        quotas.withLock { Array($0.values) }.sorted { $0.host < $1.host }
    }
}
