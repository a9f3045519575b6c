import BookpipeCore
import Foundation

/// How a run ended.
public enum RunStatus: String, Sendable, Hashable, Codable {
    /// Still running (or killed: a run left `running` was interrupted without a chance to say so).
    case running
    /// Finished.
    case finished
    /// Stopped by Ctrl-C or SIGTERM.
    case interrupted
    /// Stopped by an error.
    case failed
}

/// One run as the library recorded it.
public struct RunEntry: Sendable, Hashable {
    /// The run's id.
    public var id: Int64
    /// The command line as typed.
    public var command: String
    /// The pipeline's name.
    public var pipeline: String
    /// When it started (ISO 8601, UTC).
    public var startedAt: String
    /// When it ended, when it did.
    public var finishedAt: String?
    /// How it ended (`running` when it never said: killed).
    public var status: RunStatus

    /// Creates an entry.
    public init(id: Int64, command: String, pipeline: String, startedAt: String, finishedAt: String?, status: RunStatus) {
        self.id = id
        self.command = command
        self.pipeline = pipeline
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.status = status
    }
}
