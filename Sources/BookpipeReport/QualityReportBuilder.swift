import BookpipeCore
import BookpipeStore
import Foundation
import GRDB

/// Computes a ``QualityReport`` from a library with SQL: aggregates run in SQLite (one snapshot),
/// so a report of 100,000 records reads each row a few times and decodes none of them.
///
/// Works on any library, including one imported with `--no-enrich` (then every record is
/// `pending`, and the matching and source sections are empty).
///
/// ```swift
/// let report = try QualityReportBuilder(store: store).build()
/// try ReportRenderer.html(report).write(toFile: "report.html", atomically: true, encoding: .utf8)
/// ```
public struct QualityReportBuilder: Sendable {
    /// What to include.
    public struct Options: Sendable, Hashable {
        /// Only the records last written by this run; nil: the whole library.
        public var runID: Int64?
        /// The most findings listed (counts are always complete); nil: all.
        public var findingLimit: Int?

        /// Creates options.
        public init(runID: Int64? = nil, findingLimit: Int? = nil) {
            self.runID = runID
            self.findingLimit = findingLimit
        }
    }

    /// The library.
    public let store: LibraryStore
    /// What to include.
    public let options: Options
    /// The time the report is made at (injected for tests).
    public let now: Date

    /// Creates a builder.
    public init(store: LibraryStore, options: Options = Options(), now: Date = Date()) {
        self.store = store
        self.options = options
        self.now = now
    }

    /// Computes the report in one read transaction.
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func build() throws(StoreError) -> QualityReport {
        try store.readDatabase("report") { db in
            SQLFunctions.register(in: db)
            var computation = Computation(db: db, options: options, now: now, library: store.path)
            return try computation.run()
        }
    }
}

/// SQL functions the report's queries use.
enum SQLFunctions {
    /// `bookpipe_date_ok(value)`: 1 when the value is not text, is blank, or reads as a date
    /// (``DateValidation``), else 0.
    static let dateOK = DatabaseFunction("bookpipe_date_ok", argumentCount: 1, pure: true) { values in
        guard let text = String.fromDatabaseValue(values[0]) else { return 1 }
        return isDateOrBlank(text) ? 1 : 0
    }

    /// What `bookpipe_date_ok` answers for a text.
    static func isDateOrBlank(_ text: String) -> Bool {
        DateValidation.isReadable(text) || text.trimmingCharacters(in: .whitespaces).isEmpty
    }

    static func register(in db: Database) {
        StoredColumnFunctions.register(in: db)
        db.add(function: dateOK)
    }
}

/// One report's queries, in one read transaction.
private struct Computation {
    let db: Database
    let options: QualityReportBuilder.Options
    let now: Date
    let library: String
    /// `WHERE` condition on `records r` for the scope.
    let scope: String
    /// `WHERE` condition on a table with `run_id` for the scope.
    let runScope: String
    /// Origin id → path; file id → hash.
    var originPaths: [Int64: String] = [:]
    var fileHashes: [Int64: String] = [:]

    init(db: Database, options: QualityReportBuilder.Options, now: Date, library: String) {
        self.db = db
        self.options = options
        self.now = now
        self.library = library
        scope = options.runID.map { "r.run_id = \($0)" } ?? "1"
        runScope = options.runID.map { "run_id = \($0)" } ?? "1"
    }

    func reference(key: Int64, line: Int, origin: Int64) -> QualityReport.RowReference {
        QualityReport.RowReference(id: "\(fileHashes[key >> 32] ?? "?"):\(key & 0xFFFF_FFFF)",
                                   file: originPaths[origin] ?? "?", line: line)
    }

    mutating func run() throws -> QualityReport {
        for row in try Row.fetchAll(db, sql: "SELECT id, path FROM record_origins") { originPaths[row["id"]] = row["path"] }
        for row in try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files") { fileHashes[row["id"]] = row["hash"] }

        // Terminal states and reasons.
        var byStatus = Dictionary(uniqueKeysWithValues: RecordStatus.allCases.map { ($0.rawValue, 0) })
        for row in try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM records r WHERE \(scope) GROUP BY status") {
            byStatus[row["status"], default: 0] += row["n"] as Int
        }
        let failureReasons = try counts("""
            SELECT coalesce(json_extract(enrichment, '$.failure'), 'unknown') AS name, count(*) AS n
            FROM records r WHERE \(scope) AND status = 'failed' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 50
            """)
        let rejectedCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM rejected_rows WHERE \(runScope)") ?? 0

