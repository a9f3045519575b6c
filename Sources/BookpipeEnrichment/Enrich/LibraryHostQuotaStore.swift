import BookpipePipeline
import BookpipeLibrary

/// Keeps host quotas in the library, so a quota announced in one run (Google's daily quota) is
/// respected by the next: no request is sent to the host before the quota resets.
public struct LibraryHostQuotaStore: HostQuotaStore {
    /// The library.
    public let store: any LibraryEnrichmentStore

    /// Creates the store.
    public init(store: any LibraryEnrichmentStore) {
        self.store = store
    }

    /// The stored quota of `host` (nil when none, or when the library cannot be read).
    public func quota(forHost host: String) async -> HostQuota? {
        guard let stored = try? await store.hostQuota(host: host) else { return nil }
        return HostQuota(host: stored.host, blockedUntil: stored.blockedUntil, reason: stored.reason)
    }

    /// Stores a quota (a later block wins) through the library's writer (``LibraryEnrichmentStore/saveHostQuota(_:)``),
    /// in order with the run's other writes; returns once it is committed. A write failure only
    /// loses the memory of the quota for the next run; this run has already failed the lookup.
    public func save(_ quota: HostQuota) async {
        try? await store.saveHostQuota(StoredHostQuota(host: quota.host, blockedUntil: quota.blockedUntil,
                                                       reason: quota.reason))
    }
}
