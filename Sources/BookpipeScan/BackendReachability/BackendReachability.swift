import BookpipeHTTP

/// Tells a scan run when to stop sending new photos because the backend cannot be reached:
/// BookpipeHTTP's ``Reachability`` rule (written out in ``ReachabilityStateMachine``), counted in
/// photos: a photo is the unit of work, an upload the attempt.
///
/// ``ScanJobRunner`` reports each upload attempt and each photo it gives up; the caller asks
/// ``stop`` before starting a photo and leaves the photo unsent once it is set.
///
/// ```swift
/// let reachability = BackendReachability(photosInARowToStop: 4)
/// reachability.record(UploadReach(failure: error))        // after each upload attempt
/// if let stop = reachability.photoGaveUp(cause: "connection refused") { /* say so, once */ }
/// if reachability.stop == nil { /* start the next photo */ }
/// ```
///
/// Nothing here waits: it only counts. Thread safety: as ``Reachability``'s.
public final class BackendReachability: Sendable {
    private let reachability: Reachability

    /// Creates the rule for a run.
    /// - Parameter photosInARowToStop: Photos in a row that may give up unreachable before the
    ///   run stops (at least 2; ``ScanSettings/photosUnreachableInARowToStop`` gives the run's).
    public init(photosInARowToStop: Int) {
        reachability = Reachability(givenUpInARowToStop: photosInARowToStop)
    }

    /// Photos in a row that gave up unreachable after which the run stops.
    public var photosInARowToStop: Int { reachability.givenUpInARowToStop }

    /// Photos that gave up unreachable since the last upload that reached the backend.
    public var photosUnreachableInARow: Int { reachability.unreachableInARow }

    /// Why the run stopped sending photos; nil while new photos may be started.
    public var stop: UnreachableBackend? { reachability.stop }

    /// Records an upload that reached the backend: the count starts again.
    public func uploadReachedBackend() {
        reachability.reached()
    }

    /// Records a photo given up because its last upload could not reach the backend.
    /// - Parameter cause: Why, in a few words (``UploadReach/couldNotReachBackend(cause:)``).
    /// - Returns: the stop, for the one photo that made the run stop; nil for every other.
    public func photoGaveUp(cause: String) -> UnreachableBackend? {
        reachability.gaveUpUnreachable(cause: cause)
    }

    /// Records how one upload attempt went: one that reached the backend starts the count again;
    /// one that could not reach it, or was never sent, changes nothing (only a photo given up
    /// counts, with ``photoGaveUp(cause:)``).
    public func record(_ reach: UploadReach) {
        if reach == .reachedBackend { uploadReachedBackend() }
    }
}

/// Why a run stopped sending photos: ``Unreachable/inARow`` photos in a row could not reach the
/// backend.
public typealias UnreachableBackend = Unreachable

/// How one upload attempt went, as ``BackendReachability``'s rule sees it.
public enum UploadReach: Sendable, Hashable {
    /// An answer came, with any status (202, 4xx, 429, 5xx, one that cannot be used), or a
    /// connection was made and then lost: the backend's address answers.
    case reachedBackend
    /// No connection could be made (``HTTPError/couldNotConnect(url:reason:method:)``: connection
    /// refused, host name not resolved, no route, TLS handshake failed) or the upload timed out
    /// (``HTTPError/timedOut(url:limit:detail:method:)``: connect or upload timeout).
    case couldNotReachBackend(cause: String)
    /// Nothing went out: the URL cannot be used, the client was shut down, the task was cancelled.
    case notSent

    /// How an upload that threw `error` went: BookpipeHTTP's ``Reach`` classification, with the
    /// client's ``ScanFailure``s (thrown for answers: a 4xx, a 2xx that is not a usable job)
    /// counted as reaching the backend.
    /// - Parameter error: What ``ScanBackendClient/upload(_:filename:provider:)`` threw.
    public init(failure error: any Error) {
        if error is ScanFailure {
            self = .reachedBackend
            return
        }
        switch Reach(error: error) {
        case .reached: self = .reachedBackend
        case .couldNotConnect(let cause): self = .couldNotReachBackend(cause: cause)
        case .notSent: self = .notSent
        }
    }
}
