import Testing
@testable import BookpipeCore

/// One cell, an order, and what reading it must give: an ISO date, or the failure.
struct DateCase: Sendable, CustomTestStringConvertible {
    var text: String
    var order: DayMonthOrder? = nil
    var iso: String?
    var failure: ReadDate.Failure? = nil
    var testDescription: String { "\(text.debugDescription) \(order.map { "\($0)" } ?? "no order")" }
}

@Suite struct ReadDateTests {
    static let cases: [DateCase] = [
        // Year first: Goodreads, StoryGraph, ISO, LibraryThing's brackets, times.
        DateCase(text: "2024/01/15", iso: "2024-01-15"),
        DateCase(text: "2024-01-15", iso: "2024-01-15"),
        DateCase(text: "2024-1-5", iso: "2024-01-05"),
        DateCase(text: "2024.01.15", iso: "2024-01-15"),
        DateCase(text: " 2024/01/15 ", iso: "2024-01-15"),
        DateCase(text: "[2006-08-09]", iso: "2006-08-09"),
        DateCase(text: "2019-03-05T01:00:00+01:00", iso: "2019-03-05"),
        DateCase(text: "2024-01-15T23:59:59Z", iso: "2024-01-15"),
        DateCase(text: "2024-01-15 10:30:00", iso: "2024-01-15"),
        DateCase(text: "2024-01-15T10:30:00.123-05:00", iso: "2024-01-15"),
        DateCase(text: "2024/02/29", iso: "2024-02-29"),
        DateCase(text: "2000/02/29", iso: "2000-02-29"),
        // Year last: proven by the numbers themselves, or by the file's order.
        DateCase(text: "17/02/2023", iso: "2023-02-17"),
        DateCase(text: "17/02/2023", order: .monthFirst, iso: "2023-02-17"),
        DateCase(text: "2/17/2023", iso: "2023-02-17"),
        DateCase(text: "2/17/2023", order: .dayFirst, iso: "2023-02-17"),
        DateCase(text: "4/1/2024", order: .monthFirst, iso: "2024-04-01"),
        DateCase(text: "4/1/2024", order: .dayFirst, iso: "2024-01-04"),
        DateCase(text: "4/1/2024", iso: nil, failure: .ambiguous("4/1/2024")),
        DateCase(text: "10/12/2022", iso: nil, failure: .ambiguous("10/12/2022")),
        DateCase(text: "4/4/2024", iso: "2024-04-04"),
        DateCase(text: "17-02-2023", iso: "2023-02-17"),
        DateCase(text: "01.02.2023", iso: "2023-02-01"),
        DateCase(text: "01.02.2023", order: .monthFirst, iso: "2023-02-01"),
        // Excel serial day numbers (1899-12-30 is day 0).
        DateCase(text: "45306", iso: "2024-01-15"),
        DateCase(text: "45306.75", iso: "2024-01-15"),
        DateCase(text: "36526", iso: "2000-01-01"),
        DateCase(text: "61", iso: nil, failure: .unparseable("61")),
        DateCase(text: "2024", iso: nil, failure: .unparseable("2024")),
        // Nothing made up.
        DateCase(text: "", iso: nil, failure: .empty),
        DateCase(text: "   ", iso: nil, failure: .empty),
        DateCase(text: "2023-02-30", iso: nil, failure: .unparseable("2023-02-30")),
        DateCase(text: "2023/02/29", iso: nil, failure: .unparseable("2023/02/29")),
        DateCase(text: "1900/02/29", iso: nil, failure: .unparseable("1900/02/29")),
        DateCase(text: "[2015-012-07]", iso: nil, failure: .unparseable("[2015-012-07]")),
        DateCase(text: "13/13/2023", iso: nil, failure: .unparseable("13/13/2023")),
        DateCase(text: "0/5/2023", iso: nil, failure: .unparseable("0/5/2023")),
        DateCase(text: "4/1/24", order: .monthFirst, iso: nil, failure: .unparseable("4/1/24")),
        DateCase(text: "2024/01/15/3", iso: nil, failure: .unparseable("2024/01/15/3")),
        DateCase(text: "2024-01/15", iso: nil, failure: .unparseable("2024-01/15")),
        DateCase(text: "Jan 15, 2024", iso: nil, failure: .unparseable("Jan 15, 2024")),
        DateCase(text: "date?", iso: nil, failure: .unparseable("date?")),
        DateCase(text: "0101-01-01T00:00:00+00:00", iso: nil, failure: .unparseable("0101-01-01T00:00:00+00:00")),
        DateCase(text: "2024-01-15Tnoon", iso: nil, failure: .unparseable("2024-01-15Tnoon")),
        DateCase(text: "١٧/٠٢/٢٠٢٣", iso: nil, failure: .unparseable("١٧/٠٢/٢٠٢٣")),
    ]

