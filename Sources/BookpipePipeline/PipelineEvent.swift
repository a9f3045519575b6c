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
