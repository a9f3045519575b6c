import Foundation

/// "This host refuses us until <date>": a quota that resets later, such as Google Books'
/// daily quota. The store persists it so the next run does not hammer a blocked source.
///
/// ```swift
/// let quota = HostQuota.dailyQuotaExhausted(host: "www.googleapis.com", now: Date())
/// if quota.isBlocked(at: Date()) { /* mark lookups failed with quota.description */ }
/// ```
public struct HostQuota: Sendable, Codable, Hashable, CustomStringConvertible {
    /// The host name, lower case.
    public var host: String
    /// No request goes to the host before this moment.
    public var blockedUntil: Date
    /// Why, in words (for example "HTTP 429: daily quota exceeded").
    public var reason: String

    /// Creates a quota record.
    public init(host: String, blockedUntil: Date, reason: String) {
        self.host = host.lowercased()
        self.blockedUntil = blockedUntil
        self.reason = reason
    }

    /// Whether requests to the host must still wait at `now`.
    public func isBlocked(at now: Date) -> Bool { now < blockedUntil }

    /// Time left until the host may be asked again (zero once the block has passed).
    public func remaining(at now: Date) -> Duration {
        let interval = blockedUntil.timeIntervalSince(now)
        return interval > 0 ? .milliseconds(Int64((interval * 1000).rounded(.up))) : .zero
    }

    /// The later of two blocks for the same host (the one that keeps the host blocked longer).
    public func merged(with other: HostQuota) -> HostQuota {
        other.blockedUntil > blockedUntil ? other : self
    }

    /// A block until a `Retry-After` moment.
    public static func retryAfter(_ retryAfter: RetryAfter, host: String, now: Date, reason: String) -> HostQuota {
        let delay = retryAfter.delay(from: now)
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        return HostQuota(host: host, blockedUntil: now.addingTimeInterval(seconds), reason: reason)
    }

    /// A block until the next midnight in `resetTimeZone` (Google resets daily quotas at
    /// midnight Pacific time).
    /// - Parameters:
    ///   - host: the host that refused.
    ///   - now: the current time.
    ///   - resetTimeZone: where the quota day ends; when `nil` (or unknown to the system's time
    ///     zone database) America/Los_Angeles is tried, then UTC−8.
    public static func dailyQuotaExhausted(host: String, now: Date, resetTimeZone: TimeZone? = nil,
                                           reason: String = "daily quota exceeded") -> HostQuota {
        let zone = resetTimeZone ?? TimeZone(identifier: "America/Los_Angeles")
            ?? TimeZone(secondsFromGMT: -8 * 3600) ?? TimeZone.current
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let startOfToday = calendar.startOfDay(for: now)
        let nextMidnight = calendar.date(byAdding: .day, value: 1, to: startOfToday)
            ?? now.addingTimeInterval(86_400)
        return HostQuota(host: host, blockedUntil: nextMidnight, reason: reason)
    }

    public var description: String {
        "\(host) is blocked until \(HTTPDate.format(blockedUntil)) (\(reason)); "
            + "bookpipe will not ask it before then; rerun later with bookpipe enrich --failed"
    }
}
