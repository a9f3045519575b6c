import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    static let queueCondition = "(r.review_status = 'needsReview' OR r.status = 'needsCandidateSelection')"

    static func condition(_ kind: ReviewKind?) -> String {
        switch kind {
        case nil: queueCondition
        case .scan: "r.review_status = 'needsReview'"
        case .match: "r.status = 'needsCandidateSelection'"
        }
    }


    private static let createdAtColumn = """
        coalesce((SELECT started_at FROM runs WHERE runs.id = f.first_run_id), \
        strftime('%Y-%m-%dT%H:%M:%SZ', r.updated_at, 'unixepoch')) AS created_at
        """

    /// The queued records, newest first (the most recently imported file first, then its last
    /// detection first). Uses the queue's partial index, so it costs the queue's size, not the library's.
    /// - Parameters:
    ///   - kind: Only scan detections or only uncertain matches; nil for both.
    ///   - limit: At most this many; nil for all.
    ///   - offset: How many queued items to leave out first (a page of the queue: `review sheet`).
    /// - Throws: ``StoreError`` when the read fails.
    public func reviewQueue(kind: ReviewKind? = nil, limit: Int? = nil, offset: Int = 0) throws(StoreError) -> [ReviewItem] {
        try ensureReviewQueueIndex()
        return try read("review queue") { db in
            let sql = "SELECT r.*, \(RecordCoding.originColumns), \(Self.createdAtColumn) FROM \(RecordCoding.joins)"
                + " WHERE \(Self.condition(kind)) ORDER BY r.key DESC LIMIT \(limit.map { max(0, $0) } ?? -1)"
                + " OFFSET \(max(0, offset))"
            var items: [ReviewItem] = []
            let cursor = try Row.fetchCursor(db, sql: sql)
            while let row = try cursor.next() {
                let record = try RecordCoding.decode(row, path: path)
                items.append(ReviewItem(record: record, kind: ReviewKind.of(record), createdAt: row["created_at"] ?? ""))
            }
            return items
        }
    }

    /// The queued items as `review list` shows them, newest first (the order of
    /// ``reviewQueue(kind:limit:)``), read without decoding the records: the title and authors
    /// from the `fields` column (and the raw fields it points at), the detection's confidence,
    /// box and photo with SQLite's JSON operators (numbers parsed from their stored text, so they
    /// equal what a full decode gives). `ReviewListTests` checks it against the full decode.
    /// - Parameter kind: Only scan detections or only uncertain matches; nil for both.
    /// - Throws: ``StoreError`` when the read fails or a stored value is damaged.
    public func reviewQueueEntries(kind: ReviewKind? = nil) throws(StoreError) -> [ReviewQueueEntry] {
        try ensureReviewQueueIndex()
        let path = self.path
        return try read("review queue") { db in
            let sql = """
                SELECT r.key, f.hash AS file_hash, r.raw, r.fields, r.review_status,
                    r.detection -> '$.confidence' AS confidence, r.detection -> '$.boundingBox.x' AS box_x,
                    r.detection -> '$.boundingBox.y' AS box_y, r.detection -> '$.boundingBox.width' AS box_width,
                    r.detection -> '$.boundingBox.height' AS box_height, r.detection ->> '$.photoPath' AS photo,
                    \(Self.createdAtColumn)
                FROM \(RecordCoding.joins) WHERE \(Self.condition(kind)) ORDER BY r.key DESC
                """
            var entries: [ReviewQueueEntry] = []
            let cursor = try Row.fetchCursor(db, sql: sql)
            // Columns by position, in the SELECT's order (a lookup by name hashes the name each time).
            let (keyColumn, hashColumn, rawColumn, fieldsColumn, reviewColumn, confidenceColumn, boxColumn, photoColumn,
                 createdColumn) = (0, 1, 2, 3, 4, 5, 6, 10, 11)
            while let row = try cursor.next() {
                let key: Int64 = row[keyColumn]
                let hash: String = row[hashColumn]
                let id = "\(hash):\(key & RecordKey.rowMask)"
                func corrupt(_ column: String) -> StoreError {
                    StoreError.corruptValue(path: path, what: "\(column) of record \(id)")
                }
                func number(_ column: Int) throws(StoreError) -> Double? {
                    guard let text: String = row[column] else { return nil }
                    guard let value = Double(text) else { throw corrupt("detection") }
                    return value
                }
                guard let fieldsText: String = row[fieldsColumn], case .array(let fields)? = JSONText.parse(fieldsText) else {
                    throw corrupt("fields")
                }
                // Values that are exactly a raw field are stored as the field's number.
                var rawFields: [String]?
                func text(_ value: JSONText.Parsed) throws(StoreError) -> String {
                    switch value {
                    case .null: return ""
                    case .string(let text): return text
                    case .integer(let index):
                        if rawFields == nil { rawFields = RawColumn.fields(row[rawColumn]).fields }
                        guard let raw = rawFields, index >= 0, index < raw.count else { throw corrupt("fields") }
                        return raw[index]
                    default: throw corrupt("fields")
                    }
                }
                let title = try text(fields.first ?? .null)
                var authors: [String] = []
                switch fields.count > 1 ? fields[1] : .null {
                case .null: break
                case .array(let items): for item in items { authors.append(try text(item)) }
                default: throw corrupt("fields")
                }
                var box: BoundingBox?
                if let x = try number(boxColumn), let y = try number(boxColumn + 1), let width = try number(boxColumn + 2),
                   let height = try number(boxColumn + 3) {
                    box = BoundingBox(x: x, y: y, width: width, height: height)
                }
                let reviewStatus: String = row[reviewColumn]
                let entryKind: ReviewKind = reviewStatus == ReviewStatus.needsReview.rawValue ? .scan : .match
                entries.append(ReviewQueueEntry(
                    id: id, kind: entryKind, title: title, authors: authors, confidence: try number(confidenceColumn),
                    boundingBox: box, photoPath: row[photoColumn], createdAt: row[createdColumn] ?? ""))
            }
            return entries
        }
    }

    /// How many records are queued.
    /// - Parameter kind: Only one kind; nil for both.
    /// - Throws: ``StoreError`` when the read fails.
    public func reviewQueueCount(kind: ReviewKind? = nil) throws(StoreError) -> Int {
        try ensureReviewQueueIndex()
        return try read("review queue") { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM records r WHERE \(Self.condition(kind))") ?? 0
        }
    }

    /// Makes the review queue's partial index when the library has none yet: detections a person
    /// must check and uncertain matches, so listing 10,000 queued items in a library of a million
    /// records reads only those. Made on first use, not by a migration, because any index on
    /// `records` costs every insert of a large CSV import (see `Schema+Review.swift`); a library
    /// that has used the queue keeps it. Building it reads every record once. A store opened for
    /// reading only does without it (the queue's reads then read every record).
    /// - Throws: ``StoreError`` when the write fails.
    public func ensureReviewQueueIndex() throws(StoreError) {
        let exists = try read("review queue index") { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'records_review_queue')") ?? false
        }
        // A library opened for reading only (a read-only file or folder) is read without it.
        guard !exists, !pool.configuration.readonly else { return }
        try write("review queue index") { db in
            try db.execute(sql: """
                CREATE INDEX IF NOT EXISTS records_review_queue ON records(key)
                    WHERE review_status = 'needsReview' OR status = 'needsCandidateSelection'
                """)
        }
    }

    /// One record with its queue kind (nil when it is not queued), or nil when no record has the id.
    /// - Parameter id: A record id (`<hash>:<row>`).
    /// - Throws: ``StoreError`` when the read fails.
    public func reviewItem(id: String) throws(StoreError) -> ReviewItem? {
        try read("review item") { db in
            guard let key = try reviewKey(id: id, db: db),
                  let row = try Row.fetchOne(db, sql: "SELECT r.*, \(RecordCoding.originColumns), \(Self.createdAtColumn) "
                                                 + "FROM \(RecordCoding.joins) WHERE r.key = ?", arguments: [key])
            else { return nil }
            let record = try RecordCoding.decode(row, path: path)
            return ReviewItem(record: record, kind: ReviewKind.of(record), createdAt: row["created_at"] ?? "")
        }
    }

    /// The fields a person supplied for a record.
    /// - Parameter id: A record id.
    /// - Throws: ``StoreError`` when the read fails.
    public func recordEdits(id: String) throws(StoreError) -> [RecordEdit] {
        try read("record edits") { db in
            guard let key = try reviewKey(id: id, db: db) else { return [] }
            return try Row.fetchAll(db, sql: "SELECT * FROM record_edits WHERE key = ? ORDER BY field", arguments: [key]).map {
                RecordEdit(field: $0["field"], value: $0["value"], locked: $0["locked"], editedBy: $0["edited_by"],
                           at: Date(timeIntervalSince1970: $0["edited_at"]))
            }
        }
    }

    /// The fields a person supplied, for every record that has any: record id → `title`,
    /// `authors`, `match` (from `record_edits`; empty for a library nobody reviewed).
    /// - Throws: ``StoreError`` when the read fails.
    public func personEditedFields() throws(StoreError) -> [String: Set<String>] {
        try read("record edits") { db in
            var result: [String: Set<String>] = [:]
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT f.hash, e.key, e.field FROM record_edits e JOIN source_files f ON f.id = e.key >> 32
                """)
            while let row = try cursor.next() {
                let key: Int64 = row["key"]
                result["\(row["hash"] as String):\(key & RecordKey.rowMask)", default: []].insert(row["field"])
            }
            return result
        }
    }

    /// Every logged review action, oldest first.
    /// - Throws: ``StoreError`` when the read fails.
    public func reviewActions() throws(StoreError) -> [ReviewAction] {
        try read("review actions") { db in
            try Row.fetchAll(db, sql: """
                SELECT a.*, f.hash FROM review_actions a LEFT JOIN source_files f ON f.id = a.key >> 32 ORDER BY a.id
                """).map { row in
                let key: Int64 = row["key"]
                return ReviewAction(recordID: "\(row["hash"] as String? ?? "?"):\(key & RecordKey.rowMask)",
                                    action: row["action"], before: row["before"], after: row["after"],
                                    at: Date(timeIntervalSince1970: row["acted_at"]))
            }
        }
    }

    /// Applies a person's decision to each record (``ReviewRules``) in one transaction through
    /// the library's writer: the record, its locks, its field edits, its change log and the action
    /// log commit together. Before anything is written, every id is looked up (an unknown one
    /// throws ``ReviewError/unknownID(_:)``) and ``ReviewRules/refusal(_:id:state:)`` may turn any
    /// of them down: then nothing is written for any id. Inside the transaction each record's
    /// ``ReviewRules/version(of:)`` is checked against `versions` (a changed record throws
    /// ``ReviewError/changedSince(id:now:)``; nothing written). Ids of records already verified are
    /// logged too (the decision is the person's). Each action row keeps the record's stored columns,
    /// locks and field edits before, and the change-log rows it wrote, for ``undoReview(actionIDs:at:)``.
    /// - Returns: Each id's action number and record as stored after.
    /// - Throws: ``ReviewError`` or ``StoreError``.
    public func applyReview(_ decision: ReviewDecision, ids: [String], at time: Date, versions: [String: String]) async throws
        -> [ReviewReceipt] {
        // One read for all ids, from the columns (no record decoded).
        let states = try read("review check") { db in
            try ids.map { id -> ReviewState? in
                guard let key = try reviewKey(id: id, db: db),
                      let row = try Row.fetchOne(db, sql: """
                          SELECT review_status, status, coalesce(json_array_length(enrichment, '$.candidates'), 0) FROM records WHERE key = ?
                          """, arguments: [key])
                else { return nil }
                return ReviewState(reviewStatus: ReviewStatus(rawValue: row[0]) ?? .verified,
                                   status: RecordStatus(rawValue: row[1]) ?? .pending, candidates: row[2])
            }
        }
        for (id, state) in zip(ids, states) {
            guard let state else { throw ReviewError.unknownID(id) }
            if let refusal = ReviewRules.refusal(decision, id: id, state: state) { throw refusal }
        }
        let seconds = time.timeIntervalSince1970
        let action = decision.actionName
        let outcome: Result<[ReviewReceipt], ReviewError> = try await perform("review \(action)") { db in
            var receipts: [ReviewReceipt] = []
            for id in ids {
                guard let key = try self.reviewKey(id: id, db: db),
                      let row = try Row.fetchOne(db, sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?",
                                                 arguments: [key])
                else { return .failure(.unknownID(id)) }
                var record = try RecordCoding.decode(row, path: self.path)
                if let expected = versions[id], expected != ReviewRules.version(of: record) {
                    return .failure(.changedSince(id: id, now: ReviewRules.standing(of: record)))
                }
                var restore = try ReviewRestore.read(key: key, db: db)
                let before = ReviewRules.snapshot(record)
                let effects: ReviewEffects
                switch Result(catching: { () throws(ReviewError) -> ReviewEffects in
                    try ReviewRules.apply(decision, to: &record, at: time)
                }) {
                case .success(let value): effects = value
                case .failure(let error): return .failure(error)
                }
                try self.writeUpdates([record], runID: nil, db: db)
                if !effects.suppliedFields.isEmpty || !effects.releasedLocks.isEmpty {
                    let locked = effects.locks(after: Self.lockedFields(row["locked_fields"]))
                    try db.execute(sql: "UPDATE records SET locked_fields = ? WHERE key = ?",
                                   arguments: [RecordCoding.encode(locked.sorted()), key])
                    for field in effects.releasedLocks.subtracting(effects.suppliedFields.keys).sorted() {
                        try db.execute(sql: "DELETE FROM record_edits WHERE key = ? AND field = ?", arguments: [key, field])
                    }
                    for (field, value) in effects.suppliedFields {
                        try db.execute(sql: """
                            INSERT INTO record_edits (key, field, value, locked, edited_by, edited_at) VALUES (?, ?, ?, 1, 'person', ?)
                            ON CONFLICT (key, field) DO UPDATE SET value = excluded.value, locked = 1,
                                edited_by = excluded.edited_by, edited_at = excluded.edited_at
                            """, arguments: [key, field, value, seconds])
                    }
                }
                for change in effects.changeLog {
                    try db.execute(sql: """
                        INSERT INTO record_changes (key, field, old, new, kind, source, run_id, changed_at)
                        VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
                        """, arguments: [key, change.field, change.old, change.new, change.kind?.rawValue, change.source, seconds])
                    restore.changes.append(db.lastInsertedRowID)
                }
                restore.after = ReviewRules.version(of: record)
                try db.execute(sql: """
                    INSERT INTO review_actions (key, action, before, after, acted_at, restore) VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [key, action, before, ReviewRules.snapshot(record), seconds, ReviewRules.json(restore)])
                receipts.append(ReviewReceipt(actionID: db.lastInsertedRowID, record: record))
            }
            return .success(receipts)
        }
        return try outcome.get()
    }

    /// Undoes logged decisions in one transaction (see ``LibraryReviewStore/undoReview(actionIDs:at:)``):
    /// the record's stored columns, locks and field edits as the action row kept them before the
    /// decision; the change-log rows the decision wrote deleted; the record counts adjusted; the action
    /// marked undone and an `undo` action logged. A record whose version is no longer the one the
    /// decision left is not undone (``ReviewError/changedSince(id:now:)``), nor is an action undone
    /// already (``ReviewError/notUndoable(actionID:)``); nothing is written then.
    public func undoReview(actionIDs: [Int64], at time: Date) async throws -> [BookRecord] {
        let seconds = time.timeIntervalSince1970
        let outcome: Result<[BookRecord], ReviewError> = try await perform("review undo") { db in
            var restored: [BookRecord] = []
            var counted = RecordCountChanges()
            let decoder = JSONDecoder()
            // The latest decision first, so undoing several of one record walks back in order.
            for actionID in actionIDs.sorted(by: >) {
                guard let action = try Row.fetchOne(db, sql: """
                          SELECT key, restore, undone_at FROM review_actions WHERE id = ? AND action <> 'undo'
                          """, arguments: [actionID]),
                      action["undone_at"] as Double? == nil,
                      let text: String = action["restore"],
                      let restore = try? decoder.decode(ReviewRestore.self, from: Data(text.utf8))
                else { return .failure(.notUndoable(actionID: actionID)) }
                let key: Int64 = action["key"]
                guard let row = try Row.fetchOne(db, sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?",
                                                 arguments: [key])
                else { return .failure(.notUndoable(actionID: actionID)) }
                let current = try RecordCoding.decode(row, path: self.path)
                guard ReviewRules.version(of: current) == restore.after else {
                    return .failure(.changedSince(id: current.id, now: ReviewRules.standing(of: current)))
                }
                let statusNow: String = row["status"]
                if statusNow != restore.columns.status {
                    counted.add(fileID: key >> 32, status: statusNow, -1)
                    counted.add(fileID: key >> 32, status: restore.columns.status, 1)
                }
                try restore.write(key: key, db: db)
                guard let back = try Row.fetchOne(db, sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?",
                                                  arguments: [key])
                else { return .failure(.notUndoable(actionID: actionID)) }
                let record = try RecordCoding.decode(back, path: self.path)
                try db.execute(sql: "UPDATE review_actions SET undone_at = ? WHERE id = ?", arguments: [seconds, actionID])
                try db.execute(sql: "INSERT INTO review_actions (key, action, before, after, acted_at) VALUES (?, 'undo', ?, ?, ?)",
                               arguments: [key, ReviewRules.snapshot(current), ReviewRules.snapshot(record), seconds])
                restored.append(record)
            }
            try counted.apply(db)
            return .success(restored)
        }
        return try outcome.get()
    }

    /// The fields a person locked, from a record's `locked_fields` column (a JSON array; NULL: none).
    static func lockedFields(_ column: String?) -> Set<String> {
        guard let column, column != "[]", !column.isEmpty else { return [] }
        return Set((try? JSONDecoder().decode([String].self, from: Data(column.utf8))) ?? [])
    }

    func reviewKey(id: String, db: Database) throws -> Int64? {
        guard let (hash, row) = RecordKey.parse(id: id),
              let fileID = try keyCache.fileID(hash)
                ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash])
        else { return nil }
        let key = RecordKey.make(fileID: fileID, row: row)
        return try Bool.fetchOne(db, sql: "SELECT 1 FROM records WHERE key = ?", arguments: [key]) == true ? key : nil
    }

    /// Of some rows of a file, those an earlier run stored as detections that name no photo copy
    /// (none was given, it was refused, or it was deleted once every detection of the photo was
    /// reviewed). The scan import copies a photo only for detections not in this set: a stored
    /// record is not stored again, so a copy made for these alone would be named by no record and
    /// never deleted.
    /// - Parameters:
    ///   - fileHash: The file's content fingerprint.
    ///   - rows: Row numbers of the file.
    /// - Returns: The rows stored without a photo; empty when the file is not in the library.
    /// - Throws: ``StoreError`` when the read fails.
    public func storedRowsWithoutScanPhoto(fileHash: String, rows: [Int]) throws(StoreError) -> Set<Int> {
        guard !rows.isEmpty else { return [] }
        return try read("stored scan photos") { db in
            guard let fileID = try keyCache.fileID(fileHash)
                ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [fileHash])
            else { return [] }
            let statement = try db.cachedStatement(sql: "SELECT detection ->> '$.photoPath' IS NULL FROM records WHERE key = ?")
            var found = Set<Int>()
            for row in rows where try Bool.fetchOne(statement, arguments: [RecordKey.make(fileID: fileID, row: row)]) == true {
                found.insert(row)
            }
            return found
        }
    }

    /// The name of a detection's managed photo copy in SQL: the last 68 characters of its stored
    /// path (`<folder>/<64 hex>.jpg`; only managed copies are stored). The scan-photo index is
    /// on this expression.
    static let photoNameExpression = "substr(json_extract(detection, '$.photoPath'), -68)"

    /// Makes the index of scan detections by photo copy and review status when the library has
    /// none yet, so the photo cleanup at the start of every run is a few index seeks. Made on
    /// first need (a library with managed photos), not by a migration, for the reason
    /// ``ensureReviewQueueIndex()`` gives: any index on `records` costs every CSV insert.
    /// - Throws: ``StoreError`` when the write fails.
    public func ensureScanPhotoIndex() throws(StoreError) {
        let exists = try read("scan photo index") { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'records_scan_photo')") ?? false
        }
        guard !exists else { return }
        try write("scan photo index") { db in
            try db.execute(sql: """
                CREATE INDEX IF NOT EXISTS records_scan_photo ON records(\(Self.photoNameExpression), review_status)
                    WHERE detection IS NOT NULL
                """)
        }
    }

    /// The review and processing status of every detection naming each managed copy: index seeks
    /// on the scan-photo index (``ensureScanPhotoIndex()``), made on first need.
    public func detectionStates(photoNames: [String]) throws(StoreError) -> [String: [DetectionState]] {
        guard !photoNames.isEmpty else { return [:] }
        try ensureScanPhotoIndex()
        return try read("photo detections") { db in try Self.detectionStates(photoNames, db: db) }
    }

    static func detectionStates(_ names: [String], db: Database) throws -> [String: [DetectionState]] {
        var states: [String: [DetectionState]] = [:]
        let rows = try Row.fetchCursor(db, sql: """
            SELECT copy.value AS name, r.review_status, r.status FROM json_each(?) AS copy
            JOIN records r ON r.detection IS NOT NULL AND \(photoNameExpression) = copy.value
            """, arguments: [RecordCoding.encode(names)])
        while let row = try rows.next() {
            // An unreadable status keeps the photo (pending is never due).
            states[row["name"], default: []].append(DetectionState(
                reviewStatus: ReviewStatus(rawValue: row["review_status"]) ?? .needsReview,
                status: RecordStatus(rawValue: row["status"]) ?? .pending))
        }
        return states
    }

    /// Clears the photo path and box of the detections naming each due copy and notes the copy as
    /// pending deletion, in one transaction; returns every pending deletion.
    public func releaseDetectionPhotos(names: [String], isDue: @escaping @Sendable ([DetectionState]) -> Bool)
        async throws(StoreError) -> [String] {
        try ensureScanPhotoIndex()
        return try await perform("photo cleanup") { db in
            let states = try Self.detectionStates(names, db: db)
            let decoder = JSONDecoder()
            for name in names where isDue(states[name] ?? []) {
                let rows = try Row.fetchAll(db, sql: """
                    SELECT key, detection FROM records WHERE detection IS NOT NULL AND \(Self.photoNameExpression) = ?
                    """, arguments: [name])
                for row in rows {
                    guard let text: String = row["detection"],
                          var detection = try? decoder.decode(ScanDetection.self, from: Data(text.utf8)) else { continue }
                    detection.photoPath = nil
                    detection.boundingBox = nil
                    try db.execute(sql: "UPDATE records SET detection = ? WHERE key = ?",
                                   arguments: [RecordCoding.encode(detection), row["key"] as Int64])
                }
                try db.execute(sql: "INSERT OR IGNORE INTO photo_deletions (name) VALUES (?)", arguments: [name])
            }
            return try String.fetchAll(db, sql: "SELECT name FROM photo_deletions ORDER BY name")
        }
    }

    /// The copies pending deletion.
    public func pendingPhotoDeletions() throws(StoreError) -> [String] {
        try read("photo deletions") { db in try String.fetchAll(db, sql: "SELECT name FROM photo_deletions ORDER BY name") }
    }

    /// Notes which pending deletions were done and which failed.
    public func recordPhotoDeletions(deleted: [String], failed: [(name: String, reason: String)]) async throws(StoreError) {
        let failedNow = failed.map { [$0.name, $0.reason] }
        try await perform("photo cleanup") { db in
            for name in deleted { try db.execute(sql: "DELETE FROM photo_deletions WHERE name = ?", arguments: [name]) }
            for pair in failedNow {
                try db.execute(sql: "UPDATE photo_deletions SET attempts = attempts + 1, last_error = ? WHERE name = ?",
                               arguments: [pair[1], pair[0]])
            }
        }
    }
}

