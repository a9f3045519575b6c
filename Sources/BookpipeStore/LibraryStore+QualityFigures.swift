import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// Computes a data-quality report's figures in one read transaction (one snapshot): about
    /// fifteen scans of `records` in SQLite, none of which decodes a record, so 100,000 records take
    /// a fraction of a second.
    ///
    /// ```swift
    /// let figures = try store.qualityFigures(.library) { DateValidation.isReadable($0) }
    /// ```
    /// - Parameters:
    ///   - scope: The records (and runs, rejected rows, source requests) to count.
    ///   - acceptsDate: The date rule: whether a stored date text (added or read) is acceptable.
    ///     Records with a date it refuses are listed in ``QualityFigures/refusedDates``. It is called
    ///     for every stored date in scope, on the reading thread.
    /// - Returns: The figures.
    /// - Throws: ``StoreError/readFailed(path:what:reason:)`` when the library cannot be read, or
    ///   holds a run whose start or end time is not an ISO 8601 time.
    public func qualityFigures(_ scope: QualityScope, acceptsDate: @escaping @Sendable (String) -> Bool)
        throws(StoreError) -> QualityFigures {
        try read("report") { db in
            StoredColumnFunctions.register(in: db)
            var computation = QualityFigureQueries(db: db, scope: scope, path: path, acceptsDate: acceptsDate)
            return try computation.run()
        }
    }

    /// The titles (as read from the file) of these records, by id; ids of no record are absent.
    /// - Throws: ``StoreError`` when the read fails.
    public func recordTitles(ids: [String]) throws(StoreError) -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try read("record titles") { db in
            StoredColumnFunctions.register(in: db)
            var fileIDs: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files") { fileIDs[row["hash"]] = row["id"] }
            var idOfKey: [Int64: String] = [:]
            for id in ids {
                guard let (hash, row) = RecordKey.parse(id: id), let fileID = fileIDs[hash] else { continue }
                idOfKey[RecordKey.make(fileID: fileID, row: row)] = id
            }
            let keys = idOfKey.keys.sorted()
            var titles: [String: String] = [:]
            for start in stride(from: 0, to: keys.count, by: 500) {
                let chunk = keys[start..<min(keys.count, start + 500)]
                for row in try Row.fetchAll(db, sql: """
                    SELECT key, bookpipe_field(raw, json_extract(fields, '$[0]')) AS title FROM records
                    WHERE key IN (\(chunk.map(String.init).joined(separator: ",")))
                    """) {
                    if let id = idOfKey[row["key"]], let title: String = row["title"] { titles[id] = title }
                }
            }
            return titles
        }
    }
}

extension LibraryStore {
    /// Keeps a report's headline figures; returns the entry's id.
    /// - Throws: ``StoreError`` when the write fails.
    public func saveReportHistory(generatedAt: Date, scope: String, figures: [String: Double]) throws(StoreError) -> Int64 {
        let object = figures.keys.sorted().map { key -> String in
            var text: [UInt8] = []
            JSONText.appendString(key, to: &text)
            let value = figures[key] ?? 0
            return String(decoding: text, as: UTF8.self) + ":" + (value.isFinite ? "\(value)" : "0")
        }.joined(separator: ",")
        return try write("report history") { db in
            try db.execute(sql: "INSERT INTO report_history (generated_at, scope, figures) VALUES (?, ?, ?)",
                           arguments: [ISO8601DateFormatter().string(from: generatedAt), scope, "{" + object + "}"])
            return db.lastInsertedRowID
        }
    }

    /// The saved reports' figures, oldest first (the last `limit` when given).
    /// - Throws: ``StoreError`` when the read fails or a saved entry is not readable.
    public func reportHistory(limit: Int?) throws(StoreError) -> [ReportHistoryEntry] {
        let rows = try read("report history") { db -> [Row] in
            // A library opened read-only before migration "report history" has none.
            guard try LibraryStore.hasTable(db, "report_history") else { return [] }
            return try Row.fetchAll(db, sql: "SELECT id, generated_at, scope, figures FROM report_history ORDER BY id DESC"
                                    + (limit.map { " LIMIT \($0)" } ?? ""))
        }
        return try rows.reversed().map { row throws(StoreError) in
            let text: String = row["figures"]
            guard let date = ISO8601DateFormatter().date(from: row["generated_at"]),
                  let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                throw StoreError.readFailed(path: path, what: "report history", reason: "entry \(row["id"] as Int64) is not readable")
            }
            return ReportHistoryEntry(id: row["id"], generatedAt: date, scope: row["scope"],
                                      figures: object.compactMapValues { ($0 as? NSNumber)?.doubleValue })
        }
    }
}

