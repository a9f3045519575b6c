import BookpipePipeline
import Foundation
import Synchronization

/// Holds new uploads to one backend back while it is rate limited: ``UploadGateStateMachine``
/// plus a clock.
///
/// After a `429`, no upload is sent until its `Retry-After` (seconds or an HTTP date; 1 s when it
/// gave none) has passed; then exactly one upload goes as a probe while the others wait for its
/// answer: any answer but 429 opens the gate again, another 429 pauses it again. A pause longer
/// than ``longestWait`` is not waited out: uploads fail with ``ScanFailure/rateLimitedTooLong(_:)``.
///
/// ```swift
/// let gate = UploadGate(clock: ContinuousClock())
/// let permit = try await gate.acquire()
/// let answer = try await client.upload(jpeg, filename: name, provider: .gemini)
/// if case .rateLimited(let retryAfter) = answer { gate.finished(permit, rateLimited: .some(retryAfter)) }
/// else { gate.finished(permit, rateLimited: nil) }
/// ```
///
/// Every wait sleeps on the injected clock (tests pass a ``ManualClock``); an upload waiting for
/// the probe's answer suspends until it is reported. Wall-clock time (`now`) is used only to read
/// a `Retry-After` that is an HTTP date.
///
/// Thread safety: the state machine and the suspended uploads live in a `Mutex`; waiting happens
/// outside the lock.
public final class UploadGate<C: Clock<Duration>>: Sendable {
    /// A permission to send one upload; hand it back with ``UploadGate/finished(_:rateLimited:)``.
    public struct Permit: Sendable {
        /// True when this upload is the one probe sent after a pause.
        public let isProbe: Bool
    }

    private struct State {
        var machine: UploadGateStateMachine<C.Instant>
        var waitingForProbe: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        /// Waits that have an id but are not suspended yet, and those of them already cancelled.
        var arriving: Set<UInt64> = []
        var cancelledBeforeWaiting: Set<UInt64> = []
        var nextID: UInt64 = 0
        var pausedUntilDate: Date?
    }

    /// The clock every wait sleeps on.
    public let clock: C
    private let now: @Sendable () -> Date
    private let state: Mutex<State>

    /// Creates an open gate.
    /// - Parameters:
    ///   - clock: The clock to wait on (tests pass a ``ManualClock``).
    ///   - longestWait: The longest `Retry-After` waited out (default 15 minutes).
    ///   - defaultPause: The pause after a 429 without `Retry-After` (default 1 s).
    ///   - now: Wall-clock time, to read `Retry-After` dates (default `Date()`).
    public init(clock: C, longestWait: Duration = .seconds(900), defaultPause: Duration = .seconds(1),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
        self.now = now
        state = Mutex(State(machine: UploadGateStateMachine(longestWait: longestWait, defaultPause: defaultPause)))
    }

    /// The longest pause waited out.
    public var longestWait: Duration { state.withLock { $0.machine.longestWait } }

    /// 429 answers reported so far.
    public var rateLimitedCount: Int { state.withLock { $0.machine.rateLimitedCount } }

    /// Uploads suspended until the probe's answer is reported.
    public var waitingForProbeCount: Int { state.withLock { $0.waitingForProbe.count } }

    /// Waits until an upload may be sent.
    /// - Returns: the permit; hand it back with ``finished(_:rateLimited:)`` whatever happens to
    ///   the upload (an upload that got no answer counts as "not rate limited").
    /// - Throws: ``ScanFailure/rateLimitedTooLong(_:)`` when the pause ends more than
    ///   ``longestWait`` from now; `CancellationError` when the task is cancelled while it waits
    ///   (it then holds no permit).
    public func acquire() async throws -> Permit {
        while true {
            try Task.checkCancellation()
            let instant = clock.now
            let (action, until) = state.withLock { ($0.machine.acquire(now: instant), $0.pausedUntilDate) }
            switch action {
            case .send(let isProbe):
                return Permit(isProbe: isProbe)
            case .wait(let until):
                try await clock.sleep(until: until, tolerance: nil)
            case .waitForProbe:
                try await waitForProbe()
            case .giveUp(let remaining):
                let when = until.map { " (until \(HTTPDate.format($0)))" } ?? ""
                throw ScanFailure.rateLimitedTooLong("it asked to wait \(remaining)\(when), longer than \(longestWait)")
            }
        }
    }

    /// Hands a permit back with what the upload got.
    /// - Parameters:
    ///   - permit: The permit from ``acquire()``.
    ///   - rateLimited: nil: any answer but 429, or none; `.some(retryAfter)`: a 429 with this
    ///     `Retry-After` (nil when absent or unreadable).
    public func finished(_ permit: Permit, rateLimited: RetryAfter??) {
        let instant = clock.now
        let date = now()
        let pause: Duration?? = rateLimited.map { retryAfter in retryAfter.map { $0.delay(from: date) } }
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let before = state.machine.pausedUntil
            let wake = state.machine.finished(isProbe: permit.isProbe, rateLimitedFor: pause, now: instant)
            if state.machine.pausedUntil == nil {
                state.pausedUntilDate = nil
            } else if state.machine.pausedUntil != before, let pause {
                state.pausedUntilDate = date.addingTimeInterval((pause ?? state.machine.defaultPause).inSeconds)
            }
            guard wake else { return [] }
            defer { state.waitingForProbe.removeAll() }
            return Array(state.waitingForProbe.values)
        }
        for waiter in woken { waiter.resume() }
    }

    private func waitForProbe() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.arriving.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> (resumeNow: Bool, cancelled: Bool) in
                    state.arriving.remove(id)
                    if state.cancelledBeforeWaiting.remove(id) != nil { return (true, true) }
                    // The probe may have been answered between the decision and now: ask again.
                    guard state.machine.isProbeInFlight else { return (true, false) }
                    state.waitingForProbe[id] = continuation
                    return (false, false)
                }
                if outcome.cancelled {
                    continuation.resume(throwing: CancellationError())
                } else if outcome.resumeNow {
                    continuation.resume()
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let waiter = state.waitingForProbe.removeValue(forKey: id) { return waiter }
                // Not suspended yet: it throws as it arrives. Already resumed: nothing to do.
                if state.arriving.contains(id) { state.cancelledBeforeWaiting.insert(id) }
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

extension UploadGate where C == ContinuousClock {
    /// Creates an open gate on the real (continuous) clock.
    public convenience init(longestWait: Duration = .seconds(900), defaultPause: Duration = .seconds(1)) {
        self.init(clock: ContinuousClock(), longestWait: longestWait, defaultPause: defaultPause)
    }
}
