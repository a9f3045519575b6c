import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    // MARK: - Lookup cache

    /// The cached answers of `source` to these questions, keyed by question; questions never
    /// asked, or answered before `notBefore`, are absent.
    /// - Throws: ``StoreError`` when the read fails.
    public func cachedAnswers(source: String, questions: [String], notBefore: Date? = nil)
        throws(StoreError) -> [String: CachedAnswer] {
        guard !questions.isEmpty else { return [:] }
        return try read("cached answers") { db in
            var answers: [String: CachedAnswer] = [:]
            let statement = try db.cachedStatement(
                sql: "SELECT answer, fetched_at FROM lookup_cache WHERE source = ? AND question = ?")
            let oldest = notBefore?.timeIntervalSince1970 ?? -Double.infinity
            for question in questions {
                guard let row = try Row.fetchOne(statement, arguments: [source, question]) else { continue }
                let fetchedAt: Double = row["fetched_at"]
                guard fetchedAt >= oldest else { continue }
                answers[question] = CachedAnswer(answerJSON: row["answer"],
                                                 fetchedAt: Date(timeIntervalSince1970: fetchedAt))
            }
            return answers
        }
    }

    /// Stores answers of `source` (replacing older answers to the same questions), through the
    /// library's writer (in order with the pipeline's other writes; the caller suspends, never blocks).
    /// - Throws: ``StoreError`` when the write fails; nothing is written then.
    public func cacheAnswers(source: String, _ answers: [(question: String, answerJSON: String)],
                             fetchedAt: Date = Date()) async throws(StoreError) {
        guard !answers.isEmpty else { return }
        let answers = answers.map { CachedPair(question: $0.question, answerJSON: $0.answerJSON) }
        try await perform("\(answers.count) cached answers") { db in
            let statement = try db.cachedStatement(sql: """
                INSERT INTO lookup_cache (source, question, answer, fetched_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (source, question) DO UPDATE SET answer = excluded.answer, fetched_at = excluded.fetched_at
                """)
            for answer in answers {
                try statement.execute(arguments: [source, answer.question, answer.answerJSON,
                                                  fetchedAt.timeIntervalSince1970])
            }
        }
    }

    private struct CachedPair: Sendable {
        var question: String
        var answerJSON: String
    }

    /// How many answers the cache holds.
    /// - Throws: ``StoreError`` when the read fails.
    public func cachedAnswerCount() throws(StoreError) -> Int {
        try read("cache size") { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM lookup_cache") ?? 0 }
    }

    // MARK: - Host quotas

    /// The stored block on `host`, if any (expired blocks included; callers compare with now).
    /// - Throws: ``StoreError`` when the read fails.
    public func hostQuota(host: String) throws(StoreError) -> StoredHostQuota? {
        try read("host quota") { db in
            try Row.fetchOne(db, sql: "SELECT blocked_until, reason FROM host_quotas WHERE host = ?",
                             arguments: [host]).map {
                StoredHostQuota(host: host, blockedUntil: Date(timeIntervalSince1970: $0["blocked_until"]),
                                reason: $0["reason"])
            }
        }
    }

    /// Stores a block on a host; a later end wins over an earlier one. Goes through the library's
    /// writer (``LibraryWriter``), in order after every write submitted before it, and returns once
    /// committed: no async caller blocks a thread on the database.
    /// - Throws: ``StoreError`` when the write fails.
    public func saveHostQuota(_ quota: StoredHostQuota) async throws(StoreError) {
        try await perform("host quota") { db in
            try db.execute(sql: """
                INSERT INTO host_quotas (host, blocked_until, reason) VALUES (?, ?, ?)
                ON CONFLICT (host) DO UPDATE SET
                    reason = CASE WHEN excluded.blocked_until > blocked_until THEN excluded.reason ELSE reason END,
                    blocked_until = max(blocked_until, excluded.blocked_until)
                """, arguments: [quota.host, quota.blockedUntil.timeIntervalSince1970, quota.reason])
        }
    }

    // MARK: - Records to enrich

    /// A batch of records in one of `statuses`, in key order (file, then row) after `afterKey`,
    /// optionally only from the files with these fingerprints. Page with the returned `lastKey`,
    /// so rows whose status changes meanwhile are never read twice.
    /// - Throws: ``StoreError`` when the read fails or a stored value is unreadable.
    public func records(statuses: [RecordStatus], fileHashes: [String]? = nil, afterKey: Int64? = nil,
                        limit: Int) throws(StoreError) -> (records: [BookRecord], lastKey: Int64?) {
        guard !statuses.isEmpty else { return ([], nil) }
        return try read("records to enrich") { db in
            var sql = "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins)"
                + " WHERE r.status IN (\(databaseQuestionMarks(count: statuses.count)))"
            var arguments: [any DatabaseValueConvertible] = statuses.map(\.rawValue)
            if let fileHashes {
                guard !fileHashes.isEmpty else { return ([], nil) }
                sql += " AND f.hash IN (\(databaseQuestionMarks(count: fileHashes.count)))"
                arguments += fileHashes as [any DatabaseValueConvertible]
            }
            if let afterKey {
                sql += " AND r.key > ?"
                arguments.append(afterKey)
            }
            sql += " ORDER BY r.key LIMIT ?"
            arguments.append(limit)
            let rows = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments))
            return (try rows.map { try RecordCoding.decode($0, path: path) }, rows.last.map { $0["key"] })
        }
    }

    /// How many records are in one of `statuses` (optionally only from these files).
    /// - Throws: ``StoreError`` when the read fails.
    public func countRecords(statuses: [RecordStatus], fileHashes: [String]? = nil) throws(StoreError) -> Int {
        guard !statuses.isEmpty else { return 0 }
        return try read("record count") { db in
            var sql = "SELECT count(*) FROM \(RecordCoding.joins) WHERE r.status IN (\(databaseQuestionMarks(count: statuses.count)))"
            var arguments: [any DatabaseValueConvertible] = statuses.map(\.rawValue)
            if let fileHashes {
                guard !fileHashes.isEmpty else { return 0 }
                sql += " AND f.hash IN (\(databaseQuestionMarks(count: fileHashes.count)))"
                arguments += fileHashes as [any DatabaseValueConvertible]
            }
            return try Int.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)) ?? 0
        }
    }

    /// Upserts the works (and their ISBN identifiers) of records that were matched, in the
    /// caller's transaction.
    func upsertMatchedWorks(_ records: [BookRecord], db: Database, now: Int64) throws {
        let work = try db.cachedStatement(sql: """
            INSERT INTO works (key, title, authors, first_year, source, data, updated_at) VALUES (?, ?, ?, ?, ?, NULL, ?)
            ON CONFLICT (key) DO UPDATE SET title = excluded.title, authors = excluded.authors,
                first_year = coalesce(excluded.first_year, first_year), source = excluded.source,
                updated_at = excluded.updated_at
            """)
        let identifier = try db.cachedStatement(sql: """
            INSERT INTO identifiers (scheme, value, work_key, edition_key) VALUES ('isbn13', ?, ?, ?)
            ON CONFLICT (scheme, value, work_key) DO UPDATE SET edition_key = coalesce(excluded.edition_key, edition_key)
            """)
        for record in records {
            // Only works: a match whose source names no work (a Google Books volume) has none to keep.
            guard let match = record.enrichment?.match, WorkKey.isWork(match.workKey) else { continue }
            let accepted = record.enrichment?.acceptedCandidate
            try work.execute(arguments: [match.workKey, match.title, JSONText.array(match.authors), accepted?.year,
                                         match.source, now])
            for isbn in accepted?.isbn13s ?? []
            where record.normalized?.allISBN13s.contains(isbn) ?? false {
                try identifier.execute(arguments: [isbn, match.workKey, match.editionKey])
            }
        }
    }
}