/// One report's queries, in one read transaction.
private struct QualityFigureQueries {
    let db: Database
    let scope: QualityScope
    /// The library's path, for errors.
    let path: String
    /// The caller's date rule (``LibraryStore/qualityFigures(_:acceptsDate:)``).
    let acceptsDate: @Sendable (String) -> Bool
    /// `WHERE` condition on `records r` for the scope.
    let recordScope: String
    /// `WHERE` condition on a table with `run_id` for the scope.
    let runScope: String
    /// Origin id → path; file id → hash.
    var originPaths: [Int64: String] = [:]
    var fileHashes: [Int64: String] = [:]

    init(db: Database, scope: QualityScope, path: String, acceptsDate: @escaping @Sendable (String) -> Bool) {
        self.acceptsDate = acceptsDate
        self.db = db
        self.scope = scope
        self.path = path
        recordScope = scope.runID.map { "r.run_id = \($0)" } ?? "1"
        runScope = scope.runID.map { "run_id = \($0)" } ?? "1"
    }

    func place(key: Int64, line: Int, origin: Int64) -> RecordPlace {
        RecordPlace(id: "\(fileHashes[key >> RecordKey.rowBits] ?? "?"):\(key & RecordKey.rowMask)",
                    file: originPaths[origin] ?? "?", line: line)
    }

    mutating func run() throws -> QualityFigures {
        for row in try Row.fetchAll(db, sql: "SELECT id, path FROM record_origins") { originPaths[row["id"]] = row["path"] }
        for row in try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files") { fileHashes[row["id"]] = row["hash"] }
        let scope = recordScope

        // Records by status, by the run that wrote them last and by file, and the review queue's and
        // scan detections' counts, in one scan (the completeness is counted in the profiles' scan).
        // A query below that can only find records of a status (or of a count of this scan) that no
        // record has is not run: each is a scan of the whole library.
        var byStatus: [RecordStatus: Int] = [:], runRecords: [Int64: Int] = [:], fileRecords: [Int64: Int] = [:]
        var totals: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: """
            SELECT status, run_id, key >> 32 AS file_id, review_status, detection IS NOT NULL AS detection,
                detection IS NOT NULL AND json_extract(detection, '$.confidence') IS NULL AS missing_confidence,
                findings IS NOT NULL AS with_findings, count(*) AS n
            FROM records r WHERE \(scope) GROUP BY 1, 2, 3, 4, 5, 6, 7
            """) {
            let count: Int = row["n"]
            let status: String = row["status"], reviewStatus: String? = row["review_status"]
            if let status = RecordStatus(rawValue: status) { byStatus[status, default: 0] += count }
            if let run: Int64 = row["run_id"] { runRecords[run, default: 0] += count }
            fileRecords[row["file_id"], default: 0] += count
            let counted: [(String, Bool)] = [
                ("total", true),
                ("waiting", reviewStatus == "needsReview" || status == "needsCandidateSelection"),
                ("waiting_scans", reviewStatus == "needsReview"),
                ("waiting_matches", reviewStatus != "needsReview" && status == "needsCandidateSelection"),
                ("corrected", reviewStatus == "userEdited"),
                ("detections", row["detection"]), ("missing_confidence", row["missing_confidence"]),
                ("with_findings", row["with_findings"]),
            ]
            for (name, holds) in counted where holds { totals[name, default: 0] += count }
        }
        func has(_ status: RecordStatus) -> Bool { byStatus[status, default: 0] > 0 }
        func sum(_ name: String) -> Int { totals[name] ?? 0 }
        var failureReasons: [String?: Int] = [:]
        for row in try !has(.failed) ? [] : Row.fetchAll(db, sql: """
            SELECT json_extract(enrichment, '$.failure') AS reason, count(*) AS n
            FROM records r WHERE \(scope) AND status = 'failed' GROUP BY 1
            """) {
            failureReasons[row["reason"] as String?, default: 0] += row["n"] as Int
        }
        let rejectedRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM rejected_rows WHERE \(runScope)") ?? 0

