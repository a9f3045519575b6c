/// What a stage reads or writes, as a pipeline's steps and the library see it.
public enum StageData: String, Sendable, Hashable, CaseIterable {
    /// Files named on the command line (`$inputs`).
    case inputFiles = "input files"
    /// Photos sent to the vision backend.
    case photos
    /// Batches of records handed from step to step.
    case records
    /// Records committed to the library (a store step writes them; later steps rely on them).
    case storedRecords = "stored records"
    /// Enrichment outcomes, matches and candidates in the library.
    case enrichment
    /// Scan jobs' states in the library.
    case scanJobs = "scan jobs"
    /// Copies of photos in the library's managed photo folder.
    case managedPhotos = "managed photos"
    /// The library as a whole (a report reads all of it).
    case library
    /// Report files (HTML, JSON, CSV).
    case reportFiles = "report files"
    /// An export file (JSON, JSON Lines, CSV, Wingtip), as `bookpipe export` writes.
    case exportFile = "export file"
}

/// A run resource a stage takes from the command that runs it (``StageContext/resource(_:)``),
/// named so that a pipeline that needs one the command cannot give is refused before it runs.
public struct StageResource: Sendable, Hashable {
    /// What it is, as a person reads it (`the scan backend`).
    public var name: String
    /// How to give it (`--backend URL or $BOOKPIPE_SCAN_URL`).
    public var howToGive: String

    /// Creates a resource name.
    public init(_ name: String, howToGive: String) {
        self.name = name
        self.howToGive = howToGive
    }

    /// The vision backend and its settings, which `scan-photos` sends photos to.
    public static let scanBackend = StageResource("the scan backend", howToGive: "--backend URL, or set BOOKPIPE_SCAN_URL")
}

/// What a stage promises and needs: what it reads and writes, which parameter names the files it
/// reads, and the resources it takes from the command. ``StageRegistry`` checks a pipeline file
/// against the contracts of its stages, so a file that validates also runs.
public struct StageContract: Sendable {
    /// What it reads.
    public var reads: [StageData]
    /// What it writes.
    public var writes: [StageData]
    /// For a source: the parameter that names the files it reads (nil: it reads no files).
    public var filesParameter: String?
    /// The resources it needs from the command.
    public var resources: [StageResource]
    /// Whether it passes on only some of the records it is given (`filter`, `dedupe-records`). Rows
    /// read from files may not be dropped before they are stored: the store counts every row of a
    /// file to know it whole (resume, importing again, entries gone from a newer export).
    public var dropsRecords: Bool
    /// Whether it must see the batches one at a time, in order (what it passes on depends on the
    /// records before): its step cannot run with a `concurrency` above 1.
    public var isSequential: Bool

    /// Creates a contract; the default is a step that reads records and passes them all on.
    public init(reads: [StageData] = [.records], writes: [StageData] = [.records], filesParameter: String? = nil,
                resources: [StageResource] = [], dropsRecords: Bool = false, isSequential: Bool = false) {
        self.reads = reads
        self.writes = writes
        self.filesParameter = filesParameter
        self.resources = resources
        self.dropsRecords = dropsRecords
        self.isSequential = isSequential
    }

    /// Whether it needs the records it is given committed to the library by a step before it.
    public var needsStoredRecords: Bool { reads.contains(.storedRecords) }
    /// Whether it commits records to the library.
    public var storesRecords: Bool { writes.contains(.storedRecords) }
    /// Whether it writes files a person reads (a report, an export), so a pipeline that ends in it has an outcome
    /// even when it stores nothing.
    public var writesOutput: Bool { writes.contains(.reportFiles) || writes.contains(.exportFile) }
}
