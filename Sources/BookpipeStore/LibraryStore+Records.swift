import BookpipeCore
import Foundation
import GRDB
internal import GRDBSQLite

/// What the library knows about one input file.
public struct SourceFileInfo: Sendable, Hashable {
    /// Content fingerprint (the first half of every record id).
    public var hash: String
    /// Path as first imported.
    public var path: String
    /// Detected format name.
    public var format: String
    /// Column names.
    public var header: [String]
    /// Detected encoding.
    public var encoding: String
    /// Size in bytes.
    public var size: Int
    /// Data rows in the file, once it was read to the end.
    public var rowsTotal: Int?
    /// When every row was stored or rejected.
    public var completedAt: String?

    /// Creates a description of a source file.
    public init(hash: String, path: String, format: String, header: [String], encoding: String, size: Int,
                rowsTotal: Int? = nil, completedAt: String? = nil) {
        self.hash = hash
        self.path = path
        self.format = format
        self.header = header
        self.encoding = encoding
        self.size = size
        self.rowsTotal = rowsTotal
        self.completedAt = completedAt
    }

    /// True once every row of the file is in the library (stored or rejected).
    public var isComplete: Bool { completedAt != nil }
}

/// A row that could not be read as a record, kept with its reason so the report can show it.
public struct StoredRejection: Sendable, Hashable {
    /// File fingerprint.
    public var fileHash: String
    /// File path.
    public var file: String
    /// 1-based physical line where the row starts.
    public var line: Int
    /// 1-based data row, when known.
    public var row: Int?
    /// 1-based column, when known.
    public var column: Int?
    /// What is wrong.
    public var reason: String
    /// The row's text (truncated).
    public var rawText: String

    /// Creates a rejection.
    public init(fileHash: String, file: String, line: Int, row: Int?, column: Int?, reason: String, rawText: String) {
        self.fileHash = fileHash
        self.file = file
        self.line = line
        self.row = row
        self.column = column
        self.reason = reason
        self.rawText = rawText
    }
}

/// A set of row numbers, as a bitmap (a million rows cost 125 KB).
public struct RowSet: Sendable, Hashable {
    private var words: [UInt64] = []
    /// How many rows are in the set.
    public private(set) var count = 0

    /// Creates an empty set.
    public init() {}

    /// Adds a row number (≥ 0).
    public mutating func insert(_ row: Int) {
        guard row >= 0 else { return }
        let word = row >> 6
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word - words.count + 1)) }
        let bit = UInt64(1) << UInt64(row & 63)
        if words[word] & bit == 0 {
            words[word] |= bit
            count += 1
        }
    }

    /// True when the row is in the set.
    public func contains(_ row: Int) -> Bool {
        guard row >= 0, row >> 6 < words.count else { return false }
        return words[row >> 6] & (UInt64(1) << UInt64(row & 63)) != 0
    }
}