        // Matching.
        var bySource: [String?: Int] = [:]
        for row in try !has(.enriched) ? [] : Row.fetchAll(db, sql: """
            SELECT json_extract(enrichment, '$.match.source') AS source, count(*) AS n
            FROM records r WHERE \(scope) AND status = 'enriched' GROUP BY 1
            """) {
            bySource[row["source"] as String?, default: 0] += row["n"] as Int
        }
        let matches = QualityFigures.Matches(
            bySource: bySource,
            scores: try !has(.enriched) ? [] : numbers("SELECT json_extract(enrichment, '$.match.score') FROM records r WHERE \(scope) AND status = 'enriched'"),
            meanScore: try !has(.enriched) ? nil : Double.fetchOne(db, sql: """
                SELECT avg(json_extract(enrichment, '$.match.score')) FROM records r WHERE \(scope) AND status = 'enriched'
                """),
            leadingCandidateScores: try !has(.needsCandidateSelection) ? [] : numbers("""
                SELECT json_extract(enrichment, '$.candidates[0].score') FROM records r
                WHERE \(scope) AND status = 'needsCandidateSelection'
                """))

        // The review queue (updated_at: when the record was last written, i.e. queued): what
        // `bookpipe review list` shows, scan detections to check and uncertain matches.
        let queuedAt = try sum("waiting") == 0 ? [] : Int64.fetchAll(db, sql: """
            SELECT updated_at FROM records r WHERE \(scope)
                AND (review_status = 'needsReview' OR status = 'needsCandidateSelection') ORDER BY updated_at
            """).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let reviewQueue = QualityFigures.ReviewQueue(
            waiting: sum("waiting"), waitingScans: sum("waiting_scans"), waitingMatches: sum("waiting_matches"),
            userEdited: sum("corrected"), queuedAt: queuedAt, scanDetections: sum("detections"),
            missingConfidence: sum("missing_confidence"),
            confidences: try sum("detections") == 0 ? []
                : numbers("SELECT json_extract(detection, '$.confidence') FROM records r WHERE \(scope) AND detection IS NOT NULL"))
        // Review outcomes, from the log of review actions: per record, corrected if any action
        // changed it (an edit, a choice that changed the match), else verified as it was.
        var reviewOutcomes: QualityFigures.ReviewOutcomes?
        if try LibraryStore.keepsReviewLog(db) {
            let outcome = try Row.fetchOne(db, sql: """
                SELECT coalesce(sum(corrected), 0) AS corrected, coalesce(sum(NOT corrected), 0) AS verified FROM (
                    SELECT max(a.action = 'edit' OR (a.action IN ('choose', 'choose-none')
                        AND json_extract(a.before, '$.match') IS NOT json_extract(a.after, '$.match'))) AS corrected
                    FROM review_actions a JOIN records r ON r.key = a.key WHERE \(scope) GROUP BY a.key)
                """)
            reviewOutcomes = .init(corrected: outcome?["corrected"] ?? 0, verified: outcome?["verified"] ?? 0)
        }

        // Findings stored on records.
        var findings: [QualityFigures.RecordFinding] = []
        if sum("with_findings") > 0 {
            let stored = try Row.fetchCursor(db, sql: """
                SELECT r.key, r.line, r.origin, json_extract(j.value, '$.code') AS code,
                    json_extract(j.value, '$.severity') AS severity, json_extract(j.value, '$.field') AS field,
                    json_extract(j.value, '$.message') AS message
                FROM records r, json_each(r.findings) j WHERE \(scope) AND r.findings IS NOT NULL ORDER BY r.key
                """)
            while let row = try stored.next() {
                let severity = (row["severity"] as String?).flatMap(Finding.Severity.init(rawValue:)) ?? .warning
                findings.append(.init(record: place(key: row["key"], line: row["line"], origin: row["origin"]),
                                      finding: Finding(code: row["code"] ?? "unknown", severity: severity, field: row["field"],
                                                       message: row["message"] ?? "")))
            }
        }

        // Outcomes that need a person or a retry.
        var openOutcomes: [QualityFigures.OpenOutcome] = []
        if has(.failed) || has(.needsCandidateSelection) || has(.notFound) || sum("waiting_scans") > 0 {
            let outcomes = try Row.fetchCursor(db, sql: """
                SELECT key, line, origin, status, json_extract(enrichment, '$.failure') AS failure,
                    json_array_length(enrichment, '$.candidates') AS candidates, review_status
                FROM records r WHERE \(scope) AND (status IN ('failed', 'needsCandidateSelection', 'notFound')
                    OR review_status = 'needsReview') ORDER BY key
                """)
            while let row = try outcomes.next() {
                guard let status = RecordStatus(rawValue: row["status"]) else { continue }
                openOutcomes.append(.init(record: place(key: row["key"], line: row["line"], origin: row["origin"]),
                                          status: status, failure: row["failure"], candidates: row["candidates"] ?? 0,
                                          needsReview: row["review_status"] as String == "needsReview"))
            }
        }

