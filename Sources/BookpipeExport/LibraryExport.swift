import BookpipeCore
import BookpipeLibrary

/// Writes a library, or any records, in one of the export layouts (DESIGN.md §6).
///
/// The output is the same, byte for byte, whichever way the records arrive: JSON with sorted keys
/// and unescaped slashes (what Foundation's `JSONSerialization` writes with `.sortedKeys` and
/// `.withoutEscapingSlashes`), CSV with CRLF line ends and cells that a spreadsheet would run as
/// formulas neutralised. The `wingtip` layout writes each book once (see ``ExportFormat/wingtip``).
///
/// ```swift
/// let library: any Library = try LibraryStore(path: "library.sqlite")
/// try await LibraryExport(format: .jsonl).write(library: library, toFile: "books.jsonl")
///
/// var csv = ""
/// LibraryExport(format: .csv).write(records: records, to: &csv)
/// ```
public struct LibraryExport: Sendable {
    /// The layout written.
    public var format: ExportFormat

    /// Creates an export in `format`.
    public init(format: ExportFormat) {
        self.format = format
    }

    /// Writes every record of the library to `output`, in file order then row order, read in one
    /// snapshot of the database.
    ///
    /// - Parameters:
    ///   - store: The library.
    ///   - output: Where the text goes (a `String`, or any other text stream).
    /// - Returns: What was written.
    /// - Throws: ``StoreError`` when the library cannot be read.
    @discardableResult
    public func write(library store: any Library, to output: inout some TextOutputStream) async throws -> ExportSummary {
        // The wingtip layout looks up each source file's header first: the store's reads do not nest.
        var entries = Entries(format: format, sourceFiles: format == .wingtip ? try await store.sourceFiles() : [],
                              personEdits: format == .wingtip ? [:] : try await store.personEditedFields())
        if format != .wingtip {
            // Records that are one book with records of other lists name the book's first record.
            for book in BookGrouping.books(try await store.bookMembers(), decisions: try await store.linkDecisions())
            where book.count > 1 {
                for id in book { entries.books[id] = book[0] }
            }
        }
        entries.begin(&output)
        try await store.forEachRecord { record in entries.add(record, to: &output) }
        entries.end(&output)
        return entries.summary
    }

    /// Writes every record of the library to the file at `path`, or to standard output when
    /// `path` is `-`.
    ///
    /// A file is written under a temporary name (`path` + `.partial`) and renamed to `path` once
    /// complete, so a reader never sees half an export and a failed export leaves the previous
    /// file in place (the temporary file is removed).
    ///
    /// - Parameters:
    ///   - store: The library.
    ///   - path: The output file, or `-` for standard output.
    /// - Returns: What was written.
    /// - Throws: ``ExportError`` when the file cannot be written; ``StoreError`` when the library
    ///   cannot be read.
    @discardableResult
    public func write(library store: any Library, toFile path: String) async throws -> ExportSummary {
        var file = try ExportFile(path: path)
        do {
            let summary = try await write(library: store, to: &file)
            try file.close()
            return summary
        } catch {
            file.discard()
            throw error
        }
    }

    /// Writes `records` to `output` in the order given.
    ///
    /// - Parameters:
    ///   - records: The records, for example read from a library or built by a pipeline.
    ///   - sourceFiles: The source files the records were read from. Only the `wingtip` layout uses
    ///     them: a file's header names its binding/format column and its Open Library work id column.
    ///   - personEdits: The fields a person supplied, by record id (``LibraryReviewStore/personEditedFields()``),
    ///     for each record's provenance; a record not in it has none.
    ///   - output: Where the text goes (a `String`, or any other text stream).
    /// - Returns: What was written.
    @discardableResult
    public func write(records: some Sequence<BookRecord>, sourceFiles: [SourceFileInfo] = [],
                      personEdits: [String: Set<String>] = [:],
                      to output: inout some TextOutputStream) -> ExportSummary {
        var entries = Entries(format: format, sourceFiles: sourceFiles, personEdits: personEdits)
        entries.begin(&output)
        for record in records { entries.add(record, to: &output) }
        entries.end(&output)
        return entries.summary
    }
}

/// What an export wrote: enough for the command to say what a layout without a place for it
/// could not (the wingtip layout has no column saying that a date is missing).
public struct ExportSummary: Sendable, Hashable {
    /// Records read from the library (or given).
    public var records: Int
    /// Entries written: one per record, except in the `wingtip` layout (one per book).
    public var entries: Int
    /// `wingtip` only: books written with an empty `Added Date`, because no date added could be
    /// read for them (the export never makes one up). 0 for the other layouts, which write
    /// `dateAdded` as null.
    public var entriesWithoutAddedDate: Int

    /// Creates a summary.
    public init(records: Int, entries: Int, entriesWithoutAddedDate: Int) {
        self.records = records
        self.entries = entries
        self.entriesWithoutAddedDate = entriesWithoutAddedDate
    }
}

