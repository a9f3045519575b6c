import Testing
@testable import BookpipeCore

@Suite struct NormalizerTests {
    static func record(
        title: String, authors: [String] = [], isbns: [String] = [], year: Int? = nil, row: Int = 1
    ) -> BookRecord {
        BookRecord(origin: RecordOrigin(file: "export.csv", fileHash: "ab12", row: row, line: row + 1),
                   title: title, authors: authors, rawISBNs: isbns, year: year)
    }

    static func normalized(_ record: BookRecord, year: Int = 2026) -> BookRecord {
        var copy = record
        Normalizer.normalize(&copy, currentYear: year)
        return copy
    }

    @Test("A Goodreads row gets its search title, series, authors and ISBN-13")
    func goodreadsRow() throws {
        let result = Self.normalized(Self.record(
            title: "Gideon the Ninth (The Locked Tomb #1)", authors: ["Tamsyn Muir"],
            isbns: ["=\"1250313198\"", "=\"9781250313195\""], year: 2019))
        let forms = try #require(result.normalized)
        #expect(forms == NormalizedForms(
            searchTitle: "Gideon the Ninth", mainTitle: "Gideon the Ninth", titleKey: "gideon the ninth",
            series: "The Locked Tomb", seriesNumber: "1", authors: ["Tamsyn Muir"], authorKeys: ["tamsyn muir"],
            isbn13: "9781250313195", allISBN13s: ["9781250313195"]))
        #expect(result.findings.isEmpty)
        #expect(result.title == "Gideon the Ninth (The Locked Tomb #1)")
    }

    @Test("Authors are put in display order, deduplicated, and empty ones dropped")
    func authors() throws {
        let result = Self.normalized(Self.record(
            title: "T", authors: ["Muir, Tamsyn", "Tamsyn  Muir", ",", "", "Cortázar, Julio"]))
        let forms = try #require(result.normalized)
        #expect(forms.authors == ["Tamsyn Muir", "Julio Cortázar"])
        #expect(forms.authorKeys == ["tamsyn muir", "julio cortazar"])
    }

    /// A row and the finding codes normalising it must raise.
    struct FindingCase: Sendable, CustomTestStringConvertible {
        var isbns: [String]
        var title = "A Title"
        var year: Int? = nil
        var codes: [String]
        var isbn13s: [String]
        var testDescription: String { "\(isbns) \(title) \(year.map(String.init) ?? "-") → \(codes)" }
    }

    static let findingCases: [FindingCase] = [
        FindingCase(isbns: ["=\"\"", "=\"\""], codes: [], isbn13s: []),
        FindingCase(isbns: [], codes: [], isbn13s: []),
        FindingCase(isbns: ["978-0-00-000000-1"], codes: ["isbn.invalid-checksum"], isbn13s: []),
        FindingCase(isbns: ["9.78044E+12"], codes: ["isbn.excel-scientific"], isbn13s: []),
        FindingCase(isbns: ["439023483"], codes: ["isbn.leading-zero-restored"], isbn13s: ["9780439023481"]),
        FindingCase(isbns: ["9.780439023481E+12"], codes: ["isbn.scientific-notation-expanded"],
                    isbn13s: ["9780439023481"]),
        FindingCase(isbns: ["12345"], codes: ["isbn.wrong-length"], isbn13s: []),
        FindingCase(isbns: ["ABCDEFGHIJ"], codes: ["isbn.invalid-characters"], isbn13s: []),
        // ISBN-10 of Gideon the Ninth, ISBN-13 of Patisserie at Home: different books; the ISBN-13
        // as written is the record's ISBN-13.
        FindingCase(isbns: ["=\"1250313198\"", "=\"9780062445315\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9780062445315", "9781250313195"]),
        // An ISBN-10 beside a 979 ISBN-13: a 979 book has no ISBN-10, so they cannot agree.
        FindingCase(isbns: ["=\"0439023483\"", "=\"9791090636071\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9791090636071", "9780439023481"]),
        // goodreads_24col_es.csv row 221: both valid, different books.
        FindingCase(isbns: ["=\"8433901923\"", "=\"9788433918451\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9788433918451", "9788433901927"]),
        // goodreads_24col_merged_header_line.csv: the ISBN column holds the ISBN-13 cut to ten
        // digits, whose check digit happens to match: no ISBN is made of it.
        FindingCase(isbns: ["=\"9788594417\"", "=\"9788594417039\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9788594417039"]),
        // goodreads_24col_es.csv: the same cut, with a check digit that does not match.
        FindingCase(isbns: ["=\"9788494629\"", "=\"9788494629938\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9788494629938"]),
        // An invalid ISBN-13 beside a valid ISBN-10: the ISBN-10 is used.
        FindingCase(isbns: ["=\"9753638027\"", "=\"9789753638027\""], codes: ["isbn.invalid-checksum"],
                    isbn13s: ["9789753638029"]),
        // Seven digits: three zeros put back.
        FindingCase(isbns: ["=\"6729843\""], codes: ["isbn.leading-zero-restored"], isbn13s: ["9780006729846"]),
        // LibraryThing: bracketed ISBN plus a list that repeats it.
        FindingCase(isbns: ["[2070291340]", "2070291340, 9782070291342"], codes: [], isbn13s: ["9782070291342"]),
        // Several editions in a list where one pair agrees: no disagreement.
        FindingCase(isbns: ["0439023483, 1250313198", "9780439023481"], codes: [],
                    isbn13s: ["9780439023481", "9781250313195"]),
        FindingCase(isbns: ["=\"\"", "=\"9780571364879\""], codes: [], isbn13s: ["9780571364879"]),
        FindingCase(isbns: ["0439023484", "9780439023481"], codes: ["isbn.invalid-checksum"],
                    isbn13s: ["9780439023481"]),
        FindingCase(isbns: [], title: "", codes: ["title.empty"], isbn13s: []),
        FindingCase(isbns: [], title: "  ", codes: ["title.empty"], isbn13s: []),
        FindingCase(isbns: [], title: "!!!", codes: ["title.empty"], isbn13s: []),
        FindingCase(isbns: [], year: 1399, codes: ["year.impossible"], isbn13s: []),
        FindingCase(isbns: [], year: 1400, codes: [], isbn13s: []),
        FindingCase(isbns: [], year: 2028, codes: [], isbn13s: []),
        FindingCase(isbns: [], year: 2029, codes: ["year.impossible"], isbn13s: []),
        FindingCase(isbns: [], year: 0, codes: ["year.impossible"], isbn13s: []),
        FindingCase(isbns: [], year: -800, codes: ["year.impossible"], isbn13s: []),
    ]

    @Test("Normalising raises the expected findings", arguments: findingCases)
    func findings(_ testCase: FindingCase) {
        let result = Self.normalized(Self.record(title: testCase.title, isbns: testCase.isbns, year: testCase.year))
        #expect(result.findings.map(\.code) == testCase.codes)
        #expect(result.normalized?.allISBN13s == testCase.isbn13s)
        #expect(result.normalized?.isbn13 == testCase.isbn13s.first)
    }

    @Test("Findings carry severity, field and a message naming the value")
    func findingDetails() throws {
        let result = Self.normalized(Self.record(title: "T", isbns: ["978-0-00-000000-1", "439023483"], year: 1200))
        let checksum = try #require(result.findings.first { $0.code == "isbn.invalid-checksum" })
        #expect(checksum.severity == .warning)
        #expect(checksum.field == "isbn")
        #expect(checksum.message == "\"978-0-00-000000-1\" is not a valid ISBN-13 (check digit should be 2). "
            + "Fix the ISBN and import again; the book is still matched by title and author.")
        let restored = try #require(result.findings.first { $0.code == "isbn.leading-zero-restored" })
        #expect(restored.severity == .info)
        #expect(restored.message.contains("0439023483"))
        let year = try #require(result.findings.first { $0.code == "year.impossible" })
        #expect(year.message.hasPrefix("The year 1200 is outside 1400…2028"))
    }

    @Test("Three zeros put back before a 7-digit ISBN is a guess: a warning, where one zero is an info")
    func sevenDigitISBNIsAGuess() throws {
        let seven = Self.normalized(Self.record(title: "T", isbns: ["=\"6729843\""], year: nil))
        #expect(seven.findings == [
            Finding(
                code: "isbn.leading-zero-restored", severity: .warning, field: "isbn",
                message: "\"6729843\" has only 7 digits; with 3 leading zeros put back it reads as ISBN-10 0006729843, "
                    + "but that may be chance. Check the ISBN; the book is still matched by title and author.")
        ])
        let eight = Self.normalized(Self.record(title: "T", isbns: ["06729843"], year: nil))
        #expect(eight.findings.map(\.severity) == [.info])
    }

    @Test("A cut ISBN-13 in the ISBN column is named, and the disagreement message says which ISBN is used")
    func disagreementMessages() throws {
        let cut = Self.normalized(Self.record(title: "T", isbns: ["=\"9788594417\"", "=\"9788594417039\""], year: nil))
        #expect(cut.findings.map(\.message) == [
            "\"9788594417\" is the first ten digits of the row's ISBN-13 9788594417039, not an ISBN-10 "
                + "(a check digit that matches would be chance); the ISBN-13 is used."
        ])
        let different = Self.normalized(Self.record(title: "T", isbns: ["1250313198", "9780062445315"], year: nil))
        #expect(different.findings.map(\.message) == [
            "The ISBN-10 1250313198 and the ISBN-13 9780062445315 are different books; check which one is right. "
                + "The ISBN-13 is used; both are kept for matching."
        ])
        #expect(different.normalized?.isbn13 == "9780062445315")
    }

    @Test("Normalising twice gives the same record", arguments: findingCases)
    func idempotent(_ testCase: FindingCase) {
        let once = Self.normalized(Self.record(title: testCase.title, isbns: testCase.isbns, year: testCase.year))
        let twice = Self.normalized(once)
        #expect(twice == once)
    }

    @Test("Every fixture-like row normalises idempotently and keeps what was read", arguments: [
        ("Pippi Longstocking (Pippi Långstrump, #1)", ["Astrid Lindgren", "Florence Lamborn", "Louis S. Glanzman"],
         ["=\"0142402494\"", "=\"9780142402498\""]),
        ("Range: Why Generalists Triumph in a Specialized World", ["David   Epstein"],
         ["=\"0735214484\"", "=\"9780735214484\""]),
        ("Test Book Title With No ISBN", ["AuthorWith NoISBN"], []),
        ("Marelle", ["Cortazar, Julio"], ["[2070291340]", "2070291340, 9782070291342"]),
        ("Untitled Draft", [""], ["=\"\"", "=\"\""]),
        ("我穿我自己", ["琅俨"], []),
        ("Always Coming Home", ["Ursula K. Le Guin", "Todd Barton", "Margaret Chodos-Irvine"], ["9780520227354"]),
        ("Subprime Attention Crisis", ["Tim Hwang"], ["0374538654"]),
    ])
    func fixtureRows(title: String, authors: [String], isbns: [String]) throws {
        let input = Self.record(title: title, authors: authors, isbns: isbns)
        let once = Self.normalized(input)
        #expect(Self.normalized(once) == once)
        #expect(once.title == input.title)
        #expect(once.authors == input.authors)
        #expect(once.rawISBNs == input.rawISBNs)
        #expect(once.findings.isEmpty)
        let forms = try #require(once.normalized)
        #expect(!forms.titleKey.isEmpty)
        #expect(forms.allISBN13s.count == (isbns.allSatisfy { ISBN.clean($0) == nil } ? 0 : 1))
    }

    @Test("The default overload measures years against the current year")
    func defaultYear() {
        var record = Self.record(title: "T", year: 3000)
        Normalizer.normalize(&record)
        #expect(record.findings.map(\.code) == ["year.impossible"])
        #expect(Normalizer.currentYear() >= 2025)
    }
}
