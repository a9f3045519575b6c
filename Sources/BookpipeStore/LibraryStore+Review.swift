import BookpipeCore
import Foundation
import GRDB

/// The two kinds of review-queue items.
public enum ReviewKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A bookshelf-scan detection the detector was unsure of (`reviewStatus == needsReview`).
    case scan
    /// An uncertain match: candidates were found, none accepted (`status == needsCandidateSelection`).
    case match
}

/// One record as the review queue shows it.
public struct ReviewItem: Sendable, Hashable {
    /// The record as stored.
    public var record: BookRecord
    /// The queue it is in, or nil when it is not queued (already reviewed).
    public var kind: ReviewKind?
    /// When the record's file was first imported (ISO 8601, UTC).
    public var createdAt: String

    /// The record's id.
    public var id: String { record.id }

    /// Creates an item.
    public init(record: BookRecord, kind: ReviewKind?, createdAt: String) {
        self.record = record
        self.kind = kind
        self.createdAt = createdAt
    }
}

/// One queued item as `review list` shows it, read from the few columns the list needs (the
/// record itself is not decoded: no findings, enrichment or normalised forms).
public struct ReviewQueueEntry: Sendable, Hashable {
    /// The record's id (`<hash>:<row>`).
    public var id: String
    /// The queue it is in.
    public var kind: ReviewKind
    /// The title as read (or edited).
    public var title: String
    /// The authors as read (or edited).
    public var authors: [String]
    /// The detector's confidence, when it gave one.
    public var confidence: Double?
    /// The detection's normalised box, when it had one.
    public var boundingBox: BoundingBox?
    /// The stored path of the detection's managed photo copy; nil when there is none (never
    /// given, refused, or deleted after review). The copy itself may be gone.
    public var photoPath: String?
    /// When the record's file was first imported (ISO 8601, UTC).
    public var createdAt: String

    /// Creates an entry.
    public init(id: String, kind: ReviewKind, title: String, authors: [String], confidence: Double?,
                boundingBox: BoundingBox?, photoPath: String?, createdAt: String) {
        self.id = id
        self.kind = kind
        self.title = title
        self.authors = authors
        self.confidence = confidence
        self.boundingBox = boundingBox
        self.photoPath = photoPath
        self.createdAt = createdAt
    }
}

/// One logged review decision.
public struct ReviewAction: Sendable, Hashable {
    /// The record's id.
    public var recordID: String
    /// `verify`, `edit`, `choose` or `choose-none`.
    public var action: String
    /// JSON of the reviewed fields before.
    public var before: String
    /// JSON of the reviewed fields after.
    public var after: String
    /// When it was taken.
    public var at: Date
}

/// A field a person supplied; locked fields are never overwritten by enrichment.
public struct RecordEdit: Sendable, Hashable {
    /// `title`, `authors` or `match`.
    public var field: String
    /// JSON of the value the person gave.
    public var value: String?
    /// Whether enrichment must leave the field alone.
    public var locked: Bool
    /// Who supplied it (`person`).
    public var editedBy: String
    /// When.
    public var at: Date
}

/// A review action that cannot be carried out.
public enum ReviewError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No record has this id.
    case unknownID(String)
    /// The candidate number is not one of the record's candidates.
    case noSuchCandidate(id: String, number: Int, count: Int)
    /// An edit that changes nothing (no title and no author given, or an empty title).
    case emptyEdit(id: String)
    /// A verify of an uncertain match: nothing to verify as it is (no match was accepted); the
    /// person chooses a candidate, or none.
    case uncertainMatch(id: String, candidates: Int)

    /// The message for people.
    public var description: String {
        switch self {
        case .unknownID(let id):
            return "No record has the id \(id). `bookpipe review list` shows the queued ids."
        case .noSuchCandidate(let id, _, let count):
            return count == 0
                ? "\(id) has no candidates to choose from: it has not been looked up since it was imported or edited "
                    + "(`bookpipe enrich` looks it up; then choose), or no source knew it (correct it with "
                    + "`bookpipe review edit \(id) --title … --author …`)."
                : "\(id) has \(count) candidate\(count == 1 ? "" : "s"); choose a number from 1 to \(count), or --none."
        case .emptyEdit(let id):
            return "Nothing to change for \(id): give a non-empty --title and/or --author."
        case .uncertainMatch(let id, let count):
            return "\(id) is an uncertain match: no candidate was accepted, so there is nothing to verify as it is. "
                + "Choose one of its \(count) candidate\(count == 1 ? "" : "s") with `bookpipe review choose \(id) N` "
                + "(`bookpipe review show \(id)` lists them), or `bookpipe review choose \(id) --none`. Nothing was changed."
        }
    }
}