/// What a review action row keeps to undo its decision exactly: the record's stored columns and
/// field edits before, the change-log rows it wrote, and the version it left.
struct ReviewRestore: Codable {
    /// The record's columns a decision can change, as stored before it.
    struct Columns: Codable {
        var fields: String
        var normalized: String?
        var titleKey: String?
        var isbn13: String?
        var status: String
        var reviewStatus: String
        var findings: String?
        var enrichment: String?
        var detection: String?
        var lockedFields: String?
        var runID: Int64?
        var updatedAt: Int64
    }

    /// One `record_edits` row.
    struct Edit: Codable {
        var field: String
        var value: String?
        var locked: Bool
        var editedBy: String
        var editedAt: Double
    }

    var columns: Columns
    var edits: [Edit]
    /// `record_changes` rowids the decision inserted.
    var changes: [Int64] = []
    /// ``ReviewRules/version(of:)`` of the record the decision left.
    var after = ""

    /// The record's state before a decision, read inside the decision's transaction.
    static func read(key: Int64, db: Database) throws -> ReviewRestore {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT fields, normalized, title_key, isbn13, status, review_status, findings, enrichment, detection,
                locked_fields, run_id, updated_at FROM records WHERE key = ?
            """, arguments: [key]) else { throw DatabaseError(message: "record \(key) vanished inside its transaction") }
        let columns = Columns(fields: row[0], normalized: row[1], titleKey: row[2], isbn13: row[3], status: row[4],
                              reviewStatus: row[5], findings: row[6], enrichment: row[7], detection: row[8],
                              lockedFields: row[9], runID: row[10], updatedAt: row[11])
        let edits = try Row.fetchAll(db, sql: "SELECT field, value, locked, edited_by, edited_at FROM record_edits WHERE key = ?",
                                     arguments: [key]).map {
            Edit(field: $0[0], value: $0[1], locked: $0[2], editedBy: $0[3], editedAt: $0[4])
        }
        return ReviewRestore(columns: columns, edits: edits)
    }

    /// Puts the record back: its columns, its field edits, and no change-log rows of the decision.
    /// The triggers on `records` mark the listing and search entries stale as for any update.
    func write(key: Int64, db: Database) throws {
        try db.execute(sql: """
            UPDATE records SET fields = ?, normalized = ?, title_key = ?, isbn13 = ?, status = ?, review_status = ?,
                findings = ?, enrichment = ?, detection = ?, locked_fields = ?, run_id = ?, updated_at = ? WHERE key = ?
            """, arguments: [columns.fields, columns.normalized, columns.titleKey, columns.isbn13, columns.status,
                             columns.reviewStatus, columns.findings, columns.enrichment, columns.detection,
                             columns.lockedFields, columns.runID, columns.updatedAt, key])
        try db.execute(sql: "DELETE FROM record_edits WHERE key = ?", arguments: [key])
        for edit in edits {
            try db.execute(sql: """
                INSERT INTO record_edits (key, field, value, locked, edited_by, edited_at) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [key, edit.field, edit.value, edit.locked, edit.editedBy, edit.editedAt])
        }
        for change in changes {
            try db.execute(sql: "DELETE FROM record_changes WHERE rowid = ? AND key = ?", arguments: [change, key])
        }
    }
}
