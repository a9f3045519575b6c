import BookpipeCore
import GRDB

/// What a library holds, counted for `bookpipe stats`: records by input format, processing status
/// and review state; the files imported; the runs.
public struct LibraryStatistics: Sendable, Hashable {
    /// One imported file with its counts.
    public struct File: Sendable, Hashable {
        /// The file as registered.
        public var info: SourceFileInfo
        /// Records stored from it.
        public var records: Int
        /// Rows of it that were rejected.
        public var rejected: Int
    }

    /// Records by detected input format (`goodreads`, `storygraph`, `scan`, …).
    public var byFormat: [String: Int] = [:]
    /// Records by processing status.
    public var byStatus: [RecordStatus: Int] = [:]
    /// Records by review state, under the export contract's names: `verified`, `needsReview`,
    /// `userEdited`, and `notRouted` for records no person or scan routing decided (CSV rows whose
    /// `reviewStatus` the export writes as null).
    public var byReviewState: [String: Int] = [:]
    /// Rejected rows.
    public var rejected = 0
    /// The imported files, in the order they were first seen.
    public var files: [File] = []
    /// Every run, oldest first.
    public var runs: [RunEntry] = []

    /// All records.
    public var records: Int { byStatus.values.reduce(0, +) }
}

extension LibraryStore {
    /// Counts what the library holds (one snapshot; reads every record once).
    /// - Throws: ``StoreError`` when the read fails.
    public func statistics() throws(StoreError) -> LibraryStatistics {
        let runs = try runs()
        return try read("statistics") { db in
            var statistics = LibraryStatistics(runs: runs)
            for row in try Row.fetchAll(db, sql: "SELECT status, sum(n) AS n FROM record_counts GROUP BY status") {
                if let status = RecordStatus(rawValue: row["status"]), let n: Int = row["n"], n > 0 {
                    statistics.byStatus[status] = n
                }
            }
            for row in try Row.fetchAll(db, sql: """
                SELECT o.format,
                       CASE WHEN o.scan = '' AND r.review_status = 'verified' THEN 'notRouted' ELSE r.review_status END
                           AS review,
                       count(*) AS n
                FROM records r JOIN record_origins o ON o.id = r.origin
                GROUP BY o.format, review
                """) {
                let n: Int = row["n"]
                statistics.byFormat[row["format"], default: 0] += n
                statistics.byReviewState[row["review"], default: 0] += n
            }
            statistics.rejected = try Int.fetchOne(db, sql: "SELECT count(*) FROM rejected_rows") ?? 0
            let recordsByFile = try Dictionary(uniqueKeysWithValues: Row.fetchAll(
                db, sql: "SELECT file_id, sum(n) AS n FROM record_counts GROUP BY file_id").map { row -> (Int64, Int) in
                    (row["file_id"], row["n"])
                })
            let rejectedByFile = try Dictionary(uniqueKeysWithValues: Row.fetchAll(
                db, sql: "SELECT file_hash, count(*) AS n FROM rejected_rows GROUP BY file_hash").map { row -> (String, Int) in
                    (row["file_hash"], row["n"])
                })
            for row in try Row.fetchAll(db, sql: "SELECT * FROM source_files WHERE path IS NOT NULL ORDER BY id") {
                let info = SourceFileInfo(hash: row["hash"], path: row["path"], format: row["format"],
                                          header: [], encoding: row["encoding"] ?? "", size: row["size"] ?? 0,
                                          rowsTotal: row["rows_total"], completedAt: row["completed_at"],
                                          reading: row["reading"])
                statistics.files.append(LibraryStatistics.File(
                    info: info, records: recordsByFile[row["id"]] ?? 0, rejected: rejectedByFile[info.hash] ?? 0))
            }
            return statistics
        }
    }
}
