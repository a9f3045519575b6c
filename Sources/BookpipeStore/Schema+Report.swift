import GRDB

extension Schema {
    /// v5: the search index (filled lazily) and per-run source counters (reports).
    ///
    /// The search index is **not** maintained by the import's inserts: v3 measured that any index
    /// on `records` more than doubles the cost of each insert, and an FTS5 row costs more than a
    /// b-tree entry. Instead ``LibraryStore/refreshSearchIndex()`` brings it up to date before a
    /// search: files whose record count (`record_counts`, kept by every write) differs from the
    /// count indexed get their missing rows indexed; records whose title, authors or ISBN an
    /// update changed are queued by a trigger (only for files already indexed) and indexed again.
    static func registerReportMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v5: search index, run sources") { db in
            try db.execute(sql: """
                -- rowid = records.key. Case and diacritics are folded by the tokenizer.
                CREATE VIRTUAL TABLE record_search USING fts5(
                    title, authors, isbn, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
                CREATE TABLE record_search_files (
                    file_id INTEGER PRIMARY KEY,     -- source_files.id
                    indexed INTEGER NOT NULL         -- records of the file in record_search
                );
                CREATE TABLE record_search_stale (
                    key INTEGER PRIMARY KEY          -- records.key whose indexed text may be out of date
                );
                CREATE TRIGGER record_search_stale_on_update AFTER UPDATE OF title_key, isbn13, normalized ON records
                WHEN (new.title_key IS NOT old.title_key OR new.isbn13 IS NOT old.isbn13
                      OR json_extract(new.normalized, '$[1]') IS NOT json_extract(old.normalized, '$[1]'))
                     AND EXISTS (SELECT 1 FROM record_search_files WHERE file_id = new.key >> 32)
                BEGIN
                    INSERT OR IGNORE INTO record_search_stale (key) VALUES (new.key);
                END;
                CREATE TABLE run_sources (
                    run_id INTEGER NOT NULL REFERENCES runs(id),
                    source TEXT NOT NULL,            -- catalog, openlibrary, googlebooks, …
                    requests INTEGER NOT NULL,       -- HTTP requests sent, retries included
                    cache_hits INTEGER NOT NULL,
                    retries INTEGER NOT NULL,
                    rate_limited INTEGER NOT NULL,   -- 429 responses
                    failures INTEGER NOT NULL,       -- lookups that failed for good
                    mean_latency_ms REAL,
                    PRIMARY KEY (run_id, source)
                ) WITHOUT ROWID;
                """)
        }
    }
}
