import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension Schema {
    /// One rate budget per host for every process on the library file (docs/decisions/0029): the
    /// PostgreSQL engine's `host_buckets`, on this machine's clock.
    static func registerRateBudgetMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("host buckets: one rate budget per host") { db in
            try db.execute(sql: """
                CREATE TABLE host_buckets (
                    host TEXT PRIMARY KEY,
                    tokens REAL NOT NULL,
                    updated_at REAL NOT NULL,        -- seconds since 1970
                    paused_until REAL,               -- seconds since 1970: a 429's Retry-After, every run waits
                    pause_reason TEXT
                );
                """)
        }
    }
}

extension Schema {
    /// Questions being asked by some process on the library file, so that no other asks them too.
    static func registerQuestionsInFlightMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("questions in flight: one asker per question") { db in
            try db.execute(sql: """
                CREATE TABLE questions_in_flight (
                    source TEXT NOT NULL,
                    question TEXT NOT NULL,
                    asker TEXT NOT NULL,
                    lease_until REAL NOT NULL,        -- seconds since 1970
                    PRIMARY KEY (source, question)
                ) WITHOUT ROWID;
                """)
        }
    }
}

extension LibraryStore {
    /// Takes the questions no other asker holds (or whose lease ran out), in one write
    /// transaction; returns those `asker` holds now.
    /// - Throws: ``StoreError`` when the write fails.
    public func takeQuestions(source: String, _ questions: [String], asker: String, lease: Duration) async throws(StoreError)
        -> Set<String> {
        guard !questions.isEmpty else { return [] }
        return try await perform("\(questions.count) questions to \(source)") { db -> Set<String> in
            let now = Date().timeIntervalSince1970
            let take = try db.cachedStatement(sql: """
                INSERT INTO questions_in_flight (source, question, asker, lease_until) VALUES (?, ?, ?, ?)
                ON CONFLICT (source, question) DO UPDATE SET asker = excluded.asker, lease_until = excluded.lease_until
                WHERE lease_until <= ? OR asker = excluded.asker
                """)
            var taken = Set<String>()
            for question in questions {
                try take.execute(arguments: [source, question, asker, now + lease.timeInterval, now])
                if db.changesCount > 0 { taken.insert(question) }
            }
            return taken
        }
    }

    /// Gives up questions `asker` took.
    /// - Throws: ``StoreError`` when the write fails.
    public func releaseQuestions(source: String, _ questions: [String], asker: String) async throws(StoreError) {
        guard !questions.isEmpty else { return }
        try await perform("\(questions.count) questions to \(source)") { db in
            let release = try db.cachedStatement(sql: "DELETE FROM questions_in_flight WHERE source = ? AND question = ? AND asker = ?")
            for question in questions { try release.execute(arguments: [source, question, asker]) }
        }
    }

    /// Who holds each of these questions now (leases run out left out).
    /// - Throws: ``StoreError`` when the read fails.
    public func questionAskers(source: String, _ questions: [String]) throws(StoreError) -> [String: String] {
        guard !questions.isEmpty else { return [:] }
        return try read("questions to \(source)") { db in
            let now = Date().timeIntervalSince1970
            let statement = try db.cachedStatement(
                sql: "SELECT asker FROM questions_in_flight WHERE source = ? AND question = ? AND lease_until > ?")
            var askers: [String: String] = [:]
            for question in questions {
                if let asker = try String.fetchOne(statement, arguments: [source, question, now]) { askers[question] = asker }
            }
            return askers
        }
    }

    /// Takes a token from `host`'s bucket shared by every process on this library file
    /// (``HostBucketRule``), in one write transaction (SQLite lets one writer in at a time).
    /// - Returns: zero when the request may go now; else how long to wait before asking again.
    /// - Throws: ``StoreError`` when the write fails.
    public func takeHostToken(_ host: String, rate: Double, burst: Double) async throws(StoreError) -> Duration {
        let seconds = try await perform("the rate budget of \(host)") { db -> Double in
            let now = Date().timeIntervalSince1970
            let row = try Row.fetchOne(db, sql: "SELECT tokens, updated_at, paused_until FROM host_buckets WHERE host = ?",
                                       arguments: [host])
            let take = HostBucketRule.take(tokens: row?["tokens"], updatedAt: row?["updated_at"] ?? now,
                                           pausedUntil: row?["paused_until"], now: now, rate: rate, burst: burst)
            try db.execute(sql: """
                INSERT INTO host_buckets (host, tokens, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (host) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at
                """, arguments: [host, take.tokens, now])
            return take.wait
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Pauses every process's requests to `host` for `duration` from now; a longer pause stands.
    /// - Throws: ``StoreError`` when the write fails.
    public func pauseHost(_ host: String, for duration: Duration, reason: String) async throws(StoreError) {
        try await perform("the rate budget of \(host)") { db in
            let now = Date().timeIntervalSince1970
            try db.execute(sql: """
                INSERT INTO host_buckets (host, tokens, updated_at, paused_until, pause_reason) VALUES (?, 0, ?, ?, ?)
                ON CONFLICT (host) DO UPDATE SET tokens = 0, updated_at = excluded.updated_at,
                    pause_reason = CASE WHEN excluded.paused_until > coalesce(paused_until, 0)
                                        THEN excluded.pause_reason ELSE pause_reason END,
                    paused_until = max(coalesce(paused_until, 0), excluded.paused_until)
                """, arguments: [host, now, now + duration.timeInterval, reason])
        }
    }
}