        // One scan for completeness and the review queue.
        let totals = try Row.fetchOne(db, sql: """
            SELECT count(*) AS total,
                sum(isbn13 IS NOT NULL) AS isbn,
                sum(status = 'enriched' AND (isbn13 IS NOT NULL
                    OR json_extract(enrichment, '$.match.editionKey') GLOB '*OL[0-9]*M')) AS cover,
                sum(json_type(fields, '$[3]') = 'integer') AS year,
                sum(json_type(fields, '$[5]') = 'integer') AS pages,
                sum(json_type(fields, '$[4]') IN ('integer', 'text')) AS publisher,
                sum(review_status = 'needsReview' OR status = 'needsCandidateSelection') AS waiting,
                sum(review_status = 'needsReview') AS waiting_scans,
                sum(review_status IS NOT 'needsReview' AND status = 'needsCandidateSelection') AS waiting_matches,
                sum(review_status = 'userEdited') AS corrected,
                sum(detection IS NOT NULL) AS detections,
                sum(detection IS NOT NULL AND json_extract(detection, '$.confidence') IS NULL) AS missing_confidence
            FROM records r WHERE \(scope)
            """)
        let total: Int = totals?["total"] ?? 0
        func sum(_ column: String) -> Int { totals?[column] ?? 0 }
        let completeness = ["isbn", "cover", "year", "pages", "publisher"].map {
            QualityReport.Completeness(field: $0, present: sum($0), total: total)
        }

        // Matching.
        let bySource = try counts("""
            SELECT json_extract(enrichment, '$.match.source') AS name, count(*) AS n
            FROM records r WHERE \(scope) AND status = 'enriched' GROUP BY 1 ORDER BY 2 DESC, 1
            """)
        let scoreHistogram = try histogram(
            "SELECT json_extract(enrichment, '$.match.score') FROM records r WHERE \(scope) AND status = 'enriched'",
            width: 20, buckets: 15)
        let candidateHistogram = try histogram(
            "SELECT json_extract(enrichment, '$.candidates[0].score') FROM records r WHERE \(scope) AND status = 'needsCandidateSelection'",
            width: 20, buckets: 15)
        let meanScore = try Double.fetchOne(db, sql: """
            SELECT avg(json_extract(enrichment, '$.match.score')) FROM records r WHERE \(scope) AND status = 'enriched'
            """)

