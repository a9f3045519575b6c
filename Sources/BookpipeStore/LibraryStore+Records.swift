import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB
internal import GRDBSQLite
import Synchronization

/// SQLITE_TRANSIENT: SQLite copies the bytes before the call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Record keys: `source_files.id << 32 | row`.
enum RecordKey {
    static let rowBits: Int64 = 32
    static let rowMask: Int64 = 0xFFFF_FFFF

    static func make(fileID: Int64, row: Int) -> Int64 { fileID << rowBits | (Int64(row) & rowMask) }
    /// The keys of one file: `lower..<upper`.
    static func range(fileID: Int64) -> (lower: Int64, upper: Int64) { (fileID << rowBits, (fileID + 1) << rowBits) }
    /// `<hash>:<row>` → (hash, row), or nil when the id is not one.
    static func parse(id: String) -> (hash: String, row: Int)? {
        guard let colon = id.lastIndex(of: ":"), let row = Int(id[id.index(after: colon)...]),
              row >= 0, row <= Int(rowMask) else { return nil }
        return (String(id[..<colon]), row)
    }
}

/// Small, append-only lookup tables kept in memory: file hash ↔ `source_files.id` and origin →
/// `record_origins.id`. Entries are added only for rows known to be committed (ids never change
/// and rows are never deleted), so the cache is never wrong.
final class KeyCache: Sendable {
    struct Tables: Sendable {
        var fileIDs: [String: Int64] = [:]
        var originIDs: [OriginKey: Int64] = [:]

        mutating func merge(_ other: Tables) {
            fileIDs.merge(other.fileIDs) { old, _ in old }
            originIDs.merge(other.originIDs) { old, _ in old }
        }
    }

    private let tables = Mutex(Tables())

    func fileID(_ hash: String) -> Int64? { tables.withLock { $0.fileIDs[hash] } }

    /// The id of a stored file: from the cache, else read with a statement prepared once per
    /// connection (a process that only enriches has an empty cache, and asks for every record it
    /// reads and saves). Nothing is learned here: the caller's transaction may not be committed.
    func fileID(_ hash: String, reading db: Database) throws -> Int64? {
        if let id = fileID(hash) { return id }
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM source_files WHERE hash = ?"), arguments: [hash])
    }
    func originID(_ origin: OriginKey) -> Int64? { tables.withLock { $0.originIDs[origin] } }
    func merge(_ learned: Tables) {
        guard !learned.fileIDs.isEmpty || !learned.originIDs.isEmpty else { return }
        tables.withLock { $0.merge(learned) }
    }

    /// The id of a file, created when `create` is set and the file is new. New ids are noted in
    /// `learned`, for ``merge(_:)`` once the transaction has committed.
    func fileID(_ hash: String, db: Database, create: Bool, learned: inout Tables) throws -> Int64? {
        if let id = fileID(hash) ?? learned.fileIDs[hash] { return id }
        if let id = try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash]) {
            learned.fileIDs[hash] = id
            return id
        }
        guard create else { return nil }
        try db.execute(sql: "INSERT INTO source_files (hash) VALUES (?)", arguments: [hash])
        let id = db.lastInsertedRowID
        learned.fileIDs[hash] = id
        return id
    }

    /// The id of an origin (created if new), in the caller's write transaction.
    func originID(_ origin: OriginKey, fileID: Int64, db: Database, learned: inout Tables) throws -> Int64 {
        if let id = originID(origin) ?? learned.originIDs[origin] { return id }
        if let id = try Int64.fetchOne(db, sql: """
            SELECT id FROM record_origins WHERE file_id = ? AND path = ? AND format = ? AND scan = ?
            """, arguments: [fileID, origin.path, origin.format, origin.scan]) {
            learned.originIDs[origin] = id
            return id
        }
        try db.execute(sql: "INSERT INTO record_origins (file_id, path, format, scan) VALUES (?, ?, ?, ?)",
                       arguments: [fileID, origin.path, origin.format, origin.scan])
        let id = db.lastInsertedRowID
        learned.originIDs[origin] = id
        return id
    }
}

