import BookpipeCore
import BookpipeIngest
import BookpipePipeline
import BookpipeStore
import Synchronization

/// What the built-in stages need from the command that runs them.
public struct ImportEnvironment: Sendable {
    /// The library.
    public var store: LibraryStore
    /// How to read CSV inputs (forced format, column map, delimiter).
    public var options: ImportOptions
    /// The run these writes belong to.
    public var runID: Int64?
    /// Collects what happened to each input file, for the summary.
    public var summary: ImportSummary
    /// Enrichment on or off, sources and their locations, shared counters.
    public var enrichment: EnrichmentSettings
    /// Files whose rows this run reads again with other columns: their stored records are replaced.
    public var rereadFiles: RereadFiles

    /// Creates an environment.
    public init(store: LibraryStore, options: ImportOptions = ImportOptions(), runID: Int64? = nil,
                summary: ImportSummary = ImportSummary(), enrichment: EnrichmentSettings = EnrichmentSettings()) {
        self.store = store
        self.options = options
        self.runID = runID
        self.summary = summary
        self.enrichment = enrichment
        self.rereadFiles = RereadFiles()
    }
}

/// The fingerprints of files a run reads again because their columns changed (`--map`,
/// `--format`, `--delimiter`): ``StoreRecords`` replaces their stored records instead of keeping them.
public final class RereadFiles: Sendable {
    private let hashes = Mutex<Set<String>>([])

    /// Creates an empty set.
    public init() {}

    /// Marks a file as read again.
    public func insert(_ fileHash: String) { _ = hashes.withLock { $0.insert(fileHash) } }

    /// True when no file is read again (the usual case).
    public var isEmpty: Bool { hashes.withLock { $0.isEmpty } }

    /// True when the file's records are read again.
    public func contains(_ fileHash: String) -> Bool { hashes.withLock { $0.contains(fileHash) } }
}

/// What happened to one input file.
public struct FileSummary: Sendable, Hashable {
    /// The path as given.
    public var path: String
    /// Content fingerprint.
    public var fileHash: String = ""
    /// The detected format's description.
    public var format: String = ""
    /// The detected encoding.
    public var encoding: String = ""
    /// Data rows read in this run (including rows skipped because they were stored before).
    public var rowsRead = 0
    /// Rows skipped because an earlier run stored them.
    public var rowsAlreadyStored = 0
    /// Rows rejected in this run, with reasons.
    public var rejected: [RejectedRow] = []
    /// Repairs made (encoding, duplicate headers, blank rows).
    public var repairs: [String] = []
    /// True when the file was read to its end.
    public var isReadCompletely = false
    /// True when an earlier run imported the whole file, so nothing was done.
    public var wasAlreadyImported = false
    /// True when the file was imported before with other columns and this run read it again,
    /// replacing its stored records.
    public var wasReread = false
    /// Which column gave which value in this run (``DetectedFormat/reading``).
    public var reading: String?
    /// Why the file could not be read at all.
    public var error: String?
}

/// Thread-safe collector of ``FileSummary`` values.
public final class ImportSummary: Sendable {
    private let files = Mutex<[FileSummary]>([])

    /// Creates an empty summary.
    public init() {}

    /// Every file seen so far, in order.
    public var snapshot: [FileSummary] { files.withLock { $0 } }

    func update(_ path: String, _ change: (inout FileSummary) -> Void) {
        files.withLock { files in
            if let index = files.lastIndex(where: { $0.path == path }) {
                change(&files[index])
            } else {
                var summary = FileSummary(path: path)
                change(&summary)
                files.append(summary)
            }
        }
    }
}
