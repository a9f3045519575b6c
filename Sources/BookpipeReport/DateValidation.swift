import Foundation

/// Whether a date as read from an export can be understood as a calendar date.
///
/// Accepted: `YYYY`, `YYYY-MM`, `YYYY-MM-DD` and `YYYY/MM/DD` (one- or two-digit month and day,
/// optionally followed by a time after `T` or a space), `MM/DD/YYYY`, `DD.MM.YYYY`, and month
/// names (`Jan 5, 2020`, `5 January 2020`). Years 1000…2999; months 1…12; days that exist in
/// the month (29 February only in leap years).
public enum DateValidation {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// True when `text` reads as a date; an empty text is not a date (callers skip empty values).
    ///
    /// The commonest form in exports, ten bytes `YYYY-MM-DD` or `YYYY/MM/DD`, is answered from the
    /// UTF-8 bytes (a report asks for two dates of every record); everything else, and the
    /// definition, is ``isReadableInFull(_:)`` (tests compare the two).
    public static func isReadable(_ text: String) -> Bool {
        tenByteDate(text.utf8) ?? isReadableInFull(text)
    }

    /// The report's rule for a stored date: true when `text` reads as a date or is blank (spaces
    /// and tabs only: no date given). The report lists the records for which it is false.
    public static func isReadableOrBlank(_ text: String) -> Bool {
        isReadable(text) || text.trimmingCharacters(in: .whitespaces).isEmpty
    }

    /// The definition of a readable date (see the type's documentation).
    static func isReadableInFull(_ text: String) -> Bool {
        var value = Substring(text.trimmingCharacters(in: .whitespaces))
        if let cut = value.firstIndex(where: { $0 == "T" || $0 == " " }), value.first?.isNumber == true,
           value[..<cut].contains(where: { $0 == "-" || $0 == "/" }) {
            value = value[..<cut]
        }
        let numeric = value.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "/" || $0 == "." }
        if numeric.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) {
            let numbers = numeric.compactMap { Int($0) }
            guard numbers.count == numeric.count else { return false }
            switch numbers.count {
            case 1: return numeric[0].count == 4 && isYear(numbers[0])
            case 2: return numeric[0].count == 4 && isYear(numbers[0]) && (1...12).contains(numbers[1])
            case 3:
                if numeric[0].count == 4 { return isDay(year: numbers[0], month: numbers[1], day: numbers[2]) }
                guard numeric[2].count == 4 else { return false }
                if value.contains(".") { return isDay(year: numbers[2], month: numbers[1], day: numbers[0]) }
                return isDay(year: numbers[2], month: numbers[0], day: numbers[1])
                    || isDay(year: numbers[2], month: numbers[1], day: numbers[0])
            default: return false
            }
        }
        // Month names: "Jan 5, 2020", "January 5 2020", "5 January 2020".
        let words = value.lowercased().split { $0 == " " || $0 == "," }
        guard words.count == 3 else { return false }
        let monthWord = words.first { !$0.isEmpty && $0.allSatisfy(\.isLetter) }
        guard let monthWord, let month = months.firstIndex(where: { monthWord.hasPrefix($0) }) else { return false }
        let numbers = words.filter { $0 != monthWord }.compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        let (day, year) = numbers[0] > 31 ? (numbers[1], numbers[0]) : (numbers[0], numbers[1])
        return isDay(year: year, month: month + 1, day: day)
    }

    /// The answer for `YYYY-MM-DD` / `YYYY/MM/DD` (either separator at either place); nil for
    /// other texts.
    static func tenByteDate(_ utf8: String.UTF8View) -> Bool? {
        guard utf8.count == 10 else { return nil }
        var numbers = (year: 0, month: 0, day: 0)
        for (offset, byte) in utf8.enumerated() {
            if offset == 4 || offset == 7 {
                guard byte == UInt8(ascii: "-") || byte == UInt8(ascii: "/") else { return nil }
                continue
            }
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            switch offset {
            case 0..<4: numbers.year = numbers.year * 10 + digit
            case 5..<7: numbers.month = numbers.month * 10 + digit
            default: numbers.day = numbers.day * 10 + digit
            }
        }
        return isDay(year: numbers.year, month: numbers.month, day: numbers.day)
    }

    private static func isYear(_ year: Int) -> Bool { (1000...2999).contains(year) }

    private static func isDay(year: Int, month: Int, day: Int) -> Bool {
        guard isYear(year), (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }
}
