import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    // MARK: - Report

    /// Computes a data-quality report's figures in one read-only transaction at `REPEATABLE READ`
    /// (one snapshot), the aggregates by the server: counts with `count(*) FILTER`, each profiled
    /// field's values with `GROUP BY`, duplicate groups with a window count over the shared value,
    /// and the record lists (samples, outliers, open outcomes) with the conditions in `WHERE`. The
    /// same figures as the SQLite engine's for the same library (the contract suite compares them).
    ///
    /// The caller's date rule and the year columns' reading (``QualityFigures`` leaves both to Swift)
    /// are applied to each *distinct* value the server counted, then the records holding a refused
    /// value are read by that value: no row comes to the client to be judged one by one.
    /// - Parameters:
    ///   - scope: The records (and runs, rejected rows, source requests) to count.
    ///   - acceptsDate: The date rule: whether a stored date text (added or read) is acceptable.
    /// - Throws: ``StoreError/readFailed(path:what:reason:)`` when the library cannot be read, or
    ///   holds a run whose start or end time is not an ISO 8601 time.
    public func qualityFigures(_ scope: QualityScope, acceptsDate: @escaping @Sendable (String) -> Bool)
        async throws(StoreError) -> QualityFigures {
        try withConnection("report") { connection in
            try connection.transaction("report") {
                // One snapshot for every query; not READ ONLY: the records' figures are read into a
                // temporary table (dropped at commit), which PostgreSQL counts as a write.
                try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", what: "report")
                var queries = PostgresQualityQueries(connection: connection, scope: scope, location: location,
                                                     acceptsDate: acceptsDate)
                return try queries.run()
            }
        }
    }
}

/// One report's queries, in one transaction. `records` is read once: the records in scope, each
/// value the figures need taken out of `data` (parsed once per row) into a temporary table
/// (``makeTable()``); every other query reads that narrow table (``scoped``).
private struct PostgresQualityQueries {
    let connection: PostgresConnection
    let scope: QualityScope
    let location: String
    let acceptsDate: @Sendable (String) -> Bool
    /// `FROM` item: the records in scope, with the values the figures need (``makeTable()``).
    let scoped = "report_records r"
    /// The `records` in scope.
    let recordScope: String
    /// `WHERE` condition on a table with `run_id` for the scope.
    let runScope: String

    init(connection: PostgresConnection, scope: QualityScope, location: String,
         acceptsDate: @escaping @Sendable (String) -> Bool) {
        self.connection = connection
        self.scope = scope
        self.location = location
        self.acceptsDate = acceptsDate
        let condition = scope.runID.map { "run_id = \($0)" } ?? "true"
        recordScope = condition
        runScope = condition
    }

    /// The columns naming a record's place (``place(_:at:)``): id, file read from, line, file id, row.
    static let placeColumns = "r.id, r.file, r.line, r.file_id, r.row"

    func place(_ row: [String?], at column: Int) -> RecordPlace {
        RecordPlace(id: row[column] ?? "?", file: row[column + 1] ?? "?", line: int(row[column + 2]))
    }

    /// Library order of the record whose place starts at `column`: file, then row.
    func order(_ row: [String?], at column: Int) -> (Int64, Int64) {
        (row[column + 3].flatMap { Int64($0) } ?? 0, row[column + 4].flatMap { Int64($0) } ?? 0)
    }

    func int(_ text: String?) -> Int { text.flatMap { Int($0) } ?? 0 }

    func rows(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        try connection.execute(sql, parameters, what: "report", reading: true).rows
    }

    /// A condition that holds when a record (`r`, with `d`) lacks `value`: the negation of the
    /// completeness count, and the SQLite engine's rule (`LibraryStore.missingCondition`).
    static func missingCondition(_ value: LibraryQuery.MissingValue) -> String {
        switch value {
        case .isbn: return "r.isbn13 IS NULL"
        case .year: return "r.year IS NULL"
        case .pages: return "r.pages IS NULL"
        case .publisher: return "r.publisher IS NULL"
        case .author: return "r.author_keys = 0"
        case .cover: return "NOT coalesce(\(hasCover), false)"
        }
    }

