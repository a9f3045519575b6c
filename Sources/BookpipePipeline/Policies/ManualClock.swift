import Synchronization

/// A clock that only moves when a test tells it to.
///
/// Anything in bookpipe that waits takes `some Clock<Duration>`. Tests pass a `ManualClock`:
/// a call to ``sleep(until:tolerance:)`` suspends until ``advance(by:)`` (or ``advance(to:)``)
/// moves ``now`` to or past the deadline, so retry schedules and rate limits are checked
/// exactly and without real sleeps.
///
/// ```swift
/// let clock = ManualClock()
/// async let slept: Void = clock.sleep(for: .seconds(2))
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: .seconds(2))   // the sleeper resumes
/// try await slept
/// ```
///
/// Thread safety: all state lives in a `Mutex`; every method may be called from any thread.
public final class ManualClock: Clock, Sendable {
    /// A point in time of a ``ManualClock``: the time elapsed since the clock was created.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// Time since the clock's start (the clock starts at `.zero`).
        public var offset: Duration

        /// Creates the instant `offset` after the clock's start.
        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "ManualClock.Instant(\(offset))" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: Instant
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledBeforeRegistration: Set<UInt64> = []
        var watchers: [Watcher] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// Creates a clock whose ``now`` is `start` (by default the clock's zero).
    public init(start: Instant = Instant(offset: .zero)) {
        state = Mutex(State(now: start))
    }

    /// The current instant; changes only through ``advance(by:)`` and ``advance(to:)``.
    public var now: Instant { state.withLock { $0.now } }

    /// The clock has no resolution limit.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are currently suspended in ``sleep(until:tolerance:)``.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline among the suspended sleepers, if any.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Suspends until ``now`` reaches `deadline`.
    ///
    /// Returns at once when `deadline` is not in the future.
    /// - Throws: `CancellationError` if the calling task is cancelled while it sleeps (or
    ///   was cancelled before the call); the sleeper is removed at once.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> (resumeNow: Bool, cancelled: Bool, watchers: [Watcher]) in
                    if state.cancelledBeforeRegistration.remove(id) != nil { return (true, true, []) }
                    if deadline <= state.now { return (true, false, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (false, false, Self.takeSatisfiedWatchers(&state))
                }
                if outcome.resumeNow {
                    if outcome.cancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
                for watcher in outcome.watchers { watcher.continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelledBeforeRegistration.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and resumes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.now.advanced(by: duration) }
        advance(to: target)
    }

    /// Moves the clock to `instant` (never backwards) and resumes every sleeper whose deadline
    /// has come, earliest first.
    public func advance(to instant: Instant) {
        let due = state.withLock { state -> [Sleeper] in
            if instant > state.now { state.now = instant }
            let now = state.now
            let dueIDs = state.sleepers.filter { $0.value.deadline <= now }.map(\.key)
            return dueIDs.compactMap { state.sleepers.removeValue(forKey: $0) }
                .sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the clock to the earliest sleeper's deadline (if any) and resumes the sleepers due then.
    /// - Returns: the instant the clock moved to, or `nil` when nobody was sleeping.
    @discardableResult
    public func advanceToNextDeadline() -> Instant? {
        guard let deadline = nextDeadline else { return nil }
        advance(to: deadline)
        return deadline
    }

    /// Suspends until at least `count` tasks are sleeping on this clock.
    ///
    /// Use it before ``advance(by:)`` so the code under test has reached its wait.
    /// Not cancellable: run it under a test time limit.
    public func waitForSleepers(count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.watchers.append(Watcher(count: count, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func takeSatisfiedWatchers(_ state: inout State) -> [Watcher] {
        let sleeping = state.sleepers.count
        let satisfied = state.watchers.filter { $0.count <= sleeping }
        state.watchers.removeAll { $0.count <= sleeping }
        return satisfied
    }
}
