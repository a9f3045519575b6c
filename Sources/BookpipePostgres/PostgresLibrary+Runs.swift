import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    // MARK: - Runs

    /// Records a run's start; returns its id.
    public func beginRun(command: String, pipeline: String) async throws(StoreError) -> Int64 {
        try withConnection("run", reading: false) { connection in
            guard let id = try connection.execute("""
                INSERT INTO runs (command, pipeline, started_at, status) VALUES ($1, $2, $3, 'running') RETURNING id
                """, [command, pipeline, Self.timestamp()], what: "run").scalar.flatMap({ Int64($0) })
            else { throw StoreError.writeFailed(path: self.location, what: "run", reason: "no id returned") }
            return id
        }
    }

    /// Records how a run ended.
    public func finishRun(_ id: Int64, status: RunStatus, summary: String?) async throws(StoreError) {
        try withConnection("run end", reading: false) { connection in
            try connection.execute("UPDATE runs SET finished_at = $1, status = $2, summary = $3 WHERE id = $4",
                                   [Self.timestamp(), status.rawValue, summary, String(id)], what: "run end")
        }
    }

    /// Every run, oldest first (as the SQLite engine lists them).
    public func runs() async throws(StoreError) -> [RunEntry] {
        try withConnection("runs") { connection in
            try connection.execute("SELECT id, command, pipeline, started_at, finished_at, status FROM runs ORDER BY id",
                                   what: "runs", reading: true).rows.map { row in
                RunEntry(id: row[0].flatMap { Int64($0) } ?? 0, command: row[1] ?? "", pipeline: row[2] ?? "",
                         startedAt: row[3] ?? "", finishedAt: row[4],
                         status: row[5].flatMap(RunStatus.init(rawValue:)) ?? .running)
            }
        }
    }

    // MARK: - Scan jobs

    /// Stores a photo's scan job state.
    public func saveScanJob(_ state: ScanJobState, runID: Int64?) async throws(StoreError) {
        let milliseconds = state.jobTime.map { duration -> Int64 in
            duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
        try withConnection("scan job of \(state.photo)", reading: false) { connection in
            try connection.execute("""
                INSERT INTO scan_jobs (photo_hash, photo, provider, attempt, phase, job_id, books, failure, job_ms,
                    rate_limited, run_id, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                ON CONFLICT (photo_hash) DO UPDATE SET photo = excluded.photo, provider = excluded.provider,
                    attempt = excluded.attempt, phase = excluded.phase, job_id = excluded.job_id, books = excluded.books,
                    failure = excluded.failure, job_ms = excluded.job_ms, rate_limited = excluded.rate_limited,
                    run_id = excluded.run_id, updated_at = excluded.updated_at
                """, [state.photoHash, state.photo, state.provider, String(state.attempt), state.phase.rawValue, state.jobID,
                      Self.text(state.books), state.failure, Self.text(milliseconds), String(state.rateLimited),
                      Self.text(runID), Self.text(Date())], what: "scan job of \(state.photo)")
        }
    }

    static let scanJobColumns = "photo, photo_hash, provider, attempt, phase, job_id, books, failure, job_ms, rate_limited"

    static func scanJobState(_ row: [String?]) -> ScanJobState {
        ScanJobState(photo: row[0] ?? "", photoHash: row[1] ?? "", provider: row[2] ?? "",
                     attempt: row[3].flatMap { Int($0) } ?? 0, phase: row[4].flatMap(ScanJobState.Phase.init(rawValue:)) ?? .failed,
                     jobID: row[5], books: row[6].flatMap { Int($0) }, failure: row[7],
                     jobTime: row[8].flatMap { Int64($0) }.map { .milliseconds($0) }, rateLimited: row[9].flatMap { Int($0) } ?? 0)
    }

    /// The state of a photo's scan job, by the photo's content fingerprint.
    public func scanJob(photoHash: String) async throws(StoreError) -> ScanJobState? {
        try withConnection("scan job") { connection in
            try connection.execute("SELECT \(Self.scanJobColumns) FROM scan_jobs WHERE photo_hash = $1", [photoHash],
                                   what: "scan job", reading: true).rows.first.map(Self.scanJobState)
        }
    }

    /// Every scan job, in photo order.
    public func scanJobs() async throws(StoreError) -> [ScanJobState] {
        try withConnection("scan jobs") { connection in
            try connection.execute("SELECT \(Self.scanJobColumns) FROM scan_jobs ORDER BY photo", what: "scan jobs",
                                   reading: true).rows.map(Self.scanJobState)
        }
    }

    // MARK: - Report

    // (The report's figures: PostgresLibrary+QualityFigures.swift.)

    /// Keeps a report's headline figures; returns the entry's id.
    public func saveReportHistory(generatedAt: Date, scope: String, figures: [String: Double]) async throws(StoreError) -> Int64 {
        let finite = figures.mapValues { $0.isFinite ? $0 : 0 }
        let json = (try? JSONSerialization.data(withJSONObject: finite, options: [.sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return try withConnection("report history", reading: false) { connection in
            guard let id = try connection.execute(
                "INSERT INTO report_history (generated_at, scope, figures) VALUES ($1, $2, $3) RETURNING id",
                [ISO8601DateFormatter().string(from: generatedAt), scope, json], what: "report history")
                .scalar.flatMap({ Int64($0) })
            else { throw StoreError.writeFailed(path: self.location, what: "report history", reason: "no id returned") }
            return id
        }
    }

    /// The saved reports' figures, oldest first (the last `limit` when given).
    public func reportHistory(limit: Int?) async throws(StoreError) -> [ReportHistoryEntry] {
        let rows = try withConnection("report history") { connection in
            try connection.execute("SELECT id, generated_at, scope, figures FROM report_history ORDER BY id DESC"
                                   + (limit.map { " LIMIT \($0)" } ?? ""), what: "report history", reading: true).rows
        }
        return try rows.reversed().map { row throws(StoreError) in
            guard let id = row[0].flatMap({ Int64($0) }), let date = row[1].flatMap({ ISO8601DateFormatter().date(from: $0) }),
                  let object = row[3].flatMap({ try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            else {
                throw StoreError.readFailed(path: location, what: "report history", reason: "entry \(row[0] ?? "?") is not readable")
            }
            return ReportHistoryEntry(id: id, generatedAt: date, scope: row[2] ?? "",
                                      figures: object.compactMapValues { ($0 as? NSNumber)?.doubleValue })
        }
    }

    /// The titles (as read) of these records, by id (only the title is read of each record).
    public func recordTitles(ids: [String]) async throws(StoreError) -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try withConnection("record titles") { connection in
            var titles: [String: String] = [:]
            for row in try connection.execute("SELECT id, data::jsonb ->> 'title' FROM records WHERE id = ANY($1::text[])",
                                              [Self.array(ids)], what: "record titles", reading: true).rows {
                if let id = row[0], let title = row[1] { titles[id] = title }
            }
            return titles
        }
    }

    /// A record's review decisions, oldest first.
    public func reviewActions(recordID: String) async throws(StoreError) -> [ReviewAction]? {
        try withConnection("review actions") { connection in
            try connection.execute("""
                SELECT record_id, action, before, after, acted_at FROM review_actions WHERE record_id = $1 ORDER BY id
                """, [recordID], what: "review actions", reading: true).rows.map(Self.reviewAction)
        }
    }

    /// The records the report counts as duplicates of this one, by kind (the same rules as the
    /// SQLite engine: the same ISBN-13; matched to the same work; the same title key and first
    /// author key).
    public func duplicates(ofRecord recordID: String) async throws(StoreError) -> [RecordDuplicates] {
        try withConnection("duplicates") { connection in
            var found: [RecordDuplicates] = []
            for kind in DuplicateKind.allCases {
                let condition = switch kind {
                case .sameISBN13: "o.isbn13 = t.isbn13"
                case .sameWork: "o.status = 'enriched' AND t.status = 'enriched' AND nullif(t.work_key, '') = o.work_key"
                case .sameTitleAndFirstAuthor: """
                    t.data::jsonb -> 'normalized' ->> 'titleKey' <> ''
                    AND o.data::jsonb -> 'normalized' ->> 'titleKey' = t.data::jsonb -> 'normalized' ->> 'titleKey'
                    AND coalesce(o.data::jsonb -> 'normalized' -> 'authorKeys' ->> 0, '')
                        = coalesce(t.data::jsonb -> 'normalized' -> 'authorKeys' ->> 0, '')
                    """
                }
                let ids = try connection.execute("""
                    SELECT o.id FROM records o JOIN records t ON t.id = $1 WHERE o.id <> t.id AND \(condition)
                    ORDER BY o.file_id, o.row
                    """, [recordID], what: "duplicates", reading: true).rows.compactMap { $0[0] }
                if !ids.isEmpty { found.append(RecordDuplicates(kind: kind, recordIDs: ids)) }
            }
            return found
        }
    }
}