    /// Enriched, with an ISBN-13 or an Open Library edition (`…OL<digits>…M`, SQLite's `GLOB '*OL[0-9]*M'`).
    static let hasCover = "r.status = 'enriched' AND (r.isbn13 IS NOT NULL OR r.edition_key ~ 'OL[0-9].*M$')"

    /// The year columns of each file with a header (their places in the raw fields differ per header).
    var yearColumns: [(fileID: String, header: [String], columns: [Int])] = []

    /// Reads the records in scope once into `report_records` (dropped at commit): each value the
    /// figures need, taken out of `data` with one parse per record, and each file's year cells.
    mutating func makeTable() throws {
        for file in try rows("SELECT id, header FROM source_files WHERE header IS NOT NULL ORDER BY id") {
            let header = JSONText.decodeArray(file[1])
            let columns = header.indices.filter { PlausibleValues.isYearColumn(header[$0]) }
            if let id = file[0], Int64(id) != nil, !columns.isEmpty { yearColumns.append((id, header, columns)) }
        }
        let yearCells = yearColumns.isEmpty ? "NULL::text[]" : "CASE r.file_id " + yearColumns.map { file in
            "WHEN \(file.fileID) THEN ARRAY[" + file.columns.map { "r.d -> 'origin' -> 'rawFields' ->> \($0)" }.joined(separator: ", ") + "]"
        }.joined(separator: " ") + " END"
        func when(_ path: String, is type: String) -> String {
            "CASE WHEN jsonb_typeof(r.d -> '\(path)') = '\(type)' THEN r.d ->> '\(path)' END"
        }
        try connection.execute("""
            CREATE TEMP TABLE report_records ON COMMIT DROP AS
            SELECT r.id, r.file_id, r.row, r.status, r.review_status, r.run_id, r.isbn13,
                r.d -> 'origin' ->> 'file' AS file, (r.d -> 'origin' ->> 'line')::int AS line, r.d -> 'origin' ->> 'format' AS format,
                \(when("year", is: "number")) AS year, \(when("pageCount", is: "number")) AS pages,
                \(when("rating", is: "number")) AS rating, \(when("shelf", is: "string")) AS shelf,
                \(when("binding", is: "string")) AS binding, \(when("publisher", is: "string")) AS publisher,
                \(when("dateAdded", is: "string")) AS date_added, \(when("dateRead", is: "string")) AS date_read,
                r.d -> 'enrichment' ->> 'failure' AS failure, r.d -> 'enrichment' -> 'match' ->> 'source' AS match_source,
                r.d -> 'enrichment' -> 'match' ->> 'score' AS match_score,
                r.d -> 'enrichment' -> 'match' ->> 'editionKey' AS edition_key,
                r.d -> 'enrichment' -> 'match' ->> 'workKey' AS work_key,
                CASE WHEN jsonb_typeof(r.d -> 'enrichment' -> 'candidates') = 'array'
                    THEN jsonb_array_length(r.d -> 'enrichment' -> 'candidates') END AS candidates,
                r.d -> 'enrichment' -> 'candidates' -> 0 ->> 'score' AS candidate_score,
                coalesce(jsonb_typeof(r.d -> 'scan') = 'object', false) AS detection,
                CASE WHEN jsonb_typeof(r.d -> 'scan' -> 'confidence') = 'number' THEN (r.d -> 'scan' ->> 'confidence')::float8 END
                    AS confidence,
                CASE WHEN jsonb_typeof(r.d -> 'findings') = 'array' AND jsonb_array_length(r.d -> 'findings') > 0
                    THEN r.d -> 'findings' END AS findings,
                r.d -> 'normalized' ->> 'titleKey' AS title_key, r.d -> 'normalized' -> 'authorKeys' ->> 0 AS first_author_key,
                CASE WHEN jsonb_typeof(r.d -> 'normalized' -> 'authorKeys') = 'array'
                    THEN jsonb_array_length(r.d -> 'normalized' -> 'authorKeys') ELSE 0 END AS author_keys,
                \(yearCells) AS year_cells
            FROM (SELECT records.*, data::jsonb AS d FROM records WHERE \(recordScope) OFFSET 0) r
            """, what: "report", reading: true)
    }

