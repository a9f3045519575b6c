import Foundation
import GRDB

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

extension LibraryStore {
    /// Records the start of a run.
    /// - Returns: the run's id.
    /// - Throws: ``StoreError`` when the write fails.
    public func beginRun(command: String, pipeline: String) async throws(StoreError) -> Int64 {
        try await perform("run") { db in
            try db.execute(sql: "INSERT INTO runs (command, pipeline, started_at, status) VALUES (?, ?, ?, 'running')",
                           arguments: [command, pipeline, Timestamp.now()])
            return db.lastInsertedRowID
        }
    }

    /// Records how a run ended, with a JSON summary.
    /// - Throws: ``StoreError`` when the write fails.
    public func finishRun(_ id: Int64, status: RunStatus, summary: String?) async throws(StoreError) {
        try await perform("run end") { db in
            try db.execute(sql: "UPDATE runs SET finished_at = ?, status = ?, summary = ? WHERE id = ?",
                           arguments: [Timestamp.now(), status.rawValue, summary, id])
        }
    }
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
}

extension LibraryStore {
    /// Every run, oldest first.
    /// - Throws: ``StoreError`` when the read fails.
    public func runs() throws(StoreError) -> [RunEntry] {
        try read("runs") { db in
            try Row.fetchAll(db, sql: "SELECT id, command, pipeline, started_at, finished_at, status FROM runs ORDER BY id")
                .map { row in
                    RunEntry(id: row["id"], command: row["command"], pipeline: row["pipeline"], startedAt: row["started_at"],
                             finishedAt: row["finished_at"], status: RunStatus(rawValue: row["status"]) ?? .running)
                }
        }
    }
}