        let duplicateGroups = try duplicates()

        // Rejected rows (not records: no id).
        let rejections = try Row.fetchAll(db, sql: """
            SELECT * FROM rejected_rows WHERE \(runScope) ORDER BY \(LibraryStore.rejectedRowOrder)
            """).map { row in
            RejectedRow(fileHash: row["file_hash"], file: row["file"], line: row["line"], row: row["row"],
                        column: row["column_number"], reason: row["reason"], rawText: row["raw_text"])
        }

        // Runs, files, sources.
        // (Records by the run that wrote them last and by file: counted with the statuses.)
        // A library opened read-only before migration "report history" has no count of writes:
        // then a run wrote what it wrote last, as far as the library knows.
        var runWrites = runRecords
        if try LibraryStore.hasTable(db, "run_writes") {
            runWrites = [:]
            for row in try Row.fetchAll(db, sql: "SELECT run_id, records FROM run_writes") { runWrites[row["run_id"]] = row["records"] }
        }
        let runs = try Row.fetchAll(db, sql: """
            SELECT id, command, pipeline, started_at, finished_at, status FROM runs
            WHERE \(self.scope.runID.map { "id = \($0)" } ?? "1") ORDER BY id
            """).map { row throws(StoreError) in
            let id: Int64 = row["id"]
            return QualityFigures.Run(id: id, command: row["command"], pipeline: row["pipeline"],
                                      startedAt: try time(row["started_at"], run: id),
                                      finishedAt: try (row["finished_at"] as String?).map { (text: String) throws(StoreError) in
                                          try time(text, run: id)
                                      },
                                      status: RunStatus(rawValue: row["status"]) ?? .running, records: runRecords[id] ?? 0,
                                      written: runWrites[id] ?? 0)
        }
        var fileRejected: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT file_hash, count(*) AS n FROM rejected_rows WHERE \(runScope) GROUP BY 1") {
            fileRejected[row["file_hash"]] = row["n"]
        }
        let files = try Row.fetchAll(db, sql: "SELECT id, hash, path, format, encoding FROM source_files ORDER BY id").map { row in
            QualityFigures.File(hash: row["hash"], path: row["path"], format: row["format"], encoding: row["encoding"],
                                records: fileRecords[row["id"]] ?? 0, rejected: fileRejected[row["hash"]] ?? 0)
        }
        var cachedAnswers: [String: Int] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT source, count(*) AS n FROM lookup_cache GROUP BY source") {
            cachedAnswers[row["source"]] = row["n"]
        }
        let sourceRequests = try Row.fetchAll(db, sql: """
            SELECT source, sum(requests) AS requests, sum(cache_hits) AS cache_hits, sum(retries) AS retries,
                sum(rate_limited) AS rate_limited, sum(failures) AS failures,
                sum(mean_latency_ms * requests) / nullif(sum(CASE WHEN mean_latency_ms IS NOT NULL THEN requests END), 0) AS latency
            FROM run_sources WHERE \(runScope) GROUP BY source ORDER BY source
            """).map { row in
            SourceCounters(name: row["source"], requests: row["requests"], cacheHits: row["cache_hits"],
                           retries: row["retries"], rateLimited: row["rate_limited"], failures: row["failures"],
                           meanLatencyMilliseconds: row["latency"])
        }

        var figures = QualityFigures(
            records: sum("total"), recordsByStatus: byStatus, failureReasons: failureReasons, rejectedRows: rejectedRows,
            completeness: .init(isbn13: 0, cover: 0, year: 0, pages: 0, publisher: 0), reviewQueue: reviewQueue, reviewOutcomes: reviewOutcomes, matches: matches,
            findings: findings, refusedDates: [], openOutcomes: openOutcomes, duplicateGroups: duplicateGroups,
            rejections: rejections, runs: runs, files: files, sourceRequests: sourceRequests, cachedAnswers: cachedAnswers)
        var outliers: [(key: Int64, outlier: Outlier)] = []
        var samples: [LibraryQuery.MissingValue: [RecordPlace]] = [:], authorless: [RecordPlace] = []
        var missing: [LibraryQuery.MissingValue: Int] = [:]
        figures.profiles = try profiles(outliers: &outliers, missing: &samples, missingCounts: &missing, authorless: &authorless,
                                        refusedDates: &figures.refusedDates)
        // Completeness: the records in scope less those the profiles' scan found without each value.
        let total = sum("total")
        figures.completeness = .init(isbn13: total - missing[.isbn, default: 0], cover: total - missing[.cover, default: 0],
                                     year: total - missing[.year, default: 0], pages: total - missing[.pages, default: 0],
                                     publisher: total - missing[.publisher, default: 0])
        figures.missingSamples = samples
        figures.authorless = authorless
        try yearOutliers(&outliers)
        figures.outliers = outliers.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }
            .map(\.element.outlier)
        return figures
    }

    /// The values of each profiled field, counted in one scan, which also counts the records
    /// without each value (the completeness, negated) and lists the missing-value samples, the
    /// authorless records, the pages / rating / read-date outliers and the stored dates (added,
    /// read: a field profiled here) that the caller's date rule refuses, each called once.
    private func profiles(outliers found: inout [(key: Int64, outlier: Outlier)],
                          missing samples: inout [LibraryQuery.MissingValue: [RecordPlace]],
                          missingCounts: inout [LibraryQuery.MissingValue: Int],
                          authorless: inout [RecordPlace],
                          refusedDates: inout [QualityFigures.RecordDates]) throws -> [FieldProfile] {
        let plausible = scope.plausible
        let fields: [(name: String, slot: Int, numeric: Bool)] = [
            ("year", 3, true), ("pages", 5, true), ("rating", 9, true), ("shelf", 6, false), ("binding", 10, false),
            ("publisher", 4, false), ("dateAdded", 7, false), ("dateRead", 8, false),
        ]
        let columns = fields.map { field in
            field.numeric
                ? "CASE WHEN json_type(r.fields, '$[\(field.slot)]') IN ('integer', 'real') THEN json_extract(r.fields, '$[\(field.slot)]') END"
                : "bookpipe_field(r.raw, json_extract(r.fields, '$[\(field.slot)]'))"
        }
        var formats: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, format FROM record_origins") { formats[row["id"]] = row["format"] }
        // Numbers are counted as numbers (no text made per row), texts as texts.
        var numbers = [[Double: Int]](repeating: [:], count: fields.count)
        var texts = [ValueCounts](repeating: ValueCounts(), count: fields.count)
        // The missing values of each record, in the same scan (the completeness's own conditions).
        let missingValues = LibraryQuery.MissingValue.allCases
        // One column: bit i set when the record lacks missingValues[i] (one value read per row, not six).
        let missingMask = missingValues.enumerated().map { "(coalesce(\(LibraryStore.missingCondition($0.element)), 0) << \($0.offset))" }
            .joined(separator: " | ")
        let limit = QualityFigures.missingSampleLimit
        let scan = try Row.fetchCursor(db, sql: """
            SELECT \(columns.joined(separator: ", ")), r.key, r.line, r.origin, \(missingMask) AS missing
            FROM records r WHERE \(recordScope) ORDER BY r.key
            """)
        let keyColumn = fields.count
        var cells = [DatabaseValue](repeating: .null, count: fields.count)
        let dateAddedColumn = fields.firstIndex { $0.name == "dateAdded" } ?? 6
        let dateReadColumn = fields.firstIndex { $0.name == "dateRead" } ?? 7
        while let row = try scan.next() {
            var place: RecordPlace?
            let missingBits: Int64 = row[keyColumn + 3] ?? 0
            for (index, value) in missingValues.enumerated() where missingBits & (1 << index) != 0 {
                missingCounts[value, default: 0] += 1
                guard value == .author || samples[value, default: []].count < limit else { continue }
                let here = place ?? self.place(key: row[keyColumn], line: row[keyColumn + 1], origin: row[keyColumn + 2])
                place = here
                if value == .author {
                    authorless.append(here)
                    if samples[.author, default: []].count < limit { samples[.author, default: []].append(here) }
                } else {
                    samples[value, default: []].append(here)
                }
            }
            // Stored dates the caller's rule refuses (a `fields` array too short to hold them gives
            // NULL: nothing to check).
            // Each profiled column read once (its value counted, and checked below).
            for index in fields.indices { cells[index] = row[index] }
            let added = cells[dateAddedColumn], readDate = cells[dateReadColumn]
            func refuses(_ value: DatabaseValue) -> Bool {
                if case .string(let text) = value.storage { return !acceptsDate(text) }
                return false
            }
            if refuses(added) || refuses(readDate) {
                let here = place ?? self.place(key: row[keyColumn], line: row[keyColumn + 1], origin: row[keyColumn + 2])
                place = here
                refusedDates.append(.init(record: here, dateAdded: String.fromDatabaseValue(added),
                                          dateRead: String.fromDatabaseValue(readDate)))
            }
            for index in fields.indices {
                switch cells[index].storage {
                case .null, .blob: continue
                case .int64(let number): numbers[index][Double(number), default: 0] += 1
                case .double(let number): numbers[index][number, default: 0] += 1
                case .string(let text):
                    guard !text.isEmpty else { continue }
                    texts[index].add(text)
                }
            }
            // Pages, ratings and read dates outside the plausible ones, from the same values.
            let year = Self.integer(cells[0]), pages = Self.integer(cells[1]), rating = Double.fromDatabaseValue(cells[2])
            let read = String.fromDatabaseValue(cells[dateReadColumn])
            let outOfPages = pages.map { !plausible.pages.contains($0) } ?? false
            let outOfScale = rating.map { !plausible.ratingScale(format: formats[row[keyColumn + 2]] ?? "").contains($0) } ?? false
            var readYear: Int?
            if let year, let read, read.utf8.count >= 5, let early = Int(read.prefix(4)), early < year,
               read.utf8.dropFirst(4).first == UInt8(ascii: "-") || read.utf8.dropFirst(4).first == UInt8(ascii: "/") {
                readYear = early
            }
            guard outOfPages || outOfScale || readYear != nil else { continue }
            let key: Int64 = row[keyColumn]
            let record = place ?? self.place(key: key, line: row[keyColumn + 1], origin: row[keyColumn + 2])
            if outOfPages, let pages {
                found.append((key, Outlier(record: record, kind: .pages, field: "pages", value: String(pages), recordYear: year)))
            }
            if outOfScale, let rating {
                let text = rating == rating.rounded() ? String(Int(rating)) : String(rating)
                found.append((key, Outlier(record: record, kind: .rating, field: "rating", value: text, recordYear: year)))
            }
            if readYear != nil, let read {
                found.append((key, Outlier(record: record, kind: .readBeforePublication, field: "dateRead", value: read,
                                           recordYear: year)))
            }
        }
        return fields.indices.map { index in
            var values = texts[index].counts
            for (number, count) in numbers[index] {
                values[number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number), default: 0] += count
            }
            return FieldProfile(field: fields[index].name, isNumeric: fields[index].numeric, values: values)
        }
    }

    /// Values outside the scope's plausible ones in year columns: for each file with year columns
    /// one scan of its records (a file's records are one key range); pages, ratings and read dates
    /// come from the profiles' scan (``profiles(outliers:)``).
    private func yearOutliers(_ found: inout [(key: Int64, outlier: Outlier)]) throws {
        let plausible = scope.plausible
        // Whether a year column's text is a year outside the plausible ones (blank, 0 and text
        // without digits are no year): one call per column and row.
        let yearOutside = DatabaseFunction("bookpipe_year_outside", argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]), let year = QualityFigureQueries.leadingYear(text), year > 0 else { return 0 }
            return plausible.years.contains(year) ? 0 : 1
        }
        db.add(function: yearOutside)
        defer { db.remove(function: yearOutside) }
        // Year columns, file by file (their places in the raw fields differ per header).
        let files = try Row.fetchAll(db, sql: "SELECT id, header FROM source_files WHERE header IS NOT NULL ORDER BY id")
        for file in files {
            let header = JSONText.decodeArray(file["header"])
            let columns = header.indices.filter { PlausibleValues.isYearColumn(header[$0]) }
            guard !columns.isEmpty else { continue }
            let fileID: Int64 = file["id"]
            // Each cell is read once per row: the subquery (kept whole by `LIMIT -1 OFFSET 0`, which
            // SQLite never flattens) names it `c<i>`, the conditions below use the name.
            let cells = columns.enumerated().map { "bookpipe_field(r.raw, \($0.element)) AS c\($0.offset)" }
            let values = columns.indices.map { "c\($0)" }
            // A cell of four digits within the plausible years (text order is number order there)
            // or an empty one is inside without asking Swift; any other cell is read by the rule.
            let (low, high) = (String(plausible.years.lowerBound), String(plausible.years.upperBound))
            let plain = low.utf8.count == 4 && high.utf8.count == 4
            let outside = values.map { value in
                plain ? "(CASE WHEN \(value) = '' OR (\(value) GLOB '[0-9][0-9][0-9][0-9]' AND \(value) BETWEEN '\(low)' AND '\(high)') "
                    + "THEN 0 ELSE bookpipe_year_outside(\(value)) END)"
                    : "bookpipe_year_outside(\(value))"
            }
            let rows = try Row.fetchCursor(db, sql: """
                SELECT key, line, origin, CASE WHEN json_type(fields, '$[3]') = 'integer' THEN json_extract(fields, '$[3]') END AS year,
                    \(values.joined(separator: ", "))
                FROM (SELECT r.key, r.line, r.origin, r.fields, \(cells.joined(separator: ", "))
                      FROM records r WHERE \(recordScope) AND r.key >= ? AND r.key < ? LIMIT -1 OFFSET 0)
                WHERE \(outside.joined(separator: " OR "))
                ORDER BY key
                """, arguments: [fileID << RecordKey.rowBits, (fileID + 1) << RecordKey.rowBits])
            while let row = try rows.next() {
                let key: Int64 = row[0]
                let record = place(key: key, line: row[1], origin: row[2])
                for (index, column) in columns.enumerated() {
                    guard let text: String = row[4 + index] else { continue }
                    let trimmed = text.trimmingCharacters(in: .whitespaces)
                    guard let number = Self.leadingYear(trimmed), number > 0, !plausible.years.contains(number) else { continue }
                    found.append((key, Outlier(record: record, kind: .year, field: header[column], value: trimmed,
                                               recordYear: row[3])))
                }
            }
        }
    }

    /// Duplicates: one scan of the records in scope takes, for each kind (same ISBN-13, same matched
    /// work, same normalised title and first author), a 64-bit hash of each record's value (no text
    /// is kept); records whose hash is shared are then read again by key, a batch at a time, and
    /// grouped by their value itself (equal bytes, so a hash collision splits, never joins). Only the
    /// groups are held: at 1,000,000 records two arrays of 16 bytes a record, not a table of every
    /// value. The groups come out as `GROUP BY value HAVING n > 1 ORDER BY n DESC, value` would give
    /// them (values in SQLite's BINARY order), members by key.
    private func duplicates() throws -> [QualityFigures.DuplicateGroup] {
        let kinds: [(kind: DuplicateKind, value: String)] = [
            (.sameISBN13, "isbn13"),
            // A match whose source names no work (empty work key) is no work to share.
            (.sameWork, "CASE WHEN status = 'enriched' THEN nullif(json_extract(enrichment, '$.match.workKey'), '') END"),
            (.sameTitleAndFirstAuthor,
             "CASE WHEN title_key <> '' THEN title_key || ' / ' || coalesce(json_extract(normalized, '$[1][0]'), '') END"),
        ]
        var hashed = [[(hash: UInt64, key: Int64)]](repeating: [], count: kinds.count)
        let scan = try Row.fetchCursor(db, sql: """
            SELECT r.key, \(kinds.map(\.value).joined(separator: ", "))
            FROM records r WHERE \(recordScope) AND (isbn13 IS NOT NULL OR status = 'enriched' OR title_key <> '')
            """)
        while let row = try scan.next() {
            let key: Int64 = row[0]
            for index in kinds.indices {
                if let hash = try row.withUnsafeData(atIndex: index + 1, { $0.map(Self.valueHash) }) {
                    hashed[index].append((hash, key))
                }
            }
        }
        var found: [QualityFigures.DuplicateGroup] = []
        for (index, kind) in kinds.enumerated() {
            var records = hashed[index]
            hashed[index] = []
            records.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.key < $1.key }
            var groups: [QualityFigures.DuplicateGroup] = []
            // Runs of a shared hash, read a batch of records at a time.
            var batch: [ArraySlice<(hash: UInt64, key: Int64)>] = [], batchSize = 0
            func readBatch() throws {
                guard !batch.isEmpty else { return }
                var read: [Int64: (place: RecordPlace, value: String)] = [:]
                let keys = batch.flatMap { $0.map(\.key) }
                for row in try Row.fetchAll(db, sql: """
                    SELECT r.key, r.line, r.origin, \(kind.value) FROM records r WHERE r.key IN (\(keys.map(String.init).joined(separator: ",")))
                    """) {
                    guard let value: String = row[3] else { continue }
                    read[row[0]] = (place(key: row[0], line: row[1], origin: row[2]), value)
                }
                for run in batch {
                    // Equal hashes, split by equal values (in key order within each).
                    var byValue: [(value: String, members: [RecordPlace])] = []
                    for record in run {
                        guard let (place, value) = read[record.key] else { continue }
                        if let at = byValue.firstIndex(where: { $0.value.utf8.elementsEqual(value.utf8) }) {
                            byValue[at].members.append(place)
                        } else {
                            byValue.append((value, [place]))
                        }
                    }
                    for group in byValue where group.members.count > 1 {
                        groups.append(.init(kind: kind.kind, value: group.value, members: group.members))
                    }
                }
                batch = []
                batchSize = 0
            }
            var start = records.startIndex
            while start < records.endIndex {
                var end = start + 1
                while end < records.endIndex, records[end].hash == records[start].hash { end += 1 }
                if end - start > 1 {
                    batch.append(records[start..<end])
                    batchSize += end - start
                    if batchSize >= 500 { try readBatch() }
                }
                start = end
            }
            try readBatch()
            found += groups.sorted { a, b in
                a.members.count != b.members.count
                    ? a.members.count > b.members.count : a.value.utf8.lexicographicallyPrecedes(b.value.utf8)
            }
        }
        return found
    }

    /// FNV-1a, 64 bits, of a value's bytes: equal values hash equal; the few unequal values that
    /// collide are told apart by their bytes (``duplicates()``).
    static func valueHash(_ bytes: Data) -> UInt64 {
        bytes.withUnsafeBytes { buffer in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in buffer {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
            return hash
        }
    }

    /// A number column's value as a whole number, as SQLite reads it (`sqlite3_column_int64`: a real
    /// number truncated toward zero, clamped to 64 bits); nil for NULL.
    static func integer(_ value: DatabaseValue) -> Int? {
        switch value.storage {
        case .int64(let number): return Int(number)
        case .double(let number):
            guard !number.isNaN else { return 0 }
            if number >= 9.2233720368547758e18 { return Int.max }
            if number <= -9.2233720368547758e18 { return Int.min }
            return Int(number.rounded(.towardZero))
        case .null: return nil
        case .string, .blob: return Int.fromDatabaseValue(value)
        }
    }

    /// The whole number a year cell holds (`1999`, ` 1999 `, `1999.0`); nil for anything else.
    static func leadingYear(_ text: String) -> Int? {
        // Most cells are digits alone (or empty): read from the bytes, no Foundation trimming.
        let bytes = text.utf8
        if !bytes.isEmpty, bytes.count <= 9, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        if let number = Int(trimmed) { return number }
        guard let number = Double(trimmed), number.isFinite, number == number.rounded(), abs(number) < 1e9 else { return nil }
        return Int(number)
    }

    /// The non-null numbers a one-column query gives (finite or not: the caller decides).
    private func numbers(_ sql: String) throws -> [Double] {
        try Double?.fetchAll(db, sql: sql).compactMap { $0 }
    }

    /// A run's stored time (ISO 8601, UTC; fractional seconds allowed).
    private func time(_ text: String, run: Int64) throws(StoreError) -> Date {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text) else {
            throw StoreError.readFailed(path: path, what: "report", reason: "run \(run) has a time that is not ISO 8601: \"\(text)\"")
        }
        return date
    }
}

/// How often each text value occurs in one profiled field. Most fields hold a few values (shelves,
/// bindings, publishers): those are counted in a short list compared with `==` (no hashing per row);
/// past ``listLimit`` distinct values, in a dictionary.
private struct ValueCounts {
    static let listLimit = 16
    private var list: [(value: String, count: Int)] = []
    private var dictionary: [String: Int] = [:]

    mutating func add(_ value: String) {
        if dictionary.isEmpty {
            if let at = list.firstIndex(where: { $0.value == value }) {
                list[at].count += 1
                return
            }
            if list.count < Self.listLimit {
                list.append((value, 1))
                return
            }
            for (known, count) in list { dictionary[known] = count }
            list = []
        }
        dictionary[value, default: 0] += 1
    }

    /// Each value and its count.
    var counts: [String: Int] {
        dictionary.isEmpty ? Dictionary(list.map { ($0.value, $0.count) }, uniquingKeysWith: +) : dictionary
    }
}

extension LibraryStore {
    /// Whether the library has this table (a library opened read-only may predate a migration).
    static func hasTable(_ db: Database, _ name: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [name]) == true
    }

    /// Whether the library keeps a log of review actions (every library since migration v7 does).
    static func keepsReviewLog(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'review_actions'") == true
    }
}
