import BookpipeEnrichment
/// A failure of the local catalogue: its database, or a dump file as a whole.
///
/// A bad *line* in a dump is not an error: it is skipped and reported in
/// ``CatalogImportSummary/problems``. These cases stop one operation; the catalogue keeps every
/// batch committed before.
public enum CatalogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The catalogue file could not be opened (or is not a catalogue).
    case cannotOpen(path: String, reason: String)
    /// The catalogue's schema could not be brought up to date (the file is unchanged).
    case migrationFailed(path: String, reason: String)
    /// The SQLite library bookpipe runs with was built without FTS5.
    case fullTextSearchUnavailable(path: String)
    /// A dump file does not exist.
    case dumpNotFound(path: String)
    /// A dump file exists but cannot be read (permissions, a folder, a broken gzip stream).
    case dumpUnreadable(path: String, reason: String)
    /// A file is not an Open Library dump (`type \t key \t revision \t last_modified \t JSON`).
    case notADump(path: String, reason: String)
    /// A write failed; its transaction was rolled back.
    case writeFailed(path: String, what: String, reason: String)
    /// A read failed.
    case readFailed(path: String, what: String, reason: String)
    /// The calling task was cancelled during an import. Every batch committed before is kept,
    /// and importing the same file again continues.
    case interrupted(dump: String, linesCommitted: Int)

    /// A message for people: where, what, and what to do next.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            return "\(path): cannot open the catalogue: \(reason). Check the path and permissions, or pass another --catalog."
        case .migrationFailed(let path, let reason):
            return "\(path): cannot update the catalogue's schema: \(reason). The file was left unchanged."
        case .fullTextSearchUnavailable(let path):
            return "\(path): the system SQLite library has no FTS5 full-text search, which the catalogue needs. "
                + "Install a libsqlite3 built with FTS5 (Debian's libsqlite3-0 is)."
        case .dumpNotFound(let path):
            return "\(path): no such file. Pass an Open Library dump (.txt or .txt.gz)."
        case .dumpUnreadable(let path, let reason):
            return "\(path): cannot read the dump: \(reason)."
        case .notADump(let path, let reason):
            return "\(path): not an Open Library dump: \(reason). Dump lines are "
                + "type<TAB>key<TAB>revision<TAB>last_modified<TAB>JSON (see https://openlibrary.org/developers/dumps)."
        case .writeFailed(let path, let what, let reason):
            return "\(path): could not store \(what): \(reason). Nothing of this batch was written; batches stored before are kept."
        case .readFailed(let path, let what, let reason):
            return "\(path): could not read \(what): \(reason)."
        case .interrupted(let dump, let lines):
            return "\(dump): import interrupted after \(lines) lines were stored; run the same command again to finish it."
        }
    }
}
