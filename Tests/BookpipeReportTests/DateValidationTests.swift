import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

@Suite struct DateValidationTests {
    @Test("Reads the dates exports write", arguments: ["2020/10/21", "2020-10-21", "2020-1-5", "2020-10-21T08:30:00Z",
                                                      "2020/10/21 08:30", "10/21/2020", "21.10.2020", "2020", "2020-02",
                                                      "Jan 5, 2020", "5 January 2020", "2024-02-29"])
    func readable(_ text: String) {
        #expect(DateValidation.isReadable(text))
    }

    @Test("Rejects what is not a date", arguments: ["31/31/2020", "2021-02-29", "2020-13-01", "yesterday", "20/10",
                                                   "0000-00-00", "2020-10-21-5", "Smarch 5, 2020", "1.2.3"])
    func unreadable(_ text: String) {
        #expect(!DateValidation.isReadable(text))
    }
}

@Suite struct DateValidationFastPathTests {
    /// Ten-byte texts around every edge of the fast path: years at and beyond 1000/2999, months
    /// 0-13, days 0-32 (29 February in leap and other years), both separators mixed, and bytes
    /// that are not digits.
    static var tenByteTexts: [String] {
        var texts: [String] = []
        for year in ["0999", "1000", "1900", "2000", "2023", "2024", "2100", "2999", "3000", "20a4"] {
            for month in 0...13 {
                for day in [0, 1, 9, 28, 29, 30, 31, 32] {
                    for (first, second) in [("-", "-"), ("/", "/"), ("-", "/"), (".", "."), (" ", "-")] {
                        texts.append(year + first + String(format: "%02d", month) + second + String(format: "%02d", day))
                    }
                }
            }
        }
        return texts + ["2020-1-5  ", "2020-10-2x", "2020-10-21", "20201021xx", "          ", "\t\t\t\t\t\t\t\t\t\t"]
    }

    @Test("Ten-byte dates answered from their bytes are what the definition says, on every edge")
    func fastPathAgreesWithDefinition() {
        var answered = 0
        for text in Self.tenByteTexts {
            if DateValidation.tenByteDate(text.utf8) != nil { answered += 1 }
            #expect(DateValidation.isReadable(text) == DateValidation.isReadableInFull(text), "\(text)")
        }
        #expect(answered > 2_000, "the fast path answers most of them")
    }

    @Test("The report's rule for a stored date accepts a readable date or blank text and refuses the rest")
    func storedDateRule() {
        let values = ["2020/10/21", "2021-02-29", "  ", "\t", "", "Jan 5, 2020", "31/31/2020", "2020-02-30", "\u{3000}"]
        #expect(values.map(DateValidation.isReadableOrBlank) == [true, false, true, true, true, true, false, false, true])
        for text in Self.tenByteTexts {
            #expect(DateValidation.isReadableOrBlank(text)
                    == (text.trimmingCharacters(in: .whitespaces).isEmpty || DateValidation.isReadableInFull(text)), "\(text)")
        }
    }
}
