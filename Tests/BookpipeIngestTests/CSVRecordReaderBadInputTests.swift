import BookpipeCore
import Foundation
import Testing

@testable import BookpipeIngest

@Suite struct CSVRecordReaderBadInputTests {
    @Test("An empty file is an error naming the file")
    func emptyFile() {
        let path = TestPaths.input("empty.csv")
        #expect(importError(path)?.description
            == "\(path) is empty: there is nothing to import. Export the list again; an export starts with a header row.")
    }

    @Test("A file with only blank lines after a BOM is empty too")
    func onlyBOMAndBlankLines() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("bom.csv", [0xEF, 0xBB, 0xBF, 0x0D, 0x0A, 0x0A])
        #expect(importError(path) == .emptyFile(file: path))
    }

    @Test("A header-only file gives no records and no error")
    func headerOnly() throws {
        let result = try importAll(TestPaths.input("header-only.csv"))
        #expect(result.records.isEmpty)
        #expect(result.rejected.isEmpty)
        #expect(result.batchSizes.isEmpty)
        #expect(result.format.name == "generic")
        #expect(result.format.header == ["title", "author", "isbn"])
    }

    @Test("BOM and CRLF: the BOM is not part of the first header and CR is not part of the last field")
    func bomAndCRLF() throws {
        let result = try importAll(TestPaths.input("bom-crlf.csv"))
        #expect(result.format.header == ["title", "author", "isbn"])
        #expect(result.format.encoding == "utf-8-bom")
        #expect(result.records.map(\.title) == ["The Left Hand of Darkness", "Kindred, a novel"])
        #expect(result.records.map(\.rawISBNs) == [["9780441478125"], ["9780807083697"]])
        #expect(result.records.map(\.origin.line) == [2, 3])
    }

    @Test("Latin-1 bytes are read as Windows-1252 and reported once with a count and the first line")
    func latin1() throws {
        let result = try importAll(TestPaths.input("latin1.csv"))
        #expect(result.records.map(\.title) == ["Café Society", "Plain Title", "Naïve \u{201C}Quoted\u{201D}"])
        #expect(result.records.map(\.authors) == [["José María"], ["Some Author"], ["Renée"]])
        #expect(result.records[0].findings.map(\.field) == ["title", "author"])
        #expect(result.repairs == [
            "4 fields had bytes that are not valid UTF-8; they were read as Latin-1 (Windows-1252), first at line 2"
        ])
        #expect(result.format.encoding == "latin1-repaired")
    }

    @Test("NUL bytes past the first kilobyte are removed from their field, noted on the record and reported once (found by the soak: the library cut the text at them)")
    func nulBytesInFields() throws {
        let directory = try TemporaryDirectory()
        var text = "title,author,isbn\n"
        for number in 1...60 { text += "Book \(number),Author \(number),\n" }
        let bytes = Array(text.utf8) + Array("Null Book,S".utf8) + [0] + Array("hani\u{E9},\n".utf8) + [0, 0]
            + Array("Tail,Plain Author,\n".utf8)
        let path = try directory.write("nul.csv", bytes)
        let result = try importAll(path)
        #expect(result.records.count == 62)
        #expect(result.records[60].authors == ["Shani\u{E9}"])
        #expect(result.records[60].findings.map(\.code) == ["encoding.nul-removed"])
        #expect(result.records[60].findings.first?.field == "author")
        #expect(result.records[61].title == "Tail")
        #expect(result.records[61].origin.rawFields == ["Tail", "Plain Author", ""])
        #expect(result.repairs == ["2 fields had NUL bytes, which were removed (a NUL is never text), first at line 62"])
        #expect(result.records.allSatisfy { record in record.origin.rawFields.allSatisfy { !$0.utf8.contains(0) } })
    }

    @Test("UTF-16 LE and BE with a BOM are transcoded, keeping Cyrillic, German and emoji exactly", arguments: [
        ("utf16le-bom.csv", "utf-16le-bom", ["Der Zauberberg", "Преступление и наказание", "🦊 Fox Tales"]),
        ("utf16be-bom.csv", "utf-16be-bom", ["Живой труп"]),
    ])
    func utf16(file: String, encoding: String, titles: [String]) throws {
        let result = try importAll(TestPaths.input(file))
        #expect(result.format.encoding == encoding)
        #expect(result.records.map(\.title) == titles)
        #expect(result.rejected.isEmpty)
        if file.hasPrefix("utf16le") {
            #expect(result.format.delimiter == UInt8(ascii: "\t"))
            #expect(result.records[1].authors == ["Фёдор Достоевский"])
            #expect(result.records[1].rawISBNs == ["9785170906307"])
        }
    }

    @Test("An unclosed quote in the middle rejects only its row; the rows it swallowed still import")
    func unclosedQuoteInMiddle() throws {
        let path = TestPaths.input("unclosed-quote-middle.csv")
        let result = try importAll(path)
        #expect(result.rejected == [
            RejectedRow(
                fileHash: result.fileHash, file: path, line: 3, row: 2, column: 1,
                reason: "unclosed quote starting at line 3, column 1; the row was skipped and reading went on at line 4",
                rawText: "\"Broken Title,Author Two,9780000000002")
        ])
        #expect(result.records.map(\.title) == ["First Book", "Third Book", "Fourth Book", "Fifth, Quoted", "Sixth Book"])
        #expect(result.records.map(\.origin.line) == [2, 4, 5, 6, 7])
        #expect(result.records.map(\.origin.row) == [1, 3, 4, 5, 6])
        #expect(result.rejected.first?.location == "\(path):3:1")
    }

    @Test("An unclosed quote that runs to the end of the file rejects its row and reads on from the next line")
    func unclosedQuoteAtEnd() throws {
        let path = TestPaths.input("unclosed-quote-end.csv")
        let result = try importAll(path)
        #expect(result.rejected.map(\.reason) == [
            "unclosed quote starting at line 3, column 2; the row was skipped and reading went on at line 4"
        ])
        #expect(result.rejected.first?.column == 2)
        #expect(result.records.map(\.title) == ["First Book", "Third Book"])
    }

    @Test("An unclosed quote on the last line is rejected without resuming")
    func unclosedQuoteOnLastLine() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("last.csv", "title,author\nGood,One\n\"Bad,Two\n")
        let result = try importAll(path)
        #expect(result.rejected.map(\.reason) == ["unclosed quote starting at line 3, column 1; the row was skipped"])
        #expect(result.records.map(\.title) == ["Good"])
    }

    @Test("An unclosed quote near the start of a large file with no other quotes costs one row, not the file")
    func unclosedQuoteSwallowingMegabytes() throws {
        let directory = try TemporaryDirectory()
        var text = "title,author\nFirst,A\n\"Broken,B\n"
        for row in 1...60_000 { text += "Book number \(row),Author \(row)\n" }
        let result = try importAll(try directory.write("swallow.csv", text), batchSize: 4096)
        #expect(result.rejected.map(\.reason) == [
            "unclosed quote starting at line 3, column 1; the row was skipped and reading went on at line 4"
        ])
        #expect(result.records.count == 60_001)
        #expect(result.records.last?.title == "Book number 60000")
        #expect(result.records.last?.origin.line == 60_003)
        #expect(result.records.last?.origin.row == 60_002)
    }

    @Test("A row with more than 10,000 fields is rejected with the count")
    func tooManyFields() throws {
        let directory = try TemporaryDirectory()
        let text = "title,author\nWide," + String(repeating: "x,", count: 10_500) + "y\nAfter,B\n"
        let result = try importAll(try directory.write("wide.csv", text))
        #expect(result.records.map(\.title) == ["After"])
        #expect(result.rejected.map(\.reason) == [
            "row has 10502 fields, more than the 10000 bookpipe reads; the row was skipped"
        ])
    }

    @Test("A file that is one long run of quotes ends with a rejected row, not a hang")
    func onlyQuotes() throws {
        let directory = try TemporaryDirectory()
        let text = "title,author\n" + String(repeating: "\"", count: 3 * 1024 * 1024 + 1) + "\n"
        let result = try importAll(try directory.write("quotes.csv", text))
        #expect(result.records.isEmpty)
        #expect(result.rejected.count == 1)
        #expect(result.rejected.first?.line == 2)
    }

    @Test("A 10 MB field rejects its row without holding the field in memory; the next row imports")
    func hugeField() throws {
        let directory = try TemporaryDirectory()
        var bytes = Array("title,author,review\nBefore,Author A,short\nHuge,Author B,\"".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "x"), count: 10 * 1024 * 1024)
        bytes += Array("\"\nAfter,Author C,short\n".utf8)
        let path = try directory.write("huge.csv", bytes)
        let result = try importAll(path)
        #expect(result.records.map(\.title) == ["Before", "After"])
        #expect(result.rejected.count == 1)
        let rejected = try #require(result.rejected.first)
        #expect(rejected.reason == "field in column 3 is larger than the 1 MiB limit (10485760 bytes); the row was skipped")
        #expect(rejected.line == 3)
        #expect(rejected.column == 3)
        #expect(rejected.rawText.utf8.count <= RejectedRow.rawTextLimit)
        #expect(rejected.rawText.hasPrefix("Huge,Author B,\"xxx"))
    }

    @Test("A 10 MB unquoted line without line breaks is rejected the same way")
    func hugeUnquotedLine() throws {
        let directory = try TemporaryDirectory()
        var bytes = Array("title,author\nBefore,A\n".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "y"), count: 10 * 1024 * 1024)
        bytes += Array(",B\nAfter,C\n".utf8)
        let result = try importAll(try directory.write("line.csv", bytes))
        #expect(result.records.map(\.title) == ["Before", "After"])
        #expect(result.rejected.map(\.reason) == [
            "field in column 1 is larger than the 1 MiB limit (10485760 bytes); the row was skipped"
        ])
    }

    @Test("Binary garbage is an error naming the file")
    func binaryGarbage() {
        let path = TestPaths.input("binary-garbage.bin")
        #expect(importError(path)?.description
            == "\(path) is not a text file (it has NUL bytes in its first kilobyte). "
            + "bookpipe reads CSV and TSV exports; export the list again as CSV.")
    }

    @Test("UTF-16 without a BOM is called out as such")
    func utf16WithoutBOM() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("nobom.csv", Array("title,author\nA,B\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
        #expect(importError(path) == .notText(
            file: path,
            reason: "it has NUL bytes in its first kilobyte; it looks like UTF-16 without a byte-order mark, save it as UTF-8"))
    }

    @Test("A row with 200 fields imports with a row.long finding, all fields kept raw")
    func wideRow() throws {
        let result = try importAll(TestPaths.input("wide-row.csv"))
        #expect(result.records.map(\.title) == ["Normal Book", "Wide Book", "After Wide"])
        let wide = result.records[1]
        #expect(wide.origin.rawFields.count == 200)
        #expect(wide.findings == [
            Finding(
                code: "row.long", severity: .warning, field: nil,
                message: "The row has 200 fields but the header has 3; the extra fields are kept in the raw fields only.")
        ])
        #expect(result.records[2].findings.isEmpty)
    }

    @Test("Short rows import when they have a title and are rejected with a reason when they do not")
    func shortRows() throws {
        let path = TestPaths.input("short-rows.csv")
        let result = try importAll(path)
        #expect(result.records.map(\.title) == ["Short Book", "Full Book"])
        #expect(result.records[0].findings.map(\.code) == ["row.short"])
        #expect(result.records[1].year == 1999)
        #expect(result.rejected == [
            RejectedRow(
                fileHash: result.fileHash, file: path, line: 3, row: 2, column: nil,
                reason: "row has 3 fields but the header has 4, and no title could be read; the row was skipped",
                rawText: ",,9780000000002")
        ])
    }

    @Test("Duplicate header names are both kept, the repeat renamed for matching, and reported")
    func duplicateHeaders() throws {
        let result = try importAll(TestPaths.input("duplicate-headers.csv"))
        #expect(result.format.header == ["title", "author", "ISBN", "ISBN", "author"])
        #expect(result.repairs == [
            "column 4 repeats the header \"ISBN\"; both columns are kept, the repeat is matched as \"ISBN#2\"",
            "column 5 repeats the header \"author\"; both columns are kept, the repeat is matched as \"author#2\"",
        ])
        let record = try #require(result.records.first)
        #expect(record.rawISBNs == ["0441013597", "9780441013593"])
        #expect(record.authors == ["Primary"])
        #expect(record.origin.rawFields == ["Duplicated", "Primary", "0441013597", "9780441013593", "Secondary"])
    }

    @Test("Formula-looking cells, HTML and script text are kept verbatim")
    func formulasAndHTML() throws {
        let formulas = try importAll(TestPaths.input("formulas.csv"))
        #expect(formulas.records.map(\.title) == ["=HYPERLINK(\"http://evil.example\",\"click\")", "@SUM(A1:A2)"])
        #expect(formulas.records.map(\.authors) == [["+Plus Author"], ["=1+2"]])
        #expect(formulas.records.map(\.rawISBNs) == [["-5"], ["=\"0439023483\""]])
        let html = try importAll(TestPaths.input("html-script.csv"))
        #expect(html.records.map(\.title) == ["<script>alert('x')</script>", "Quote \"inside\" <i>italic</i>"])
        #expect(html.records.map(\.authors) == [["<b>Bold</b> &amp; Co"], ["O'Brien"]])
    }

    @Test("Emoji, right-to-left text and combining characters are kept exactly, scalar for scalar")
    func unicodeText() throws {
        let result = try importAll(TestPaths.input("unicode-text.csv"))
        let expected = ["📚 Emoji Reads 🐉", "שלום עולם", "الخيميائي", "Cafe\u{0301} Combining"]
        #expect(result.records.map(\.title) == expected)
        #expect(result.records.map { Array($0.title.unicodeScalars) } == expected.map { Array($0.unicodeScalars) })
        #expect(result.records[3].authors.first.map { Array($0.utf8) } == Array("Ame\u{0301}lie".utf8))
        #expect(result.format.encoding == "utf-8")
        #expect(result.repairs.isEmpty)
    }

    @Test("Excel-mangled ISBNs are kept as raw strings for the normalise stage to flag")
    func excelISBNs() throws {
        let result = try importAll(TestPaths.input("excel-isbns.csv"))
        #expect(result.records.map(\.rawISBNs) == [["9.78044E+12"], ["441013597"]])
    }

    @Test("Mixed CR, LF and CRLF line ends give the right rows and line numbers")
    func mixedLineEnds() throws {
        let result = try importAll(TestPaths.input("mixed-line-endings.csv"))
        #expect(result.records.map(\.title) == ["CRLF Book", "LF Book", "CR Book", "Multi\r\nLine\nTitle", "Last Book"])
        #expect(result.records.map(\.origin.line) == [2, 3, 4, 5, 8])
        #expect(result.records.map(\.authors) == [["Author A"], ["Author B"], ["Author C"], ["Author D"], ["Author E"]])
    }

    @Test("A multi-line quoted field with doubled quotes and the right field count is not an unclosed quote")
    func multiLineWithDoubledQuotes() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(
            "notes.csv", "title,author,notes\nA,B,\"He said \"\"hi\"\",\nthen left.\"\nC,D,\"x\"\n")
        let result = try importAll(path)
        #expect(result.rejected.isEmpty)
        #expect(result.records.map(\.title) == ["A", "C"])
        #expect(result.records.first?.origin.rawFields[2] == "He said \"hi\",\nthen left.")
        #expect(result.records.map(\.origin.line) == [2, 4])
    }

    @Test("A CRLF split across the 1 MiB read boundary counts as one line end")
    func crlfAcrossChunks() throws {
        let directory = try TemporaryDirectory()
        let header = "title,author\r\n"
        var text = header
        // Make the CR of row 1 the last byte of the first chunk.
        let filler = ChunkedInput.chunkSize - header.utf8.count - ",A\r".utf8.count
        text += String(repeating: "t", count: filler) + ",A\r\nSecond,B\r\n"
        let result = try importAll(try directory.write("split.csv", text))
        #expect(result.records.count == 2)
        #expect(result.records.map(\.origin.line) == [2, 3])
        #expect(result.records.last?.title == "Second")
        #expect(result.records.first?.authors == ["A"])
    }

    @Test("Blank lines and rows with no values are skipped and counted")
    func blankLines() throws {
        let result = try importAll(TestPaths.input("blank-lines.csv"))
        #expect(result.records.map(\.title) == ["Only Book"])
        #expect(result.records.map(\.origin.line) == [3])
        #expect(result.notes == ["1 row with no values were skipped"])
        #expect(result.repairs.isEmpty, "skipping a blank row is no repair")
    }

    @Test("A semicolon file with unknown headers explains --map, listing the headers and the delimiter")
    func semicolonUnknownHeaders() {
        let path = TestPaths.input("semicolon-unknown.csv")
        #expect(importError(path)?.description
            == "\(path): cannot tell which columns hold the title and the author. "
            + "Headers found (semicolon-separated): \"Buch\", \"Verfasser\", \"Kennung\". "
            + "Name the columns with --map, for example: --map title=Buch,author=Verfasser "
            + "(and --delimiter if semicolon is not the separator).")
    }

    @Test("A column map reads a file with unknown headers")
    func columnMap() throws {
        let result = try importAll(
            TestPaths.input("semicolon-unknown.csv"), options: ImportOptions(columnMap: ["title": "Buch", "author": "Verfasser"]))
        #expect(result.format.name == "generic")
        #expect(result.format.description == "generic semicolon-separated file (columns: title=\"Buch\", author=\"Verfasser\")")
        #expect(result.records.map(\.title) == ["Der Process"])
        #expect(result.records.map(\.authors) == [["Franz Kafka"]])
    }

    @Test("German headers are guessed in a semicolon-separated file")
    func germanHeaders() throws {
        let result = try importAll(TestPaths.input("semicolon-titel.csv"))
        #expect(result.format.description
            == "generic semicolon-separated file (columns guessed: title=\"Titel\", author=\"Autor\", isbn=\"ISBN\")")
        #expect(result.records.first?.rawISBNs == ["9783596294336"])
    }

    @Test("A forced delimiter and a forced format are used; wrong names are explained", arguments: [
        (ImportOptions(formatName: "goodread"), "unknown format \"goodread\". Known formats: goodreads, storygraph, librarything, calibre, openlibrary-reading-log, openreads, bookwyrm, generic."),
        (ImportOptions(formatName: "goodreads"), "the goodreads format needs the columns \"Book Id\", \"Title\", \"Author\", \"Exclusive Shelf\", which the header does not have. Headers found: \"Titel\", \"Autor\", \"ISBN\". Leave out --format to detect the format, or name the columns with --map."),
        (ImportOptions(columnMap: ["titel": "Titel"]), "--map names an unknown field \"titel\". Known fields: title, author, isbn, year, publisher, pages, shelf, rating, added, read, binding, review, tags."),
        (ImportOptions(columnMap: ["title": "Name"]), "--map title=Name: the file has no column \"Name\". Headers found: \"Titel\", \"Autor\", \"ISBN\"."),
        (ImportOptions(delimiter: UInt8(ascii: ",")), "cannot tell which columns hold the title and the author. Headers found (comma-separated): \"Titel;Autor;ISBN\". Name the columns with --map, for example: --map title=Titel;Autor;ISBN,author=<header> (and --delimiter if comma is not the separator)."),
    ])
    func optionErrors(options: ImportOptions, message: String) {
        let path = TestPaths.input("semicolon-titel.csv")
        #expect(importError(path, options: options)?.description == "\(path): " + message)
    }

    @Test("A missing file is an error naming it")
    func missingFile() {
        #expect(importError("/nonexistent/books.csv")?.description
            == "/nonexistent/books.csv: cannot open the file (No such file or directory). "
            + "Check the path and that you may read the file.")
    }

    @Test("A 50,000-row file comes in bounded batches with every row once")
    func boundedBatches() throws {
        let directory = try TemporaryDirectory()
        var text = "title,author,isbn\n"
        for row in 1...50_000 {
            text += "\"Book \(row), a title\",Author \(row % 97),978\(String(row).count)\n"
        }
        let result = try importAll(try directory.write("big.csv", text), batchSize: 512)
        #expect(result.records.count == 50_000)
        #expect(result.batchSizes.allSatisfy { $0 <= 512 })
        #expect(result.batchSizes.count == (50_000 + 511) / 512)
        #expect(Set(result.records.map(\.origin.row)).count == 50_000)
        #expect(result.records.last?.title == "Book 50000, a title")
        #expect(result.records.last?.origin.line == 50_001)
    }
}
