/// A calendar date read from an export's cell, as ISO `yyyy-MM-dd`: never a made-up value.
///
/// Reads the forms real exports use:
///
/// | written | read as | who writes it |
/// |---|---|---|
/// | `2024/01/15`, `2024-1-5`, `2024.01.15` | year, month, day | Goodreads, StoryGraph, ISO |
/// | `2024-01-15T10:30:00+01:00`, `2024-01-15 10:30:00` | the date as written (no time-zone shift) | Calibre, pandas |
/// | `[2006-08-09]` | the date in the brackets | LibraryThing |
/// | `17/02/2023`, `4/1/2024`, `17-02-2023` | day/month or month/day: see below | spreadsheets |
/// | `17.02.2023` | day, month, year | German spreadsheets |
/// | `45306`, `45306.5` | an Excel serial day number (five digits: 1927–2173) | spreadsheets |
///
/// A date with the year last is day-first when its first number is over 12 (`17/02/2023`) and
/// month-first when its second is (`2/17/2023`). Otherwise (`4/1/2024`) the order must come from
/// elsewhere: pass the order the file's unambiguous dates decide (``DayMonthOrder/Vote``); without
/// one the date is ``Failure/ambiguous(_:)``. A date whose day and month are equal needs no order.
///
/// ```swift
/// ReadDate.parse("17/02/2023", order: nil)          // .success(2023-02-17)
/// ReadDate.parse("4/1/2024", order: .monthFirst)    // .success(2024-04-01)
/// ReadDate.parse("4/1/2024", order: nil)            // .failure(.ambiguous("4/1/2024"))
/// ReadDate.parse("2023-02-30", order: nil)          // .failure(.unparseable("2023-02-30"))
/// ```
public struct ReadDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year (1000…9999).
    public let year: Int
    /// The month (1…12).
    public let month: Int
    /// The day of the month.
    public let day: Int

    /// Creates a date when the numbers make a calendar date; nil otherwise.
    ///
    /// - Parameters:
    ///   - year: 1000…9999 (four-digit years only: a two-digit year would be a guess).
    ///   - month: 1…12.
    ///   - day: 1 to the month's last day (leap years counted).
    public init?(year: Int, month: Int, day: Int) {
        guard (1000...9999).contains(year), (1...12).contains(month),
              day >= 1, day <= Self.daysInMonth(month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date as ISO `yyyy-MM-dd`.
    public var iso: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    /// The ISO form.
    public var description: String { iso }

    /// Dates in calendar order.
    public static func < (lhs: ReadDate, rhs: ReadDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Why a cell gave no date.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The cell is empty or blank: no date, and nothing wrong.
        case empty
        /// Day and month could each be the other (`4/1/2024`) and no order was given.
        case ambiguous(String)
        /// Not a form bookpipe reads, or not a calendar date (`2023-02-30`, `[2015-012-07]`).
        case unparseable(String)

        /// A sentence for people.
        public var description: String {
            switch self {
            case .empty: "the cell is empty"
            case .ambiguous(let text):
                "\"\(text)\" could be read day first or month first, and no date in the file tells which"
            case .unparseable(let text): "\"\(text)\" is not a date bookpipe can read"
            }
        }
    }

    /// Reads one cell.
    ///
    /// - Parameters:
    ///   - text: The cell as written (surrounding spaces are ignored).
    ///   - order: The file's day/month order for dates that need one; nil when it is not known.
    /// - Returns: The date, or why there is none.
    public static func parse(_ text: String, order: DayMonthOrder?) -> Result<ReadDate, Failure> {
        var bytes = Array(text.utf8)
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { bytes.removeLast() }
        if bytes.isEmpty { return .failure(.empty) }
        let shown = String(decoding: bytes, as: UTF8.self)
        if bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") {
            bytes = Array(bytes.dropFirst().dropLast())
        }
        switch Shape(bytes) {
        case .none:
            return .failure(.unparseable(shown))
        case .serial(let days):
            return ReadDate(daysSince1899December30: days).map { .success($0) } ?? .failure(.unparseable(shown))
        case .yearFirst(let year, let month, let day):
            return ReadDate(year: year, month: month, day: day).map { .success($0) } ?? .failure(.unparseable(shown))
        case .yearLast(let first, let second, let year, let separator):
            let chosen: DayMonthOrder?
            if separator == UInt8(ascii: ".") {
                chosen = .dayFirst
            } else if first == second {
                chosen = .dayFirst  // either reading gives the same date
            } else {
                chosen = DayMonthOrder.proven(first: first, second: second) ?? order
            }
            guard let chosen else {
                let possible = ReadDate(year: year, month: first, day: second) != nil
                    || ReadDate(year: year, month: second, day: first) != nil
                return .failure(possible ? .ambiguous(shown) : .unparseable(shown))
            }
            let date = chosen == .dayFirst
                ? ReadDate(year: year, month: second, day: first) : ReadDate(year: year, month: first, day: second)
            return date.map { .success($0) } ?? .failure(.unparseable(shown))
        }
    }

    /// True when `bytes` are a valid year-first date (`2024/01/15`, `2024-01-15`, with or without a
    /// time after a `T` or a space): the form bookpipe keeps as written. Cheap, for the import's
    /// per-row path; no allocation.
    public static func isValidYearFirst(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 8, bytes[4] == UInt8(ascii: "/") || bytes[4] == UInt8(ascii: "-") else { return false }
        // The usual cell, `2024/01/15`, read in place; anything else goes through `Shape`, which
        // reads this form the same way (tested against it).
        if bytes.count == 10 && bytes[7] == bytes[4] {
            func digit(_ index: Int) -> Int? {
                let value = Int(bytes[index]) &- 0x30
                return value >= 0 && value <= 9 ? value : nil
            }
            if let y0 = digit(0), let y1 = digit(1), let y2 = digit(2), let y3 = digit(3), let m0 = digit(5),
               let m1 = digit(6), let d0 = digit(8), let d1 = digit(9) {
                return ReadDate(year: y0 * 1000 + y1 * 100 + y2 * 10 + y3, month: m0 * 10 + m1, day: d0 * 10 + d1) != nil
            }
        }
        if case .yearFirst(let year, let month, let day) = Shape(bytes) {
            return ReadDate(year: year, month: month, day: day) != nil
        }
        return false
    }

    /// The Finding a cell that gives no date raises: `date.unparseable`, a warning naming the
    /// column and the text; nil for an empty cell.
    ///
    /// - Parameters:
    ///   - failure: Why the cell gave no date.
    ///   - field: The column's header name.
    public static func finding(for failure: Failure, field: String) -> Finding? {
        if case .empty = failure { return nil }
        return Finding(
            code: "date.unparseable", severity: .warning, field: field,
            message: "\(failure.description.prefix(1).uppercased() + failure.description.dropFirst()) "
                + "(column \"\(field)\"); the date was left empty and the text is kept in the raw fields.")
    }

    // MARK: - Internals

    /// The numbers of a cell, by the form they are written in.
    enum Shape {
        case yearFirst(year: Int, month: Int, day: Int)
        case yearLast(first: Int, second: Int, year: Int, separator: UInt8)
        case serial(Int)

        init?<Bytes: Collection<UInt8>>(_ bytes: Bytes) where Bytes.Index == Int {
            // The date part ends at a time (`T` or a space followed by a digit).
            var end = bytes.endIndex
            for index in bytes.indices where bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: " ") {
                end = index
                let time = bytes[(index + 1)...]
                guard let first = time.first, Self.isDigit(first), time.allSatisfy(Self.isTimeByte) else { return nil }
                break
            }
            // Up to three numbers, kept in locals (this runs for every row's dates).
            var values = (0, 0, 0)
            var widths = (0, 0, 0)
            var count = 0
            var separator: UInt8?
            var value = 0
            var digits = 0
            func store() {
                switch count {
                case 0: (values.0, widths.0) = (value, digits)
                case 1: (values.1, widths.1) = (value, digits)
                default: (values.2, widths.2) = (value, digits)
                }
                count += 1
            }
            for byte in bytes[bytes.startIndex..<end] {
                if Self.isDigit(byte) {
                    guard digits < 9 else { return nil }
                    value = value * 10 + Int(byte - 0x30)
                    digits += 1
                } else if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") {
                    guard digits > 0, count < 2, separator == nil || separator == byte else { return nil }
                    separator = byte
                    store()
                    value = 0
                    digits = 0
                } else {
                    return nil
                }
            }
            guard digits > 0 else { return nil }
            store()
            if count == 1 || (count == 2 && separator == UInt8(ascii: ".")) {
                // An Excel serial day number (a fraction is the time of day).
                guard end == bytes.endIndex, widths.0 == 5 else { return nil }
                self = .serial(values.0)
                return
            }
            guard count == 3, let separator else { return nil }
            if widths.0 == 4, (1...2).contains(widths.1), (1...2).contains(widths.2) {
                self = .yearFirst(year: values.0, month: values.1, day: values.2)
            } else if widths.2 == 4, (1...2).contains(widths.0), (1...2).contains(widths.1), end == bytes.endIndex {
                self = .yearLast(first: values.0, second: values.1, year: values.2, separator: separator)
            } else {
                return nil
            }
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        /// Digits and what times and zones are written with (`10:30:00.5+01:00`, `Z`).
        static func isTimeByte(_ byte: UInt8) -> Bool {
            isDigit(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "Z") || byte == UInt8(ascii: " ")
        }
    }

    static func isLeapYear(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The date `days` after 1899-12-30, Excel's day 0 (which makes Excel's invented 1900-02-29
    /// harmless for every date after it). Howard Hinnant's `civil_from_days`.
    init?(daysSince1899December30 days: Int) {
        let z = days - 25_569 + 719_468  // days since 1970-01-01, then since 0000-03-01
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.init(year: year, month: month, day: day)
    }
}

