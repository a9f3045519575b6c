import BookpipeCore
import BookpipeExport
import BookpipeStore
import Foundation
import Testing

@Suite struct LibraryExportTests {
    static let records = [ExportSamples.enrichedDune, ExportSamples.pendingRow, ExportSamples.uncertainScan]

    func export(_ format: ExportFormat, _ records: [BookRecord] = Self.records,
                sourceFiles: [SourceFileInfo] = []) -> String {
        var text = ""
        LibraryExport(format: format).write(records: records, sourceFiles: sourceFiles, to: &text)
        return text
    }

    @Test("JSON is an array with one contract object per line, exactly as written before")
    func jsonArray() {
        #expect(export(.json) == "[\n" + ExportSamples.enrichedDuneJSON + ",\n" + ExportSamples.pendingRowJSON + ",\n"
                + ExportSamples.uncertainScanJSON + "\n]\n")
    }

    @Test("An empty library exports as an empty JSON array, an empty JSON-lines text and a lone CSV header")
    func emptyExports() async throws {
        let store = try ExportSamples.temporaryLibrary()
        func exported(_ format: ExportFormat) async throws -> String {
            var text = ""
            try await LibraryExport(format: format).write(library: store, to: &text)
            return text
        }
        #expect(try await exported(.json) == "[\n]\n")
        #expect(try await exported(.jsonl) == "")
        #expect(try await exported(.csv).hasSuffix("findings,shelf,rating,dateAdded,dateRead,publisher,pages,binding,review,tags,rawISBNs,provenance,book\r\n"))
        #expect(try await exported(.wingtip) == "ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence\r\n")
    }

    @Test("JSON lines are the contract objects, one per line, each what JSONSerialization writes for it")
    func jsonLines() throws {
        let lines = export(.jsonl).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines == [ExportSamples.enrichedDuneJSON, ExportSamples.pendingRowJSON, ExportSamples.uncertainScanJSON, ""])
        for line in lines.dropLast() {
            #expect(try ExportSamples.canonicalJSON(line) == line)
        }
    }

    @Test("CSV has the contract's columns, CRLF line ends, quotes where needed and formulas neutralised")
    func csv() {
        #expect(export(.csv) == """
            id,file,row,line,title,normalizedTitle,authors,isbn13,year,status,reviewStatus,matchWorkKey,matchTitle,matchScore,failure,findings,shelf,rating,dateAdded,dateRead,publisher,pages,binding,review,tags,rawISBNs,provenance,book\r
            aaaa:1,shelf/goodreads.csv,1,2,Dune (Dune #1),Dune,"Herbert, Frank",9780441013593,1965,enriched,,/works/OL893415W,Dune,180,,,,,2021/3/5,,,,,,,,authors=file; dateAdded=file; isbn13=file; match=openlibrary; normalizedTitle=file; series=file; seriesNumber=file; title=file; year=file,\r
            aaaa:2,shelf/goodreads.csv,2,4,"'=HYPERLINK(""http://x"")",,'@evil; +plus,,,pending,,,,,,,,,,,,,,,,,authors=file; title=file,\r
            bbbb:3,scans/shelf.json,3,9,"He said ""no"" \\ / back\tagain\u{1}",,A/B; Ünïcödé 📚,,,needsCandidateSelection,needsReview,,,,,isbn.invalid-checksum,,,,,,,,,,,authors=file; confidence=file; title=file,\r

            """)
    }

    @Test("A library exports the same bytes as its records do, in file order then row order")
    func libraryMatchesRecords() async throws {
        let store = try ExportSamples.temporaryLibrary()
        // Inserted out of order: the export reads files by path ("scans/…" before "shelf/…"), rows
        // by number.
        try store.insert([ExportSamples.uncertainScan, ExportSamples.pendingRow, ExportSamples.enrichedDune])
        let fileOrder = [ExportSamples.uncertainScan, ExportSamples.enrichedDune, ExportSamples.pendingRow]
        for format in [ExportFormat.json, .jsonl, .csv] {
            var fromLibrary = ""
            try await LibraryExport(format: format).write(library: store, to: &fromLibrary)
            #expect(fromLibrary == export(format, fileOrder), "\(format)")
        }
    }

    @Test("The wingtip layout from a library takes each file's format column from the library, and never the import day for a missing date")
    func wingtipFromLibrary() async throws {
        let store = try ExportSamples.temporaryLibrary()
        try await store.registerSourceFile(SourceFileInfo(hash: "aaaa", path: "shelf/goodreads.csv", format: "goodreads",
                                                    header: ["Title", "Author", " Binding ", "Date Added"],
                                                    encoding: "utf-8", size: 100), runID: nil)
        try store.insert([ExportSamples.enrichedDune, ExportSamples.pendingRow])
        try await store.finishSourceFile(hash: "aaaa", rowsTotal: 2)
        var text = ""
        let summary = try await LibraryExport(format: .wingtip).write(library: store, to: &text)
        #expect(text == """
            ISBN,Title,Author,Format,Added Date,Cover URL,Spine Confidence\r
            9780441013593,Dune,Frank Herbert,Paperback,2021-03-05,https://covers.openlibrary.org/b/olid/OL26242482M-M.jpg?default=false,\r
            ,"'=HYPERLINK(""http://x"")","'@evil, +plus",,,,\r

            """)
        #expect(summary == ExportSummary(records: 2, entries: 2, entriesWithoutAddedDate: 1))
    }

    @Test("Writing to a file replaces it only once the export is complete, and leaves no temporary file")
    func writesFile() async throws {
        let store = try ExportSamples.temporaryLibrary()
        try store.insert([ExportSamples.enrichedDune])
        let folder = try ExportSamples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("books.jsonl").path
        try "an older export\n".write(toFile: path, atomically: true, encoding: .utf8)
        try await LibraryExport(format: .jsonl).write(library: store, toFile: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == ExportSamples.enrichedDuneJSON + "\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["books.jsonl"])
    }

    @Test("A file in a missing folder is an ExportError that names it and says what to check")
    func unwritableFile() async throws {
        let store = try ExportSamples.temporaryLibrary()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString)/out.csv").path
        await #expect(throws: ExportError(path: path)) {
            try await LibraryExport(format: .csv).write(library: store, toFile: path)
        }
        #expect(ExportError(path: path).description == "\(path): cannot write here. Check the folder exists and is writable.")
    }
}
