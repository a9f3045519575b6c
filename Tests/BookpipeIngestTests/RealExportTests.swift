import BookpipeCore
import BookpipeTesting
import Foundation
import Testing

@testable import BookpipeIngest

/// One real export from `../shared/fixtures/real` (see its SOURCES.md) and how a person reads it.
struct RealExport: Sendable, CustomTestStringConvertible {
    let file: String
    /// The format bookpipe must detect.
    let format: String
    let dialect: ReferenceDialect
    let columns: ReferenceColumns
    /// Rows bookpipe rejects, by data row, with words the reason must contain.
    var rejected: [Int: String] = [:]

    var testDescription: String { file }
    var path: String { TestFixtures.path("real/" + file) }
}

private let goodreadsColumns = ReferenceColumns(
    title: "Title", authors: [.init(column: "Author"), .init(column: "Additional Authors", separator: ", ")],
    isbns: ["ISBN", "ISBN13"])
private let storygraphColumns = ReferenceColumns(
    title: "Title", authors: [.init(column: "Authors", separator: ", ")], isbns: ["ISBN/UID"])
private let libraryThingColumns = ReferenceColumns(
    title: "Title", authors: [.init(column: "Primary Author"), .init(column: "Secondary Author", separator: "|")],
    isbns: ["ISBN", "ISBNs"])
private let tsvWithoutQuotes = ReferenceDialect(delimiter: "\t", quoteNone: true)

let realExports: [RealExport] = [
    RealExport(file: "goodreads_31col_2011_crlf_unquoted_isbn.csv", format: "goodreads", dialect: .init(),
               columns: goodreadsColumns),
    RealExport(file: "goodreads_31col_2015_crlf_blank_tail.csv", format: "goodreads", dialect: .init(),
               columns: goodreadsColumns),
    RealExport(file: "goodreads_31col_2020_large.csv", format: "goodreads", dialect: .init(), columns: goodreadsColumns),
    RealExport(file: "goodreads_31col_de.csv", format: "goodreads", dialect: .init(), columns: goodreadsColumns),
    RealExport(file: "goodreads_27col_crlf_extra_columns.csv", format: "goodreads", dialect: .init(),
               columns: goodreadsColumns),
    RealExport(file: "goodreads_27col_excel_bom_crlf_ddmmyyyy.csv", format: "goodreads", dialect: .init(),
               columns: goodreadsColumns),
    RealExport(file: "goodreads_25col_excel_crlf_ptbr.csv", format: "goodreads", dialect: .init(),
               columns: goodreadsColumns),
    RealExport(file: "goodreads_25col_pandas_floats.csv", format: "goodreads", dialect: .init(), columns: goodreadsColumns),
    RealExport(file: "goodreads_24col_asin_bad_isbn.csv", format: "goodreads", dialect: .init(), columns: goodreadsColumns),
    RealExport(file: "goodreads_24col_es.csv", format: "goodreads", dialect: .init(), columns: goodreadsColumns),
    RealExport(file: "goodreads_24col_hr_ja.csv", format: "goodreads", dialect: .init(), columns: goodreadsColumns),
    RealExport(file: "goodreads_24col_merged_header_line.csv", format: "goodreads", dialect: .init(mergedHeader: true),
               columns: goodreadsColumns),
    RealExport(file: "goodreads_23col_aligned_padded.csv", format: "goodreads", dialect: .init(padded: true),
               columns: goodreadsColumns),
    RealExport(file: "storygraph_23col_crlf.csv", format: "storygraph", dialect: .init(), columns: storygraphColumns),
    RealExport(file: "storygraph_8col_us_dates.csv", format: "storygraph", dialect: .init(), columns: storygraphColumns),
    RealExport(file: "librarything_41col_latin1_mojibake.tsv", format: "librarything", dialect: tsvWithoutQuotes,
               columns: libraryThingColumns),
    RealExport(file: "librarything_49col_latin1.tsv", format: "librarything", dialect: tsvWithoutQuotes,
               columns: libraryThingColumns),
    RealExport(file: "librarything_49col_BookID.csv", format: "librarything", dialect: .init(),
               columns: libraryThingColumns),
]