/// Whether a file writes its dates with the year last day first (`17/02/2023`) or month first
/// (`2/17/2023`).
public enum DayMonthOrder: Sendable, Hashable {
    /// `dd/MM/yyyy`.
    case dayFirst
    /// `MM/dd/yyyy`.
    case monthFirst

    /// What one cell proves about its file's order: `17/02/2023` proves day first, `2/17/2023`
    /// month first; `4/1/2024`, year-first dates, dates with dots and anything else prove nothing.
    public static func evidence(in text: String) -> DayMonthOrder? {
        var bytes = Array(text.utf8)
        while let first = bytes.first, first == 0x20 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x0D || last == 0x0A { bytes.removeLast() }
        guard case .yearLast(let first, let second, _, let separator)? = ReadDate.Shape(bytes),
              separator != UInt8(ascii: ".") else { return nil }
        return proven(first: first, second: second)
    }

    static func proven(first: Int, second: Int) -> DayMonthOrder? {
        if first > 12 && (1...12).contains(second) { return .dayFirst }
        if second > 12 && (1...12).contains(first) { return .monthFirst }
        return nil
    }

    /// Counts what a file's dates prove and decides its order: the one order some dates prove
    /// and none contradicts.
    ///
    /// ```swift
    /// var vote = DayMonthOrder.Vote()
    /// for text in ["10/12/2022", "1/21/2023", "4/1/2024"] { vote.observe(text) }
    /// vote.decision  // .monthFirst (1/21/2023 can only be month first)
    /// ```
    public struct Vote: Sendable, Hashable {
        /// Dates that can only be read day first.
        public private(set) var dayFirst = 0
        /// Dates that can only be read month first.
        public private(set) var monthFirst = 0
        /// The first date proving each order, for messages.
        public private(set) var dayFirstExample: String?
        /// The first date proving month first.
        public private(set) var monthFirstExample: String?

        /// Creates an empty vote.
        public init() {}

        /// Counts one cell.
        public mutating func observe(_ text: String) {
            switch DayMonthOrder.evidence(in: text) {
            case .dayFirst?:
                dayFirst += 1
                if dayFirstExample == nil { dayFirstExample = text }
            case .monthFirst?:
                monthFirst += 1
                if monthFirstExample == nil { monthFirstExample = text }
            case nil:
                break
            }
        }

        /// The order when the dates prove one and contradict it nowhere; nil when none proves
        /// an order or both are proven (then ambiguous dates cannot be read).
        public var decision: DayMonthOrder? {
            if dayFirst > 0 && monthFirst == 0 { return .dayFirst }
            if monthFirst > 0 && dayFirst == 0 { return .monthFirst }
            return nil
        }
    }
}
