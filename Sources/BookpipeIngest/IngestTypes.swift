import BookpipeCore

/// How to read an input file: what the user forced on the command line.
///
/// Everything is optional: with the defaults the reader detects the delimiter and the format.
///
/// ```swift
/// let options = ImportOptions(columnMap: ["title": "Titel", "author": "Autor"], delimiter: UInt8(ascii: ";"))
/// ```
public struct ImportOptions: Sendable, Hashable {
    /// A forced format name (`goodreads`, `storygraph`, `librarything`, `calibre`,
    /// `openlibrary-reading-log`, `openreads`, `bookwyrm`, `generic`); nil detects it from the header.
    public var formatName: String?
    /// Record field → header name, for example `"title": "Titel"` (from `--map title=Titel`).
    ///
    /// Known fields: see ``ImportOptions/mappableFields``. A mapped field overrides the detected
    /// format's column for that field.
    public var columnMap: [String: String]
    /// A forced field delimiter (`,`, `\t`, `;`); nil sniffs it from the header line.
    public var delimiter: UInt8?
    /// The column that holds the list's ids (`import --key`), for a file whose format has none:
    /// rows of a newer export with the same value in it update the same records.
    public var keyColumn: String?
    /// The name of the list the files are exports of (`import --list`); nil: the format's
    /// (see ``ListIdentity/listName(format:path:explicit:)``).
    public var listName: String?

    /// Creates options.
    /// - Parameters:
    ///   - formatName: A forced format name, or nil to detect it.
    ///   - columnMap: Record field → header name.
    ///   - delimiter: A forced delimiter byte, or nil to sniff it.
    ///   - keyColumn: The header of the column holding the list's ids, or nil.
    public init(formatName: String? = nil, columnMap: [String: String] = [:], delimiter: UInt8? = nil,
                keyColumn: String? = nil) {
        self.formatName = formatName
        self.columnMap = columnMap
        self.delimiter = delimiter
        self.keyColumn = keyColumn
    }

    /// The field names `--map` accepts, in the order help texts list them.
    public static let mappableFields: [String] = [
        "title", "author", "isbn", "year", "publisher", "pages", "shelf", "rating", "added", "read", "binding",
        "review", "tags",
    ]
}

/// What the reader found out about a file before reading its rows.
public struct DetectedFormat: Sendable, Hashable {
    /// The format's name: `goodreads`, `storygraph`, `librarything`, `calibre`,
    /// `openlibrary-reading-log`, `openreads`, `bookwyrm` or `generic`.
    public let name: String
    /// A sentence for people, for example `Goodreads library export (31-column header)`.
    public let description: String
    /// The header row exactly as read (BOM removed).
    public let header: [String]
    /// The field delimiter (`,`, tab or `;`).
    public let delimiter: UInt8
    /// The text encoding: `utf-8`, `utf-8-bom`, `utf-16le-bom`, `utf-16be-bom`, or
    /// `latin1-repaired` once a field with invalid UTF-8 bytes was read (see
    /// ``CSVRecordReader/format``).
    public let encoding: String
    /// Which column gives which value (format, `--format`, `--map` and `--delimiter` resolved
    /// against the header), as a canonical text: two readings of a file give the same records
    /// exactly when their `reading`s are equal. The library keeps it per file, so importing a file
    /// again with other columns reads it again instead of calling it already imported.
    public let reading: String
    /// The column that holds the list's ids (``ListIdentity/idColumn(format:header:)``, or the
    /// column `--key` names); nil when the rows have none.
    public let entryColumn: Int?
    /// The list the file is an export of (``ListIdentity/listName(format:path:explicit:)``).
    public let list: String?

    /// Creates a detected format.
    public init(name: String, description: String, header: [String], delimiter: UInt8, encoding: String,
                reading: String = "", entryColumn: Int? = nil, list: String? = nil) {
        self.entryColumn = entryColumn
        self.list = list
        self.name = name
        self.description = description
        self.header = header
        self.delimiter = delimiter
        self.encoding = encoding
        self.reading = reading
    }

    /// The known format names, in detection order (`generic` last).
    public static let knownNames: [String] = [
        "goodreads", "storygraph", "librarything", "calibre", "openlibrary-reading-log", "openreads",
        "bookwyrm", "generic",
    ]
}

/// One batch of what a ``CSVRecordReader`` read: records, rejected rows and repair notes.
public struct IngestBatch: Sendable {
    /// The records read, in file order.
    public var records: [BookRecord]
    /// The rows that could not be imported, in file order.
    public var rejected: [RejectedRow]
    /// File-level repairs made: text changed so it could be read (renamed duplicate headers, re-read
    /// Latin-1 bytes, padding dropped, …), each once.
    public var repairs: [String]
    /// File-level notes on how the file was read where it did not say, and on what was left out or
    /// left empty (no author column, the order of day and month, extra fields, blank rows), each once.
    public var notes: [String]

    /// Creates a batch.
    public init(records: [BookRecord] = [], rejected: [RejectedRow] = [], repairs: [String] = [], notes: [String] = []) {
        self.records = records
        self.rejected = rejected
        self.repairs = repairs
        self.notes = notes
    }
}