/// A CSV-parser conformance file: every field of every row must be what Python reads.
struct ConformanceCase: Sendable, CustomTestStringConvertible {
    let file: String
    /// The header of a column to read as the title (`--map title=…`), so any header imports.
    let titleColumn: String
    var testDescription: String { file }
    var path: String { TestFixtures.path("real/" + file) }
}

let conformanceCases: [ConformanceCase] = [
    .init(file: "csv-parser/bad-data.csv", titleColumn: "somejunk"),
    .init(file: "csv-parser/escape-quotes.csv", titleColumn: "a"),
    .init(file: "csv-parser/geojson.csv", titleColumn: "id"),
    .init(file: "csv-parser/latin.csv", titleColumn: "a"),
    .init(file: "csv-parser/mac-newlines.csv", titleColumn: "a"),
    .init(file: "csv-parser/quotes+newlines.csv", titleColumn: "a"),
    .init(file: "csv-parser/strict-false-less-columns.csv", titleColumn: "a"),
    .init(file: "csv-parser/strict-false-more-columns.csv", titleColumn: "a"),
    .init(file: "csv-parser/utf16-big.csv", titleColumn: "a"),
    .init(file: "csv-parser/utf16.csv", titleColumn: "a"),
] + ["comma_in_quotes", "empty", "empty_crlf", "escaped_quotes", "json", "newlines", "newlines_crlf",
     "quotes_and_newlines", "simple", "simple_crlf", "utf8"].map {
    ConformanceCase(file: "csv-spectrum/csvs/\($0).csv", titleColumn: $0 == "comma_in_quotes" ? "first" : $0 == "json" ? "key" : "a")
}

