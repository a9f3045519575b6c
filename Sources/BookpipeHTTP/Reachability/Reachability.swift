import Synchronization

/// Tells a run when to stop asking a server that cannot be reached:
/// ``ReachabilityStateMachine`` (the rule, written out there) behind a lock, shared by every
/// task that talks to one server.
///
/// Callers report each attempt (``record(_:)``) and each unit of work given up on an attempt that
/// could not reach the server (``gaveUpUnreachable(cause:)``), and ask ``stop`` before starting a
/// unit: once it is set, the unit is left unsent.
///
/// ```swift
/// let reachability = Reachability(givenUpInARowToStop: 3)
/// reachability.record(Reach(error: error))                            // after each attempt
/// if let stop = reachability.gaveUpUnreachable(cause: "connection refused") { /* say so, once */ }
/// if reachability.stop == nil { /* start the next unit */ }
/// ```
///
/// Nothing here waits: it only counts. Thread safety: the state machine lives in a `Mutex`.
public final class Reachability: Sendable {
    private let state: Mutex<ReachabilityStateMachine>

    /// Creates the rule for a run.
    /// - Parameter givenUpInARowToStop: Units in a row that may give up unreachable before the
    ///   server is given up (at least 2).
    public init(givenUpInARowToStop: Int) {
        state = Mutex(ReachabilityStateMachine(givenUpInARowToStop: givenUpInARowToStop))
    }

    /// Units in a row that gave up unreachable after which the server is given up.
    public var givenUpInARowToStop: Int { state.withLock { $0.givenUpInARowToStop } }

    /// Units that gave up unreachable since the last attempt that reached the server.
    public var unreachableInARow: Int { state.withLock { $0.unreachableInARow } }

    /// Why the server was given up; nil while new units may be started.
    public var stop: Unreachable? { state.withLock { $0.stop } }

    /// Records an attempt that reached the server: the count starts again.
    public func reached() {
        state.withLock { $0.reached() }
    }

    /// Records a unit given up because its last attempt could not reach the server.
    /// - Parameter cause: Why, in a few words (``Reach/couldNotConnect(cause:)``).
    /// - Returns: the stop, for the one unit that made the server given up; nil for every other.
    public func gaveUpUnreachable(cause: String) -> Unreachable? {
        state.withLock { $0.gaveUpUnreachable(cause: cause) }
    }

    /// Records how one attempt went: one that reached the server starts the count again; one that
    /// could not reach it, or was never sent, changes nothing (only a unit given up counts, with
    /// ``gaveUpUnreachable(cause:)``).
    public func record(_ reach: Reach) {
        if reach == .reached { reached() }
    }
}
