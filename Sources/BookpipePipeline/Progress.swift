import BookpipeCore

/// Something a run reports while it works: the CLI draws a bar or prints JSON lines from these.
public enum ProgressEvent: Sendable, Hashable {
    /// A source started reading one input.
    case inputStarted(file: String, totalBytes: Int)
    /// A source advanced through an input.
    case inputAdvanced(file: String, bytesRead: Int, totalBytes: Int, rowsRead: Int)
    /// A step finished a batch of `records` records.
    case batchDone(step: String, records: Int)
    /// A message for the person running the command (format detected, file already imported, …).
    case message(String)
    /// Enrichment advanced: rows finished so far and what each source has done.
    case enrichmentAdvanced(EnrichmentProgress)
    /// A photo's scan job reached a stage (`preparing`, `uploading`, the backend's `looking`,
    /// `reading`, `enriching`, then `complete`, `failed` or `skipped`; `unsent` when the run stopped
    /// sending photos before it), with how far it is when known.
    case photoStage(photo: String, stage: String, progress: Double?)
    /// A scan run advanced: photos finished (completed, failed or skipped) of all, and books found.
    case scanAdvanced(photosDone: Int, photosTotal: Int, books: Int)
}

/// Where enrichment stands: rows finished and per-source counters.
public struct EnrichmentProgress: Sendable, Hashable {
    /// What one source has done so far.
    public typealias Source = SourceCounters

    /// Rows whose enrichment finished in this run.
    public var rowsDone: Int
    /// Rows expected in this run, when known.
    public var rowsExpected: Int?
    /// Per source, in chain order.
    public var sources: [Source]
    /// The plan's expected time of the whole run in seconds, when there is one: the ETA before
    /// enough rows have finished to measure the pace.
    public var expectedSeconds: Double?

    /// Creates a progress value.
    public init(rowsDone: Int, rowsExpected: Int?, sources: [Source], expectedSeconds: Double? = nil) {
        self.rowsDone = rowsDone
        self.rowsExpected = rowsExpected
        self.sources = sources
        self.expectedSeconds = expectedSeconds
    }
}

/// Receives progress events. Implementations must be cheap and must not block.
public protocol ProgressSink: Sendable {
    /// Receives one event.
    func emit(_ event: ProgressEvent)
}

/// A sink that drops every event.
public struct NullProgressSink: ProgressSink {
    /// Creates the sink.
    public init() {}
    /// Drops the event.
    public func emit(_ event: ProgressEvent) {}
}
