import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    /// The review queue's condition over `record_queue q` (its partial index, migration 9).
    static func queueCondition(_ kind: ReviewKind?) -> String {
        switch kind {
        case nil: "(q.review_status = 'needsReview' OR q.status = 'needsCandidateSelection')"
        case .scan: "q.review_status = 'needsReview'"
        case .match: "q.status = 'needsCandidateSelection'"
        }
    }


    /// When a record was queued: its file's first run's start, else its last write.
    static let createdAtColumn = """
        coalesce((SELECT started_at FROM runs WHERE runs.id = f.first_run_id),
                 to_char(to_timestamp(r.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
        """

    /// The name of a detection's managed photo copy (the last 68 characters of its path).
    static let photoName = "right(r.photo, 68)"

    /// The queued items (newest file first), of one kind when given, a page at a time.
    public func reviewQueue(kind: ReviewKind?, limit: Int?, offset: Int) async throws(StoreError) -> [ReviewItem] {
        let rows = try withConnection("review queue") { connection in
            try connection.execute("""
                SELECT r.data, \(Self.createdAtColumn) FROM record_queue q JOIN records r ON r.id = q.id
                JOIN source_files f ON f.id = r.file_id
                WHERE \(Self.queueCondition(kind)) ORDER BY q.file_id DESC, q.row DESC LIMIT $1::bigint OFFSET $2
                """, [limit.map { String(max(0, $0)) }, String(max(0, offset))], what: "review queue", reading: true).rows
        }
        var items: [ReviewItem] = []
        for row in rows {
            let record = try decode(BookRecord.self, row[0], what: "a queued record")
            items.append(ReviewItem(record: record, kind: ReviewKind.of(record), createdAt: row[1] ?? ""))
        }
        return items
    }

    /// The queue as `review list` shows it.
    public func reviewQueueEntries(kind: ReviewKind?) async throws(StoreError) -> [ReviewQueueEntry] {
        try await reviewQueue(kind: kind, limit: nil, offset: 0).map { item in
            ReviewQueueEntry(id: item.id, kind: item.kind ?? .match, title: item.record.title, authors: item.record.authors,
                             confidence: item.record.scan?.confidence, boundingBox: item.record.scan?.boundingBox,
                             photoPath: item.record.scan?.photoPath, createdAt: item.createdAt)
        }
    }

    /// How many items wait, of one kind when given.
    public func reviewQueueCount(kind: ReviewKind?) async throws(StoreError) -> Int {
        try withConnection("review queue") { connection in
            try connection.execute("SELECT count(*) FROM record_queue q WHERE \(Self.queueCondition(kind))", what: "review queue",
                                   reading: true).scalar.flatMap { Int($0) } ?? 0
        }
    }

    /// How many records of one file wait for review.
    public func reviewCount(fileHash: String) async throws(StoreError) -> Int {
        try withConnection("review count") { connection in
            try connection.execute("""
                SELECT count(*) FROM records r JOIN source_files f ON f.id = r.file_id
                WHERE f.hash = $1 AND r.review_status = 'needsReview'
                """, [fileHash], what: "review count", reading: true).scalar.flatMap { Int($0) } ?? 0
        }
    }

    /// One record as the queue shows it (also when no longer queued).
    public func reviewItem(id: String) async throws(StoreError) -> ReviewItem? {
        let row = try withConnection("review item") { connection in
            try connection.execute("""
                SELECT r.data, \(Self.createdAtColumn) FROM records r JOIN source_files f ON f.id = r.file_id WHERE r.id = $1
                """, [id], what: "review item", reading: true).rows.first
        }
        guard let row else { return nil }
        let record = try decode(BookRecord.self, row[0], what: "record \(id)")
        return ReviewItem(record: record, kind: ReviewKind.of(record), createdAt: row[1] ?? "")
    }

    /// The fields a person supplied for a record.
    public func recordEdits(id: String) async throws(StoreError) -> [RecordEdit] {
        try withConnection("record edits") { connection in
            try connection.execute("""
                SELECT field, value, locked, edited_by, edited_at FROM record_edits WHERE record_id = $1 ORDER BY field
                """, [id], what: "record edits", reading: true).rows.map { row in
                RecordEdit(field: row[0] ?? "", value: row[1], locked: row[2] == "t", editedBy: row[3] ?? "",
                           at: Self.date(row[4]) ?? Date(timeIntervalSince1970: 0))
            }
        }
    }

    /// The fields a person supplied, by record id.
    public func personEditedFields() async throws(StoreError) -> [String: Set<String>] {
        try withConnection("record edits") { connection in
            var result: [String: Set<String>] = [:]
            for row in try connection.execute("SELECT record_id, field FROM record_edits", what: "record edits",
                                              reading: true).rows {
                if let id = row[0], let field = row[1] { result[id, default: []].insert(field) }
            }
            return result
        }
    }

    /// Every logged review decision, oldest first.
    public func reviewActions() async throws(StoreError) -> [ReviewAction] {
        try withConnection("review actions") { connection in
            try connection.execute("SELECT record_id, action, before, after, acted_at FROM review_actions ORDER BY id",
                                   what: "review actions", reading: true).rows.map(Self.reviewAction)
        }
    }

    static func reviewAction(_ row: [String?]) -> ReviewAction {
        ReviewAction(recordID: row[0] ?? "", action: row[1] ?? "", before: row[2] ?? "", after: row[3] ?? "",
                     at: date(row[4]) ?? Date(timeIntervalSince1970: 0))
    }

    /// Applies a decision to each record in one transaction, after checking each record is still
    /// as the deciding screen saw it (`versions`); logs each with what undoing it restores.
    public func applyReview(_ decision: ReviewDecision, ids: [String], at time: Date, versions: [String: String]) async throws
        -> [ReviewReceipt] {
        let seconds = Self.text(time)
        let action = decision.actionName
        let outcome: Result<[ReviewReceipt], ReviewError> = try transaction("review \(action)") { connection in
            var loaded: [(record: BookRecord, restore: PostgresReviewRestore)] = []
            for id in ids {
                guard let row = try connection.execute("SELECT data, locked_fields FROM records WHERE id = $1 FOR UPDATE",
                                                       [id], what: "review \(action)").rows.first
                else { return .failure(.unknownID(id)) }
                let record = try self.decode(BookRecord.self, row[0], what: "record \(id)")
                if let expected = versions[id], expected != ReviewRules.version(of: record) {
                    return .failure(.changedSince(id: id, now: ReviewRules.standing(of: record)))
                }
                let state = ReviewState(reviewStatus: record.reviewStatus, status: record.status,
                                        candidates: record.enrichment?.candidates.count ?? 0)
                if let refusal = ReviewRules.refusal(decision, id: id, state: state) { return .failure(refusal) }
                let edits = try connection.execute("""
                    SELECT field, value, locked::text, edited_by, edited_at::text FROM record_edits WHERE record_id = $1 ORDER BY field
                    """, [id], what: "review \(action)").rows
                loaded.append((record, PostgresReviewRestore(data: row[0] ?? "", locked: row[1] ?? "[]", edits: edits)))
            }
            var receipts: [ReviewReceipt] = []
            for (original, restoreBefore) in loaded {
                var record = original
                var restore = restoreBefore
                let locked = Set(try self.decode([String].self, restore.locked, what: "locked fields of \(record.id)"))
                let before = ReviewRules.snapshot(record)
                let effects: ReviewEffects
                switch Result(catching: { () throws(ReviewError) -> ReviewEffects in
                    try ReviewRules.apply(decision, to: &record, at: time)
                }) {
                case .success(let value): effects = value
                case .failure(let error): return .failure(error)
                }
                try self.writeUpdates([record], runID: nil, connection)
                if !effects.suppliedFields.isEmpty || !effects.releasedLocks.isEmpty {
                    try connection.execute("UPDATE records SET locked_fields = $2 WHERE id = $1",
                                           [record.id, try self.encode(effects.locks(after: locked).sorted())],
                                           what: "review \(action)")
                    for field in effects.releasedLocks.subtracting(effects.suppliedFields.keys).sorted() {
                        try connection.execute("DELETE FROM record_edits WHERE record_id = $1 AND field = $2", [record.id, field],
                                               what: "review \(action)")
                    }
                    for (field, value) in effects.suppliedFields {
                        try connection.execute("""
                            INSERT INTO record_edits (record_id, field, value, locked, edited_by, edited_at)
                            VALUES ($1, $2, $3, true, 'person', $4)
                            ON CONFLICT (record_id, field) DO UPDATE SET value = excluded.value, locked = true,
                                edited_by = excluded.edited_by, edited_at = excluded.edited_at
                            """, [record.id, field, value, seconds], what: "review \(action)")
                    }
                }
                for change in effects.changeLog {
                    if let id = try connection.execute("""
                        INSERT INTO record_changes (record_id, field, old, new, kind, source, run_id, changed_at)
                        VALUES ($1, $2, $3, $4, $5, $6, NULL, $7) RETURNING id
                        """, [change.recordID, change.field, change.old, change.new, change.kind?.rawValue, change.source,
                              Self.text(change.changedAt)], what: "change log").scalar.flatMap({ Int64($0) }) {
                        restore.changes.append(id)
                    }
                }
                restore.after = ReviewRules.version(of: record)
                guard let actionID = try connection.execute("""
                    INSERT INTO review_actions (record_id, action, before, after, acted_at, restore)
                    VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
                    """, [record.id, action, before, ReviewRules.snapshot(record), seconds, ReviewRules.json(restore)],
                    what: "review \(action)").scalar.flatMap({ Int64($0) })
                else { throw StoreError.writeFailed(path: self.location, what: "review \(action)", reason: "no action id returned") }
                receipts.append(ReviewReceipt(actionID: actionID, record: record))
            }
            return .success(receipts)
        }
        return try outcome.get()
    }

    /// Undoes logged decisions, latest first, in one transaction: each record's value, locks and
    /// field edits go back to what they were, the change log the decision wrote is removed.
    public func undoReview(actionIDs: [Int64], at time: Date) async throws -> [BookRecord] {
        let seconds = Self.text(time)
        let outcome: Result<[BookRecord], ReviewError> = try transaction("review undo") { connection in
            var restored: [BookRecord] = []
            for actionID in actionIDs.sorted(by: >) {
                guard let action = try connection.execute("""
                          SELECT record_id, restore FROM review_actions WHERE id = $1 AND action <> 'undo' AND undone_at IS NULL
                          """, [String(actionID)], what: "review undo").rows.first,
                      let recordID = action[0],
                      let restore = action[1].flatMap({ try? JSONDecoder().decode(PostgresReviewRestore.self, from: Data($0.utf8)) }),
                      let row = try connection.execute("SELECT data FROM records WHERE id = $1 FOR UPDATE", [recordID],
                                                       what: "review undo").rows.first
                else { return .failure(.notUndoable(actionID: actionID)) }
                let current = try self.decode(BookRecord.self, row[0], what: "record \(recordID)")
                guard ReviewRules.version(of: current) == restore.after else {
                    return .failure(.changedSince(id: current.id, now: ReviewRules.standing(of: current)))
                }
                let record = try self.decode(BookRecord.self, restore.data, what: "record \(recordID) before the decision")
                try self.writeUpdates([record], runID: nil, connection)
                try connection.execute("UPDATE records SET locked_fields = $2 WHERE id = $1", [recordID, restore.locked],
                                       what: "review undo")
                try connection.execute("DELETE FROM record_edits WHERE record_id = $1", [recordID], what: "review undo")
                for edit in restore.edits {
                    try connection.execute("""
                        INSERT INTO record_edits (record_id, field, value, locked, edited_by, edited_at)
                        VALUES ($1, $2, $3, $4::boolean, $5, $6::float8)
                        """, [recordID] + edit, what: "review undo")
                }
                if !restore.changes.isEmpty {
                    try connection.execute("DELETE FROM record_changes WHERE id = ANY($1::bigint[])",
                                           ["{" + restore.changes.map(String.init).joined(separator: ",") + "}"], what: "review undo")
                }
                try connection.execute("UPDATE review_actions SET undone_at = $2::float8 WHERE id = $1", [String(actionID), seconds],
                                       what: "review undo")
                try connection.execute("""
                    INSERT INTO review_actions (record_id, action, before, after, acted_at) VALUES ($1, 'undo', $2, $3, $4)
                    """, [recordID, ReviewRules.snapshot(current), ReviewRules.snapshot(record), seconds], what: "review undo")
                restored.append(record)
            }
            return .success(restored)
        }
        return try outcome.get()
    }

    // MARK: - Managed photos

    /// The review status of every detection naming each of these managed photo copies.
    public func detectionStates(photoNames: [String]) async throws(StoreError) -> [String: [DetectionState]] {
        guard !photoNames.isEmpty else { return [:] }
        return try withConnection("photo detections") { connection in try Self.detectionStates(photoNames, connection) }
    }

    static func detectionStates(_ names: [String], _ connection: PostgresConnection) throws -> [String: [DetectionState]] {
        var states: [String: [DetectionState]] = [:]
        for row in try connection.execute("""
            SELECT \(photoName), r.review_status, r.status FROM records r
            WHERE r.photo IS NOT NULL AND \(photoName) = ANY($1::text[])
            """, [array(names)], what: "photo detections", reading: true).rows {
            // An unreadable status keeps the photo (pending is never due).
            if let name = row[0] {
                states[name, default: []].append(DetectionState(
                    reviewStatus: row[1].flatMap(ReviewStatus.init(rawValue:)) ?? .needsReview,
                    status: row[2].flatMap(RecordStatus.init(rawValue:)) ?? .pending))
            }
        }
        return states
    }

    /// In one transaction: the copies `isDue` still lets go get their detections' photo path and
    /// box cleared, and their rows of `photos` are deleted (docs/decisions/0031); returns the
    /// copies so released (deleted already: nothing is left pending).
    public func releaseDetectionPhotos(names: [String], isDue: @escaping @Sendable ([DetectionState]) -> Bool)
        async throws(StoreError) -> [String] {
        try transaction("photo cleanup") { connection in
            let states = try Self.detectionStates(names, connection)
            var released: [String] = []
            for name in names where isDue(states[name] ?? []) {
                let rows = try connection.execute("SELECT r.data FROM records r WHERE r.photo IS NOT NULL AND \(Self.photoName) = $1 FOR UPDATE",
                                                  [name], what: "photo cleanup").rows
                for var record in try self.records(from: rows) {
                    record.scan?.photoPath = nil
                    record.scan?.boundingBox = nil
                    try self.writeUpdates([record], runID: nil, connection)
                }
                try connection.execute("DELETE FROM photos WHERE name = $1", [name], what: "photo cleanup")
                released.append(name)
            }
            return released
        }
    }

    /// The copies noted as pending deletion.
    public func pendingPhotoDeletions() async throws(StoreError) -> [String] {
        try withConnection("photo deletions") { connection in
            try connection.execute("SELECT name FROM photo_deletions ORDER BY name", what: "photo deletions", reading: true)
                .rows.compactMap { $0[0] }
        }
    }

    /// Notes which pending deletions were done and which failed.
    public func recordPhotoDeletions(deleted: [String], failed: [(name: String, reason: String)]) async throws(StoreError) {
        try transaction("photo cleanup") { connection in
            try connection.execute("DELETE FROM photo_deletions WHERE name = ANY($1::text[])", [Self.array(deleted)],
                                   what: "photo cleanup")
            for failure in failed {
                try connection.execute("UPDATE photo_deletions SET attempts = attempts + 1, last_error = $2 WHERE name = $1",
                                       [failure.name, failure.reason], what: "photo cleanup")
            }
        }
    }
}

/// What undoing a review decision on PostgreSQL puts back (kept with the action, as JSON).
struct PostgresReviewRestore: Codable {
    /// The record's JSON before the decision.
    var data: String
    /// Its locked fields (JSON array) before.
    var locked: String
    /// Its field edits before: field, value, locked, edited by, edited at (as text).
    var edits: [[String?]]
    /// The change log rows the decision wrote.
    var changes: [Int64] = []
    /// The record's version after the decision: undo refuses when it changed since.
    var after: String = ""
}
