/// The decisions of ``UploadGate``, without a clock or a lock: the caller passes the current
/// instant and carries the action out.
///
/// After a `429` the gate is paused until the answer's `Retry-After` (``defaultPause`` when it
/// gave none). Once the pause has passed, exactly one upload is let through as a probe; every
/// other upload waits for the probe's answer: any answer but a 429 opens the gate, another 429
/// pauses it again. A 429 to an upload sent before the pause only moves the pause's end later.
///
/// ```swift
/// var gate = UploadGateStateMachine<ContinuousClock.Instant>(longestWait: .seconds(900), defaultPause: .seconds(1))
/// gate.acquire(now: t0)                                       // .send(isProbe: false)
/// gate.finished(isProbe: false, rateLimitedFor: .seconds(30), now: t0)
/// gate.acquire(now: t0 + .seconds(1))                         // .wait(until: t0 + 30 s)
/// gate.acquire(now: t0 + .seconds(30))                        // .send(isProbe: true)
/// gate.acquire(now: t0 + .seconds(30))                        // .waitForProbe
/// ```
public struct UploadGateStateMachine<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    /// What an upload that asks the gate must do.
    public enum Action: Sendable, Hashable {
        /// Send now (as the probe after a pause when `isProbe`); report the answer with
        /// ``UploadGateStateMachine/finished(isProbe:rateLimitedFor:now:)``.
        case send(isProbe: Bool)
        /// The gate is paused: ask again at this instant.
        case wait(until: Instant)
        /// The probe is out: ask again when its answer has been reported.
        case waitForProbe
        /// The pause ends more than ``UploadGateStateMachine/longestWait`` from now (`remaining`
        /// away): do not wait.
        case giveUp(remaining: Duration)
    }

    /// The longest pause waited out.
    public let longestWait: Duration
    /// The pause after a 429 without a usable `Retry-After`.
    public let defaultPause: Duration
    /// No upload is sent before this instant (nil: the gate is not paused).
    public private(set) var pausedUntil: Instant?
    /// True while the probe sent after a pause has not been answered.
    public private(set) var isProbeInFlight = false
    /// 429 answers reported so far.
    public private(set) var rateLimitedCount = 0

    /// Creates an open gate.
    public init(longestWait: Duration, defaultPause: Duration) {
        self.longestWait = longestWait
        self.defaultPause = defaultPause
    }

    /// Decides what an upload asking at `now` must do.
    public mutating func acquire(now: Instant) -> Action {
        guard let until = pausedUntil else { return .send(isProbe: false) }
        let remaining = now.duration(to: until)
        if remaining > longestWait { return .giveUp(remaining: remaining) }
        if remaining > .zero { return .wait(until: until) }
        if isProbeInFlight { return .waitForProbe }
        isProbeInFlight = true
        return .send(isProbe: true)
    }

    /// Records an upload's answer.
    /// - Parameters:
    ///   - isProbe: The upload was sent as the probe.
    ///   - pause: nil: any answer but 429 (or no answer); `.some(nil)`: a 429 without a usable
    ///     `Retry-After`; `.some(duration)`: a 429 asking to wait that long.
    ///   - now: The current instant.
    /// - Returns: true when uploads waiting for the probe must ask again.
    @discardableResult
    public mutating func finished(isProbe: Bool, rateLimitedFor pause: Duration??, now: Instant) -> Bool {
        if isProbe { isProbeInFlight = false }
        guard let pause else {
            if isProbe { pausedUntil = nil }
            return isProbe
        }
        rateLimitedCount += 1
        let until = now.advanced(by: max(.zero, pause ?? defaultPause))
        if pausedUntil.map({ until > $0 }) ?? true { pausedUntil = until }
        return isProbe
    }
}
