import GRDB

extension Schema {
    /// v5 (re-enrichment, issue 14): when each record was last enriched (for `--stale` and the
    /// overnight order) and the change log of re-enrichments. Separate tables, so the import's
    /// insert path and the review queue's columns stay as they are.
    static func registerReenrichmentMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v6: record enrichment times, record changes") { db in
            try db.execute(sql: """
                CREATE TABLE record_enrichment (
                    key INTEGER PRIMARY KEY,         -- records.key
                    enriched_at REAL NOT NULL,       -- seconds since 1970: when the answers were last saved
                    retry_at REAL                    -- failed lookups: not before then (a host quota); NULL: at once
                );
                -- Records enriched before v5: their last update is when they were enriched.
                INSERT INTO record_enrichment (key, enriched_at)
                    SELECT key, updated_at FROM records WHERE status != 'pending';
                CREATE TABLE record_changes (
                    id INTEGER PRIMARY KEY,
                    key INTEGER NOT NULL,            -- records.key
                    field TEXT NOT NULL,             -- status, match, edition, title, authors, year
                    old TEXT,                        -- the value before (NULL: none)
                    new TEXT,                        -- the value after (NULL: none)
                    kind TEXT,                       -- match: moved, lost, found, repaired (edition key → its work)
                    source TEXT,                     -- the source of the new value
                    run_id INTEGER,
                    changed_at REAL NOT NULL         -- seconds since 1970
                );
                CREATE INDEX record_changes_key ON record_changes(key);
                """)
        }
    }
}