    mutating func run() throws -> QualityFigures {
        try makeTable()
        // Records by status, by the run that wrote them last and by file, in one GROUP BY.
        var byStatus: [RecordStatus: Int] = [:], runRecords: [Int64: Int] = [:], fileRecords: [Int64: Int] = [:]
        for row in try rows("SELECT status, run_id, file_id, count(*) FROM records WHERE \(runScope) GROUP BY 1, 2, 3") {
            let count = int(row[3])
            if let status = row[0].flatMap(RecordStatus.init(rawValue:)) { byStatus[status, default: 0] += count }
            if let run = row[1].flatMap({ Int64($0) }) { runRecords[run, default: 0] += count }
            if let file = row[2].flatMap({ Int64($0) }) { fileRecords[file, default: 0] += count }
        }
        func has(_ status: RecordStatus) -> Bool { byStatus[status, default: 0] > 0 }

        // Completeness and the review queue, in one scan.
        let totals = try rows("""
            SELECT count(*),
                count(*) FILTER (WHERE r.isbn13 IS NOT NULL),
                count(*) FILTER (WHERE \(Self.hasCover)),
                count(r.year), count(r.pages), count(r.publisher),
                count(*) FILTER (WHERE r.review_status = 'needsReview' OR r.status = 'needsCandidateSelection'),
                count(*) FILTER (WHERE r.review_status = 'needsReview'),
                count(*) FILTER (WHERE r.review_status <> 'needsReview' AND r.status = 'needsCandidateSelection'),
                count(*) FILTER (WHERE r.review_status = 'userEdited'),
                count(*) FILTER (WHERE r.detection), count(*) FILTER (WHERE r.detection AND r.confidence IS NULL),
                count(r.findings)
            FROM \(scoped)
            """).first ?? []
        func total(_ index: Int) -> Int { index < totals.count ? int(totals[index]) : 0 }
        let waiting = total(6), waitingScans = total(7), detections = total(10)

        var failureReasons: [String?: Int] = [:]
        if has(.failed) {
            for row in try rows("""
                SELECT r.failure, count(*) FROM \(scoped) WHERE r.status = 'failed' GROUP BY 1
                """) {
                failureReasons[row[0], default: 0] += int(row[1])
            }
        }
        let rejectedRows = int(try rows("SELECT count(*) FROM rejected_rows WHERE \(runScope)").first?[0])

        // Matching: sources and scores counted by the server, each score given back as often as it occurs.
        var bySource: [String?: Int] = [:]
        var scores: [Double] = [], meanScore: Double?, leadingScores: [Double] = []
        if has(.enriched) {
            for row in try rows("""
                SELECT r.match_source, count(*) FROM \(scoped) WHERE r.status = 'enriched' GROUP BY 1
                """) {
                bySource[row[0], default: 0] += int(row[1])
            }
            scores = try repeated("""
                SELECT r.match_score::float8 AS score, count(*) FROM \(scoped)
                WHERE r.status = 'enriched' GROUP BY 1
                """)
            meanScore = try rows("""
                SELECT avg(r.match_score::float8) FROM \(scoped) WHERE r.status = 'enriched'
                """).first?[0].flatMap { Double($0) }
        }
        if has(.needsCandidateSelection) {
            leadingScores = try repeated("""
                SELECT r.candidate_score::float8 AS score, count(*) FROM \(scoped)
                WHERE r.status = 'needsCandidateSelection' GROUP BY 1
                """)
        }
        let matches = QualityFigures.Matches(bySource: bySource, scores: scores, meanScore: meanScore,
                                             leadingCandidateScores: leadingScores)

        // The review queue: when each waiting record was last written (whole seconds, as SQLite keeps them).
        let queuedAt = try waiting == 0 ? [] : rows("""
            SELECT floor(updated_at)::bigint FROM records
            WHERE \(runScope) AND (review_status = 'needsReview' OR status = 'needsCandidateSelection') ORDER BY 1
            """).compactMap { $0[0].flatMap { Double($0) } }.map { Date(timeIntervalSince1970: $0) }
        let reviewQueue = QualityFigures.ReviewQueue(
            waiting: waiting, waitingScans: waitingScans, waitingMatches: total(8), userEdited: total(9), queuedAt: queuedAt,
            scanDetections: detections, missingConfidence: total(11),
            confidences: try detections == 0 ? [] : repeated("""
                SELECT r.confidence, count(*) FROM \(scoped) WHERE r.detection AND r.confidence IS NOT NULL GROUP BY 1
                """))
        // Review outcomes, per record from its log of decisions: corrected if any changed it.
        let outcome = try rows("""
            SELECT count(*) FILTER (WHERE corrected), count(*) FILTER (WHERE NOT corrected) FROM (
                SELECT bool_or(a.action = 'edit' OR (a.action IN ('choose', 'choose-none')
                    AND (a.before::jsonb -> 'match') IS DISTINCT FROM (a.after::jsonb -> 'match'))) AS corrected
                FROM review_actions a JOIN records r ON r.id = a.record_id WHERE \(scope.runID.map { "r.run_id = \($0)" } ?? "true")
                GROUP BY a.record_id) decided
            """).first ?? []
        let reviewOutcomes = QualityFigures.ReviewOutcomes(corrected: int(outcome.first ?? nil),
                                                           verified: int(outcome.count > 1 ? outcome[1] : nil))

        // Findings stored on records, in library order, each record's in its order.
        var findings: [QualityFigures.RecordFinding] = []
        if total(12) > 0 {
            for row in try rows("""
                SELECT \(Self.placeColumns), f ->> 'code', f ->> 'severity', f ->> 'field', f ->> 'message'
                FROM \(scoped), jsonb_array_elements(r.findings) WITH ORDINALITY AS j(f, position)
                WHERE r.findings IS NOT NULL ORDER BY r.file_id, r.row, j.position
                """) {
                let severity = row[6].flatMap(Finding.Severity.init(rawValue:)) ?? .warning
                findings.append(.init(record: place(row, at: 0), finding: Finding(code: row[5] ?? "unknown", severity: severity,
                                                                                  field: row[7], message: row[8] ?? "")))
            }
        }

        // Outcomes that need a person or a retry.
        var openOutcomes: [QualityFigures.OpenOutcome] = []
        if has(.failed) || has(.needsCandidateSelection) || has(.notFound) || waitingScans > 0 {
            for row in try rows("""
                SELECT \(Self.placeColumns), r.status, r.failure, r.candidates, r.review_status
                FROM \(scoped) WHERE r.status IN ('failed', 'needsCandidateSelection', 'notFound') OR r.review_status = 'needsReview'
                ORDER BY r.file_id, r.row
                """) {
                guard let status = row[5].flatMap(RecordStatus.init(rawValue:)) else { continue }
                openOutcomes.append(.init(record: place(row, at: 0), status: status, failure: row[6], candidates: int(row[7]),
                                          needsReview: row[8] == "needsReview"))
            }
        }

        let rejections = try rows("""
            SELECT file_hash, file, line, row, column_number, reason, raw_text FROM rejected_rows WHERE \(runScope)
            ORDER BY file COLLATE "C", line, coalesce(column_number, 0), coalesce(row, 0)
            """).map { row in
            RejectedRow(fileHash: row[0] ?? "", file: row[1] ?? "", line: int(row[2]), row: row[3].flatMap { Int($0) },
                        column: row[4].flatMap { Int($0) }, reason: row[5] ?? "", rawText: row[6] ?? "")
        }

        // Runs, files, sources.
        let runs = try rows("""
            SELECT id, command, pipeline, started_at, finished_at, status FROM runs
            WHERE \(scope.runID.map { "id = \($0)" } ?? "true") ORDER BY id
            """).map { row throws(StoreError) in
            let id = row[0].flatMap { Int64($0) } ?? 0
            return QualityFigures.Run(id: id, command: row[1] ?? "", pipeline: row[2] ?? "",
                                      startedAt: try time(row[3] ?? "", run: id),
                                      finishedAt: try row[4].map { (text: String) throws(StoreError) in try time(text, run: id) },
                                      status: row[5].flatMap(RunStatus.init(rawValue:)) ?? .running,
                                      records: runRecords[id] ?? 0, written: runRecords[id] ?? 0)
        }
        var fileRejected: [String: Int] = [:]
        for row in try rows("SELECT file_hash, count(*) FROM rejected_rows WHERE \(runScope) GROUP BY 1") {
            fileRejected[row[0] ?? "", default: 0] += int(row[1])
        }
        let files = try rows("SELECT id, hash, path, format, encoding FROM source_files ORDER BY id").map { row in
            QualityFigures.File(hash: row[1] ?? "", path: row[2], format: row[3], encoding: row[4],
                                records: row[0].flatMap { Int64($0) }.flatMap { fileRecords[$0] } ?? 0,
                                rejected: fileRejected[row[1] ?? ""] ?? 0)
        }
        var cachedAnswers: [String: Int] = [:]
        for row in try rows("SELECT source, count(*) FROM lookup_cache GROUP BY source") {
            cachedAnswers[row[0] ?? "", default: 0] += int(row[1])
        }
        let sourceRequests = try rows("""
            SELECT source, sum((c ->> 'requests')::bigint), sum((c ->> 'cacheHits')::bigint), sum((c ->> 'retries')::bigint),
                sum((c ->> 'rateLimited')::bigint), sum((c ->> 'failures')::bigint),
                sum((c ->> 'meanLatencyMilliseconds')::float8 * (c ->> 'requests')::bigint)
                    / nullif(sum(CASE WHEN c ->> 'meanLatencyMilliseconds' IS NOT NULL THEN (c ->> 'requests')::bigint END), 0)
            FROM (SELECT source, counters::jsonb AS c FROM run_sources WHERE \(runScope)) s
            GROUP BY source ORDER BY source COLLATE "C"
            """).map { row in
            SourceCounters(name: row[0] ?? "", requests: int(row[1]), cacheHits: int(row[2]), retries: int(row[3]),
                           rateLimited: int(row[4]), failures: int(row[5]), meanLatencyMilliseconds: row[6].flatMap { Double($0) })
        }

        var figures = QualityFigures(
            records: total(0), recordsByStatus: byStatus, failureReasons: failureReasons, rejectedRows: rejectedRows,
            completeness: .init(isbn13: total(1), cover: total(2), year: total(3), pages: total(4), publisher: total(5)),
            reviewQueue: reviewQueue, reviewOutcomes: reviewOutcomes, matches: matches, findings: findings,
            refusedDates: [], openOutcomes: openOutcomes, duplicateGroups: try duplicates(), rejections: rejections, runs: runs,
            files: files, sourceRequests: sourceRequests, cachedAnswers: cachedAnswers)
        figures.runs = try written(figures.runs)
        figures.profiles = try profiles()
        figures.refusedDates = try refusedDates(profiles: figures.profiles)
        (figures.missingSamples, figures.authorless) = try missing()
        figures.outliers = try outliers()
        return figures
    }

