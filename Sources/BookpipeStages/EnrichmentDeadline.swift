import BookpipeLibrary
import Foundation

/// When an enrichment run must stop (`--until 07:00`, `--max-duration 8h`), on an injected clock.
///
/// The run reads no new records once the deadline has passed, and no source sends another
/// request (``RequestDeadline``): a rate-limit or retry wait that would end after it is abandoned.
/// Answers already received are saved; a row whose lookups were not all made stays as stored
/// (not failed, not "not found") and counts among the rows left. The overrun is at most one
/// request per source; the command exits 0 saying how many rows are left (the same command
/// continues, in the same order).
///
/// ```swift
/// let deadline = EnrichmentDeadline(after: .seconds(8 * 3600))                 // the real clock
/// let manual = ManualClock()
/// let test = EnrichmentDeadline(clock: manual, after: .seconds(60))            // tests
/// ```
public struct EnrichmentDeadline: Sendable {
    /// How long the run was allowed when it started.
    public let allowed: Duration
    private let elapsed: @Sendable () -> Duration

    /// A deadline `duration` from now on `clock`.
    public init<C: Clock<Duration>>(clock: C, after duration: Duration) {
        let start = clock.now
        self.allowed = max(.zero, duration)
        self.elapsed = { start.duration(to: clock.now) }
    }

    /// A deadline `duration` from now on the continuous clock.
    public init(after duration: Duration) {
        self.init(clock: ContinuousClock(), after: duration)
    }

    /// Time left (zero once passed). A clock set back (before the start) never gives more than
    /// was allowed.
    public var remaining: Duration { max(.zero, allowed - max(.zero, elapsed())) }

    /// True once the deadline has passed.
    public var hasPassed: Bool { elapsed() >= allowed }

    /// The time from `now` until the next `hour:minute` on the local clock (tomorrow when that
    /// time has passed today); nil when `text` is not `HH:MM`.
    public static func untilClockTime(_ text: String, now: Date = Date(), calendar: Calendar = .current) -> Duration? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
              (0..<24).contains(hour), (0..<60).contains(minute),
              let next = calendar.nextDate(after: now, matching: DateComponents(hour: hour, minute: minute, second: 0),
                                           matchingPolicy: .nextTime) else { return nil }
        return .seconds(next.timeIntervalSince(now))
    }
}