/// What a photo cleanup did.
public struct PhotoCleanup: Sendable, Hashable {
    /// Managed copies deleted (or found already gone).
    public var deleted: [String] = []
    /// Copies whose delete failed, with the reason; they are retried at the next run.
    public var failures: [String] = []
    /// Creates an empty result.
    public init() {}
}

/// The reviewed fields of a record, as logged before and after a review action.
struct ReviewSnapshot: Codable {
    var title: String
    var authors: [String]
    var reviewStatus: String
    var status: String
    var match: String?

    init(_ record: BookRecord) {
        title = record.title
        authors = record.authors
        reviewStatus = record.reviewStatus.rawValue
        status = record.status.rawValue
        match = record.enrichment?.match?.workKey
    }
}

extension LibraryStore {
    static let queueCondition = "(r.review_status = 'needsReview' OR r.status = 'needsCandidateSelection')"

    static func condition(_ kind: ReviewKind?) -> String {
        switch kind {
        case nil: queueCondition
        case .scan: "r.review_status = 'needsReview'"
        case .match: "r.status = 'needsCandidateSelection'"
        }
    }

    static func kind(of record: BookRecord) -> ReviewKind? {
        if record.reviewStatus == .needsReview { return .scan }
        if record.status == .needsCandidateSelection { return .match }
        return nil
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
                items.append(ReviewItem(record: record, kind: Self.kind(of: record), createdAt: row["created_at"] ?? ""))
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
            return ReviewItem(record: record, kind: Self.kind(of: record), createdAt: row["created_at"] ?? "")
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

    /// Who supplied each reviewed field of a record: `person` for an edited field, otherwise
    /// `file` for title and authors and the source's name for the match.
    /// - Parameter record: A stored record.
    /// - Throws: ``StoreError`` when the read fails.
    public func provenance(of record: BookRecord) throws(StoreError) -> [String: String] {
        Self.provenance(of: record, editedByPerson: Set(try recordEdits(id: record.id).map(\.field)))
    }

    /// Who supplied the reviewable fields of a record, given the fields a person supplied
    /// (``personEditedFields()``): `title` and `authors` are `person` when edited, else `file`;
    /// `match` (when there is one, or when a person chose none) is `person` when chosen in review,
    /// else the name of the source that found it (`openlibrary`, `googlebooks`, `catalog`, …).
    /// - Parameters:
    ///   - record: A record.
    ///   - editedByPerson: The fields a person supplied (`title`, `authors`, `match`).
    public static func provenance(of record: BookRecord, editedByPerson: Set<String>) -> [String: String] {
        var result = ["title": editedByPerson.contains("title") ? "person" : "file",
                      "authors": editedByPerson.contains("authors") ? "person" : "file"]
        if editedByPerson.contains("match") {
            result["match"] = "person"
        } else if let match = record.enrichment?.match {
            result["match"] = match.source
        }
        return result
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

    /// Marks records as checked by a person (`verified`), logging each. Ids of records that are
    /// already verified are logged too (the decision is the person's).
    ///
    /// An uncertain match that is not also an unsure detection is refused: verifying it "as it
    /// is" would accept nothing, and taking the top candidate would be a match nobody chose (a
    /// wrong match is worse than none). A detection that is also an uncertain match is verified
    /// as a detection and stays queued as a match (``ReviewKind/match``) until a candidate is chosen.
    /// - Parameters:
    ///   - ids: Record ids.
    ///   - time: When.
    /// - Returns: The records as stored after.
    /// - Throws: ``ReviewError/unknownID(_:)`` or ``ReviewError/uncertainMatch(id:candidates:)``
    ///   (nothing written for any id), or ``StoreError``.
    @discardableResult
    public func verify(ids: [String], at time: Date = Date()) async throws -> [BookRecord] {
        try await reviewAction(ids: ids, action: "verify", at: time, refuse: { id, state in
            state.reviewStatus != ReviewStatus.needsReview.rawValue && state.status == RecordStatus.needsCandidateSelection.rawValue
                ? ReviewError.uncertainMatch(id: id, candidates: state.candidates) : nil
        }) { record in
            record.reviewStatus = .verified
            return ReviewEffects()
        }
    }

    /// Replaces a record's title and/or authors with what a person typed: the record becomes
    /// `userEdited`, the edited fields are locked against enrichment, and the record is normalised
    /// again from the new values (as an import does: findings about the replaced values are dropped
    /// first, then the normaliser raises what applies to the new ones).
    ///
    /// An edit that changes the title or the authors makes the record's lookup stale: it was asked
    /// with what the person has just said is wrong. So the enrichment is cleared (status `pending`,
    /// no match, no candidates, no finding about the old match) and the next `bookpipe enrich`
    /// looks the record up again from the edited values (``saveEnrichment(_:runID:at:)`` keeps the
    /// person's title and authors). The change log (``recordChanges(recordID:)``) keeps the match
    /// and status cleared, with `person` as their source. A match the person chose earlier
    /// (``choose(id:candidate:at:)``, ``chooseNone(id:at:)``) was chosen for the old values: the edit
    /// releases its lock, and the lookup chooses again (or queues the record for a choice). An edit
    /// that types the values already stored leaves the lookup as it is.
    ///
    /// ```swift
    /// let edited = try await store.edit(id: id, title: "It", authors: ["Stephen King"])
    /// edited.status            // .pending: `bookpipe enrich` matches it from "It" by Stephen King
    /// ```
    /// - Parameters:
    ///   - id: A record id.
    ///   - title: The new title, or nil to keep it.
    ///   - authors: The new authors, or nil to keep them.
    ///   - time: When.
    /// - Returns: The record as stored after.
    /// - Throws: ``ReviewError`` or ``StoreError``.
    @discardableResult
    public func edit(id: String, title: String?, authors: [String]?, at time: Date = Date()) async throws -> BookRecord {
        let title = title?.trimmingCharacters(in: .whitespacesAndNewlines)
        let authors = authors?.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        guard title != nil || authors != nil, title?.isEmpty != true else { throw ReviewError.emptyEdit(id: id) }
        return try await reviewAction(ids: [id], action: "edit", at: time) { record in
            var effects = ReviewEffects()
            let changesLookup = (title.map { $0 != record.title } ?? false) || (authors.map { $0 != record.authors } ?? false)
            var replaced: Set<String> = []
            if let title {
                record.title = title
                effects.suppliedFields["title"] = RecordCoding.encode(title)
                replaced.insert("title")
            }
            if let authors {
                record.authors = authors
                effects.suppliedFields["authors"] = RecordCoding.encode(authors)
                replaced.formUnion(["authors", "author"])
            }
            record.reviewStatus = .userEdited
            if changesLookup {
                replaced.insert("match")
                effects.changeLog = Self.clearLookup(of: &record, at: time)
                effects.releasedLocks = ["match"]
            }
            record.findings.removeAll { $0.field.map(replaced.contains) ?? false }
            Normalizer.normalize(&record, currentYear: Normalizer.currentYear())
            return effects
        }[0]
    }

    /// Clears the enrichment of a record whose title or authors a person corrected (status
    /// `pending`, no match, no candidates) and returns what the change log keeps: the status and
    /// the match as a re-enrichment would log them, the match's change of kind
    /// ``RecordChange/Kind/cleared``, each with `person` as its source. Nothing for a record never
    /// looked up.
    static func clearLookup(of record: inout BookRecord, at time: Date) -> [RecordChange] {
        guard let old = record.enrichment else { return [] }
        record.enrichment = nil
        return RecordChange.between(old, EnrichmentResult(status: .pending), recordID: record.id, at: time).map { change in
            var change = change
            change.source = "person"
            if change.kind != nil { change.kind = .cleared }
            return change
        }
    }

    /// Accepts candidate `number` (1-based, as `review show` lists them) as the record's match;
    /// the match is locked against enrichment.
    /// - Throws: ``ReviewError`` or ``StoreError``.
    @discardableResult
    public func choose(id: String, candidate number: Int, at time: Date = Date()) async throws -> BookRecord {
        try await reviewAction(ids: [id], action: "choose", at: time) { record in
            let candidates = record.enrichment?.candidates ?? []
            guard number >= 1, number <= candidates.count else {
                throw ReviewError.noSuchCandidate(id: id, number: number, count: candidates.count)
            }
            let chosen = candidates[number - 1]
            var result = record.enrichment ?? EnrichmentResult(status: .enriched)
            result.status = .enriched
            result.failure = nil
            result.match = Match(workKey: chosen.workKey, editionKey: chosen.editionKey, title: chosen.title,
                                 authors: chosen.authors, score: chosen.score, source: chosen.source)
            record.enrichment = result
            if record.reviewStatus == .needsReview { record.reviewStatus = .verified }
            return ReviewEffects(suppliedFields: ["match": RecordCoding.encode(chosen.workKey)])
        }[0]
    }

    /// Records that none of the candidates is the book: the record becomes `notFound`, locked.
    /// - Throws: ``ReviewError`` or ``StoreError``.
    @discardableResult
    public func chooseNone(id: String, at time: Date = Date()) async throws -> BookRecord {
        try await reviewAction(ids: [id], action: "choose-none", at: time) { record in
            var result = record.enrichment ?? EnrichmentResult(status: .notFound)
            result.status = .notFound
            result.match = nil
            record.enrichment = result
            if record.reviewStatus == .needsReview { record.reviewStatus = .verified }
            return ReviewEffects(suppliedFields: ["match": "null"])
        }[0]
    }

    /// What a review decision does besides changing the record itself, written in the same
    /// transaction.
    struct ReviewEffects {
        /// The fields the person supplied, with the JSON of each value: kept in `record_edits`
        /// and locked against enrichment.
        var suppliedFields: [String: String] = [:]
        /// Fields whose earlier lock the decision releases (a match chosen for a title the person
        /// has since corrected): no longer the person's, enrichment may set them again.
        var releasedLocks: Set<String> = []
        /// What the change log keeps of the decision (the lookup an edit made stale).
        var changeLog: [RecordChange] = []
    }

    /// What a review action checks about a record before anything is written.
    struct ReviewState {
        var reviewStatus: String
        var status: String
        /// How many candidates the record keeps.
        var candidates: Int
    }

    /// Applies one decision to each record in one transaction through the library's writer: the
    /// record, its locks, its field edits, its change log and the action log commit together.
    /// Before anything is written, every id is looked up (an unknown one throws
    /// ``ReviewError/unknownID(_:)``) and `refuse` may turn any of them down: then nothing is
    /// written for any id.
    private func reviewAction(
        ids: [String], action: String, at time: Date,
        refuse: (_ id: String, _ state: ReviewState) -> ReviewError? = { _, _ in nil },
        change: @escaping @Sendable (inout BookRecord) throws -> ReviewEffects
    ) async throws -> [BookRecord] {
        // One read for all ids, from the columns (no record decoded).
        let states = try read("review check") { db in
            try ids.map { id -> ReviewState? in
                guard let key = try reviewKey(id: id, db: db),
                      let row = try Row.fetchOne(db, sql: """
                          SELECT review_status, status, coalesce(json_array_length(enrichment, '$.candidates'), 0) FROM records WHERE key = ?
                          """, arguments: [key])
                else { return nil }
                return ReviewState(reviewStatus: row[0], status: row[1], candidates: row[2])
            }
        }
        for (id, state) in zip(ids, states) {
            guard let state else { throw ReviewError.unknownID(id) }
            if let refusal = refuse(id, state) { throw refusal }
        }
        let seconds = time.timeIntervalSince1970
        let outcome: Result<[BookRecord], ReviewError> = try await perform("review \(action)") { db in
            var changed: [BookRecord] = []
            for id in ids {
                guard let key = try self.reviewKey(id: id, db: db),
                      let row = try Row.fetchOne(db, sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?",
                                                 arguments: [key])
                else { return .failure(.unknownID(id)) }
                var record = try RecordCoding.decode(row, path: self.path)
                let before = ReviewSnapshot(record)
                let effects: ReviewEffects
                do {
                    effects = try change(&record)
                } catch let error as ReviewError {
                    return .failure(error)
                }
                try self.writeUpdates([record], runID: nil, db: db)
                if !effects.suppliedFields.isEmpty || !effects.releasedLocks.isEmpty {
                    var locked = Self.lockedFields(row["locked_fields"])
                    locked.subtract(effects.releasedLocks)
                    locked.formUnion(effects.suppliedFields.keys)
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
                }
                try db.execute(sql: "INSERT INTO review_actions (key, action, before, after, acted_at) VALUES (?, ?, ?, ?, ?)",
                               arguments: [key, action, RecordCoding.encode(before), RecordCoding.encode(ReviewSnapshot(record)), seconds])
                changed.append(record)
            }
            return .success(changed)
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

    /// Of the managed copies `names`, those due for deletion: at least one detection names the
    /// copy and none of them is waiting for review (`verified` and `userEdited` are reviewed).
    /// One query, two index seeks per copy (``ensureScanPhotoIndex()``), whatever the queue's size.
    static func photosDue(_ names: [String], db: Database) throws -> [String] {
        guard !names.isEmpty else { return [] }
        return try String.fetchAll(db, sql: """
            SELECT copy.value FROM json_each(?) AS copy
            WHERE EXISTS (SELECT 1 FROM records WHERE detection IS NOT NULL AND \(photoNameExpression) = copy.value)
              AND NOT EXISTS (SELECT 1 FROM records WHERE detection IS NOT NULL AND \(photoNameExpression) = copy.value
                              AND review_status NOT IN ('verified', 'userEdited'))
            ORDER BY copy.value
            """, arguments: [RecordCoding.encode(names)])
    }

    /// Deletes the managed copies of photos whose detections are all reviewed (`verified` or
    /// `userEdited`) and clears those detections' photo path and box. Deletes that failed before
    /// are retried. Only the managed folder is touched, never the user's original photo.
    ///
    /// Cheap when there is nothing to do: with no managed copies and no pending delete, only the
    /// folder is listed; with copies, one query on the scan-photo index finds those due (none
    /// while each copy still has a detection waiting for review), and nothing is written.
    /// - Parameter photos: The library's managed folder.
    /// - Returns: What was deleted and what failed (log it; it is retried next time).
    /// - Throws: ``StoreError`` when the library cannot be written.
    public func cleanUpReviewedPhotos(_ photos: ManagedPhotos) async throws(StoreError) -> PhotoCleanup {
        let stored = (try? photos.storedNames()) ?? []
        if !stored.isEmpty { try ensureScanPhotoIndex() }
        var (names, candidates) = try read("photo deletions") { db in
            (try String.fetchAll(db, sql: "SELECT name FROM photo_deletions"), try Self.photosDue(stored, db: db))
        }
        if !candidates.isEmpty {
            names = try await perform("photo cleanup") { [candidates] db in
                // Checked again inside the write: a detection queued meanwhile keeps its photo.
                let due = try Self.photosDue(candidates, db: db)
                var names = Set(try String.fetchAll(db, sql: "SELECT name FROM photo_deletions"))
                let decoder = JSONDecoder()
                for name in due {
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
                    names.insert(name)
                }
                return names.sorted()
            }
        }
        var cleanup = PhotoCleanup()
        var failed: [(String, String)] = []
        for name in names {
            do {
                _ = try photos.delete(named: name)
                cleanup.deleted.append(name)
            } catch {
                cleanup.failures.append(error.description)
                failed.append((name, error.description))
            }
        }
        guard !names.isEmpty else { return cleanup }
        let deleted = cleanup.deleted
        let failedNow = failed
        try await perform("photo cleanup") { db in
            for name in deleted { try db.execute(sql: "DELETE FROM photo_deletions WHERE name = ?", arguments: [name]) }
            for (name, reason) in failedNow {
                try db.execute(sql: "UPDATE photo_deletions SET attempts = attempts + 1, last_error = ? WHERE name = ?",
                               arguments: [reason, name])
            }
        }
        return cleanup
    }
}
