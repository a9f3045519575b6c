import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB
internal import GRDBSQLite

extension LibraryStore {
    /// Stores what each source did in a run (replacing what was stored for the same run and source).
    /// - Throws: ``StoreError`` when the write fails.
    public func recordRunSources(_ counters: [SourceCounters], runID: Int64) async throws(StoreError) {
        guard !counters.isEmpty else { return }
        try await perform("run sources") { db in
            for counter in counters {
                try db.execute(sql: """
                    INSERT INTO run_sources (run_id, source, requests, cache_hits, retries, rate_limited, failures, mean_latency_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (run_id, source) DO UPDATE SET requests = excluded.requests, cache_hits = excluded.cache_hits,
                        retries = excluded.retries, rate_limited = excluded.rate_limited, failures = excluded.failures,
                        mean_latency_ms = excluded.mean_latency_ms
                    """, arguments: [runID, counter.name, counter.requests, counter.cacheHits, counter.retries,
                                     counter.rateLimited, counter.failures, counter.meanLatencyMilliseconds])
            }
        }
    }

    /// The cached answers to these questions, from any source.
    /// - Throws: ``StoreError`` when the read fails.
    public func cachedLookups(questions: [String]) throws(StoreError) -> [CachedLookup] {
        guard !questions.isEmpty else { return [] }
        return try read("lookup cache") { db in
            let marks = Array(repeating: "?", count: questions.count).joined(separator: ", ")
            return try Row.fetchAll(db, sql: """
                SELECT source, question, answer, fetched_at FROM lookup_cache WHERE question IN (\(marks)) ORDER BY source, question
                """, arguments: StatementArguments(questions)).map { row in
                CachedLookup(source: row["source"], question: row["question"], answerJSON: row["answer"],
                             fetchedAt: Date(timeIntervalSince1970: row["fetched_at"]))
            }
        }
    }

    /// Runs `body` in a read transaction (one snapshot) on a reader connection, for modules of
    /// this package that compute over the library with SQL (reports). `body` must not write.
    /// - Throws: ``StoreError/readFailed(path:what:reason:)`` wrapping `body`'s errors.
    package func readDatabase<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        try read(what, body)
    }

    /// Decodes a stored record from a row that has `records.*` and ``recordOriginColumns``.
    package func decodeRecord(_ row: Row) throws -> BookRecord {
        try RecordCoding.decode(row, path: path)
    }

    /// The columns a ``decodeRecord(_:)`` row needs besides `r.*`.
    package static var recordOriginColumns: String { RecordCoding.originColumns }
    /// `FROM` clause joining records (`r`) to their origin (`o`) and file (`f`).
    package static var recordJoins: String { RecordCoding.joins }
}

/// SQL functions over the stored record columns, for reports.
package enum StoredColumnFunctions {
    /// Registers `bookpipe_field(raw, value)` on the connection: a `fields` value as text — an
    /// integer is the number of a raw field of `raw` (the library stores a value that copies a raw
    /// field as its number; see ``RecordCoding``), text is itself, anything else NULL. Works on the
    /// bytes SQLite holds (a report calls it for every record): no Swift string of the row is made.
    package static func register(in db: Database) {
        guard let connection = db.sqliteConnection else { return }
        sqlite3_create_function_v2(connection, "bookpipe_field", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let arguments, let raw = arguments[0], let value = arguments[1] else { return }
            switch sqlite3_value_type(value) {
            case SQLITE_TEXT:
                sqlite3_result_value(context, value)
            case SQLITE_INTEGER:
                let index = Int(sqlite3_value_int64(value))
                guard let text = sqlite3_value_text(raw), index >= 0 else { return }
                let count = Int(sqlite3_value_bytes(raw))
                // Skip `index` separators; a row with escapes goes through RawColumn.
                if memchr(text, Int32(RawColumn.escape), count) != nil {
                    let fields = RawColumn.fields(String(cString: text)).fields
                    guard index < fields.count else { return }
                    sqlite3_result_text(context, fields[index], -1, sqliteTransient)
                    return
                }
                var start = 0
                for _ in 0..<index {
                    guard let hit = memchr(text + start, Int32(RawColumn.separator), count - start) else { return }
                    start = UnsafeRawPointer(text).distance(to: UnsafeRawPointer(hit)) + 1
                }
                let end = memchr(text + start, Int32(RawColumn.separator), count - start)
                    .map { UnsafeRawPointer(text).distance(to: UnsafeRawPointer($0)) } ?? count
                sqlite3_result_text(context, UnsafeRawPointer(text + start).assumingMemoryBound(to: CChar.self),
                                    Int32(end - start), sqliteTransient)
            default:
                return
            }
        }, nil, nil, nil)
    }
}
