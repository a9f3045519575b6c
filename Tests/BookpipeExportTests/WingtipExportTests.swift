import BookpipeCore
import BookpipeExport
import BookpipeStore
import Foundation
import Testing

@Suite struct WingtipExportTests {
    /// A Goodreads-like file whose binding column is the third, completely imported on 6 May 2024.
    static let goodreadsFile = SourceFileInfo(hash: "aaaa", path: "a.csv", format: "goodreads",
                                              header: ["Title", "Author", " Binding ", "Date Added"], encoding: "utf-8",
                                              size: 10, rowsTotal: 9, completedAt: "2024-05-06 10:20:30")

    /// A row of `goodreadsFile`.
    static func row(_ number: Int, title: String, author: String, isbn13: String? = nil, binding: String = "",
                    dateAdded: String? = nil, match: Match? = nil) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "aaaa", row: number, line: number + 1,
                                                     format: "goodreads", rawFields: [title, author, binding, dateAdded ?? ""]),
                                title: title, authors: [author])
        record.dateAdded = dateAdded
        record.normalized = NormalizedForms(searchTitle: title, mainTitle: title, titleKey: title.lowercased(),
                                            authors: [author], authorKeys: [author.lowercased()], isbn13: isbn13,
                                            allISBN13s: isbn13.map { [$0] } ?? [])
        if let match { record.enrichment = EnrichmentResult(status: .enriched, match: match) }
        return record
    }

    func wingtip(_ records: [BookRecord]) -> [String] {
        var text = ""
        LibraryExport(format: .wingtip).write(records: records, sourceFiles: [Self.goodreadsFile], to: &text)
        return text.components(separatedBy: "\r\n")
    }

    @Test("The same ISBN-13 is one book, written the first time it is seen; another ISBN is another edition")
    func sameISBN() {
        let rows = wingtip([
            Self.row(1, title: "Dune", author: "Frank Herbert", isbn13: "9780441013593", binding: "Paperback"),
            Self.row(2, title: "Dune (again)", author: "F. Herbert", isbn13: "9780441013593", binding: "Hardcover"),
            Self.row(3, title: "Dune", author: "Frank Herbert", isbn13: "9780340960196", binding: "Hardcover"),
        ])
        #expect(rows == [
            "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence",
            "9780441013593,Dune,Frank Herbert,Paperback,,,",
            "9780340960196,Dune,Frank Herbert,Hardcover,,,",
            "",
        ])
    }

    @Test("Without an ISBN, the same matched work is one book, written with the match's title and authors")
    func sameWork() {
        let match = Match(workKey: "/works/OL1W", editionKey: nil, title: "The Hobbit", authors: ["J. R. R. Tolkien"],
                          score: 150, source: "catalog")
        let rows = wingtip([
            Self.row(1, title: "Hobbit", author: "Tolkien, J.R.R.", match: match),
            Self.row(2, title: "The Hobbit, or There and Back Again", author: "Tolkien", match: match),
        ])
        #expect(rows == [
            "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence",
            ",The Hobbit,J. R. R. Tolkien,,,,",
            "",
        ])
    }

    @Test("Without an ISBN or a match, the same title and first author are one book; another author is another")
    func sameTitleAndAuthor() {
        let rows = wingtip([
            Self.row(1, title: "Notes", author: "Jane Doe", dateAdded: "2020/1/2"),
            Self.row(2, title: "Notes", author: "Jane Doe", dateAdded: "2021-01-01"),
            Self.row(3, title: "Notes", author: "John Roe", dateAdded: "2019-12-31T23:00:00Z"),
        ])
        #expect(rows == [
            "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence",
            ",Notes,Jane Doe,,2020-01-02,,",
            ",Notes,John Roe,,2019-12-31,,",
            "",
        ])
    }

    @Test("A matched book's cover is its Open Library edition's, else its ISBN's; an unmatched book has none")
    func coverURL() {
        let withEdition = Match(workKey: "/works/OL1W", editionKey: "/books/OL26242482M", title: "Dune",
                                authors: ["Frank Herbert"], score: 180, source: "openlibrary")
        let withoutEdition = Match(workKey: "gb:abc", editionKey: "abc", title: "Emma", authors: ["Jane Austen"],
                                   score: 160, source: "googlebooks")
        let rows = wingtip([
            Self.row(1, title: "Dune", author: "Frank Herbert", isbn13: "9780441013593", match: withEdition),
            Self.row(2, title: "Emma", author: "Jane Austen", isbn13: "9780141439587", match: withoutEdition),
            Self.row(3, title: "Persuasion", author: "Jane Austen", isbn13: "9780141439686"),
        ])
        #expect(rows.dropFirst().prefix(3).map { $0.split(separator: ",", omittingEmptySubsequences: false).dropLast().last ?? "" } == [
            "https://covers.openlibrary.org/b/olid/OL26242482M-M.jpg?default=false",
            "https://covers.openlibrary.org/b/isbn/9780141439587-M.jpg?default=false",
            "",
        ])
    }

    @Test("Dates are written as yyyy-MM-dd; a cell that is not a date leaves Added Date empty, never the import day or today",
          arguments: [("2021/3/5", "2021-03-05"), ("2021-03-05 10:20:30", "2021-03-05"), ("2021-3-5T10:00:00Z", "2021-03-05"),
                      ("not a date", ""), ("2021/13/01", ""), ("05/03/2021", ""), ("", "")])
    func addedDate(_ cell: String, _ expected: String) {
        let rows = wingtip([Self.row(1, title: "T", author: "A", dateAdded: cell)])
        #expect(rows[1] == ",T,A,,\(expected),,")
    }

    @Test("The summary counts books written and those whose Added Date is empty")
    func summary() {
        var text = ""
        let summary = LibraryExport(format: .wingtip).write(records: [
            Self.row(1, title: "Dune", author: "Frank Herbert", isbn13: "9780441013593", dateAdded: "2021-03-05"),
            Self.row(2, title: "Dune", author: "Frank Herbert", isbn13: "9780441013593"),
            Self.row(3, title: "Emma", author: "Jane Austen"),
        ], sourceFiles: [Self.goodreadsFile], to: &text)
        #expect(summary == ExportSummary(records: 3, entries: 2, entriesWithoutAddedDate: 1))
    }

    /// Open Library's reading log: work and edition ids and a shelf, no title, author or ISBN.
    static let readingLogFile = SourceFileInfo(hash: "cccc", path: "ol.csv", format: "openlibrary-reading-log",
                                               header: ["Work Id", "Edition Id", "Bookshelf"], encoding: "utf-8",
                                               size: 10, rowsTotal: 5, completedAt: "2024-05-06 10:20:30")

    static func readingLogRow(_ number: Int, _ fields: [String]) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "ol.csv", fileHash: "cccc", row: number, line: number + 1,
                                                     format: "openlibrary-reading-log", rawFields: fields))
        record.shelf = fields[2]
        record.normalized = NormalizedForms(searchTitle: "", mainTitle: "", titleKey: "")
        return record
    }

    @Test("An Open Library reading log's books stay distinct: one row per work id, the same work once, a row without one alone")
    func readingLog() {
        var text = ""
        let summary = LibraryExport(format: .wingtip).write(records: [
            Self.readingLogRow(1, ["OL102749W", "", "Currently Reading"]),
            Self.readingLogRow(2, ["OL361393W", "OL7798182M", "Currently Reading"]),
            Self.readingLogRow(3, ["OL1652392W", "OL7194114M", "Want to Read"]),
            Self.readingLogRow(4, ["OL1652392W", "OL7194114M", "Already Read"]),
            Self.readingLogRow(5, ["", "", "Want to Read"]),
            Self.readingLogRow(6, ["", "", "Want to Read"]),
        ], sourceFiles: [Self.readingLogFile], to: &text)
        #expect(summary == ExportSummary(records: 6, entries: 5, entriesWithoutAddedDate: 5))
        #expect(text.components(separatedBy: "\r\n").count == 7)
    }

    @Test("A reading-log work and a matched record of the same work are one book")
    func readingLogMeetsMatch() {
        var matched = Self.row(1, title: "Dune", author: "Frank Herbert", match: Match(
            workKey: "/works/OL893415W", editionKey: nil, title: "Dune", authors: ["Frank Herbert"], score: 150, source: "catalog"))
        matched.dateAdded = "2020-01-01"
        var text = ""
        LibraryExport(format: .wingtip).write(records: [matched, Self.readingLogRow(1, ["OL893415W", "", "Already Read"])],
                                              sourceFiles: [Self.goodreadsFile, Self.readingLogFile], to: &text)
        #expect(text == "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence\r\n,Dune,Frank Herbert,,2020-01-01,,\r\n")
    }

    @Test("A scanned book carries its spine confidence as given; a CSV row and an invalid confidence leave it empty")
    func spineConfidence() {
        var scanned = Self.row(1, title: "Dune", author: "Frank Herbert")
        scanned.scan = ScanDetection(confidence: 0.42, boundingBox: nil, photoPath: nil)
        var invalid = Self.row(2, title: "Emma", author: "Jane Austen")
        invalid.scan = ScanDetection(confidence: 1.7, boundingBox: nil, photoPath: nil)
        let rows = wingtip([scanned, invalid, Self.row(3, title: "Persuasion", author: "Jane Austen")])
        #expect(rows[1] == ",Dune,Frank Herbert,,,,0.42")
        #expect(rows[2] == ",Emma,Jane Austen,,,,")
        #expect(rows[3] == ",Persuasion,Jane Austen,,,,")
    }

    @Test("Titles and authors that a spreadsheet would run as formulas are neutralised")
    func neutralised() {
        let rows = wingtip([Self.row(1, title: "=SUM(1)", author: "-minus", binding: "@x")])
        #expect(rows[1] == ",'=SUM(1),'-minus,'@x,,,")
    }
}
