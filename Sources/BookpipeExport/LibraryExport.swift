import BookpipeCore
import BookpipeStore

/// Writes a library, or any records, in one of the export layouts (DESIGN.md §6).
///
/// The output is the same, byte for byte, whichever way the records arrive: JSON with sorted keys
/// and unescaped slashes (what Foundation's `JSONSerialization` writes with `.sortedKeys` and
/// `.withoutEscapingSlashes`), CSV with CRLF line ends and cells that a spreadsheet would run as
/// formulas neutralised. The `wingtip` layout writes each book once (see ``ExportFormat/wingtip``).
///
/// ```swift
/// let store = try LibraryStore(path: "library.sqlite")
/// try LibraryExport(format: .jsonl).write(library: store, toFile: "books.jsonl")
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
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func write(library store: LibraryStore, to output: inout some TextOutputStream) throws {
        // The wingtip layout looks up each source file's header and import day first: the store's
        // reads do not nest.
        var entries = Entries(format: format, sourceFiles: format == .wingtip ? try store.sourceFiles() : [])
        entries.begin(&output)
        try store.forEachRecord { record in entries.add(record, to: &output) }
        entries.end(&output)
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
    /// - Throws: ``ExportError`` when the file cannot be written; ``StoreError`` when the library
    ///   cannot be read.
    public func write(library store: LibraryStore, toFile path: String) throws {
        var file = try ExportFile(path: path)
        do {
            try write(library: store, to: &file)
            try file.close()
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
    ///     them: a file's header names its binding/format column, and the day it was completely
    ///     imported is the `Added Date` of rows without one.
    ///   - output: Where the text goes (a `String`, or any other text stream).
    public func write(records: some Sequence<BookRecord>, sourceFiles: [SourceFileInfo] = [],
                      to output: inout some TextOutputStream) {
        var entries = Entries(format: format, sourceFiles: sourceFiles)
        entries.begin(&output)
        for record in records { entries.add(record, to: &output) }
        entries.end(&output)
    }
}

/// What an export writes before, for and after each record.
private struct Entries {
    let format: ExportFormat
    /// The wingtip layout's books already written.
    var wingtip: WingtipExport?
    var isFirst = true

    init(format: ExportFormat, sourceFiles: [SourceFileInfo]) {
        self.format = format
        wingtip = format == .wingtip ? WingtipExport(sourceFiles: sourceFiles) : nil
    }

    func begin(_ output: inout some TextOutputStream) {
        switch format {
        case .json: output.write("[")
        case .jsonl: break
        case .csv: output.write(CSVWriting.line(ExportContract.csvHeader))
        case .wingtip: output.write(CSVWriting.line(WingtipExport.header))
        }
    }

    mutating func add(_ record: BookRecord, to output: inout some TextOutputStream) {
        switch format {
        case .json:
            output.write(isFirst ? "\n" : ",\n")
            output.write(ExportContract.jsonText(record))
        case .jsonl:
            output.write(ExportContract.jsonText(record))
            output.write("\n")
        case .csv:
            output.write(CSVWriting.line(ExportContract.csvFields(record)))
        case .wingtip:
            if let row = wingtip?.row(for: record) { output.write(CSVWriting.line(row)) }
        }
        isFirst = false
    }

    func end(_ output: inout some TextOutputStream) {
        if format == .json { output.write("\n]\n") }
    }
}
