import BookpipeEnrichment
import Synchronization

/// Tells a scan run when to stop sending new photos because the backend cannot be reached:
/// ``BackendReachabilityStateMachine`` (the rule, written out there) behind a lock, shared by
/// every photo sent to one backend.
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
/// Nothing here waits: it only counts. Thread safety: the state machine lives in a `Mutex`.
public final class BackendReachability: Sendable {
    private let state: Mutex<BackendReachabilityStateMachine>

    /// Creates the rule for a run.
    /// - Parameter photosInARowToStop: Photos in a row that may give up unreachable before the
    ///   run stops (at least 2; ``ScanSettings/photosUnreachableInARowToStop`` gives the run's).
    public init(photosInARowToStop: Int) {
        state = Mutex(BackendReachabilityStateMachine(photosInARowToStop: photosInARowToStop))
    }

    /// Photos in a row that gave up unreachable after which the run stops.
    public var photosInARowToStop: Int { state.withLock { $0.photosInARowToStop } }

    /// Photos that gave up unreachable since the last upload that reached the backend.
    public var photosUnreachableInARow: Int { state.withLock { $0.photosUnreachableInARow } }

    /// Why the run stopped sending photos; nil while new photos may be started.
    public var stop: UnreachableBackend? { state.withLock { $0.stop } }

    /// Records an upload that reached the backend: the count starts again.
    public func uploadReachedBackend() {
        state.withLock { $0.uploadReachedBackend() }
    }

    /// Records a photo given up because its last upload could not reach the backend.
    /// - Parameter cause: Why, in a few words (``UploadReach/couldNotReachBackend(cause:)``).
    /// - Returns: the stop, for the one photo that made the run stop; nil for every other.
    public func photoGaveUp(cause: String) -> UnreachableBackend? {
        state.withLock { $0.photoGaveUp(cause: cause) }
    }

    /// Records how one upload attempt went: one that reached the backend starts the count again;
    /// one that could not reach it, or was never sent, changes nothing (only a photo given up
    /// counts, with ``photoGaveUp(cause:)``).
    public func record(_ reach: UploadReach) {
        if reach == .reachedBackend { uploadReachedBackend() }
    }
}

/// How one upload attempt went, as ``BackendReachability``'s rule sees it.
public enum UploadReach: Sendable, Hashable {
    /// An answer came, with any status (202, 4xx, 429, 5xx, one that cannot be used), or a
    /// connection was made and then lost: the backend's address answers.
    case reachedBackend
    /// No connection could be made (``HTTPError/couldNotConnect(url:reason:method:)``: connection
    /// refused, host name not resolved, no route) or the upload timed out
    /// (``HTTPError/timedOut(url:limit:detail:method:)``: connect or upload timeout).
    case couldNotReachBackend(cause: String)
    /// Nothing went out: the URL cannot be used, the client was shut down, the task was cancelled.
    case notSent

    /// How an upload that threw `error` went.
    /// - Parameter error: What ``ScanBackendClient/upload(_:filename:provider:)`` threw.
    public init(failure error: any Error) {
        switch error {
        case let error as HTTPError:
            switch error {
            case .couldNotConnect(_, let reason, _): self = .couldNotReachBackend(cause: reason)
            case .timedOut(_, let limit, _, _): self = .couldNotReachBackend(cause: "timed out after \(limit)")
            case .invalidURL, .shutDown: self = .notSent
            case .connectionFailed, .truncatedBody, .malformedResponse, .tooManyRedirects, .bodyTooLarge, .transferFailed:
                self = .reachedBackend
            }
        case is ScanFailure:
            // The client throws these for answers: a 4xx, a 2xx that is not a usable job.
            self = .reachedBackend
        default:
            self = .notSent
        }
    }
}