extension LibraryStore {
    /// The library's entry for a file fingerprint, if the file was seen before.
    /// - Throws: ``StoreError`` when the read fails.
    public func sourceFile(hash: String) throws(StoreError) -> SourceFileInfo? {
        try read("source file") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM source_files WHERE hash = ?", arguments: [hash]) else {
                return nil
            }
            return SourceFileInfo(hash: row["hash"], path: row["path"], format: row["format"],
                                  header: JSONText.decodeArray(row["header"]), encoding: row["encoding"],
                                  size: row["size"], rowsTotal: row["rows_total"], completedAt: row["completed_at"])
        }
    }

    /// Records a source file (first sight) or refreshes its path and format; never clears completion.
    /// - Throws: ``StoreError`` when the write fails.
    public func registerSourceFile(_ info: SourceFileInfo, runID: Int64?) throws(StoreError) {
        try write("source file \(info.path)") { db in
            try db.execute(sql: """
                INSERT INTO source_files (hash, path, format, header, encoding, size, first_run_id)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(hash) DO UPDATE SET path = excluded.path, format = excluded.format,
                    header = excluded.header, encoding = excluded.encoding
                """, arguments: [info.hash, info.path, info.format, JSONText.array(info.header), info.encoding,
                                 info.size, runID])
        }
    }

    /// Records that a source file was read to its end with `rowsTotal` data rows, and marks it
    /// complete when every one of them is stored or rejected.
    /// - Returns: true when the file is now complete.
    /// - Throws: ``StoreError`` when the write fails.
    @discardableResult
    public func finishSourceFile(hash: String, rowsTotal: Int) throws(StoreError) -> Bool {
        try write("source file completion") { db in
            let stored = try Int.fetchOne(db, sql: "SELECT count(*) FROM records WHERE file_hash = ?", arguments: [hash]) ?? 0
            let rejected = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM rejected_rows WHERE file_hash = ? AND (row IS NULL OR row NOT IN
                    (SELECT row FROM records WHERE file_hash = ?))
                """, arguments: [hash, hash]) ?? 0
            let isComplete = stored + rejected >= rowsTotal
            try db.execute(sql: """
                UPDATE source_files SET rows_total = ?,
                    completed_at = CASE WHEN ? THEN coalesce(completed_at, ?) ELSE NULL END
                WHERE hash = ?
                """, arguments: [rowsTotal, isComplete, Timestamp.now(), hash])
            return isComplete
        }
    }

    /// The data rows of a file that are already in the library (stored or rejected).
    /// - Throws: ``StoreError`` when the read fails.
    public func finishedRows(fileHash: String) throws(StoreError) -> RowSet {
        try read("stored rows") { db in
            var rows = RowSet()
            let cursor = try Int.fetchCursor(db, sql: """
                SELECT row FROM records WHERE file_hash = ?
                UNION ALL SELECT row FROM rejected_rows WHERE file_hash = ? AND row IS NOT NULL
                """, arguments: [fileHash, fileHash])
            while let row = try cursor.next() { rows.insert(row) }
            return rows
        }
    }

    /// Stores rows that could not be read as records (idempotent: a row rejected twice is kept once).
    /// - Throws: ``StoreError`` when the write fails (nothing of this call is written).
    public func insertRejections(_ rejections: [StoredRejection], runID: Int64?) throws(StoreError) {
        guard !rejections.isEmpty else { return }
        try write("rejected rows") { db in
            let statement = try db.cachedStatement(sql: """
                INSERT INTO rejected_rows (file_hash, line, row, column_number, file, reason, raw_text, run_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """)
            for rejection in rejections {
                try statement.execute(arguments: [rejection.fileHash, rejection.line, rejection.row, rejection.column,
                                                  rejection.file, rejection.reason, rejection.rawText, runID])
            }
        }
    }

    /// The rejected rows, in file and line order.
    /// - Throws: ``StoreError`` when the read fails.
    public func rejections() throws(StoreError) -> [StoredRejection] {
        try read("rejected rows") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM rejected_rows ORDER BY file, line").map { row in
                StoredRejection(fileHash: row["file_hash"], file: row["file"], line: row["line"], row: row["row"],
                                column: row["column_number"], reason: row["reason"], rawText: row["raw_text"])
            }
        }
    }

    /// Inserts new records in one transaction. A record whose id is already stored is left as it
    /// is (idempotent: a resumed import never duplicates or overwrites a row).
    /// - Returns: how many records were new.
    /// - Throws: ``StoreError`` when the write fails; the transaction is rolled back and nothing
    ///   of the batch is stored.
    @discardableResult
    public func insert(_ records: [BookRecord], runID: Int64? = nil) throws(StoreError) -> Int {
        guard !records.isEmpty else { return 0 }
        return try write("\(records.count) records") { db in
            guard let connection = db.sqliteConnection else { return 0 }
            var statement: OpaquePointer?
            let sql = """
                INSERT INTO records (id, file_hash, row, line, file, format, scan, raw, title, authors, raw_isbns,
                    year, publisher, page_count, shelf, rating, date_added, date_read, detection, normalized,
                    search_title, title_key, isbn13, enrichment, status, review_status, findings, run_id, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO NOTHING
                """
            guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw StoreError.writeFailed(path: path, what: "records",
                                             reason: String(cString: sqlite3_errmsg(connection)))
            }
            defer { sqlite3_finalize(statement) }
            let now = Timestamp.now()
            var inserted = 0
            for record in records {
                let binder = Binder(statement: statement)
                binder.text(1, record.id)
                binder.text(2, record.origin.fileHash)
                binder.int(3, record.origin.row)
                binder.int(4, record.origin.line)
                binder.text(5, record.origin.file)
                binder.text(6, record.origin.format)
                binder.text(7, record.origin.scan)
                binder.text(8, JSONText.array(record.origin.rawFields))
                binder.text(9, record.title)
                binder.text(10, JSONText.array(record.authors))
                binder.text(11, JSONText.array(record.rawISBNs))
                binder.int(12, record.year)
                binder.text(13, record.publisher)
                binder.int(14, record.pageCount)
                binder.text(15, record.shelf)
                binder.double(16, record.rating)
                binder.text(17, record.dateAdded)
                binder.text(18, record.dateRead)
                binder.text(19, record.scan.map(RecordCoding.encode))
                binder.text(20, record.normalized.map(RecordCoding.encodeNormalized))
                binder.text(21, record.normalized?.searchTitle)
                binder.text(22, record.normalized?.titleKey)
                binder.text(23, record.normalized?.isbn13)
                binder.text(24, record.enrichment.map(RecordCoding.encode))
                binder.text(25, record.status.rawValue)
                binder.text(26, record.reviewStatus.rawValue)
                binder.text(27, record.findings.isEmpty ? nil : RecordCoding.encodeFindings(record.findings))
                binder.int64(28, runID)
                binder.text(29, now)
                let result = sqlite3_step(statement)
                guard result == SQLITE_DONE else {
                    throw StoreError.writeFailed(path: path, what: "record \(record.origin.file) row \(record.origin.row)",
                                                 reason: String(cString: sqlite3_errmsg(connection)))
                }
                inserted += Int(sqlite3_changes(connection))
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            return inserted
        }
    }

    /// Replaces stored records with these versions (same ids), keeping fields a person edited.
    /// Used by stages that revisit stored records (enrichment, review).
    /// - Throws: ``StoreError`` when the write fails; nothing of the batch is written.
    public func update(_ records: [BookRecord], runID: Int64? = nil) throws(StoreError) {
        guard !records.isEmpty else { return }
        try write("\(records.count) record updates") { db in
            let statement = try db.cachedStatement(sql: """
                UPDATE records SET title = ?, authors = ?, year = ?, detection = ?, normalized = ?, search_title = ?,
                    title_key = ?, isbn13 = ?, enrichment = ?, status = ?, review_status = ?, findings = ?,
                    run_id = coalesce(?, run_id), updated_at = ?
                WHERE id = ?
                """)
            let now = Timestamp.now()
            for record in records {
                try statement.execute(arguments: [
                    record.title, JSONText.array(record.authors), record.year,
                    record.scan.map(RecordCoding.encode), record.normalized.map(RecordCoding.encodeNormalized),
                    record.normalized?.searchTitle, record.normalized?.titleKey, record.normalized?.isbn13,
                    record.enrichment.map(RecordCoding.encode), record.status.rawValue, record.reviewStatus.rawValue,
                    record.findings.isEmpty ? nil : RecordCoding.encodeFindings(record.findings), runID, now, record.id,
                ])
            }
            try upsertMatchedWorks(records, db: db, now: now)
        }
    }

    /// Calls `body` with every record, in file order then row order, reading in one snapshot.
    /// - Throws: ``StoreError`` when the read fails or a stored value is unreadable; `body`'s error.
    public func forEachRecord(where status: RecordStatus? = nil,
                              _ body: (BookRecord) throws -> Void) throws {
        try pool.read { db in
            let sql = "SELECT * FROM records" + (status == nil ? "" : " WHERE status = ?")
                + " ORDER BY file, file_hash, row"
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: status.map { [$0.rawValue] } ?? [])
            while let row = try cursor.next() {
                try body(try RecordCoding.decode(row, path: path))
            }
        }
    }

    /// The records with these ids (missing ids are skipped).
    /// - Throws: ``StoreError`` when the read fails.
    public func records(ids: [String]) throws(StoreError) -> [BookRecord] {
        try read("records") { db in
            try ids.compactMap { id in
                try Row.fetchOne(db, sql: "SELECT * FROM records WHERE id = ?", arguments: [id])
                    .map { try RecordCoding.decode($0, path: path) }
            }
        }
    }

    /// Counts of records by status, and rejected rows.
    /// - Throws: ``StoreError`` when the read fails.
    public func counts() throws(StoreError) -> LibraryCounts {
        try read("counts") { db in
            var counts = LibraryCounts()
            for row in try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM records GROUP BY status") {
                if let status = RecordStatus(rawValue: row["status"]) { counts.byStatus[status] = row["n"] }
            }
            counts.rejected = try Int.fetchOne(db, sql: "SELECT count(*) FROM rejected_rows") ?? 0
            counts.duplicateIDs = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM (SELECT file_hash, row FROM records GROUP BY file_hash, row HAVING count(*) > 1)
                """) ?? 0
            return counts
        }
    }
}

