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

    /// v16 (issue 27): each report's headline figures, kept so the next report shows the change and
    /// `report --compare` can name an older one; and the records each run wrote (stored, or
    /// changed while another run had written them last), for the report's runs table.
    ///
    /// `run_writes` is kept by the insert path (one upsert per transaction, no trigger: v3 measured
    /// that anything per inserted row doubles an import's cost) and by a trigger on updates that
    /// move a record to another run. Libraries from before start from the records each run wrote last.
    static func registerReportHistoryMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("report history") { db in
            try db.execute(sql: """
                CREATE TABLE report_history (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    generated_at TEXT NOT NULL,      -- ISO 8601, UTC
                    scope TEXT NOT NULL,             -- 'all', or 'run <id>'
                    figures TEXT NOT NULL            -- JSON object of the headline figures
                );
                CREATE TABLE run_writes (
                    run_id INTEGER PRIMARY KEY,      -- runs.id
                    records INTEGER NOT NULL         -- records the run stored or took over from another run
                );
                INSERT INTO run_writes (run_id, records)
                    SELECT run_id, count(*) FROM records WHERE run_id IS NOT NULL GROUP BY run_id;
                CREATE TRIGGER run_writes_on_update AFTER UPDATE OF run_id ON records
                WHEN new.run_id IS NOT NULL AND new.run_id IS NOT old.run_id
                BEGIN
                    INSERT INTO run_writes (run_id, records) VALUES (new.run_id, 1)
                        ON CONFLICT (run_id) DO UPDATE SET records = records + 1;
                END;
                """)
        }
    }
}
