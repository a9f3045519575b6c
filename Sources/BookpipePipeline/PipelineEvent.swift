import BookpipeCore

/// A fact about a run that travels with the records: sources announce inputs and rejected rows,
/// sinks report what they stored. Events flow through the steps in order with the batches (a step
/// may act on them, see ``Stage/observe(_:in:)``), and every event ends up in the ``RunReport``
/// that ``PipelineRunner/run(_:context:)`` returns — the summary a command prints is made from
/// these and nothing else.
public enum PipelineEvent: Sendable, Hashable {
    /// A source started reading an input; its records follow.
    case inputStarted(InputFile)
    /// Rows of an input that could not be read as records, with their reasons.
    case rowsRejected([RejectedRow])
    /// Repairs a source made while reading an input (encoding, duplicate headers, …).
    case inputRepaired(path: String, repairs: [String])
    /// Notes a source made on an input: how it read what the input did not say (the order of day
    /// and month), and what it left out or empty (no author column, extra fields, blank rows).
    case inputNoted(path: String, notes: [String])
    /// A source read an input to its end: `rowsRead` data rows (records and rejected rows).
    case inputFinished(InputFile, rowsRead: Int)
    /// An input could not be read at all; the source went on with the next one.
    case inputFailed(path: String, reason: String)
    /// What a sink stored of one input (reported once per input, at the end of the run).
    case inputStored(InputStorage)
    /// A message for the person running the command.
    case note(String)
    /// What was stored of an input is to be removed: its records are read again (a scan job
    /// sent once more) or not at all (a photo that failed). Sinks delete what they stored of it.
    case inputDiscarded(InputFile, reason: String)
    /// A photo's scan job changed phase (`bookpipe scan`); the scan-job sink stores it.
    case scanJob(ScanJobState)
    /// Records a step looked up in this run (enrichment), by the status each ended with.
    case recordsLookedUp([RecordStatus: Int])
    /// Records a step left as they were, for a later run, and why.
    case recordsLeft(Int, because: RecordsLeftReason)
    /// Stored records a step changed: records by field (a record counts once per field), and
    /// matches changed by kind (`moved`, `lost`, `found`, `repaired`, …).
    case recordsChanged(byField: [String: Int], matchesByKind: [String: Int])
    /// What each source of an enrichment chain did in the run, in chain order (told at its end).
    case sourcesUsed([SourceOutcome])
    /// How a scan ended for one photo or named input, or what its provider did.
    case scanPhoto(ScanPhotoEvent)
    /// Findings a step counted in a batch's records, by input file and code (`import --dry-run`).
    case findingsCounted([FindingCount])
}

/// How many records of one input file carry one finding code (``PipelineEvent/findingsCounted(_:)``).
public struct FindingCount: Sendable, Hashable {
    /// The input file as named.
    public var file: String
    /// The finding's code (`isbn.invalid-checksum`, …).
    public var code: String
    /// Its severity.
    public var severity: Finding.Severity
    /// How many records carry it.
    public var count: Int

    /// Creates a value.
    public init(file: String, code: String, severity: Finding.Severity, count: Int) {
        self.file = file
        self.code = code
        self.severity = severity
        self.count = count
    }
}

/// What a scan run tells of its photos (``PipelineEvent/scanPhoto(_:)``); the run's summary adds
/// these up, so that the photos' outcomes add up to the photos found.
public enum ScanPhotoEvent: Sendable, Hashable {
    /// Photos found in the named files and folders.
    case found(photos: Int)
    /// A photo's job completed with `provider`: its books, the job's time, the photo's fingerprint.
    case completed(provider: String, books: Int, jobTime: Duration, photoHash: String)
    /// A photo an earlier run completed (the same content): skipped.
    case skippedEarlierRun(photo: String)
    /// A photo with the same content as an earlier photo of this run: skipped.
    case sameContent(photo: String)
    /// A photo that failed for good, with the message for people; `sent` says whether it reached
    /// the backend (otherwise it could not be read or prepared).
    case failed(photo: String, message: String, sent: Bool)
    /// A photo left unsent because the run stopped sending (the same command sends it later).
    case unsent(photo: String)
    /// A named file or folder that could not be read at all.
    case unreadableInput(path: String, message: String)
    /// A folder inside a named folder: not searched.
    case folderNotSearched(path: String, message: String)
    /// The backend answered 429 to an attempt with `provider`.
    case rateLimited(provider: String)
    /// An attempt with `provider` failed (the photo may be sent again with the fallback).
    case attemptFailed(provider: String)
    /// The run stopped sending photos: the backend could not be reached for `photosInARow`
    /// photos in a row, the last for `cause`.
    case stoppedSending(backendURL: String, cause: String, photosInARow: Int)
}

/// Why a step left records as they were (``PipelineEvent/recordsLeft(_:because:)``).
public enum RecordsLeftReason: String, Sendable, Hashable {
    /// The run's deadline passed (`--until`, `--max-duration`): the next run continues.
    case deadline
    /// No source of the chain could be reached any more.
    case noSourceReachable
}

/// What one source of an enrichment chain did in a run (``PipelineEvent/sourcesUsed(_:)``).
public struct SourceOutcome: Sendable, Hashable {
    /// Its requests, cache hits, retries, 429s, failed lookups and latency.
    public var counters: SourceCounters
    /// True for a source asked over the network (Open Library, Google Books), false for the local catalogue.
    public var isRemote: Bool
    /// Set when the source was given up in the run because its server could not be reached.
    public var unreachable: Unreachable?

    /// Why a source was given up.
    public struct Unreachable: Sendable, Hashable {
        /// The host (`openlibrary.org`, `127.0.0.1:8080`).
        public var host: String
        /// The last failed lookup's cause (`connection refused`, `name not resolved`, …).
        public var cause: String
        /// Lookups in a row that could not reach it.
        public var lookupsInARow: Int

        /// Creates a value.
        public init(host: String, cause: String, lookupsInARow: Int) {
            self.host = host
            self.cause = cause
            self.lookupsInARow = lookupsInARow
        }
    }

    /// Creates a value.
    public init(counters: SourceCounters, isRemote: Bool, unreachable: Unreachable? = nil) {
        self.counters = counters
        self.isRemote = isRemote
        self.unreachable = unreachable
    }
}

/// What one run did: records per step and every ``PipelineEvent``, in the order they arrived.
public struct RunReport: Sendable {
    /// Records produced, by step name.
    public var recordsByStep: [String: Int] = [:]
    /// Every event of the run.
    public var events: [PipelineEvent] = []

    /// Creates an empty report.
    public init() {}

    /// True when some step stored what it read (a pipeline without a store step never says rows
    /// were imported).
    public var hasStorage: Bool {
        events.contains { if case .inputStored = $0 { return true } else { return false } }
    }
}

/// How a run ended, as told to every step's ``Stage/end(_:in:)``.
public enum RunOutcome: Sendable {
    /// Every step finished.
    case finished
    /// The run was cancelled (Ctrl-C, SIGTERM).
    case cancelled
    /// A step or the source failed.
    case failed(String)
}