@Suite(.enabled(if: TestFixtures.sharedAvailable), .timeLimit(.minutes(5)))
struct RealExportTests {
    @Test("Every data row of a real export is read as Python's csv module reads it: titles, authors, ISBN-13, format",
          arguments: realExports)
    func readsLikePython(_ export: RealExport) throws {
        let reference = try ReferenceCSVReader.read(export.path, dialect: export.dialect, columns: export.columns)
        let result = try importAll(export.path, batchSize: 250)
        #expect(result.format.name == export.format)
        #expect(result.records.count + result.rejected.count == reference.rows.count,
                "bookpipe \(result.records.count) records + \(result.rejected.count) rejected, Python \(reference.rows.count) rows")
        #expect(Set(result.rejected.compactMap(\.row)) == Set(export.rejected.keys),
                "rejected: \(result.rejected.map { "\($0.line): \($0.reason)" })")
        for rejected in result.rejected {
            let words = rejected.row.flatMap { export.rejected[$0] } ?? "(not expected)"
            #expect(rejected.reason.contains(words), "line \(rejected.line): \(rejected.reason)")
        }
        var mismatches: [String] = []
        for var record in result.records {
            let row = record.origin.row
            guard row >= 1 && row <= reference.rows.count else {
                mismatches.append("row \(row): Python has no such row")
                continue
            }
            let expected = reference.rows[row - 1]
            Normalizer.normalize(&record, currentYear: 2026)
            if record.title.trimmingSpaces != expected.title {
                mismatches.append("row \(row) title: \(record.title.debugDescription) vs \((expected.title ?? "").debugDescription)")
            }
            if record.authors.map(\.trimmingSpaces) != expected.authors {
                mismatches.append("row \(row) authors: \(record.authors) vs \(expected.authors ?? [])")
            }
            if record.normalized?.isbn13 != expected.isbn13 {
                mismatches.append("row \(row) isbn13: \(record.normalized?.isbn13 ?? "nil") vs \(expected.isbn13 ?? "nil")")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches: \(mismatches.prefix(8).joined(separator: "; "))")
    }

    @Test("The headerless pandas re-save is refused: the first row looks like data")
    func headerlessIsRefused() {
        let path = TestFixtures.path("real/goodreads_24col_headerless_pandas.csv")
        let message = importError(path)?.description ?? ""
        #expect(message.hasPrefix("\(path): the first row looks like data, not a header naming the columns "
            + "(it starts \"17378527\", \"The Raven King (The Raven Cycle, #4)\", \"Maggie Stiefvater\", "
            + "\"Stiefvater, Maggie\", …)"), "\(message)")
    }

    @Test("The glued header line and the editor padding are each reported once; the glued book is row 1")
    func damageIsReported() throws {
        let merged = try importAll(TestFixtures.path("real/goodreads_24col_merged_header_line.csv"))
        #expect(merged.repairs == [
            "line 1 holds the header and the first row (the line break after the header was lost): it has 47 cells "
                + "where the rows have 24; the first 24 were read as the header and the rest as data row 1 "
                + "(\"Owned Copies102955228\" was read as the header \"Owned Copies\" and the value \"102955228\")"
        ])
        #expect(merged.record(row: 1)?.title == "Salvar o fogo")
        #expect(merged.record(row: 1)?.findings.map(\.code) == ["row.merged-with-header"])
        let padded = try importAll(TestFixtures.path("real/goodreads_23col_aligned_padded.csv"))
        #expect(padded.repairs.count == 1)
        #expect(padded.records.allSatisfy { !$0.findings.contains { $0.code.hasPrefix("row.") } })
    }

    @Test("A 7-digit ISBN with three zeros put back is a warning; disagreeing columns keep their finding")
    func isbnFindingsOfRealRows() throws {
        var seven = try #require(try importAll(TestFixtures.path("real/goodreads_31col_2015_crlf_blank_tail.csv"))
            .record(row: 593))
        Normalizer.normalize(&seven, currentYear: 2026)
        #expect(seven.findings.map(\.code) == ["isbn.leading-zero-restored"])
        #expect(seven.findings.map(\.severity) == [.warning])
        var cut = try #require(try importAll(TestFixtures.path("real/goodreads_24col_merged_header_line.csv"))
            .record(row: 40))
        Normalizer.normalize(&cut, currentYear: 2026)
        #expect(cut.rawISBNs == ["=\"9788594417\"", "=\"9788594417039\""])
        #expect(cut.normalized?.allISBN13s == ["9788594417039"])
        #expect(cut.findings.map(\.code) == ["isbn.10-13-disagree"])
    }

    @Test("Dates: M/D/YYYY decided from the file, D/M/YYYY, LibraryThing's brackets to ISO; Goodreads' kept as written")
    func dates() throws {
        let us = try importAll(TestFixtures.path("real/storygraph_8col_us_dates.csv"))
        #expect(us.record(row: 2)?.origin.rawFields[6] == "4/1/2024")
        #expect(us.record(row: 2)?.dateAdded == "2024-04-01")
        #expect(us.record(row: 1)?.dateAdded == "2022-10-12")
        #expect(us.record(row: 1)?.dateRead == "2022-10-13")
        #expect(us.notes.contains { $0.hasPrefix("dates with the year last were read month first (M/D/YYYY): ") })
        #expect(us.records.allSatisfy { !$0.findings.contains { $0.code == "date.unparseable" } })
        let uk = try importAll(TestFixtures.path("real/goodreads_27col_excel_bom_crlf_ddmmyyyy.csv"))
        #expect(uk.record(row: 1)?.dateAdded == "2023-02-17")
        #expect(uk.records.allSatisfy { $0.dateAdded.map { $0.count == 10 && $0.hasPrefix("20") } ?? false })
        let libraryThing = try importAll(TestFixtures.path("real/librarything_41col_latin1_mojibake.tsv"))
        #expect(libraryThing.record(row: 1)?.dateAdded == "2006-07-25")
        let goodreads = try importAll(TestFixtures.path("real/goodreads_31col_2020_large.csv"))
        #expect(goodreads.record(row: 1)?.dateAdded == "2014/04/02")
        #expect(goodreads.record(row: 1)?.dateRead == "2014/04/08")
    }

    @Test("Every field of every row of a CSV conformance file is what Python's csv module reads",
          arguments: conformanceCases)
    func conformance(_ testCase: ConformanceCase) throws {
        let reference = try ReferenceCSVReader.read(testCase.path, dialect: .init(), columns: nil)
        let result = try importAll(
            testCase.path, options: ImportOptions(formatName: "generic", columnMap: ["title": testCase.titleColumn]))
        #expect(result.format.header == reference.header)
        #expect(result.rejected.isEmpty, "\(result.rejected.map(\.reason))")
        #expect(result.records.map(\.origin.rawFields) == reference.rows.map(\.fields))
    }
}
