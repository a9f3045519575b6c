import Foundation

/// The value of an HTTP `Retry-After` header: a number of seconds or an HTTP date.
///
/// ```swift
/// RetryAfter(headerValue: "120")                            // .seconds(120)
/// RetryAfter(headerValue: "Wed, 21 Oct 2015 07:28:00 GMT")  // .date(...)
/// RetryAfter(headerValue: "soon")                           // nil
/// ```
///
/// All three date forms of RFC 9110 §5.6.7 are read: IMF-fixdate (the one servers send),
/// the obsolete RFC 850 form and C's `asctime` form.
public enum RetryAfter: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Wait this many seconds (`Retry-After: 120`).
    case seconds(Int)
    /// Wait until this moment (`Retry-After: Wed, 21 Oct 2015 07:28:00 GMT`).
    case date(Date)

    /// Parses a `Retry-After` header value.
    ///
    /// - Parameter headerValue: the raw header value; surrounding spaces are ignored.
    /// - Returns: `nil` when the value is neither a non-negative integer nor an HTTP date.
    public init?(headerValue: String) {
        let trimmed = headerValue.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Absurdly long digit strings saturate rather than fail.
            self = .seconds(Int(trimmed) ?? Int.max)
            return
        }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        self = .date(date)
    }

    /// How long to wait, measured from `now`; never negative.
    ///
    /// - Parameter now: the current wall-clock time (a date in the past gives `.zero`).
    public func delay(from now: Date) -> Duration {
        switch self {
        case .seconds(let seconds):
            return .seconds(max(0, seconds))
        case .date(let date):
            let interval = date.timeIntervalSince(now)
            guard interval > 0 else { return .zero }
            // Round up to whole milliseconds: waiting a hair too long is safe, too short is not.
            return .milliseconds(Int64((interval * 1000).rounded(.up)))
        }
    }

    public var description: String {
        switch self {
        case .seconds(let seconds): return "\(seconds) s"
        case .date(let date): return HTTPDate.format(date)
        }
    }
}

/// Parsing and formatting of HTTP dates (RFC 9110 §5.6.7), without locale-dependent formatters.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun",
                                 "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), an RFC 850 date
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) or an asctime date (`Sun Nov  6 08:49:37 1994`).
    /// - Returns: `nil` for anything else, including impossible dates such as 31 Feb.
    public static func parse(_ text: String) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        switch parts.count {
        case 6 where parts[0].hasSuffix(",") && parts[5] == "GMT":
            // IMF-fixdate: day-name "," SP day SP month SP year SP time SP "GMT"
            guard let day = Int(parts[1]), let month = monthNumber(parts[2]), let year = Int(parts[3]),
                  parts[3].count == 4 else { return nil }
            return makeDate(year: year, month: month, day: day, time: parts[4])
        case 4 where parts[0].hasSuffix(",") && parts[3] == "GMT":
            // RFC 850: day-name "," SP dd-mon-yy SP time SP "GMT"
            let dateParts = parts[1].split(separator: "-").map(String.init)
            guard dateParts.count == 3, let day = Int(dateParts[0]), let month = monthNumber(dateParts[1]),
                  let shortYear = Int(dateParts[2]), dateParts[2].count == 2 else { return nil }
            let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
            return makeDate(year: year, month: month, day: day, time: parts[2])
        case 5:
            // asctime: day-name SP month SP ( 2DIGIT / ( SP DIGIT )) SP time SP year
            guard let month = monthNumber(parts[1]), let day = Int(parts[2]), let year = Int(parts[4]),
                  parts[4].count == 4 else { return nil }
            return makeDate(year: year, month: month, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// Formats `date` as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func format(_ date: Date) -> String {
        let total = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondsOfDay = Int(total - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        let weekday = dayNames[Int(((days % 7) + 7) % 7)]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let monthName = months[month - 1].prefix(1).uppercased() + months[month - 1].dropFirst()
        return "\(weekday), \(two(day)) \(monthName) \(year) "
            + "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
    }

    private static func monthNumber(_ name: String) -> Int? {
        guard name.count == 3, let index = months.firstIndex(of: name.lowercased()) else { return nil }
        return index + 1
    }

    private static func makeDate(year: Int, month: Int, day: Int, time: String) -> Date? {
        let clock = time.split(separator: ":").map(String.init)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let days = daysFromCivil(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian calendar).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}
