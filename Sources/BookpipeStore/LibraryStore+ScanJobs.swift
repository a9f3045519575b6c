import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// Stores a photo's scan job state (one row per photo, replaced at each change), through the
    /// library's writer: committed after every write submitted before it — so a job is never
    /// recorded complete before its detections are in the library.
    /// - Parameters:
    ///   - state: The job's state.
    ///   - runID: The run that changed it.
    /// - Throws: ``StoreError`` when the write fails.
    public func saveScanJob(_ state: ScanJobState, runID: Int64?) async throws(StoreError) {
        let milliseconds = state.jobTime.map { duration -> Int64 in
            duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
        try await perform("scan job of \(state.photo)") { db in
            try db.execute(sql: """
                INSERT OR REPLACE INTO scan_jobs (photo_hash, photo, provider, attempt, phase, job_id, books, failure,
                    job_ms, rate_limited, run_id, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [state.photoHash, state.photo, state.provider, state.attempt, state.phase.rawValue,
                                 state.jobID, state.books, state.failure, milliseconds, state.rateLimited, runID,
                                 Date().timeIntervalSince1970])
        }
    }

    /// The stored job state of a photo, by its content fingerprint.
    /// - Throws: ``StoreError`` when the read fails.
    public func scanJob(photoHash: String) throws(StoreError) -> ScanJobState? {
        try read("scan job") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM scan_jobs WHERE photo_hash = ?", arguments: [photoHash])
                .map(Self.scanJobState)
        }
    }

    /// Every stored scan job, in photo order.
    /// - Throws: ``StoreError`` when the read fails.
    public func scanJobs() throws(StoreError) -> [ScanJobState] {
        try read("scan jobs") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM scan_jobs ORDER BY photo").map(Self.scanJobState)
        }
    }

    /// Detections of a photo waiting for review (`needsReview`).
    /// - Throws: ``StoreError`` when the read fails.
    public func reviewCount(fileHash: String) throws(StoreError) -> Int {
        try read("review count") { db in
            guard let fileID = try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [fileHash])
            else { return 0 }
            let range = RecordKey.range(fileID: fileID)
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE key >= ? AND key < ? AND review_status = ?",
                                    arguments: [range.lower, range.upper, ReviewStatus.needsReview.rawValue]) ?? 0
        }
    }

    private static func scanJobState(_ row: Row) -> ScanJobState {
        let milliseconds: Int64? = row["job_ms"]
        return ScanJobState(photo: row["photo"], photoHash: row["photo_hash"], provider: row["provider"],
                            attempt: row["attempt"], phase: ScanJobState.Phase(rawValue: row["phase"]) ?? .failed,
                            jobID: row["job_id"], books: row["books"], failure: row["failure"],
                            jobTime: milliseconds.map { .milliseconds($0) }, rateLimited: row["rate_limited"])
    }

    /// Deletes every record read from a file, with what hangs on them (counts, search entries,
    /// enrichment times and changes, review actions and edits) and its rejected rows, through the
    /// library's writer in order with everything submitted before and after. The file stays
    /// registered, not complete. Used when a scan job's detections are replaced.
    /// - Returns: how many records were deleted.
    /// - Throws: ``StoreError`` when the write fails (nothing is deleted).
    @discardableResult
    public func discardRecords(fileHash: String) async throws(StoreError) -> Int {
        let cache = keyCache
        return try await perform("records of \(fileHash)") { db -> Int in
            try db.execute(sql: "DELETE FROM rejected_rows WHERE file_hash = ?", arguments: [fileHash])
            guard let fileID = try cache.fileID(fileHash)
                ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [fileHash]) else { return 0 }
            let range = RecordKey.range(fileID: fileID)
            let arguments: StatementArguments = [range.lower, range.upper]
            for table in ["record_enrichment", "record_changes", "review_actions", "record_edits", "record_search_stale",
                          "record_listing", "record_listing_stale"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE key >= ? AND key < ?", arguments: arguments)
            }
            try db.execute(sql: "DELETE FROM record_search WHERE rowid >= ? AND rowid < ?", arguments: arguments)
            try db.execute(sql: "DELETE FROM record_search_files WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM record_listing_files WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM records WHERE key >= ? AND key < ?", arguments: arguments)
            let deleted = db.changesCount
            try db.execute(sql: "DELETE FROM record_counts WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "UPDATE source_files SET completed_at = NULL WHERE id = ?", arguments: [fileID])
            return deleted
        }
    }
}