/// How many records the library holds, by status.
public struct LibraryCounts: Sendable, Hashable {
    /// Records by status.
    public var byStatus: [RecordStatus: Int] = [:]
    /// Rejected rows.
    public var rejected = 0
    /// (file, row) pairs stored more than once (always 0 unless the library is damaged).
    public var duplicateIDs = 0
    /// All records.
    public var records: Int { byStatus.values.reduce(0, +) }
}

/// Binds values to a prepared statement (SQLITE_TRANSIENT: SQLite copies the bytes).
private struct Binder {
    let statement: OpaquePointer
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func text(_ index: Int32, _ value: String?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        var copy = value
        copy.withUTF8 { buffer in
            _ = buffer.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    sqlite3_bind_text(statement, index, base, Int32(chars.count), Self.transient)
                } else {
                    sqlite3_bind_text(statement, index, "", 0, Self.transient)
                }
            }
        }
    }

    func int(_ index: Int32, _ value: Int?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_int64(statement, index, Int64(value))
    }

    func int64(_ index: Int32, _ value: Int64?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_int64(statement, index, value)
    }

    func double(_ index: Int32, _ value: Double?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_double(statement, index, value)
    }
}

/// ISO 8601 timestamps in UTC.
enum Timestamp {
    static func now() -> String {
        Date.now.formatted(.iso8601)
    }
}