    /// Each value of a two-column `value, count` query, as often as counted (in no particular order).
    func repeated(_ sql: String) throws -> [Double] {
        var values: [Double] = []
        for row in try rows(sql) {
            guard let value = row[0].flatMap({ Double($0) }) else { continue }
            values += repeatElement(value, count: int(row[1]))
        }
        return values
    }

    /// The records each run wrote (stored, or took over from another run), from `run_writes`
    /// (migration 6 keeps it).
    func written(_ runs: [QualityFigures.Run]) throws -> [QualityFigures.Run] {
        var writes: [Int64: Int] = [:]
        for row in try rows("SELECT run_id, records FROM run_writes") {
            if let run = row[0].flatMap({ Int64($0) }) { writes[run] = int(row[1]) }
        }
        return runs.map { run in
            var run = run
            run.written = writes[run.id] ?? 0
            return run
        }
    }

    /// The profiled fields: name, whether numeric, the SQL of its value as text (NULL: none).
    static let profiledFields: [(name: String, numeric: Bool, value: String)] = [
        ("year", true, "r.year"), ("pages", true, "r.pages"), ("rating", true, "r.rating"), ("shelf", false, "r.shelf"),
        ("binding", false, "r.binding"), ("publisher", false, "r.publisher"), ("dateAdded", false, "r.date_added"),
        ("dateRead", false, "r.date_read"),
    ]

