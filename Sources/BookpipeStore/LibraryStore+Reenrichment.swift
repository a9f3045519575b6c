import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// Saves what enrichment found for these records, in one transaction through the library's
    /// writer, applying ``ReenrichmentRules`` to each (a person's fields are never overwritten, a
    /// failed lookup never replaces an earlier answer, moved and lost matches get a finding, every
    /// changed field is logged). With `owner`, completion is fenced: a record whose claim another
    /// run holds now is not written (its id is returned in ``EnrichmentSave/fencedOut``), and the
    /// claims of the records saved are released in the same transaction.
    /// - Throws: ``StoreError`` when the write fails; nothing of the batch is written then.
    public func saveEnrichment(_ records: [BookRecord], runID: Int64?, at time: Date, owner: ClaimOwner?)
        async throws(StoreError) -> EnrichmentSave {
        guard !records.isEmpty else { return EnrichmentSave() }
        return try await perform("\(records.count) enrichment results") { db in
            let current = try db.cachedStatement(
                sql: "SELECT status, review_status, locked_fields, enrichment FROM records WHERE key = ?")
            // Only for records a person edited: the values the lookup must have asked with.
            let storedRecord = try db.cachedStatement(
                sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?")
            let update = try db.cachedStatement(sql: """
                UPDATE records SET status = ?, findings = ?, enrichment = ?, run_id = coalesce(?, run_id), updated_at = ?
                WHERE key = ?
                """)
            let schedule = try db.cachedStatement(sql: """
                INSERT INTO record_enrichment (key, enriched_at, retry_at) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET enriched_at = excluded.enriched_at, retry_at = excluded.retry_at
                """)
            let retryOnly = try db.cachedStatement(sql: """
                INSERT INTO record_enrichment (key, enriched_at, retry_at) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET retry_at = excluded.retry_at
                """)
            let logChange = try db.cachedStatement(sql: """
                INSERT INTO record_changes (key, field, old, new, kind, source, run_id, changed_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            let claimHolder = try db.cachedStatement(sql: "SELECT owner FROM record_claims WHERE key = ?")
            let release = try db.cachedStatement(sql: "DELETE FROM record_claims WHERE key = ? AND owner = ?")
            let seconds = time.timeIntervalSince1970
            let quotaEnd = try Double.fetchOne(
                db.cachedStatement(sql: "SELECT max(blocked_until) FROM host_quotas WHERE blocked_until > ?"),
                arguments: [seconds]).map(Date.init(timeIntervalSince1970:))
            let decoder = JSONDecoder()
            var counted = RecordCountChanges()
            var result = EnrichmentSave()
            var saved: [BookRecord] = []
            for record in records {
                guard record.enrichment != nil,
                      let fileID = try self.keyCache.fileID(record.origin.fileHash, reading: db) else { continue }
                let key = RecordKey.make(fileID: fileID, row: record.origin.row)
                if let owner {
                    // Fenced: a claim another run holds now wins; no claim at all (released, or never
                    // taken by a run that ended) lets the result in.
                    if let holder = try String.fetchOne(claimHolder, arguments: [key]), holder != owner.id {
                        result.fencedOut.append(record.id)
                        continue
                    }
                    try release.execute(arguments: [key, owner.id])
                }
                guard let row = try Row.fetchOne(current, arguments: [key]) else { continue }
                let reviewStatus = ReviewStatus(rawValue: row["review_status"]) ?? .verified
                var edited: (title: String, authors: [String])?
                if reviewStatus == .userEdited, let stored = try Row.fetchOne(storedRecord, arguments: [key]) {
                    let storedRecord = try RecordCoding.decode(stored, path: self.path)
                    edited = (storedRecord.title, storedRecord.authors)
                }
                let oldStatus: String = row["status"]
                let state = StoredEnrichmentState(
                    status: RecordStatus(rawValue: oldStatus) ?? .pending, reviewStatus: reviewStatus,
                    lockedFields: Self.lockedFields(row["locked_fields"]),
                    enrichment: (row["enrichment"] as String?).flatMap {
                        try? decoder.decode(EnrichmentResult.self, from: Data($0.utf8))
                    },
                    editedTitleAndAuthors: edited)
                switch ReenrichmentRules.decide(record, stored: state, quotaEnd: quotaEnd, at: time) {
                case .keep:
                    continue
                case .retryLater(let retryAt):
                    try retryOnly.execute(arguments: [key, seconds, retryAt.timeIntervalSince1970])
                case .write(let record, let changes, let retryAt):
                    guard let new = record.enrichment else { continue }
                    if oldStatus != record.status.rawValue {
                        counted.add(fileID: fileID, status: oldStatus, -1)
                        counted.add(fileID: fileID, status: record.status.rawValue, 1)
                    }
                    try update.execute(arguments: [
                        record.status.rawValue,
                        record.findings.isEmpty ? nil : RecordCoding.encodeFindings(record.findings),
                        RecordCoding.encodeEnrichment(new), runID, Int64(seconds), key,
                    ])
                    try schedule.execute(arguments: [key, seconds, retryAt?.timeIntervalSince1970])
                    for change in changes {
                        try logChange.execute(arguments: [key, change.field, change.old, change.new, change.kind?.rawValue,
                                                          change.source, runID, seconds])
                    }
                    result.changes += changes
                    saved.append(record)
                }
            }
            try counted.apply(db)
            try self.upsertMatchedWorks(saved, db: db, now: Int64(seconds))
            return result
        }
    }

    /// The share of the library's looked-up records that reached each source of `chain` (in chain
    /// order): a source is asked for a row only when no source before it matched it, so its share
    /// is 1 minus the shares the earlier sources matched. Counted over the records looked up so far
    /// (enriched, notFound, needsCandidateSelection); nil when fewer than `minimum` were.
    /// - Throws: ``StoreError`` when the read fails.
    public func lookupReach(chain: [String], minimum: Int = 50) throws(StoreError) -> [String: Double]? {
        try read("lookup history") { db in
            var matched: [String: Int] = [:]
            var total = 0
            let rows = try Row.fetchAll(db, sql: """
                SELECT json_extract(enrichment, '$.match.source') AS source, count(*) AS n FROM records
                WHERE status IN ('enriched', 'notFound', 'needsCandidateSelection') GROUP BY 1
                """)
            for row in rows {
                let count: Int = row["n"]
                total += count
                if let source: String = row["source"] { matched[source, default: 0] += count }
            }
            return EnrichmentSelection.reach(chain: chain, matchedBySource: matched, lookedUp: total, minimum: minimum)
        }
    }

    /// The change log of one record, oldest first.
    /// - Throws: ``StoreError`` when the read fails.
    public func recordChanges(recordID: String) throws(StoreError) -> [RecordChange] {
        try read("record changes") { db in
            guard let (hash, row) = RecordKey.parse(id: recordID),
                  let fileID = try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash])
            else { return [] }
            return try Row.fetchAll(db, sql: "SELECT * FROM record_changes WHERE key = ? ORDER BY id",
                                    arguments: [RecordKey.make(fileID: fileID, row: row)]).map { row in
                RecordChange(recordID: recordID, field: row["field"], old: row["old"], new: row["new"],
                             kind: (row["kind"] as String?).flatMap(RecordChange.Kind.init(rawValue:)),
                             source: row["source"], changedAt: Date(timeIntervalSince1970: row["changed_at"]))
            }
        }
    }

    /// The keys of the records `selection` names, in the order they are to be asked (see
    /// ``EnrichmentSelection``); records whose match a person chose (the `match` lock of
    /// `review choose`) are left out; records a person edited otherwise are asked like any other
    /// (with the person's title and authors). One read of two integers per record (8 MB for a million).
    /// - Throws: ``StoreError`` when the read fails.
    func enrichmentQueue(_ selection: EnrichmentSelection) throws(StoreError) -> [Int64] {
        try read("records to enrich") { db in try Self.enrichmentQueue(selection, db: db) }
    }

    /// The keys of ``enrichmentQueue(_:)``, read in a transaction of the caller's.
    static func enrichmentQueue(_ selection: EnrichmentSelection, db: Database) throws -> [Int64] {
        var (condition, arguments) = selectionCondition(selection)
        // 0: failed, due; 1: never enriched; 2: the rest, stalest first; 3: failed, blocked until later.
        let sql = """
            SELECT r.key FROM records r LEFT JOIN record_enrichment e ON e.key = r.key
            WHERE \(condition)
            ORDER BY CASE
                WHEN r.status = 'failed' AND coalesce(e.retry_at, 0) <= ? THEN 0
                WHEN r.status = 'pending' THEN 1
                WHEN r.status = 'failed' THEN 3
                ELSE 2 END,
                coalesce(e.enriched_at, r.updated_at), r.key
            """
        arguments.append(selection.now.timeIntervalSince1970)
        return try Int64.fetchAll(db, sql: sql, arguments: StatementArguments(arguments))
    }

    /// True when the record with `key` is still one `selection` names (its status or age may have
    /// changed since a queue listed it), read in a transaction of the caller's. Asked once for
    /// every record a claim takes: the statement is prepared once per selection's shape (its SQL
    /// depends only on which conditions apply; preparing it for every record cost 6 % of an
    /// offline enrichment's CPU).
    static func isSelected(key: Int64, by selection: EnrichmentSelection, db: Database) throws -> Bool {
        var (condition, arguments) = selectionCondition(selection)
        arguments.insert(key, at: 0)
        let statement = try db.cachedStatement(sql: """
            SELECT 1 FROM records r LEFT JOIN record_enrichment e ON e.key = r.key WHERE r.key = ? AND \(condition)
            """)
        return try Bool.fetchOne(statement, arguments: StatementArguments(arguments)) ?? false
    }

    /// The condition on `records r` (joined with `record_enrichment e`) that `selection` names, and its arguments.
    private static func selectionCondition(_ selection: EnrichmentSelection) -> (String, [any DatabaseValueConvertible]) {
        var conditions = ["r.status IN (\(databaseQuestionMarks(count: max(1, selection.statuses.count))))"]
        var arguments: [any DatabaseValueConvertible] = selection.statuses.isEmpty ? ["pending"]
            : selection.statuses.map(\.rawValue)
        if let staleBefore = selection.staleBefore {
            conditions.append("(r.status != 'pending' AND coalesce(e.enriched_at, r.updated_at) < ?)")
            arguments.append(staleBefore.timeIntervalSince1970)
        }
        if selection.repairsWorkKeys {
            // JSONEncoder may write `/` as `\/`: both spellings.
            conditions.append(#"(r.status = 'enriched' AND (r.enrichment LIKE '%"match":{%"workKey":"\/books\/%' "#
                              + #"OR r.enrichment LIKE '%"match":{%"workKey":"/books/%'))"#)
        }
        if selection.retriesDueFailures && !selection.statuses.contains(.failed) {
            conditions.append("(r.status = 'failed' AND coalesce(e.retry_at, 0) <= ?)")
            arguments.append(selection.now.timeIntervalSince1970)
        }
        return ("coalesce(r.locked_fields, '') NOT LIKE '%\"match\"%' AND (" + conditions.joined(separator: " OR ") + ")",
                arguments)
    }

    /// The records with these keys (from ``enrichmentQueue(_:)``), in the order given; missing keys
    /// are skipped.
    /// - Throws: ``StoreError`` when the read fails or a stored value is unreadable.
    func records(keys: [Int64]) throws(StoreError) -> [BookRecord] {
        try read("records") { db in
            let statement = try db.cachedStatement(
                sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?")
            return try keys.compactMap { key in
                try Row.fetchOne(statement, arguments: [key]).map { try RecordCoding.decode($0, path: path) }
            }
        }
    }

    /// When each of these records was last enriched (absent: never), keyed by record id.
    /// - Throws: ``StoreError`` when the read fails.
    public func enrichedAt(recordIDs: [String]) throws(StoreError) -> [String: Date] {
        try read("enrichment times") { db in
            var result: [String: Date] = [:]
            for id in recordIDs {
                guard let (hash, row) = RecordKey.parse(id: id),
                      let fileID = try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash]),
                      let seconds = try Double.fetchOne(db, sql: "SELECT enriched_at FROM record_enrichment WHERE key = ?",
                                                        arguments: [RecordKey.make(fileID: fileID, row: row)])
                else { continue }
                result[id] = Date(timeIntervalSince1970: seconds)
            }
            return result
        }
    }
}
