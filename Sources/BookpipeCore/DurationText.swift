internal import Foundation

/// A length of time as a person reads it in a message: `42 s`, `3 min 5 s`, `2 h 10 min`, `30 d`
/// (rounded up to whole seconds). The enrichment plan, the deadline summary and the report's runs
/// all say durations this way.
public enum DurationText {
    /// The duration of `seconds` in words.
    public static func describe(seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        if total >= 172_800 { return "\(total / 86_400) d" + (total / 3600 % 24 > 0 ? " \(total / 3600 % 24) h" : "") }
        return "\(total / 3600) h \(total / 60 % 60) min"
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval` (for `Date` arithmetic).
    public var timeInterval: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