/// What an export writes before, for and after each record.
private struct Entries {
    let format: ExportFormat
    /// The wingtip layout's books already written.
    var wingtip: WingtipExport?
    var isFirst = true
    var records = 0
    /// The fields a person supplied, by record id (for provenance).
    let personEdits: [String: Set<String>]
    /// The first record of each record's book, for records that are one book with others.
    var books: [String: String] = [:]

    init(format: ExportFormat, sourceFiles: [SourceFileInfo], personEdits: [String: Set<String>]) {
        self.format = format
        self.personEdits = personEdits
        wingtip = format == .wingtip ? WingtipExport(sourceFiles: sourceFiles) : nil
    }

    func begin(_ output: inout some TextOutputStream) {
        switch format {
        case .json: output.write("[")
        case .jsonl: break
        case .csv: output.write(CSVWriting.line(ExportContract.csvLayout))
        case .wingtip: output.write(CSVWriting.line(WingtipExport.header))
        }
    }

    mutating func add(_ record: BookRecord, to output: inout some TextOutputStream) {
        switch format {
        case .json:
            output.write(isFirst ? "\n" : ",\n")
            output.write(ExportContract.jsonText(record, editedByPerson: edits(of: record), book: books[record.id]))
        case .jsonl:
            output.write(ExportContract.jsonText(record, editedByPerson: edits(of: record), book: books[record.id]))
            output.write("\n")
        case .csv:
            output.write(CSVWriting.line(ExportContract.csvFields(record, editedByPerson: edits(of: record))
                + [books[record.id] ?? ""]))
        case .wingtip:
            if let row = wingtip?.row(for: record) { output.write(CSVWriting.line(row)) }
        }
        isFirst = false
        records += 1
    }

    /// The fields a person supplied for `record` (no lookup when nobody edited anything).
    func edits(of record: BookRecord) -> Set<String> {
        personEdits.isEmpty ? [] : personEdits[record.id] ?? []
    }

    var summary: ExportSummary {
        ExportSummary(records: records, entries: wingtip?.booksWritten ?? records,
                      entriesWithoutAddedDate: wingtip?.booksWithoutAddedDate ?? 0)
    }

    func end(_ output: inout some TextOutputStream) {
        if format == .json { output.write("\n]\n") }
    }
}

extension LibraryExport {
    /// Who supplied each field of a record, under the export contract's keys (docs/export-contract.md,
    /// "Provenance"): `file` for what the imported file or scan gave, a source's name for the match
    /// it found, `person` for what a person typed or chose in review. The export's `provenance`
    /// object and `bookpipe show` both tell it from here.
    /// - Parameters:
    ///   - record: The record.
    ///   - editedByPerson: The fields a person supplied (``LibraryReviewStore/personEditedFields()``).
    /// - Returns: field → supplier, in key order.
    public static func provenance(of record: BookRecord, editedByPerson: Set<String>) -> [(field: String, supplier: String)] {
        ExportContract.provenance(record, editedByPerson: editedByPerson)
    }

    /// The record's review status as the export contract writes it: what a scan's routing or a
    /// person decided, or nil (a CSV row nobody routed for review; `null` in JSON). `bookpipe show`
    /// and `bookpipe stats` call that case `notRouted`.
    public static func reviewStatus(of record: BookRecord) -> ReviewStatus? {
        ExportContract.reviewStatus(record)
    }
}

/// An export written as records arrive: a pipeline's `write-export` step appends each batch it
/// passes on, and the file appears, complete, when the run finishes (written under a temporary
/// name and renamed; a run that fails leaves the old file as it was). The bytes are those of
/// ``LibraryExport/write(records:sourceFiles:personEdits:to:)`` for the same records in the same order.
public struct ExportStream: Sendable {
    private var entries: Entries
    private var file: ExportFile
    private var hasBegun = false

    /// Opens the output.
    /// - Parameters:
    ///   - format: The layout.
    ///   - path: The file, or `-` for standard output.
    /// - Throws: ``ExportError`` when the file cannot be created.
    public init(format: ExportFormat, path: String) throws(ExportError) {
        entries = Entries(format: format, sourceFiles: [], personEdits: [:])
        file = try ExportFile(path: path)
    }

    /// Writes `records`.
    public mutating func append(_ records: [BookRecord]) {
        if !hasBegun {
            entries.begin(&file)
            hasBegun = true
        }
        for record in records { entries.add(record, to: &file) }
    }

    /// Ends the layout and puts the file in place.
    /// - Returns: What was written.
    /// - Throws: ``ExportError`` when the file cannot be closed or renamed.
    public mutating func finish() throws(ExportError) -> ExportSummary {
        append([])
        entries.end(&file)
        try file.close()
        return entries.summary
    }

    /// Drops what was written (the run failed): the file at the path is left as it was.
    public func discard() {
        file.discard()
    }
}
