/// An input that a source reads (a CSV export, a scan file): what it is and how it is read.
///
/// Sources describe each input once, in a ``PipelineEvent``-carried value, before its first
/// records; sinks use it to register the input (the library's `source_files` table) and reports
/// use it to name the input.
public struct InputFile: Sendable, Hashable {
    /// The path as given on the command line.
    public var path: String
    /// The content fingerprint: the first half of every record id read from it.
    public var fileHash: String
    /// The detected format's machine name (`goodreads`, `librarything`, `scan`, …).
    public var format: String
    /// The detected format as a person reads it (`Goodreads export (2020+ header)`).
    public var formatDescription: String
    /// The header's column names, as read.
    public var header: [String]
    /// The detected encoding (`UTF-8`, `UTF-16LE with BOM`, …).
    public var encoding: String
    /// The input's size in bytes.
    public var size: Int
    /// Which column gave which value (the format's reading); an input imported before with another
    /// reading is read again and its records replaced.
    public var reading: String?
    /// About how many data rows the input holds (estimated from its first batch), when known.
    public var estimatedRows: Int?
    /// The column holding the list's ids (see ``ListIdentity``), when the rows have one.
    public var entryColumn: Int?
    /// The list the input is an export of (``ListIdentity``); nil for inputs that are no list (scans).
    public var list: String?

    /// Creates an input description.
    public init(path: String, fileHash: String, format: String, formatDescription: String, header: [String] = [],
                encoding: String = "UTF-8", size: Int = 0, reading: String? = nil, estimatedRows: Int? = nil,
                entryColumn: Int? = nil, list: String? = nil) {
        self.entryColumn = entryColumn
        self.list = list
        self.path = path
        self.fileHash = fileHash
        self.format = format
        self.formatDescription = formatDescription
        self.header = header
        self.encoding = encoding
        self.size = size
        self.reading = reading
        self.estimatedRows = estimatedRows
    }
}

/// What a sink did with the rows of one input during a run, reported at the end of the run.
public struct InputStorage: Sendable, Hashable {
    /// The input's path as given.
    public var path: String
    /// The input's fingerprint.
    public var fileHash: String
    /// Records stored for the first time in this run.
    public var stored = 0
    /// Records skipped because an earlier run stored them.
    public var alreadyStored = 0
    /// Records that replaced stored versions (the input was read with other columns).
    public var replaced = 0
    /// Rejected rows stored in this run.
    public var rejectedStored = 0
    /// True when an earlier run had imported every row, so nothing new was stored.
    public var wasAlreadyImported = false
    /// For an input imported before: the path it was imported from then (the same content).
    public var earlierPath: String?
    /// For an input imported before: its data rows as recorded then.
    public var earlierRows: Int?
    /// True when the input was imported before with other columns and this run read it again.
    public var wasReread = false
    /// True when every data row of the input is now stored or rejected.
    public var isComplete = false
    /// A newer export too large for its writes to wait until it was read whole: whether it is
    /// older than the list in the library was not checked.
    public var olderCheckSkipped = false
    /// Stored records that still wait for enrichment, sent on to be enriched in this run.
    public var unfinishedResent = 0
    /// The list the input is an export of (see ``ListIdentity``).
    public var list: String?
    /// True when the library held entries of the list from other files: rows were compared with
    /// them, and the counts below say what the newer export did.
    public var isReimport = false
    /// Re-import: rows that matched an entry and changed it.
    public var changed = 0
    /// Re-import: of the changed entries, how many changed each field.
    public var changedFields: [String: Int] = [:]
    /// Re-import: rows that matched an entry and changed nothing.
    public var unchanged = 0
    /// Re-import: entries of the list the file no longer holds (kept and marked, unless pruned).
    public var gone = 0
    /// Re-import: of those, the ones removed (`--prune`).
    public var pruned = 0
    /// Re-import: `--prune` left them, because more than half the list would go (needs `--yes`).
    public var pruneRefused = false
    /// Re-import: rows were rejected, so which entries the export no longer holds is not known
    /// (none is marked gone or pruned).
    public var goneUnknown = false
    /// Re-import: fields a person had edited that the file gives another value (the edit kept).
    public var editsKept = 0
    /// Rows whose list id an earlier row of the same file has (both kept, with a finding).
    public var duplicateIDs = 0
    /// True when nothing was written (`import --dry-run`): the counts say what an import would do.
    public var isDryRun = false

    /// Creates an empty tally for an input.
    public init(path: String, fileHash: String) {
        self.path = path
        self.fileHash = fileHash
    }
}