extension LibraryStore {
    /// The library's entry for a file fingerprint, if the file was registered before.
    /// - Throws: ``StoreError`` when the read fails.
    public func sourceFile(hash: String) throws(StoreError) -> SourceFileInfo? {
        try read("source file") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM source_files WHERE hash = ? AND path IS NOT NULL",
                             arguments: [hash]).map(Self.sourceFileInfo)
        }
    }

    /// Every registered source file, in the order they were first seen.
    /// - Throws: ``StoreError`` when the read fails.
    public func sourceFiles() throws(StoreError) -> [SourceFileInfo] {
        try read("source files") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM source_files WHERE path IS NOT NULL ORDER BY id").map(Self.sourceFileInfo)
        }
    }

    private static func sourceFileInfo(_ row: Row) -> SourceFileInfo {
        SourceFileInfo(hash: row["hash"], path: row["path"], format: row["format"],
                       header: JSONText.decodeArray(row["header"]), encoding: row["encoding"] ?? "",
                       size: row["size"] ?? 0, rowsTotal: row["rows_total"], completedAt: row["completed_at"],
                       reading: row["reading"])
    }

    /// Records a source file (first sight) or refreshes its path and format; never clears completion
    /// and never replaces a known reading (``finishSourceFile(hash:rowsTotal:reading:)`` does, once
    /// every row was stored with the new one).
    /// - Throws: ``StoreError`` when the write fails.
    public func registerSourceFile(_ info: SourceFileInfo, runID: Int64?) async throws(StoreError) {
        try await perform("source file \(info.path)") { db in
            try db.execute(sql: """
                INSERT INTO source_files (hash, path, format, header, encoding, size, first_run_id, reading)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(hash) DO UPDATE SET path = excluded.path, format = excluded.format,
                    header = excluded.header, encoding = excluded.encoding, size = coalesce(size, excluded.size),
                    first_run_id = coalesce(first_run_id, excluded.first_run_id),
                    reading = coalesce(reading, excluded.reading)
                """, arguments: [info.hash, info.path, info.format, JSONText.array(info.header), info.encoding,
                                 info.size, runID, info.reading])
        }
    }

    /// Forgets the rejected rows of a file (before it is read again with other columns).
    /// - Throws: ``StoreError`` when the write fails.
    public func deleteRejections(fileHash: String) async throws(StoreError) {
        try await perform("rejected rows") { db in
            try db.execute(sql: "DELETE FROM rejected_rows WHERE file_hash = ?", arguments: [fileHash])
        }
    }

    /// Records that a source file was read to its end with `rowsTotal` data rows, and marks it
    /// complete when every one of them is stored or rejected; then `reading`, when given, becomes
    /// the file's reading. Runs through the library's writer, after everything submitted before.
    /// - Returns: true when the file is now complete.
    /// - Throws: ``StoreError`` when the write fails.
    @discardableResult
    public func finishSourceFile(hash: String, rowsTotal: Int, reading: String? = nil,
                                 matchedRows: Int = 0) async throws(StoreError) -> Bool {
        return try await perform("source file completion") { db in
            var stored = matchedRows
            var rejected = 0
            if let fileID = try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash]) {
                let range = RecordKey.range(fileID: fileID)
                stored += try Int.fetchOne(db, sql: "SELECT coalesce(sum(n), 0) FROM record_counts WHERE file_id = ?",
                                           arguments: [fileID]) ?? 0
                stored += try Int.fetchOne(db, sql: """
                    SELECT coalesce(sum(last_row - first_row + 1), 0) FROM record_rows WHERE file_id = ?
                    """, arguments: [fileID]) ?? 0
                rejected = try Int.fetchOne(db, sql: """
                    SELECT count(*) FROM rejected_rows WHERE file_hash = ? AND (row IS NULL OR NOT EXISTS
                        (SELECT 1 FROM records WHERE key = ? + rejected_rows.row))
                    """, arguments: [hash, range.lower]) ?? 0
            } else {
                rejected = try Int.fetchOne(db, sql: "SELECT count(*) FROM rejected_rows WHERE file_hash = ?",
                                            arguments: [hash]) ?? 0
            }
            let isComplete = stored + rejected >= rowsTotal
            try db.execute(sql: """
                UPDATE source_files SET rows_total = ?,
                    completed_at = CASE WHEN ? THEN coalesce(completed_at, ?) ELSE NULL END,
                    reading = CASE WHEN ? AND ? IS NOT NULL THEN ? ELSE reading END
                WHERE hash = ?
                """, arguments: [rowsTotal, isComplete, Timestamp.now(), isComplete, reading, reading, hash])
            return isComplete
        }
    }

    /// The data rows of a file that are already in the library (stored or rejected). Queued
    /// inserts are written first.
    /// - Throws: ``StoreError`` when the read fails.
    public func finishedRows(fileHash: String) throws(StoreError) -> RowSet {
        return try read("stored rows") { db in
            var rows = RowSet()
            if let fileID = try keyCache.fileID(fileHash)
                ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [fileHash]) {
                let range = RecordKey.range(fileID: fileID)
                let keys = try Int64.fetchCursor(db, sql: "SELECT key FROM records WHERE key >= ? AND key < ?",
                                                 arguments: [range.lower, range.upper])
                while let key = try keys.next() { rows.insert(Int(key & RecordKey.rowMask)) }
                // Rows that are finished without a record of their own (v13: a removed record's row, an
                // entry already in the library).
                for range in try Row.fetchAll(db, sql: "SELECT first_row, last_row FROM record_rows WHERE file_id = ?",
                                              arguments: [fileID]) {
                    for row in (range["first_row"] as Int)...(range["last_row"] as Int) { rows.insert(row) }
                }
            }
            let rejected = try Int.fetchCursor(db, sql: "SELECT row FROM rejected_rows WHERE file_hash = ? AND row IS NOT NULL",
                                               arguments: [fileHash])
            while let row = try rejected.next() { rows.insert(row) }
            return rows
        }
    }

    /// The order rejected rows are listed in: file, line, column, row (SQL).
    package static let rejectedRowOrder = "file, line, coalesce(column_number, 0), coalesce(row, 0)"

    /// Stores rows that could not be read as records (idempotent: a row rejected twice is kept
    /// once; rejections at different places of one line are each kept).
    /// - Throws: ``StoreError`` when the write fails (nothing of this call is written).
    public func insertRejections(_ rejections: [RejectedRow], runID: Int64?) async throws(StoreError) {
        guard !rejections.isEmpty else { return }
        try await perform("rejected rows") { db in
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

    /// The rejected rows, in file, line and column order (the order of a one-line file's detections).
    /// - Throws: ``StoreError`` when the read fails.
    public func rejections() throws(StoreError) -> [RejectedRow] {
        try read("rejected rows") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM rejected_rows ORDER BY \(Self.rejectedRowOrder)").map { row in
                RejectedRow(fileHash: row["file_hash"], file: row["file"], line: row["line"], row: row["row"],
                            column: row["column_number"], reason: row["reason"], rawText: row["raw_text"])
            }
        }
    }

    /// Inserts new records in one transaction. A record whose id is already stored is left as it
    /// is (idempotent: a resumed import never duplicates or overwrites a row). For callers outside
    /// a pipeline; pipelines submit to the library's writer (``submitInsert(_:runID:)``).
    /// - Returns: how many records were new.
    /// - Throws: ``StoreError`` when the write fails; the transaction is rolled back and nothing
    ///   of the batch is stored.
    @discardableResult
    public func insert(_ records: [BookRecord], runID: Int64? = nil) throws(StoreError) -> Int {
        guard !records.isEmpty else { return 0 }
        let encoded = RecordEncoder.encode(records).map { ($0, runID) }
        return try write("records") { db in
            try Self.insertEncoded(encoded, db: db, cache: keyCache, path: path)
        }
    }

    /// Writes encoded records inside the caller's transaction (the library's writer and ``insert(_:runID:)``).
    /// - Returns: how many records were new.
    /// Rows per multi-row INSERT of ``insertEncoded(_:pool:cache:path:)``.
    static let rowsPerStatement = 32
    /// Parameters of one row: key, origin, the encoded cells, run id, time.
    static let parametersPerRow = EncodedRecords.cellsPerRecord + 4

    static func insertEncoded(_ batches: [(records: EncodedRecords, runID: Int64?)], db: Database,
                              cache: KeyCache, path: String) throws(StoreError) -> Int {
        var learned = KeyCache.Tables()
        let inserted: Int
        do {
            inserted = try { () throws -> Int in
                guard let connection = db.sqliteConnection else { return 0 }
                func prepare(_ sql: String) throws(StoreError) -> OpaquePointer {
                    var statement: OpaquePointer?
                    let flags = UInt32(SQLITE_PREPARE_PERSISTENT)
                    guard sqlite3_prepare_v3(connection, sql, -1, flags, &statement, nil) == SQLITE_OK, let statement else {
                        throw StoreError.writeFailed(path: path, what: "records",
                                                     reason: String(cString: sqlite3_errmsg(connection)))
                    }
                    return statement
                }
                // Rows go in groups of `rowsPerStatement` through one multi-row INSERT (one
                // statement run instead of 32: SQLite keeps its cursor at the end of the table
                // instead of seeking from the root for every row). A group with a row stored
                // before stops at that row (`OR FAIL`: the rows before it stay inserted) and the
                // rest of the group goes row by row through the single-row statement, which
                // leaves stored rows as they are.
                //
                // Why `OR FAIL` and not the default `ABORT`: a statement that may abort after
                // writing some of its rows needs a statement journal to undo them. SQLite keeps
                // that journal in memory only up to 64 KiB, and with 16 KiB pages a group's
                // journal outgrows it, so every transaction wrote it into a temporary file:
                // 1.27 GB of `pwrite`s for a million rows, three times the library. With
                // `OR FAIL` nothing needs undoing and no journal is written (while foreign keys
                // are checked, outside a bulk insert, SQLite still keeps one for them).
                let placeholders = "(" + Array(repeating: "?", count: Self.parametersPerRow).joined(separator: ", ")
                    + ")"
                let columns = """
                    records (key, origin, line, raw, fields, normalized, title_key, isbn13, status,
                        review_status, findings, enrichment, detection, entry, digest, run_id, updated_at)
                    """
                let single = try prepare("INSERT INTO " + columns + " VALUES " + placeholders + " ON CONFLICT(key) DO NOTHING")
                defer { sqlite3_finalize(single) }
                let group = try prepare("INSERT OR FAIL INTO " + columns + " VALUES "
                    + Array(repeating: placeholders, count: Self.rowsPerStatement).joined(separator: ", "))
                defer { sqlite3_finalize(group) }
                let now = Int64(Date().timeIntervalSince1970)
                var count = 0
                var counted = RecordCountChanges()
                // Records stored per run (the report's runs table: what each run wrote).
                var insertedByRun: [Int64: Int] = [:]
                for batch in batches {
                    let records = batch.records
                    // Resolve this batch's origins to file and origin ids.
                    var fileIDs: [Int64] = []
                    var originIDs: [Int64] = []
                    for origin in records.origins {
                        guard let fileID = try cache.fileID(origin.fileHash, db: db, create: true, learned: &learned) else {
                            throw StoreError.writeFailed(path: path, what: "records", reason: "no file id")
                        }
                        fileIDs.append(fileID)
                        originIDs.append(try cache.originID(origin, fileID: fileID, db: db, learned: &learned))
                    }
                    try records.bytes.withUnsafeBufferPointer { bytes throws(StoreError) in
                        let base = UnsafeRawPointer(bytes.baseAddress)
                        /// Binds record `index` to the parameters of one row, from `first` on.
                        func bind(_ index: Int, to statement: OpaquePointer, from first: Int32) throws(StoreError) {
                            let slot = Int(records.originSlots[index])
                            let row = records.rows[index]
                            guard row >= 0, Int64(row) <= RecordKey.rowMask else {
                                throw StoreError.writeFailed(path: path, what: "record row \(row)",
                                                             reason: "row numbers must be below 2^32")
                            }
                            sqlite3_bind_int64(statement, first, RecordKey.make(fileID: fileIDs[slot], row: row))
                            sqlite3_bind_int64(statement, first + 1, originIDs[slot])
                            var cell = index * EncodedRecords.cellsPerRecord
                            for column in 0..<EncodedRecords.cellsPerRecord {
                                let parameter = first + Int32(column + 2)
                                switch records.cells[cell] {
                                case .null:
                                    sqlite3_bind_null(statement, parameter)
                                case .integer(let value):
                                    sqlite3_bind_int64(statement, parameter, value)
                                case .text(let start, let length):
                                    if length == 0 || base == nil {
                                        sqlite3_bind_text(statement, parameter, "", 0, sqliteTransient)
                                    } else {
                                        sqlite3_bind_text(statement, parameter,
                                                          (base! + Int(start)).assumingMemoryBound(to: CChar.self),
                                                          length, nil)
                                    }
                                }
                                cell += 1
                            }
                            let last = first + Int32(EncodedRecords.cellsPerRecord) + 2
                            if let runID = batch.runID {
                                sqlite3_bind_int64(statement, last, runID)
                            } else {
                                sqlite3_bind_null(statement, last)
                            }
                            sqlite3_bind_int64(statement, last + 1, now)
                        }
                        /// Counts record `index` as inserted, under its file and status.
                        func countInserted(_ index: Int) {
                            count += 1
                            if let runID = batch.runID { insertedByRun[runID, default: 0] += 1 }
                            let statusColumn = index * EncodedRecords.cellsPerRecord + EncodedRecords.statusColumn
                            if case .text(let start, let length) = records.cells[statusColumn], let base {
                                counted.addInserted(fileID: fileIDs[Int(records.originSlots[index])],
                                                    status: UnsafeRawBufferPointer(start: base + Int(start), count: Int(length)))
                            }
                        }
                        func failure(_ index: Int) -> StoreError {
                            let slot = Int(records.originSlots[index])
                            return StoreError.writeFailed(
                                path: path, what: "record \(records.origins[slot].path) row \(records.rows[index])",
                                reason: String(cString: sqlite3_errmsg(connection)))
                        }
                        /// Inserts record `index` unless it is stored already.
                        func insertOne(_ index: Int) throws(StoreError) {
                            try bind(index, to: single, from: 1)
                            guard sqlite3_step(single) == SQLITE_DONE else {
                                let error = failure(index)
                                sqlite3_reset(single)
                                throw error
                            }
                            if sqlite3_changes(connection) > 0 { countInserted(index) }
                            sqlite3_reset(single)
                        }
                        var index = 0
                        while index < records.count {
                            guard records.count - index >= Self.rowsPerStatement else {
                                try insertOne(index)
                                index += 1
                                continue
                            }
                            for offset in 0..<Self.rowsPerStatement {
                                try bind(index + offset, to: group, from: Int32(offset * Self.parametersPerRow + 1))
                            }
                            let result = sqlite3_step(group)
                            if result == SQLITE_DONE {
                                sqlite3_reset(group)
                                for offset in 0..<Self.rowsPerStatement { countInserted(index + offset) }
                            } else if result & 0xFF == SQLITE_CONSTRAINT {
                                // The rows before the failing one are in (OR FAIL keeps them).
                                let storedBefore = Int(sqlite3_changes(connection))
                                guard (0..<Self.rowsPerStatement).contains(storedBefore) else {
                                    let error = failure(index)
                                    sqlite3_reset(group)
                                    throw error
                                }
                                sqlite3_reset(group)
                                for offset in 0..<storedBefore { countInserted(index + offset) }
                                for offset in storedBefore..<Self.rowsPerStatement { try insertOne(index + offset) }
                            } else {
                                let error = failure(index)
                                sqlite3_reset(group)
                                throw error
                            }
                            index += Self.rowsPerStatement
                        }
                    }
                }
                try counted.apply(db)
                for (runID, inserted) in insertedByRun {
                    try db.execute(sql: """
                        INSERT INTO run_writes (run_id, records) VALUES (?, ?)
                        ON CONFLICT (run_id) DO UPDATE SET records = records + excluded.records
                        """, arguments: [runID, inserted])
                }
                return count
            }()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.writeFailed(path: path, what: "records", reason: reason(error))
        }
        cache.merge(learned)
        return inserted
    }

    /// Replaces stored records with these versions (same ids): what was read, the normalised
    /// forms, enrichment, review status and findings. The raw fields and where the record came
    /// from stay as stored. Ids that are not stored are skipped. Used by stages that revisit
    /// stored records (enrichment, review). Runs through the library's writer, in order.
    /// - Throws: ``StoreError`` when the write fails; nothing of the batch is written.
    public func update(_ records: [BookRecord], runID: Int64? = nil) async throws(StoreError) {
        guard !records.isEmpty else { return }
        try await perform("\(records.count) record updates") { db in
            try self.writeUpdates(records, runID: runID, db: db)
        }
    }

    /// The body of ``update(_:runID:)``, inside a write transaction (review actions use it in
    /// theirs, so the record and its action log commit together).
    func writeUpdates(_ records: [BookRecord], runID: Int64?, db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            UPDATE records SET fields = ?, normalized = ?, title_key = ?, isbn13 = ?, status = ?,
                review_status = ?, findings = ?, enrichment = ?, detection = ?,
                run_id = coalesce(?, run_id), updated_at = ?
            WHERE key = ?
            """)
        let currentStatus = try db.cachedStatement(sql: "SELECT status FROM records WHERE key = ?")
        let now = Int64(Date().timeIntervalSince1970)
        // Updated records may carry raw fields other than the stored ones: write text out.
        let encoder = RecordEncoder(referencesRawFields: false)
        var counted = RecordCountChanges()
        for record in records {
            guard let fileID = try self.keyCache.fileID(record.origin.fileHash)
                ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?",
                                  arguments: [record.origin.fileHash]) else { continue }
            let key = RecordKey.make(fileID: fileID, row: record.origin.row)
            guard let oldStatus = try String.fetchOne(currentStatus, arguments: [key]) else { continue }
            if oldStatus != record.status.rawValue {
                counted.add(fileID: fileID, status: oldStatus, -1)
                counted.add(fileID: fileID, status: record.status.rawValue, 1)
            }
            var fields: [UInt8] = []
            withUnsafePointer(to: record) { encoder.appendFields($0, to: &fields) }
            var normalized: String?
            if record.normalized != nil {
                var bytes: [UInt8] = []
                withUnsafePointer(to: record) { encoder.appendNormalized($0, to: &bytes) }
                normalized = String(decoding: bytes, as: UTF8.self)
            }
            try statement.execute(arguments: [
                String(decoding: fields, as: UTF8.self), normalized, record.normalized?.titleKey,
                record.normalized?.isbn13, record.status.rawValue, record.reviewStatus.rawValue,
                record.findings.isEmpty ? nil : RecordCoding.encodeFindings(record.findings),
                record.enrichment.map(RecordCoding.encode), record.scan.map(RecordCoding.encode),
                runID, now, key,
            ])
        }
        try counted.apply(db)
        try self.upsertMatchedWorks(records, db: db, now: now)
    }

    /// Calls `body` with every record, in file order then row order, reading in one snapshot.
    /// - Throws: ``StoreError`` when the read fails or a stored value is unreadable; `body`'s error.
    public func forEachRecord(where status: RecordStatus? = nil,
                              _ body: (BookRecord) throws -> Void) throws {
        do {
            try forEachStoredRecord(where: status, body)
        } catch let error as DatabaseError {
            if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
            throw StoreError.readFailed(path: path, what: "records", reason: Self.reason(error))
        }
    }

    private func forEachStoredRecord(where status: RecordStatus?, _ body: (BookRecord) throws -> Void) throws {
        try pool.read { db in
            // One group per (path, file): rows in key order within it, so no sort of the records.
            let groups = try Row.fetchAll(db, sql: """
                SELECT o.path, f.id AS file_id, group_concat(o.id) AS origins
                FROM record_origins o JOIN source_files f ON f.id = o.file_id
                GROUP BY o.path, f.hash ORDER BY o.path, f.hash
                """)
            for group in groups {
                let fileID: Int64 = group["file_id"]
                let origins: String = group["origins"]
                let range = RecordKey.range(fileID: fileID)
                let sql = "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins)"
                    + " WHERE r.key >= ? AND r.key < ? AND r.origin IN (\(origins))"
                    + (status == nil ? "" : " AND r.status = ?") + " ORDER BY r.key"
                var arguments: StatementArguments = [range.lower, range.upper]
                if let status { arguments += [status.rawValue] }
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try cursor.next() {
                    try body(try RecordCoding.decode(row, path: path))
                }
            }
        }
    }

    /// The records with these ids (missing ids are skipped).
    /// - Throws: ``StoreError`` when the read fails.
    public func records(ids: [String]) throws(StoreError) -> [BookRecord] {
        return try read("records") { db in
            let statement = try db.cachedStatement(
                sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?")
            var records: [BookRecord] = []
            for id in ids {
                guard let (hash, row) = RecordKey.parse(id: id),
                      let fileID = try keyCache.fileID(hash, reading: db)
                else { continue }
                // Decoded from the statement's row, not a copy: a copied row finds a column by name
                // comparing every column's lowercased name, the statement by one dictionary lookup
                // (about 1.5 % of an offline enrichment's CPU for the record's twenty-odd columns).
                let cursor = try Row.fetchCursor(statement, arguments: [RecordKey.make(fileID: fileID, row: row)])
                try withExtendedLifetime(cursor) {
                    if let stored = try cursor.next() { records.append(try RecordCoding.decode(stored, path: path)) }
                }
            }
            return records
        }
    }

    /// Counts of records by status, and rejected rows.
    /// - Throws: ``StoreError`` when the read fails.
    public func counts() throws(StoreError) -> LibraryCounts {
        return try read("counts") { db in
            var counts = LibraryCounts()
            for row in try Row.fetchAll(db, sql: "SELECT status, sum(n) AS n FROM record_counts GROUP BY status") {
                if let status = RecordStatus(rawValue: row["status"]), let n: Int = row["n"], n > 0 {
                    counts.byStatus[status] = n
                }
            }
            counts.rejected = try Int.fetchOne(db, sql: "SELECT count(*) FROM rejected_rows") ?? 0
            return counts
        }
    }
}

/// ISO 8601 timestamps in UTC.
enum Timestamp {
    static func now() -> String {
        Date.now.formatted(.iso8601)
    }
}

/// Changes to `record_counts` gathered over one transaction and written at its end (one row per
/// file and status instead of one per record).
struct RecordCountChanges {
    private var changes: [Int64: [String: Int]] = [:]
    /// Inserted records arrive in runs of one file and one status (a million new `pending` rows):
    /// they are counted by comparing bytes, and added to `changes` once per run.
    private var run: (fileID: Int64, status: [UInt8], count: Int)?

    mutating func add(fileID: Int64, status: String, _ delta: Int) {
        changes[fileID, default: [:]][status, default: 0] += delta
    }

    /// Counts one inserted record with this status (its stored UTF-8 text).
    mutating func addInserted(fileID: Int64, status: UnsafeRawBufferPointer) {
        if let current = run, current.fileID == fileID, current.status.elementsEqual(status) {
            run?.count += 1
            return
        }
        endRun()
        run = (fileID, Array(status), 1)
    }

    private mutating func endRun() {
        guard let current = run else { return }
        add(fileID: current.fileID, status: String(decoding: current.status, as: UTF8.self), current.count)
        run = nil
    }

    mutating func apply(_ db: Database) throws {
        endRun()
        for (fileID, byStatus) in changes {
            for (status, delta) in byStatus where delta != 0 {
                try db.cachedStatement(sql: """
                    INSERT INTO record_counts (file_id, status, n) VALUES (?, ?, ?)
                    ON CONFLICT (file_id, status) DO UPDATE SET n = n + excluded.n
                    """).execute(arguments: [fileID, status, delta])
            }
        }
    }
}
