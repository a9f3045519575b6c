import BookpipeCore
import BookpipeTesting
import Foundation
import Testing

@testable import BookpipeIngest

/// One shared fixture and what importing it must give.
struct FixtureCase: Sendable, CustomTestStringConvertible {
    let file: String
    let format: String
    let description: String
    /// Data rows, counted by hand from the file (and with Python's csv module).
    let rows: Int
    /// Exact titles by data row.
    let titles: [Int: String]
    /// Exact raw ISBN lists by data row.
    let isbns: [Int: [String]]

    var testDescription: String { file }
}

let fixtureCases: [FixtureCase] = [
    FixtureCase(
        file: "goodreads-export-bookwyrm.csv", format: "goodreads",
        description: "Goodreads library export (31-column header)", rows: 3,
        titles: [1: "Gideon the Ninth (The Locked Tomb #1)", 2: "Subcutanean", 3: "Patisserie at Home"],
        isbns: [1: ["=\"1250313198\"", "=\"9781250313195\""], 2: [], 3: ["=\"0062445316\"", "=\"9780062445315\""]]),
    FixtureCase(
        file: "goodreads-export-openlibrary.csv", format: "goodreads",
        description: "Goodreads library export (31-column header)", rows: 3,
        titles: [
            1: "Pippi Longstocking (Pippi Långstrump, #1)",
            2: "Range: Why Generalists Triumph in a Specialized World", 3: "Test Book Title With No ISBN",
        ],
        isbns: [1: ["=\"0142402494\"", "=\"9780142402498\""], 3: []]),
    FixtureCase(
        file: "goodreads-export-edgecases-bookplate.csv", format: "goodreads",
        description: "Goodreads library export (23-column header)", rows: 7,
        titles: [
            1: "Dune (Dune, #1)", 2: "Project Hail Mary", 3: "The Hobbit, or There and Back Again",
            4: "Klara and the Sun", 5: "A Reader\u{2019}s Book With No ISBN", 6: "Untitled Draft",
            7: "Abandoned Shelf Book",
        ],
        isbns: [1: ["=\"0441013597\"", "=\"9780441013593\""], 4: ["=\"9780571364879\""], 5: []]),
    FixtureCase(
        file: "storygraph-export-bookwyrm.csv", format: "storygraph",
        description: "StoryGraph export (23 columns)", rows: 2,
        titles: [1: "Always Coming Home", 2: "Subprime Attention Crisis"],
        isbns: [1: ["9780520227354"], 2: ["0374538654"]]),
    FixtureCase(
        file: "librarything-export-bookwyrm.tsv", format: "librarything",
        description: "LibraryThing export (tab-separated, 49 columns)", rows: 3,
        titles: [
            1: "Marelle",
            2: "Le grand incendie de Londres: Récit, avec incises et bifurcations, 1985-1987 (Fiction & Cie)",
            3: "Le Maître et Marguerite",
        ],
        isbns: [
            1: ["[2070291340]", "2070291340", "9782070291342"], 2: ["[2020104725]", "2020104725", "9782020104722"],
            3: ["[2266062328]"],
        ]),
    FixtureCase(
        file: "calibre-catalog-bookwyrm.csv", format: "calibre", description: "Calibre CSV catalogue (21 columns)",
        rows: 1, titles: [1: "That Ain't Witchcraft"], isbns: [1: ["9780756411800", "9780756411800"]]),
    FixtureCase(
        file: "openlibrary-reading-log-export-bookwyrm.csv", format: "openlibrary-reading-log",
        description: "Open Library reading log export (no titles: looked up by Work Id)", rows: 4,
        titles: [1: "", 2: "", 3: "", 4: ""], isbns: [1: [], 2: []]),
    FixtureCase(
        file: "openreads-export-bookwyrm.csv", format: "openreads", description: "OpenReads export (19 columns)",
        rows: 4,
        titles: [1: "Wild Flowers Electric Beasts", 2: "Permanent Record", 3: "The Divide", 4: "The road to winter"],
        isbns: [1: [], 2: ["9781529035650"], 3: ["9781786090034"], 4: ["9781925355123"]]),
    FixtureCase(
        file: "generic-export-bookwyrm.csv", format: "generic",
        description: "generic comma-separated file (columns guessed: title=\"title\", author=\"author\", isbn=\"ISBN13\")",
        rows: 4,
        titles: [1: "Gideon the Ninth", 2: "Harrow the Ninth", 3: "Subcutanean", 4: "Patisserie at Home"],
        isbns: [1: ["9781250313195"], 2: [], 4: ["9780062445315"]]),
    FixtureCase(
        file: "bookwyrm-export-bookwyrm.csv", format: "bookwyrm", description: "BookWyrm export (27 columns)", rows: 3,
        titles: [1: "我穿我自己", 2: "Ottolenghi Simple", 3: "The Blue Bedspread"],
        isbns: [1: [], 2: ["0449017036", "9780449017036"], 3: ["0375503129", "9780375503122"]]),
]