    @Test("Each form real exports write is read to ISO, or fails without a made-up value", arguments: cases)
    func parses(_ testCase: DateCase) {
        switch ReadDate.parse(testCase.text, order: testCase.order) {
        case .success(let date):
            #expect(date.iso == testCase.iso)
            #expect(testCase.failure == nil)
        case .failure(let failure):
            #expect(testCase.iso == nil, "failed with \(failure)")
            #expect(failure == testCase.failure)
        }
    }

    @Test("The year-first check used per row agrees with the parser", arguments: cases)
    func yearFirstCheckAgrees(_ testCase: DateCase) {
        let fast = Array(testCase.text.utf8).withUnsafeBufferPointer { ReadDate.isValidYearFirst($0) }
        let bytes = Array(testCase.text.utf8)
        let yearFirst = bytes.count >= 8 && (bytes[4] == UInt8(ascii: "/") || bytes[4] == UInt8(ascii: "-"))
            && bytes.prefix(4).allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && testCase.iso != nil
        #expect(fast == yearFirst)
    }

    @Test("The in-place read of a ten-byte year-first date agrees with the general reading")
    func tenByteDatesAgree() {
        let years = ["0000", "0999", "1000", "1900", "2000", "2023", "2024", "2100", "9999", "20a4", "2 24"]
        let twos = (0...33).map { $0 < 10 ? "0\($0)" : "\($0)" } + ["1a", " 1", "-1", "+1"]
        for year in years {
            for separators in ["//", "--", "/-", "-/", "..", "/."] {
                for month in twos {
                    for day in twos where month.hasPrefix("0") || month.hasPrefix("1") || day == "15" {
                        let text = year + String(separators.first!) + month + String(separators.last!) + day
                        let bytes = Array(text.utf8)
                        var general = false
                        if bytes.count >= 8, bytes[4] == UInt8(ascii: "/") || bytes[4] == UInt8(ascii: "-"),
                           case .yearFirst(let year, let month, let day)? = ReadDate.Shape(bytes) {
                            general = ReadDate(year: year, month: month, day: day) != nil
                        }
                        #expect(bytes.withUnsafeBufferPointer { ReadDate.isValidYearFirst($0) } == general, "\(text)")
                    }
                }
            }
        }
    }

    @Test("What one cell proves about the day/month order", arguments: [
        ("17/02/2023", DayMonthOrder.dayFirst), ("2/17/2023", .monthFirst), ("13-1-2024", .dayFirst),
        ("4/1/2024", nil), ("4/4/2024", nil), ("2024/01/15", nil), ("17.02.2023", nil), ("13/13/2023", nil),
        ("45306", nil), ("", nil),
    ] as [(String, DayMonthOrder?)])
    func evidence(text: String, order: DayMonthOrder?) {
        #expect(DayMonthOrder.evidence(in: text) == order)
    }

    @Test("A file's order is the one its unambiguous dates prove; none, or both, decide nothing")
    func vote() {
        var monthFirst = DayMonthOrder.Vote()
        for text in ["10/12/2022", "4/1/2024", "1/21/2023", "", "3/27/2024"] { monthFirst.observe(text) }
        #expect(monthFirst.decision == .monthFirst)
        #expect(monthFirst.monthFirst == 2)
        #expect(monthFirst.monthFirstExample == "1/21/2023")

        var dayFirst = DayMonthOrder.Vote()
        for text in ["17/02/2023", "01/02/2023"] { dayFirst.observe(text) }
        #expect(dayFirst.decision == .dayFirst)

        var none = DayMonthOrder.Vote()
        for text in ["4/1/2024", "2024/01/15"] { none.observe(text) }
        #expect(none.decision == nil)

        var both = DayMonthOrder.Vote()
        for text in ["17/02/2023", "2/17/2023"] { both.observe(text) }
        #expect(both.decision == nil)
        #expect(both.dayFirst == 1 && both.monthFirst == 1)
    }

    @Test("A cell without a date raises date.unparseable naming the column and the text; an empty one raises nothing")
    func findings() {
        #expect(ReadDate.finding(for: .unparseable("[2015-012-07]"), field: "Acquired") == Finding(
            code: "date.unparseable", severity: .warning, field: "Acquired",
            message: "\"[2015-012-07]\" is not a date bookpipe can read (column \"Acquired\"); the date was left empty "
                + "and the text is kept in the raw fields."))
        #expect(ReadDate.finding(for: .ambiguous("4/1/2024"), field: "Date Added")?.message
            == "\"4/1/2024\" could be read day first or month first, and no date in the file tells which "
            + "(column \"Date Added\"); the date was left empty and the text is kept in the raw fields.")
        #expect(ReadDate.finding(for: .empty, field: "Date Read") == nil)
    }

    @Test("Excel serial numbers count from 1899-12-30 across leap years and centuries", arguments: [
        (10000, "1927-05-18"), (25569, "1970-01-01"), (36585, "2000-02-29"), (45306, "2024-01-15"), (99999, "2173-10-13"),
    ])
    func serials(days: Int, iso: String) {
        #expect(ReadDate(daysSince1899December30: days)?.iso == iso)
    }
}