    /// Each profiled field's values, counted by the server in one scan (the fields unpivoted with
    /// `LATERAL (VALUES …)`, then `GROUP BY` field and value). Numbers are merged by value here
    /// (`4` and `4.0` are one rating), written as the SQLite engine writes them.
    func profiles() throws -> [FieldProfile] {
        let fields = Self.profiledFields
        let values = fields.enumerated().map { "(\($0.offset), \($0.element.value))" }.joined(separator: ", ")
        var numbers = [[Double: Int]](repeating: [:], count: fields.count)
        var texts = [[String: Int]](repeating: [:], count: fields.count)
        for row in try rows("""
            SELECT v.field, v.value, count(*) FROM \(scoped), LATERAL (VALUES \(values)) AS v(field, value)
            WHERE v.value IS NOT NULL AND v.value <> '' GROUP BY 1, 2
            """) {
            guard let field = row[0].flatMap({ Int($0) }), fields.indices.contains(field), let value = row[1] else { continue }
            if fields[field].numeric {
                guard let number = Double(value) else { continue }
                numbers[field][number, default: 0] += int(row[2])
            } else {
                texts[field][value, default: 0] += int(row[2])
            }
        }
        return fields.indices.map { index in
            var values = texts[index]
            for (number, count) in numbers[index] {
                values[number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number), default: 0] += count
            }
            return FieldProfile(field: fields[index].name, isNumeric: fields[index].numeric, values: values)
        }
    }

    /// Records with a stored date the caller's rule refuses. The rule is asked once per distinct
    /// date (the profiles counted them; the empty text, which a profile leaves out, once more);
    /// only the records holding a refused one are read.
    func refusedDates(profiles: [FieldProfile]) throws -> [QualityFigures.RecordDates] {
        var refused: Set<String> = []
        for profile in profiles where profile.field == "dateAdded" || profile.field == "dateRead" {
            for value in profile.values.keys where !acceptsDate(value) { refused.insert(value) }
        }
        if !acceptsDate("") { refused.insert("") }
        guard !refused.isEmpty else { return [] }
        let dates = "(SELECT unnest($1::text[]))"
        return try rows("""
            SELECT \(Self.placeColumns), r.date_added, r.date_read FROM \(scoped)
            WHERE r.date_added IN \(dates) OR r.date_read IN \(dates)
            ORDER BY r.file_id, r.row
            """, [PostgresLibrary.array(refused.sorted())]).map { row in
            QualityFigures.RecordDates(record: place(row, at: 0), dateAdded: row[5], dateRead: row[6])
        }
    }

    /// The first records without each value (at most ``QualityFigures/missingSampleLimit``) and
    /// every authorless record, in library order, in one scan: the missing values unpivoted, each
    /// record numbered within its value by `row_number()`.
    func missing() throws -> (samples: [LibraryQuery.MissingValue: [RecordPlace]], authorless: [RecordPlace]) {
        let values = LibraryQuery.MissingValue.allCases
        let conditions = values.map { "('\($0.rawValue)', \(Self.missingCondition($0)))" }.joined(separator: ", ")
        var samples: [LibraryQuery.MissingValue: [RecordPlace]] = [:], authorless: [RecordPlace] = []
        for row in try rows("""
            SELECT value, id, file, line, position FROM (
                SELECT m.value, r.id, r.file, r.line,
                    row_number() OVER (PARTITION BY m.value ORDER BY r.file_id, r.row) AS position, r.file_id, r.row
                FROM \(scoped), LATERAL (VALUES \(conditions)) AS m(value, missing) WHERE m.missing) numbered
            WHERE position <= $1 OR value = 'author'
            ORDER BY value, file_id, row
            """, [String(QualityFigures.missingSampleLimit)]) {
            guard let value = row[0].flatMap(LibraryQuery.MissingValue.init(rawValue:)) else { continue }
            let place = RecordPlace(id: row[1] ?? "?", file: row[2] ?? "?", line: int(row[3]))
            if value == .author { authorless.append(place) }
            if int(row[4]) <= QualityFigures.missingSampleLimit { samples[value, default: []].append(place) }
        }
        return (samples, authorless)
    }

    /// Values outside the plausible ones: pages, ratings (each format's scale) and dates read
    /// before the publication year found by the server's conditions; years in any year column
    /// found by reading each distinct value once (per file: its columns differ by header), then
    /// the records that hold an outside one. In library order, a record's in the SQLite engine's
    /// order (pages, rating, read date, then its year columns).
    func outliers() throws -> [Outlier] {
        let plausible = scope.plausible
        var found: [(order: (Int64, Int64), outlier: Outlier)] = []
        // A rating's scale by format: the standard one but for the formats named.
        var scale = "NOT (rating BETWEEN \(plausible.ratings.lowerBound) AND \(plausible.ratings.upperBound))"
        if !plausible.ratingScales.isEmpty {
            scale = "CASE format " + plausible.ratingScales.keys.sorted().map { format in
                let range = plausible.ratingScales[format] ?? plausible.ratings
                return "WHEN '\(format.replacingOccurrences(of: "'", with: "''"))' THEN NOT (rating BETWEEN \(range.lowerBound) AND \(range.upperBound))"
            }.joined(separator: " ") + " ELSE \(scale) END"
        }
        // A date read whose first four characters are a number (a sign allowed, as Swift's Int reads
        // them) below the record's year, followed by `-` or `/`.
        for row in try rows("""
            SELECT id, file, line, file_id, row, year, pages, rating, read,
                pages IS NOT NULL AND NOT (pages BETWEEN \(plausible.pages.lowerBound) AND \(plausible.pages.upperBound)),
                rating IS NOT NULL AND \(scale),
                year IS NOT NULL AND read IS NOT NULL AND substr(read, 5, 1) IN ('-', '/')
                    AND substr(read, 1, 4) ~ '^[+-]?[0-9]+$' AND substr(read, 1, 4)::int < year
            FROM (SELECT r.id, r.file, r.line, r.file_id, r.row, r.format, r.year::numeric AS year,
                    r.pages::numeric AS pages, r.rating::float8 AS rating, r.date_read AS read FROM \(scoped)) v
            WHERE (pages IS NOT NULL AND NOT (pages BETWEEN \(plausible.pages.lowerBound) AND \(plausible.pages.upperBound)))
                OR (rating IS NOT NULL AND \(scale))
                OR (year IS NOT NULL AND read IS NOT NULL AND substr(read, 5, 1) IN ('-', '/')
                    AND substr(read, 1, 4) ~ '^[+-]?[0-9]+$' AND substr(read, 1, 4)::int < year)
            ORDER BY file_id, row
            """) {
            let record = place(row, at: 0), position = order(row, at: 0)
            let year = row[5].flatMap { Int($0) }
            if row[9] == "t", let pages = row[6] {
                found.append((position, Outlier(record: record, kind: .pages, field: "pages", value: pages, recordYear: year)))
            }
            if row[10] == "t", let rating = row[7].flatMap({ Double($0) }) {
                let text = rating == rating.rounded() ? String(Int(rating)) : String(rating)
                found.append((position, Outlier(record: record, kind: .rating, field: "rating", value: text, recordYear: year)))
            }
            if row[11] == "t", let read = row[8] {
                found.append((position, Outlier(record: record, kind: .readBeforePublication, field: "dateRead", value: read,
                                             recordYear: year)))
            }
        }
        // Year columns, file by file.
        for (fileID, header, columns) in yearColumns {
            let cells = columns.indices.map { "(\($0), r.year_cells[\($0 + 1)])" }.joined(separator: ", ")
            var outside: Set<String> = []
            for row in try rows("""
                SELECT DISTINCT c.value FROM \(scoped), LATERAL (VALUES \(cells)) AS c(column_number, value)
                WHERE r.file_id = $1 AND c.value IS NOT NULL
                """, [fileID]) {
                guard let text = row[0], let year = Self.leadingYear(text), year > 0, !plausible.years.contains(year) else { continue }
                outside.insert(text)
            }
            guard !outside.isEmpty else { continue }
            let values = columns.indices.map { "r.year_cells[\($0 + 1)]" }
            for row in try rows("""
                SELECT \(Self.placeColumns), r.year,
                    \(values.joined(separator: ", "))
                FROM \(scoped) WHERE r.file_id = $1 AND (\(values.map { "\($0) = ANY($2::text[])" }.joined(separator: " OR ")))
                ORDER BY r.file_id, r.row
                """, [fileID, PostgresLibrary.array(outside.sorted())]) {
                let record = place(row, at: 0), position = order(row, at: 0)
                for (index, column) in columns.enumerated() {
                    guard let text = row[6 + index], outside.contains(text) else { continue }
                    found.append((position, Outlier(record: record, kind: .year, field: header[column],
                                                 value: text.trimmingCharacters(in: .whitespaces),
                                                 recordYear: row[5].flatMap { Int($0) })))
                }
            }
        }
        return found.enumerated().sorted { ($0.element.order.0, $0.element.order.1, $0.offset) < ($1.element.order.0, $1.element.order.1, $1.offset) }
            .map(\.element.outlier)
    }

    /// The whole number a year cell holds (`1999`, ` 1999 `, `1999.0`); nil for anything else (the
    /// SQLite engine's reading of a year column).
    static func leadingYear(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        if let number = Int(trimmed) { return number }
        guard let number = Double(trimmed), number.isFinite, number == number.rounded(), abs(number) < 1e9 else { return nil }
        return Int(number)
    }

    /// Duplicates: records in scope that share an ISBN-13, a matched work, or a title key and first
    /// author key, found by the server in one scan: the three values unpivoted, a window count over
    /// each value, groups of two or more kept. Within a kind the largest groups first, then by value
    /// in byte order (`COLLATE "C"`), members in library order: the SQLite engine's order.
    func duplicates() throws -> [QualityFigures.DuplicateGroup] {
        let kinds: [(kind: DuplicateKind, value: String)] = [
            (.sameISBN13, "r.isbn13"),
            (.sameWork, "CASE WHEN r.status = 'enriched' THEN nullif(r.work_key, '') END"),
            (.sameTitleAndFirstAuthor, """
                CASE WHEN r.title_key <> '' THEN r.title_key || ' / ' || coalesce(r.first_author_key, '') END
                """),
        ]
        let values = kinds.enumerated().map { "(\($0.offset), \($0.element.value))" }.joined(separator: ", ")
        var groups: [QualityFigures.DuplicateGroup] = []
        for row in try rows("""
            SELECT kind, value, id, file, line FROM (
                SELECT v.kind, v.value, r.id, r.file, r.line,
                    r.file_id, r.row, count(*) OVER (PARTITION BY v.kind, v.value) AS n
                FROM \(scoped), LATERAL (VALUES \(values)) AS v(kind, value) WHERE v.value IS NOT NULL) shared
            WHERE n > 1 ORDER BY kind, n DESC, value COLLATE "C", file_id, row
            """) {
            guard let index = row[0].flatMap({ Int($0) }), kinds.indices.contains(index), let value = row[1] else { continue }
            let member = RecordPlace(id: row[2] ?? "?", file: row[3] ?? "?", line: int(row[4]))
            if let last = groups.last, last.kind == kinds[index].kind, last.value.utf8.elementsEqual(value.utf8) {
                groups[groups.count - 1].members.append(member)
            } else {
                groups.append(.init(kind: kinds[index].kind, value: value, members: [member]))
            }
        }
        return groups
    }

    /// A run's stored time (ISO 8601, UTC; fractional seconds allowed).
    func time(_ text: String, run: Int64) throws(StoreError) -> Date {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text) else {
            throw StoreError.readFailed(path: location, what: "report", reason: "run \(run) has a time that is not ISO 8601: \"\(text)\"")
        }
        return date
    }
}