        // Review queue ages (updated_at: when the record was last written, i.e. queued). The queue
        // is what `bookpipe review list` shows: scan detections to check and uncertain matches.
        let ages = try Int64.fetchAll(db, sql: """
            SELECT updated_at FROM records r WHERE \(scope)
                AND (review_status = 'needsReview' OR status = 'needsCandidateSelection') ORDER BY updated_at
            """).map { max(0, now.timeIntervalSince1970 - Double($0)) / 86_400 }
        let confidenceHistogram = try histogram(
            "SELECT json_extract(detection, '$.confidence') FROM records r WHERE \(scope) AND detection IS NOT NULL",
            width: 0.1, buckets: 10)
        // Review outcomes, from the log of review actions: per record, corrected if any action
        // changed it (an edit, a choice that changed the match), else verified as it was.
        var reviewed: (corrected: Int, verified: Int)?
        if try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'review_actions'") == true {
            let outcome = try Row.fetchOne(db, sql: """
                SELECT coalesce(sum(corrected), 0) AS corrected, coalesce(sum(NOT corrected), 0) AS verified FROM (
                    SELECT max(a.action = 'edit' OR (a.action IN ('choose', 'choose-none')
                        AND json_extract(a.before, '$.match') IS NOT json_extract(a.after, '$.match'))) AS corrected
                    FROM review_actions a JOIN records r ON r.key = a.key WHERE \(scope) GROUP BY a.key)
                """)
            reviewed = (outcome?["corrected"] ?? 0, outcome?["verified"] ?? 0)
        }
        let review = QualityReport.Review(
            waiting: sum("waiting"), waitingScans: sum("waiting_scans"), waitingMatches: sum("waiting_matches"),
            oldestWaitingDays: ages.first.map(Self.round2),
            medianWaitingDays: ages.isEmpty ? nil : Self.round2(ages[ages.count / 2]),
            corrected: sum("corrected"), verifiedAsRead: reviewed?.verified, correctedInReview: reviewed?.corrected,
            reviewed: reviewed.map { $0.corrected + $0.verified }, scanDetections: sum("detections"),
            missingConfidence: sum("missing_confidence"), confidenceHistogram: confidenceHistogram)

        // Findings stored on records.
        var items: [QualityReport.Finding] = []
        var titleKeys: [Int64] = []  // the first record of each item, for its title
        let stored = try Row.fetchCursor(db, sql: """
            SELECT r.key, r.line, r.origin, json_extract(j.value, '$.code') AS code,
                json_extract(j.value, '$.severity') AS severity, json_extract(j.value, '$.field') AS field,
                json_extract(j.value, '$.message') AS message
            FROM records r, json_each(r.findings) j WHERE \(scope) AND r.findings IS NOT NULL ORDER BY r.key
            """)
        var repairedRecords = Set<Int64>()
        var codeCounts: [String: (severity: String, count: Int)] = [:]
        var invalidISBN = Set<Int64>(), disagree = Set<Int64>(), impossibleYear = Set<Int64>()
        // Records with a date that cannot be read: those the importer left empty with a finding, and
        // (below) those whose stored date does not read.
        var unparseable = Set<Int64>()
        while let row = try stored.next() {
            let key: Int64 = row["key"]
            let code: String = row["code"] ?? "unknown"
            switch code {
            case "encoding.latin1-repaired": repairedRecords.insert(key)
            case "isbn.10-13-disagree": disagree.insert(key)
            case "year.impossible": impossibleYear.insert(key)
            case "date.unparseable": unparseable.insert(key)
            case _ where code.hasPrefix("isbn.") && code != "isbn.leading-zero-restored"
                && code != "isbn.scientific-notation-expanded" && code != "isbn.points-to-other-book":
                invalidISBN.insert(key)
            default: break
            }
            append(QualityReport.Finding(code: code, severity: row["severity"] ?? "warning", field: row["field"], title: nil,
                                         message: row["message"] ?? "",
                                         rows: [reference(key: key, line: row["line"], origin: row["origin"])]),
                   key: key, to: &items, keys: &titleKeys, counts: &codeCounts)
        }

        // Stored dates that cannot be read (a `fields` array too short to hold them gives NULL: nothing to check).
        let dates = try Row.fetchCursor(db, sql: """
            SELECT key, line, origin, added, read FROM (
                SELECT r.key, r.line, r.origin, bookpipe_field(r.raw, json_extract(r.fields, '$[7]')) AS added,
                    bookpipe_field(r.raw, json_extract(r.fields, '$[8]')) AS read
                FROM records r WHERE \(scope))
            WHERE NOT bookpipe_date_ok(added) OR NOT bookpipe_date_ok(read)
            """)
        while let row = try dates.next() {
            let key: Int64 = row["key"]
            unparseable.insert(key)
            for (field, value) in [("dateAdded", row["added"] as String?), ("dateRead", row["read"] as String?)] {
                guard let value, !DateValidation.isReadable(value), !value.trimmingCharacters(in: .whitespaces).isEmpty
                else { continue }
                append(QualityReport.Finding(
                    code: "date.unparseable", severity: "warning", field: field, title: nil,
                    message: "\"\(value)\" in \(field) is not a date bookpipe can read (expected e.g. 2021/03/14 or 2021-03-14).",
                    rows: [reference(key: key, line: row["line"], origin: row["origin"])]),
                       key: key, to: &items, keys: &titleKeys, counts: &codeCounts)
            }
        }

        // Lookup outcomes that need a person.
        let outcomes = try Row.fetchCursor(db, sql: """
            SELECT key, line, origin, status, json_extract(enrichment, '$.failure') AS failure,
                json_array_length(enrichment, '$.candidates') AS candidates, review_status
            FROM records r WHERE \(scope) AND (status IN ('failed', 'needsCandidateSelection', 'notFound')
                OR review_status = 'needsReview') ORDER BY key
            """)
        while let row = try outcomes.next() {
            let key: Int64 = row["key"]
            let location = [reference(key: key, line: row["line"], origin: row["origin"])]
            let finding: QualityReport.Finding?
            switch row["status"] as String {
            case "failed":
                finding = .init(code: "lookup.failed", severity: "error", field: nil, title: nil,
                                message: "The lookup failed: \(row["failure"] as String? ?? "unknown reason"). Retry with `bookpipe enrich --failed`.",
                                rows: location)
            case "needsCandidateSelection":
                finding = .init(code: "match.needs-selection", severity: "warning", field: nil, title: nil,
                                message: "\(row["candidates"] as Int? ?? 0) candidates, none safe to accept; a person chooses.",
                                rows: location)
            case "notFound":
                finding = .init(code: "match.not-found", severity: "info", field: nil, title: nil,
                                message: "No source has this book.", rows: location)
            default: finding = nil
            }
            if let finding { append(finding, key: key, to: &items, keys: &titleKeys, counts: &codeCounts) }
            if row["review_status"] as String == "needsReview" {
                append(.init(code: "review.waiting", severity: "warning", field: nil, title: nil,
                             message: "Waiting for a person to verify or correct it.", rows: location),
                       key: key, to: &items, keys: &titleKeys, counts: &codeCounts)
            }
        }

        // Duplicates: one scan of the records in scope for the three kinds (same ISBN-13, same
        // matched work, same normalised title and first author), grouped here. The groups come
        // out as `GROUP BY value HAVING n > 1 ORDER BY n DESC, value` would give them (values in
        // SQLite's BINARY order, a NULL work key first), members by key.
        var duplicateRecords = Set<Int64>()
        struct Member { var key: Int64; var line: Int; var origin: Int64 }
        // Most values have one record: a group keeps its first member inline, so a singleton
        // costs no array of its own.
        struct Group {
            var first: Member
            var more: [Member] = []
            var members: [Member] { [first] + more }
        }
        func add<Key: Hashable>(_ member: Member, _ value: Key, to groups: inout [Key: Group]) {
            if let index = groups.index(forKey: value) {
                groups.values[index].more.append(member)
            } else {
                groups[value] = Group(first: member)
            }
        }
        var byISBN: [String: Group] = [:], byWork: [String?: Group] = [:], byTitle: [String: Group] = [:]
        byTitle.reserveCapacity(total)
        byISBN.reserveCapacity(sum("isbn"))
        let scan = try Row.fetchCursor(db, sql: """
            SELECT r.key, r.line, r.origin, isbn13, status = 'enriched',
                CASE WHEN status = 'enriched' THEN nullif(json_extract(enrichment, '$.match.workKey'), '') END,
                CASE WHEN title_key <> '' THEN title_key || ' / ' || coalesce(json_extract(normalized, '$[1][0]'), '') END
            FROM records r WHERE \(scope) AND (isbn13 IS NOT NULL OR status = 'enriched' OR title_key <> '')
            """)
        while let row = try scan.next() {
            let member = Member(key: row[0], line: row[1], origin: row[2])
            if let isbn: String = row[3] { add(member, isbn, to: &byISBN) }
            // A match whose source names no work (empty work key) is no work to share.
            if row[4] as Bool, let work: String = row[5] { add(member, work, to: &byWork) }
            if let title: String = row[6] { add(member, title, to: &byTitle) }
        }
        func repeated<Key>(_ groups: [Key: Group], _ value: (Key) -> String?) -> [(value: String?, members: [Member])] {
            groups.compactMap { $0.value.more.isEmpty ? nil : (value($0.key), $0.value.members) }
        }
        func duplicates(_ code: String, _ what: String, _ groups: [(value: String?, members: [Member])]) -> Int {
            let sorted = groups.sorted { a, b in
                if a.members.count != b.members.count { return a.members.count > b.members.count }
                guard let left = a.value else { return b.value != nil }
                guard let right = b.value else { return false }
                return left.utf8.lexicographicallyPrecedes(right.utf8)
            }
            for group in sorted {
                let members = group.members.sorted { $0.key < $1.key }
                for member in members { duplicateRecords.insert(member.key) }
                append(.init(code: code, severity: "warning", field: nil, title: nil,
                             message: "\(members.count) records \(what) \(group.value ?? "")",
                             rows: members.map { reference(key: $0.key, line: $0.line, origin: $0.origin) }),
                       key: members.first?.key, to: &items, keys: &titleKeys, counts: &codeCounts)
            }
            return sorted.count
        }
        let sameISBN = duplicates("duplicate.same-isbn", "have the ISBN-13", repeated(byISBN) { $0 })
        let sameWork = duplicates("duplicate.same-work", "are matched to the work", repeated(byWork) { $0 })
        let sameTitle = duplicates("duplicate.same-title-author", "have the same normalised title and first author:",
                                   repeated(byTitle) { $0 })

        // Rejected rows (not records: no id).
        let rejected = try Row.fetchCursor(db, sql: """
            SELECT file, line, reason FROM rejected_rows WHERE \(runScope) ORDER BY \(LibraryStore.rejectedRowOrder)
            """)
        while let row = try rejected.next() {
            append(.init(code: "row.rejected", severity: "error", field: nil, title: nil, message: row["reason"],
                         rows: [.init(id: nil, file: row["file"], line: row["line"])]),
                   key: nil, to: &items, keys: &titleKeys, counts: &codeCounts)
        }

        // Errors first, then warnings, then info (by code; in row order within a code); then the
        // limit; then the titles of the records the listed findings concern.
        let severityOrder = ["error": 0, "warning": 1, "info": 2]
        let order = items.indices.sorted { a, b in
            let left = (severityOrder[items[a].severity] ?? 3, items[a].code)
            let right = (severityOrder[items[b].severity] ?? 3, items[b].code)
            return left != right ? left < right : a < b
        }
        let listed = options.findingLimit.map { min($0, items.count) } ?? items.count
        let truncated = items.count - listed
        var sortedItems = order.prefix(listed).map { items[$0] }
        try fillTitles(&sortedItems, keys: order.prefix(listed).map { titleKeys[$0] })
        items = sortedItems

        // Runs, files, sources.
        var runRecords: [Int64: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT run_id, count(*) AS n FROM records r WHERE \(scope) AND run_id IS NOT NULL GROUP BY run_id") {
            runRecords[row["run_id"]] = row["n"]
        }
        let runs = try Row.fetchAll(db, sql: """
            SELECT id, command, pipeline, started_at, finished_at, status FROM runs WHERE \(options.runID.map { "id = \($0)" } ?? "1") ORDER BY id
            """).map { row in
            let id: Int64 = row["id"]
            let started: String = row["started_at"], finished: String? = row["finished_at"]
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            func date(_ text: String) -> Date? { formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) }
            let duration = finished.flatMap(date).flatMap { end in date(started).map { Self.round2(end.timeIntervalSince($0)) } }
            return QualityReport.Run(id: id, command: row["command"], pipeline: row["pipeline"], startedAt: started,
                                     finishedAt: finished, status: row["status"], durationSeconds: duration,
                                     records: runRecords[id] ?? 0)
        }
        var fileRecords: [Int64: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT key >> 32 AS file_id, count(*) AS n FROM records r WHERE \(scope) GROUP BY 1") {
            fileRecords[row["file_id"]] = row["n"]
        }
        var fileRejected: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT file_hash, count(*) AS n FROM rejected_rows WHERE \(runScope) GROUP BY 1") {
            fileRejected[row["file_hash"]] = row["n"]
        }
        let files = try Row.fetchAll(db, sql: "SELECT id, hash, path, format, encoding FROM source_files ORDER BY id").compactMap { row in
            let records = fileRecords[row["id"]] ?? 0, rejected = fileRejected[row["hash"]] ?? 0
            guard records + rejected > 0 else { return nil }
            return QualityReport.File(path: row["path"] ?? row["hash"], format: row["format"], encoding: row["encoding"],
                                      records: records, rejected: rejected)
        } as [QualityReport.File]
        var cached: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT source, count(*) AS n FROM lookup_cache GROUP BY source") {
            cached[row["source"]] = row["n"]
        }
        var sources = try Row.fetchAll(db, sql: """
            SELECT source, sum(requests) AS requests, sum(cache_hits) AS cache_hits, sum(retries) AS retries,
                sum(rate_limited) AS rate_limited, sum(failures) AS failures,
                sum(mean_latency_ms * requests) / nullif(sum(CASE WHEN mean_latency_ms IS NOT NULL THEN requests END), 0) AS latency
            FROM run_sources WHERE \(runScope) GROUP BY source ORDER BY source
            """).map { row in
            QualityReport.Source(name: row["source"], requests: row["requests"], cacheHits: row["cache_hits"],
                                 retries: row["retries"], rateLimited: row["rate_limited"], failures: row["failures"],
                                 meanLatencyMilliseconds: (row["latency"] as Double?).map(Self.round2),
                                 cachedAnswers: cached[row["source"]] ?? 0)
        }
        for (name, count) in cached.sorted(by: { $0.key < $1.key }) where !sources.contains(where: { $0.name == name }) {
            sources.append(.init(name: name, requests: 0, cacheHits: 0, retries: 0, rateLimited: 0, failures: 0,
                                 meanLatencyMilliseconds: nil, cachedAnswers: count))
        }

        let byCode = codeCounts.map { QualityReport.CodeCount(code: $0.key, severity: $0.value.severity, count: $0.value.count) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.code < $1.code }
        let timestamp = ISO8601DateFormatter().string(from: now)
        return QualityReport(
            schemaVersion: QualityReport.currentSchemaVersion, generatedAt: timestamp, library: library,
            scope: .init(kind: options.runID == nil ? "all" : "run", runID: options.runID),
            rows: .init(records: total, rejected: rejectedCount, byStatus: byStatus, failureReasons: failureReasons),
            matching: .init(bySource: bySource, scoreHistogram: scoreHistogram, candidateScoreHistogram: candidateHistogram,
                            meanScore: meanScore.map(Self.round2)),
            review: review, completeness: completeness,
            validity: .init(invalidISBN: invalidISBN.count, isbn10And13Disagree: disagree.count,
                            impossibleYear: impossibleYear.count, unparseableDate: unparseable.count),
            duplicates: .init(sameISBN: sameISBN, sameWork: sameWork, sameTitleAndAuthor: sameTitle,
                              records: duplicateRecords.count),
            encoding: .init(repairedRecords: repairedRecords.count,
                            files: files.map { .init(name: $0.path + " (\($0.encoding ?? "?"))", count: $0.records) }),
            sources: sources, runs: runs, files: files,
            findings: .init(byCode: byCode, items: items, truncated: truncated))
    }

    private func append(_ finding: QualityReport.Finding, key: Int64?, to items: inout [QualityReport.Finding],
                        keys: inout [Int64], counts: inout [String: (severity: String, count: Int)]) {
        counts[finding.code, default: (finding.severity, 0)].count += 1
        items.append(finding)
        keys.append(key ?? -1)
    }

    /// Sets each finding's title from its first record, reading titles in chunks.
    private func fillTitles(_ items: inout [QualityReport.Finding], keys: [Int64]) throws {
        var titles: [Int64: String] = [:]
        let wanted = Array(Set(keys.filter { $0 >= 0 })).sorted()
        for start in stride(from: 0, to: wanted.count, by: 500) {
            let chunk = wanted[start..<min(wanted.count, start + 500)]
            for row in try Row.fetchAll(db, sql: """
                SELECT key, bookpipe_field(raw, json_extract(fields, '$[0]')) AS title FROM records
                WHERE key IN (\(chunk.map(String.init).joined(separator: ",")))
                """) {
                titles[row["key"]] = row["title"]
            }
        }
        for index in items.indices where keys[index] >= 0 { items[index].title = titles[keys[index]] }
    }

    private func counts(_ sql: String) throws -> [QualityReport.Count] {
        try Row.fetchAll(db, sql: sql).map { QualityReport.Count(name: $0["name"] ?? "?", count: $0["n"]) }
    }

    /// Buckets of `width` from 0; values past the last bucket go in it.
    private func histogram(_ sql: String, width: Double, buckets: Int) throws -> [QualityReport.Bucket] {
        var counts = [Int](repeating: 0, count: buckets)
        for value in try Double?.fetchAll(db, sql: sql) {
            guard let value, value.isFinite else { continue }
            counts[min(buckets - 1, max(0, Int((value / width + 1e-9).rounded(.down))))] += 1
        }
        return counts.enumerated().map {
            QualityReport.Bucket(from: Self.round2(Double($0.offset) * width), to: Self.round2(Double($0.offset + 1) * width),
                                 count: $0.element)
        }
    }

    static func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
