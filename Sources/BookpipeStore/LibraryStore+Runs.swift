import Foundation
import GRDB

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
