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
        // ISBN-10 of Gideon the Ninth, ISBN-13 of Patisserie at Home: different books.
        FindingCase(isbns: ["=\"1250313198\"", "=\"9780062445315\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9781250313195", "9780062445315"]),
        // An ISBN-10 beside a 979 ISBN-13: a 979 book has no ISBN-10, so they cannot agree.
        FindingCase(isbns: ["=\"0439023483\"", "=\"9791090636071\""], codes: ["isbn.10-13-disagree"],
                    isbn13s: ["9780439023481", "9791090636071"]),
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
