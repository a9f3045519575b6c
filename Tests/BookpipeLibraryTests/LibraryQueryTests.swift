import BookpipeCore
import BookpipeLibrary
import Foundation
import Testing

/// The listing's query language, sort orders, record references and templates, with no database.
@Suite struct LibraryQueryTests {
    typealias Q = LibraryQuery

    static let parsed: [(tokens: [String], conditions: [Q.Condition])] = [
        ([], []),
        (["Dune", "herbert"], [Q.Condition(.words(["dune", "herbert"]))]),
        (["author:Le Guin"], [Q.Condition(.author(["le", "guin"]))]),
        (["AUTHORS:García"], [Q.Condition(.author(["garcia"]))]),
        (["title:the left-hand"], [Q.Condition(.title(["the", "left", "hand"]))]),
        (["isbn:978-0-44"], [Q.Condition(.isbn("978044"))]),
        (["isbn:0441013597"], [Q.Condition(.isbn("9780441013593"))]),
        (["0-441-01359-7"], [Q.Condition(.isbn("9780441013593"))]),
        (["year:1965"], [Q.Condition(.year(Q.Bounds(lower: 1965, upper: 1965)))]),
        (["year:1960..1970"], [Q.Condition(.year(Q.Bounds(lower: 1960, upper: 1970)))]),
        (["year:1960.."], [Q.Condition(.year(Q.Bounds(lower: 1960, upper: nil)))]),
        (["year:..1970"], [Q.Condition(.year(Q.Bounds(lower: nil, upper: 1970)))]),
        (["rating:>=4"], [Q.Condition(.rating(Q.Bounds(lower: 4, upper: nil)))]),
        (["rating:>3.5"], [Q.Condition(.rating(Q.Bounds(lower: 3.5, includesLower: false, upper: nil)))]),
        (["rating:<2"], [Q.Condition(.rating(Q.Bounds(lower: nil, upper: 2, includesUpper: false)))]),
        (["shelf:To-Read"], [Q.Condition(.shelf("to read"))]),
        (["status:notfound"], [Q.Condition(.status(.notFound))]),
        (["review:waiting"], [Q.Condition(.review(.waiting))]),
        (["file:Goodreads"], [Q.Condition(.file("goodreads"))]),
        (["gone:yes"], [Q.Condition(.gone(true))]),
        (["isbn:Invalid"], [Q.Condition(.invalidISBN)]),
        (["^isbn:invalid"], [Q.Condition(.invalidISBN, isNegated: true)]),
        (["missing:Publisher"], [Q.Condition(.missing(.publisher))]),
        (["finding:Date.Unparseable"], [Q.Condition(.finding("date.unparseable"))]),
        (["^shelf:read", "dune"], [Q.Condition(.words(["dune"])), Q.Condition(.shelf("read"), isNegated: true)]),
        (["2001:", "odyssey"], [Q.Condition(.words(["2001", "odyssey"]))]),
    ]

    @Test("Field queries and free words parse into conditions: case, accents and punctuation folded; ranges and comparisons; ^ negates",
          arguments: parsed)
    func parses(_ tokens: [String], _ conditions: [Q.Condition]) throws {
        #expect(try Q.parse(tokens).conditions == conditions)
    }