@Suite(.enabled(if: TestFixtures.sharedAvailable)) struct CSVRecordReaderFixtureTests {
    @Test("Every shared fixture imports with each data row exactly once, exact titles and raw ISBNs", arguments: fixtureCases)
    func importsFixture(_ fixture: FixtureCase) throws {
        let result = try importAll(TestPaths.fixture(fixture.file), batchSize: 2)
        #expect(result.format.name == fixture.format)
        #expect(result.format.description == fixture.description)
        #expect(result.rejected.isEmpty)
        #expect(result.records.map(\.origin.row) == Array(1...fixture.rows))
        for record in result.records {
            #expect(record.id == "\(result.fileHash):\(record.origin.row)")
            #expect(record.origin.format == fixture.format)
            #expect(record.origin.file == TestPaths.fixture(fixture.file))
        }
        for (row, title) in fixture.titles {
            #expect(result.record(row: row)?.title == title, "row \(row)")
        }
        for (row, isbns) in fixture.isbns {
            #expect(result.record(row: row)?.rawISBNs == isbns, "row \(row)")
        }
    }

    @Test("Goodreads rows map authors, year, shelf, rating and dates; unrated is nil")
    func goodreadsFields() throws {
        let result = try importAll(TestPaths.fixture("goodreads-export-openlibrary.csv"))
        let pippi = try #require(result.record(row: 1))
        #expect(pippi.authors == ["Astrid Lindgren", "Florence Lamborn", "Louis S. Glanzman"])
        #expect(pippi.year == 1945)
        #expect(pippi.publisher == "Puffin Books")
        #expect(pippi.pageCount == 160)
        #expect(pippi.shelf == "to-read")
        #expect(pippi.rating == nil)
        #expect(pippi.dateAdded == "2020/12/13")
        #expect(pippi.dateRead == nil)
        #expect(pippi.origin.rawFields.count == 31)
        #expect(result.record(row: 2)?.authors == ["David   Epstein"])

        let bookwyrm = try importAll(TestPaths.fixture("goodreads-export-bookwyrm.csv"))
        let gideon = try #require(bookwyrm.record(row: 1))
        #expect(gideon.rating == 3)
        #expect(gideon.year == 2019)
        #expect(gideon.dateRead == "2020/10/25")
        #expect(bookwyrm.record(row: 3)?.authors == ["Mélanie Dupuis", "Anne Cazor"])
    }

    @Test("A review with a newline inside quotes stays one field and later rows get the right line numbers")
    func multiLineReview() throws {
        let result = try importAll(TestPaths.fixture("goodreads-export-edgecases-bookplate.csv"))
        #expect(result.records.map(\.origin.line) == [2, 3, 5, 6, 7, 8, 9])
        let hailMary = try #require(result.record(row: 2))
        #expect(hailMary.origin.rawFields[18] == "A clever,\nfunny ride.")
        #expect(hailMary.rating == 4)
        #expect(result.record(row: 1)?.origin.rawFields[18]
            == "The best world-building I've read.<br/><br/>The \"spice must flow\", and so did the pages.")
        #expect(result.record(row: 6)?.authors == [])
        #expect(result.record(row: 7)?.shelf == "did-not-finish")
        #expect(result.format.encoding == "utf-8")
    }

    @Test("OpenReads descriptions spanning several lines are not mistaken for unclosed quotes")
    func openReadsMultiLine() throws {
        let result = try importAll(TestPaths.fixture("openreads-export-bookwyrm.csv"))
        #expect(result.records.map(\.origin.line) == [2, 3, 8, 9])
        #expect(result.record(row: 4)?.authors == ["Smith, Mark"])
        #expect(result.record(row: 3)?.pageCount == 347)
        #expect(result.record(row: 3)?.rating == 4.5)
    }

    @Test("LibraryThing's stray Latin-1 byte is repaired, noted on the record and reported once")
    func libraryThingLatin1() throws {
        let result = try importAll(TestPaths.fixture("librarything-export-bookwyrm.tsv"))
        let marelle = try #require(result.record(row: 1))
        #expect(marelle.origin.rawFields[35] == "Cortâazar, Julio. Rayuela")
        #expect(marelle.authors == ["Cortazar, Julio"])
        #expect(marelle.year == 1979)
        #expect(marelle.rating == 4.5)
        #expect(marelle.pageCount == 590)
        #expect(marelle.findings == [
            Finding(
                code: "encoding.latin1-repaired", severity: .info, field: "Subjects",
                message: "Bytes in \"Subjects\" that are not valid UTF-8 were read as Latin-1 (Windows-1252).")
        ])
        #expect(result.record(row: 2)?.findings == [])
        #expect(result.repairs == [
            "1 field had bytes that are not valid UTF-8; they were read as Latin-1 (Windows-1252), first at line 2"
        ])
        #expect(result.format.encoding == "latin1-repaired")
        #expect(result.format.delimiter == UInt8(ascii: "\t"))
    }

    @Test("StoryGraph, Calibre, BookWyrm and generic columns map to the record")
    func otherFormatsFields() throws {
        let storygraph = try importAll(TestPaths.fixture("storygraph-export-bookwyrm.csv"))
        #expect(storygraph.record(row: 1)?.authors == ["Ursula K. Le Guin", "Todd Barton", "Margaret Chodos-Irvine"])
        #expect(storygraph.record(row: 2)?.rating == 5)
        #expect(storygraph.record(row: 2)?.shelf == "read")

        let calibre = try importAll(TestPaths.fixture("calibre-catalog-bookwyrm.csv"))
        #expect(calibre.record(row: 1)?.authors == ["Seanan McGuire"])
        #expect(calibre.record(row: 1)?.year == 2019)
        #expect(calibre.record(row: 1)?.publisher == "Daw Books")

        let bookwyrm = try importAll(TestPaths.fixture("bookwyrm-export-bookwyrm.csv"))
        #expect(bookwyrm.record(row: 1)?.authors == ["琅俨"])
        #expect(bookwyrm.record(row: 2)?.shelf == "cooking-9")

        let generic = try importAll(TestPaths.fixture("generic-export-bookwyrm.csv"))
        let harrow = try #require(generic.record(row: 2))
        #expect(harrow.rating == 3)
        #expect(harrow.findings.map(\.code) == ["row.short"])
        #expect(harrow.findings.first?.message == "The row has 8 fields but the header has 9; the missing fields were read as empty.")
        #expect(generic.record(row: 4)?.authors == ["Mélanie Dupuis"])
        #expect(generic.record(row: 1)?.findings == [])
    }

    @Test("The Open Library reading log has no titles: each row says enrichment looks it up by key")
    func openLibraryReadingLog() throws {
        let result = try importAll(TestPaths.fixture("openlibrary-reading-log-export-bookwyrm.csv"))
        let first = try #require(result.record(row: 1))
        #expect(first.origin.rawFields == ["OL102749W", "", "Currently Reading"])
        #expect(first.shelf == "Currently Reading")
        #expect(first.rawISBNs == [])
        #expect(first.findings == [
            Finding(
                code: "title.missing", severity: .info, field: "title",
                message: "The openlibrary-reading-log export has no titles; enrichment looks the book up by its key "
                    + "(Work Id, Edition Id) in the raw fields.")
        ])
    }

    @Test("The fingerprint depends on content only: a copy elsewhere gets the same record ids")
    func fingerprintIsStableAcrossPaths() throws {
        let directory = try TemporaryDirectory()
        let original = TestPaths.fixture("goodreads-export-bookwyrm.csv")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: original)))
        let copy = try directory.write("renamed.csv", bytes)
        let changed = try directory.write("changed.csv", bytes.dropLast(2) + Array("x\n".utf8))
        let first = try CSVRecordReader(path: original)
        #expect(first.fileHash.count == 32)
        #expect(try CSVRecordReader(path: copy).fileHash == first.fileHash)
        #expect(try CSVRecordReader(path: changed).fileHash != first.fileHash)
    }
}
