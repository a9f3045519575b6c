import BookpipeCore
import BookpipeLibrary
import GRDB

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
