import BookpipeCore
import Foundation
import Testing

@testable import BookpipeIngest

/// The shapes of damage found in real exports (issue 16), written small so they run anywhere;
/// `RealExportTests` runs the real files.
@Suite struct CSVRecordReaderFidelityTests {
    static let goodreadsHeader =
        "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,"
        + "Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,"
        + "Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Owned Copies"

    static func goodreadsRow(id: String, title: String, author: String) -> String {
        "\(id),\(title),\(author),,,\"=\"\"\"\"\",\"=\"\"\"\"\",0,4.00,Pub,Paperback,300,2001,2001,,2020/01/01,,,read,,,,1,0"
    }

    @Test("Header names match ignoring case and spaces: a LibraryThing CSV saying \"Book ID\" keeps its authors")
    func headerNamesIgnoreCaseAndSpaces() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("lt.csv", "Book ID,Title,Primary  Author,Secondary Author,ISBNs\r\n"
            + "1,Marelle,\"Cortazar, Julio\",Anne|Bob,\"[2070291340, 9782070291342]\"\r\n")
        let result = try importAll(path)
        #expect(result.format.name == "librarything")
        #expect(result.records.first?.authors == ["Cortazar, Julio", "Anne", "Bob"])
    }

    @Test("A generic file without an author column says so, in its description and once as a note")
    func genericWithoutAuthorSaysSo() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("books.csv", "Title,Shelf\nDune,read\nEmma,to-read\n")
        let result = try importAll(path)
        #expect(result.format.description == "generic comma-separated file (columns guessed: title=\"Title\", no author column)")
        #expect(result.repairs.isEmpty, "no column was repaired")
        #expect(result.notes == [
            "no column of the header could be read as the author, so the records have no authors; if one holds "
                + "them, import again with --map author=<header> (headers: \"Title\", \"Shelf\")"
        ])
        #expect(result.records.map(\.authors) == [[], []])
    }

    @Test("A LibraryThing TSV has no quoting: a field starting with a quoted title is text, every row imports")
    func libraryThingTSVHasNoQuoting() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("lt.tsv", "Book Id\tTitle\tPrimary Author\tSummary\n"
            + "1\tPlume\tMichaux, Henri\t\"Plume\" par Henri Michaux (1963)\n"
            + "2\tLointain intérieur\tMichaux, Henri\t\"Lointain\n"
            + "3\t\"Quoted\" title\tX, Y\t\n")
        let result = try importAll(path)
        #expect(result.rejected.isEmpty)
        #expect(result.records.map(\.title) == ["Plume", "Lointain intérieur", "\"Quoted\" title"])
        #expect(result.records.map { $0.origin.rawFields[3] } == ["\"Plume\" par Henri Michaux (1963)", "\"Lointain", ""])
        #expect(result.records.map(\.origin.line) == [2, 3, 4])
        #expect(result.format.reading.hasSuffix(";quoting=none"))
    }

    @Test("Without quoting, a line longer than a parser piece and CR LF line ends split the same way")
    func unquotedLongLines() throws {
        let directory = try TemporaryDirectory()
        let long = String(repeating: "\"x", count: 50_000)
        let path = try directory.write("lt.tsv", "Book Id\tTitle\tPrimary Author\r\n1\t\(long)\tA\r\n\r\n2\tB\tC")
        let result = try importAll(path)
        #expect(result.records.map(\.title) == [long, "B"])
        #expect(result.records.map(\.authors) == [["A"], ["C"]])
    }

    @Test("An editor-aligned CSV is read as a person reads it: padding dropped, quotes after padding honoured")
    func alignedCSV() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("aligned.csv",
            "Book Id  , Title              , Author             , Author l-f            , Exclusive Shelf\n"
            + "  257233, Raintree County   , Ross Lockridge Jr. , \"Jr., Ross Lockridge\"  , read\n"
            + " 1, \"Dune, a novel\"   , Frank Herbert      , \"Herbert,\nFrank\"          , to-read\n")
        let result = try importAll(path)
        #expect(result.format.name == "goodreads")
        #expect(result.rejected.isEmpty)
        #expect(result.records.map(\.origin.rawFields) == [
            ["257233", "Raintree County", "Ross Lockridge Jr.", "Jr., Ross Lockridge", "read"],
            ["1", "Dune, a novel", "Frank Herbert", "Herbert,\nFrank", "to-read"],
        ])
        #expect(result.records.allSatisfy { $0.findings.isEmpty })
        #expect(result.repairs.first == "the cells are padded with spaces to line the columns up (as an editor aligns "
            + "them); the padding was dropped and a quote after it still opens a quoted field")
    }

    @Test("A header line with the first book glued to it keeps the book as row 1 and says what happened")
    func mergedHeaderLine() throws {
        let directory = try TemporaryDirectory()
        let first = Self.goodreadsRow(id: "102955", title: "Dom Casmurro", author: "Machado de Assis")
        let path = try directory.write("merged.csv", Self.goodreadsHeader + first + "\n"
            + Self.goodreadsRow(id: "7", title: "Lugar de Negro", author: "Lélia Gonzalez") + "\n")
        let result = try importAll(path)
        #expect(result.format.description == "Goodreads library export (24-column header)")
        #expect(result.format.header.last == "Owned Copies")
        #expect(result.records.map(\.title) == ["Dom Casmurro", "Lugar de Negro"])
        #expect(result.records.map(\.origin.row) == [1, 2])
        #expect(result.records.map(\.origin.line) == [1, 2])
        #expect(result.records.first?.origin.rawFields.first == "102955")
        #expect(result.records.first?.findings.map(\.code) == ["row.merged-with-header"])
        #expect(result.records.last?.findings == [])
        #expect(result.repairs == [
            "line 1 holds the header and the first row (the line break after the header was lost): it has 47 cells "
                + "where the rows have 24; the first 24 were read as the header and the rest as data row 1 "
                + "(\"Owned Copies102955\" was read as the header \"Owned Copies\" and the value \"102955\")"
        ])
    }

    @Test("A row with far more fields than the header is reported with its line")
    func longRowIsReported() throws {
        let directory = try TemporaryDirectory()
        let long = Self.goodreadsRow(id: "2", title: "Long", author: "A") + String(repeating: ",x", count: 176)
        let path = try directory.write("long.csv", Self.goodreadsHeader + "\n"
            + Self.goodreadsRow(id: "1", title: "Fine", author: "B") + "\n" + long + "\n")
        let result = try importAll(path)
        #expect(result.records.count == 2)
        #expect(result.records.last?.findings.map(\.code) == ["row.long"])
        #expect(result.notes == [
            "1 row has more fields than the header's 24 (line 3: 200 fields): the first 24 were read and the rest "
                + "kept in the raw fields only; check that line (a lost line break or a stray delimiter)"
        ])
    }

    @Test("A file whose first row is data is refused with \"the first row looks like data\"")
    func headerlessFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("headerless.csv",
            "17378527,\"The Raven King (The Raven Cycle, #4)\",Maggie Stiefvater,545424984,9780545424981,2021/04/21\n"
            + "17378508,\"Blue Lily, Lily Blue\",Maggie Stiefvater,545424968,9780545424967,2021/04/21\n")
        #expect(importError(path)?.description == "\(path): the first row looks like data, not a header naming the "
            + "columns (it starts \"17378527\", \"The Raven King (The Raven Cycle, #4)\", \"Maggie Stiefvater\", "
            + "\"545424984\", …), so bookpipe cannot tell which column holds what. Export the list again with its "
            + "header row, or add a first line naming the 6 columns (for example Title and Author) and import again.")
    }

    @Test("Dates that could be day or month first follow the file's unambiguous dates, else are left empty", arguments: [
        ("4/1/2024,2/17/2023", ["2024-04-01", "2023-02-17"], [], "dates with the year last were read month first"),
        ("4/1/2024,17/02/2023", ["2024-01-04", "2023-02-17"], [], "dates with the year last were read day first"),
        ("4/1/2024,5/6/2023", [nil, nil], ["4/1/2024", "5/6/2023"], "no date in the file tells"),
        ("4/1/2024,17/02/2023,2/17/2023", [nil, "2023-02-17", "2023-02-17"], ["4/1/2024"], "contradict each other"),
    ] as [(String, [String?], [String], String)])
    func dayMonthOrder(dates: String, expected: [String?], unreadable: [String], note: String) throws {
        let directory = try TemporaryDirectory()
        let rows = dates.split(separator: ",").enumerated().map { "Book \($0.offset),A,\($0.element)\n" }.joined()
        let path = try directory.write("dates.csv", "Title,Author,Date Added\n" + rows)
        let result = try importAll(path, batchSize: 1)
        #expect(result.records.map(\.dateAdded) == expected)
        #expect(result.records.flatMap { $0.findings.filter { $0.code == "date.unparseable" } }.map(\.field)
            == unreadable.map { _ in "Date Added" })
        #expect(result.records.map { $0.origin.rawFields[2] } == dates.split(separator: ",").map(String.init))
        #expect(result.notes.filter { $0.contains(note) }.count == 1, "\(result.notes)")
        #expect(result.repairs.isEmpty, "reading dates in the file's order is a note, not a repair")
    }

    @Test("Year-first dates are kept as written, other forms become ISO, and nonsense is left empty with a finding")
    func dateForms() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("dates.csv", "Title,Author,Date Added,Date Read\n"
            + "A,X,2020/12/13,[2006-08-09]\nB,X,45306,2024-01-15T10:00:00Z\nC,X,2023-02-30,someday\n")
        let result = try importAll(path)
        #expect(result.records.map(\.dateAdded) == ["2020/12/13", "2024-01-15", nil])
        #expect(result.records.map(\.dateRead) == ["2006-08-09", "2024-01-15T10:00:00Z", nil])
        #expect(result.records[2].findings.map(\.message) == [
            "\"2023-02-30\" is not a date bookpipe can read (column \"Date Added\"); the date was left empty and the "
                + "text is kept in the raw fields.",
            "\"someday\" is not a date bookpipe can read (column \"Date Read\"); the date was left empty and the "
                + "text is kept in the raw fields.",
        ])
        #expect(result.records[0].findings.isEmpty)
    }

    @Test("A header of names that match nothing still gets the --map advice", arguments: [
        "Buch;Verfasser;Kennung\nDer Process;Kafka;1\n", "Name of book,Writer id,Notes\nDune,1,x\n",
    ])
    func unknownHeadersAreNotData(_ text: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("unknown.csv", text)
        let error = importError(path)
        #expect(error?.description.contains("Name the columns with --map") == true, "\(String(describing: error))")
    }
}
