/// The decisions of ``BackendReachability``, without a lock: when a run stops sending new photos
/// because the backend cannot be reached.
///
/// **The rule.** An upload *could not reach the backend* when it failed before any answer came:
/// no connection could be made (connection refused, host name not resolved, no route) or it timed
/// out (connect or upload timeout). Every other outcome of an upload reached it: an answer with
/// any status (202, 4xx, 429, 5xx, an answer that cannot be used) or a connection that was made
/// and then lost. A photo *gave up unreachable* when its last upload attempt was given up (after
/// every retry) on an upload that could not reach the backend.
///
/// Once ``photosInARowToStop`` photos in a row gave up unreachable, with no upload reaching the
/// backend in between, the run stops: no new photo is started. Photos already in flight finish
/// their own retries; what they report later changes nothing (the decision is final, so the
/// photos left unsent are the same whatever arrives after it).
///
/// Only transport failures count: a 4xx or 5xx answer, a job's `error` event or a photo that
/// cannot be read is that photo's failure and never stops the run. An upload that reached the
/// backend starts the count again, so a backend that drops some uploads but answers others is
/// never given up on.
///
/// ```swift
/// var reachability = BackendReachabilityStateMachine(photosInARowToStop: 2)
/// reachability.photoGaveUp(cause: "connection refused")   // nil: 1 in a row
/// reachability.uploadReachedBackend()                       // 0 in a row
/// reachability.photoGaveUp(cause: "connection refused")   // nil: 1 in a row
/// reachability.photoGaveUp(cause: "connection refused")   // UnreachableBackend(photosInARow: 2, …): stop
/// ```
public struct BackendReachabilityStateMachine: Sendable, Hashable {
    /// Photos in a row that gave up unreachable after which the run stops (2 or more).
    public let photosInARowToStop: Int
    /// Photos that gave up unreachable since the last upload that reached the backend.
    public private(set) var photosUnreachableInARow = 0
    /// Why the run stopped sending photos; nil while it goes on.
    public private(set) var stop: UnreachableBackend?

    /// Creates the rule for a run.
    /// - Parameter photosInARowToStop: Photos in a row that may give up unreachable before the
    ///   run stops; at least 2, so one unlucky photo never stops a run.
    public init(photosInARowToStop: Int) {
        self.photosInARowToStop = max(2, photosInARowToStop)
    }

    /// Records an upload that reached the backend (any answer, or a connection that was then
    /// lost): the count starts again.
    public mutating func uploadReachedBackend() {
        guard stop == nil else { return }
        photosUnreachableInARow = 0
    }

    /// Records a photo given up because its last upload could not reach the backend.
    /// - Parameter cause: Why, in a few words ("connection refused", "timed out after 120.0 seconds").
    /// - Returns: the stop, exactly once: for the photo that made the run stop; nil otherwise
    ///   (before the rule is met, and after it).
    public mutating func photoGaveUp(cause: String) -> UnreachableBackend? {
        guard stop == nil else { return nil }
        photosUnreachableInARow += 1
        guard photosUnreachableInARow >= photosInARowToStop else { return nil }
        let decided = UnreachableBackend(photosInARow: photosUnreachableInARow, cause: cause)
        stop = decided
        return decided
    }
}

/// Why a run stopped sending photos: this many photos in a row could not reach the backend.
public struct UnreachableBackend: Sendable, Hashable {
    /// Photos in a row whose uploads were given up because the backend could not be reached.
    public var photosInARow: Int
    /// The last one's cause, in a few words ("connection refused", "host name not resolved",
    /// "timed out after 120.0 seconds").
    public var cause: String

    /// Creates a value.
    public init(photosInARow: Int, cause: String) {
        self.photosInARow = photosInARow
        self.cause = cause
    }
}