    static let refused: [(token: String, message: String)] = [
        ("autor:herbert", #""autor:herbert": no field "autor". Fields: title, author, isbn, year, shelf, status, review, rating, file, gone, missing, finding (a word alone matches title and authors)."#),
        ("author:", #""author:": give a value after the field (e.g. author:herbert). Fields: title, author, isbn, year, shelf, status, review, rating, file, gone, missing, finding (a word alone matches title and authors)."#),
        ("rating:>=x", #""rating:>=x": "x" is not a number; write N, A..B, A.., ..B, >N, >=N, <N or <=N."#),
        ("year:1970..1960", #""year:1970..1960": the range's start is after its end."#),
        ("year:19.5", #""year:19.5": a year is a whole number."#),
        ("year:..", #""year:..": a range needs at least one end (A..B, A.., ..B)."#),
        ("status:lost", #""status:lost": the value must be one of enriched, notFound, failed, needsCandidateSelection, pending."#),
        ("review:later", #""review:later": the value must be one of waiting, verified, needsReview, userEdited."#),
        ("gone:maybe", #""gone:maybe": the value must be one of yes, no."#),
        ("isbn:97x8", #""isbn:97x8": an ISBN is digits (and a final X), hyphens allowed."#),
        ("missing:colour", #""missing:colour": the value must be one of isbn, year, pages, publisher, author, cover."#),
        ("finding:a b!", #""finding:a b!": a finding code is letters, digits, dots and hyphens (e.g. finding:date.unparseable)."#),
    ]

    @Test("A bad token is refused with a message naming it and the valid fields or values", arguments: refused)
    func refuses(_ token: String, _ message: String) {
        #expect(throws: LibraryQueryError.self) { try Q.parse(["dune", token]) }
        do {
            _ = try Q.parse([token])
        } catch {
            #expect(error.token == token)
            #expect(error.description == message)
        }
    }

    @Test("Bounds hold their ends as written: inclusive ranges, strict comparisons, open ends")
    func bounds() throws {
        let range = Q.Bounds(lower: 1960, upper: 1970)
        #expect(range.contains(1960) && range.contains(1970) && !range.contains(1971) && !range.contains(1959))
        let above = Q.Bounds(lower: 4, includesLower: false, upper: nil)
        #expect(!above.contains(4) && above.contains(4.25))
    }

    @Test("--sort reads fields with a final - for descending; an unknown field is refused")
    func sortOrders() throws {
        #expect(try ListingOrder.parse("year-,title") == [ListingOrder(.year, descending: true), ListingOrder(.title)])
        #expect(try ListingOrder.parse("Authors+") == [ListingOrder(.author)])
        #expect(throws: LibraryQueryError.self) { try ListingOrder.parse("colour") }
    }

    @Test("A record is named by its number, by its id with the hash shortened, or by a hash prefix")
    func references() {
        #expect(RecordReference("12") == .number(12))
        #expect(RecordReference("#12") == .number(12))
        #expect(RecordReference("1BD89140:3") == .id(hashPrefix: "1bd89140", row: 3))
        #expect(RecordReference("1bd89140") == .id(hashPrefix: "1bd89140", row: nil))
        #expect(RecordReference("dune") == nil)
        #expect(RecordReference("author:x") == nil)
        #expect(RecordReference("0") == .id(hashPrefix: "0", row: nil))
        #expect(RecordReference.shortID("1bd891400412d29e6e6d2c6d21e88ceb:14") == "1bd89140:14")
    }

    static let listed: ListedRecord = {
        var record = BookRecord(origin: RecordOrigin(file: "list.csv", fileHash: "c0ffee", row: 3, line: 4, format: "goodreads",
                                                     rawFields: []),
                                title: "Dune", authors: ["Frank Herbert", "Someone Else"], rawISBNs: ["0441013597"], year: 1965)
        record.rating = 4
        Normalizer.normalize(&record, currentYear: 2026)
        return ListedRecord(number: 7, record: record, isGone: true)
    }()

    @Test("A template prints fields by name ({{ for a brace); whole ratings print without a decimal point; an unknown field is refused")
    func templates() throws {
        #expect(try ListingTemplate("{title} — {authors} ({year}) {{{rating}}} #{number} {isbn} gone:{gone} {shelf}.")
            .render(Self.listed) == "Dune — Frank Herbert; Someone Else (1965) {4} #7 9780441013593 gone:yes .")
        #expect(try ListingTemplate.columns("number, title,year").render(Self.listed) == "7  Dune  1965")
        #expect(try ListingTemplate(ListingTemplate.standard).render(Self.listed) == "7  c0ffee:3  pending  Dune — Frank Herbert; Someone Else")
        #expect(throws: LibraryQueryError.self) { try ListingTemplate("{colour}") }
        #expect(throws: LibraryQueryError.self) { try ListingTemplate("{title") }
    }

    @Test("A removal logs one change per record: field record, kind removed, the title as the old value, the command as source")
    func removalLog() {
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(RemovalRules.changes(removing: [Self.listed.record], command: "remove", at: time)
            == [RecordChange(recordID: "c0ffee:3", field: "record", old: "Dune", new: nil, kind: .removed, source: "remove",
                             changedAt: time)])
    }
}
