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
