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

extension LibraryStore {
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
