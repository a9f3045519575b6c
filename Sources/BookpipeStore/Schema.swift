import GRDB

/// The library's versioned schema. Rule: a migration is never edited once released; a change is
/// a new migration (GRDB's rule: editing a shipped migration leaves existing libraries behind).
///
/// Records are stored densely because a library holds millions of them (see `RecordCoding` for
/// the column formats):
/// - a record's id `<file hash>:<row>` is one integer, `key = source_files.id << 32 | row`, the
///   table's rowid: no text id, no separate unique index, and a file's rows are one key range;
/// - the path, format and scan name, the same for every row of a file, are one small integer
///   (`origin`, a row of `record_origins`);
/// - the raw fields are one text joined by U+001F, and the values read from them (`fields`)
///   point at raw fields by number instead of repeating their text.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: runs, source files, records, rejected rows, works") { db in
            try db.execute(sql: """
                CREATE TABLE runs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    command TEXT NOT NULL,
                    pipeline TEXT NOT NULL,
                    started_at TEXT NOT NULL,
                    finished_at TEXT,
                    status TEXT NOT NULL,            -- running, finished, interrupted, failed
                    summary TEXT                     -- JSON
                );
                CREATE TABLE source_files (
                    id INTEGER PRIMARY KEY,          -- the high 32 bits of the file's record keys
                    hash TEXT NOT NULL UNIQUE,       -- content fingerprint: the first half of every record id
                    path TEXT,                       -- path, format, header, encoding and size are NULL for a
                    format TEXT,                     --   file whose records were stored without registering it
                    header TEXT,                     -- JSON array of column names
                    encoding TEXT,
                    size INTEGER,
                    rows_total INTEGER,              -- known once the whole file was read
                    first_run_id INTEGER REFERENCES runs(id),
                    completed_at TEXT                -- every row stored or rejected
                );
                CREATE TABLE record_origins (
                    id INTEGER PRIMARY KEY,
                    file_id INTEGER NOT NULL REFERENCES source_files(id),
                    path TEXT NOT NULL,              -- the path the rows were read from, as given
                    format TEXT NOT NULL,            -- detected format name
                    scan TEXT NOT NULL DEFAULT '',   -- scan file name for detections, '' for CSV rows
                    UNIQUE (file_id, path, format, scan)
                );
                CREATE TABLE records (
                    key INTEGER PRIMARY KEY,         -- source_files.id << 32 | row; the id is <hash>:<row>
                    origin INTEGER NOT NULL REFERENCES record_origins(id),
                    line INTEGER NOT NULL,           -- 1-based physical line where the row starts
                    raw TEXT,                        -- the row's fields joined by U+001F; NULL: no fields
                    fields TEXT NOT NULL,            -- JSON array of what was read (numbers point at raw fields)
                    normalized TEXT,                 -- JSON array of the normalised forms, NULL until normalised
                    title_key TEXT,                  -- normalised comparison key of the title
                    isbn13 TEXT,                     -- first valid ISBN-13
                    status TEXT NOT NULL,            -- pending, enriched, notFound, failed, needsCandidateSelection
                    review_status TEXT NOT NULL,
                    findings TEXT,                   -- JSON array of findings, NULL when none
                    enrichment TEXT,                 -- JSON EnrichmentResult
                    detection TEXT,                  -- JSON ScanDetection
                    locked_fields TEXT,              -- JSON array of fields a person edited
                    run_id INTEGER REFERENCES runs(id),
                    updated_at INTEGER NOT NULL      -- seconds since 1970
                );
                CREATE INDEX records_status ON records(status);
                CREATE INDEX records_isbn13 ON records(isbn13);
                CREATE INDEX records_title_key ON records(title_key);
                CREATE TABLE rejected_rows (
                    file_hash TEXT NOT NULL,
                    line INTEGER NOT NULL,
                    row INTEGER,
                    column_number INTEGER,
                    file TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    raw_text TEXT NOT NULL,
                    run_id INTEGER REFERENCES runs(id),
                    PRIMARY KEY (file_hash, line)
                );
                CREATE TABLE library_state (
                    name TEXT PRIMARY KEY,           -- 'deferred-indexes': a bulk import dropped the record indexes
                    value TEXT                       -- the importing process id
                );
                CREATE TABLE works (
                    key TEXT PRIMARY KEY,            -- /works/OL…W or source-specific
                    title TEXT NOT NULL,
                    authors TEXT NOT NULL,           -- JSON array
                    first_year INTEGER,
                    source TEXT NOT NULL,
                    data TEXT,                       -- JSON as received
                    updated_at TEXT NOT NULL
                );
                CREATE TABLE authors (
                    key TEXT PRIMARY KEY,
                    name TEXT NOT NULL
                );
                CREATE TABLE identifiers (
                    scheme TEXT NOT NULL,            -- isbn13, isbn10, olid, goodreads, …
                    value TEXT NOT NULL,
                    work_key TEXT NOT NULL,
                    edition_key TEXT,
                    PRIMARY KEY (scheme, value, work_key)
                );
                """)
        }
        registerEnrichmentMigrations(&migrator)
        migrator.registerMigration("v3: no secondary indexes on records; file readings") { db in
            // v1 indexed every record's status, ISBN-13 and title key. No query reads by ISBN or
            // title key, and every status query pages in key order (a scan of the rowid b-tree:
            // about 0.3 s per million records), so these indexes only cost. Measured with
            // benchmarks/import/sqlite_floor.c on a million rows: any index on `records`, even a
            // partial one that holds no entry, more than doubles the cost of each insert (7.5 s
            // of CPU instead of 3.2 s), and rebuilding the ISBN and title indexes after a bulk
            // import took as long again. A feature that needs a lookup adds its own index then.
            // (`library_state` held a note for indexes a bulk import had dropped; v3 ends that.)
            try db.execute(sql: """
                DROP INDEX IF EXISTS records_status;
                DROP INDEX IF EXISTS records_isbn13;
                DROP INDEX IF EXISTS records_title_key;
                DELETE FROM library_state WHERE name = 'deferred-indexes';
                -- Which column gave which value when the file's rows were stored (DetectedFormat.reading);
                -- NULL for files imported before v3 (then the next import records it).
                ALTER TABLE source_files ADD COLUMN reading TEXT;
                """)
        }
        migrator.registerMigration("v4: record counts per file and status") { db in
            // Counting a million records by status (the import summary) or per file (is the file
            // complete?) reads every page of `records`, which has no index: 0.3-1.4 s at the end
            // of each large import. These counters are kept in the same transactions as the
            // records they count (LibraryStore's insert and update paths, the only writers).
            try db.execute(sql: """
                CREATE TABLE record_counts (
                    file_id INTEGER NOT NULL,        -- source_files.id: the high 32 bits of the records' keys
                    status TEXT NOT NULL,
                    n INTEGER NOT NULL,
                    PRIMARY KEY (file_id, status)
                ) WITHOUT ROWID;
                INSERT INTO record_counts (file_id, status, n)
                    SELECT key >> 32, status, count(*) FROM records GROUP BY key >> 32, status;
                """)
        }
        registerReportMigrations(&migrator)
        registerReenrichmentMigrations(&migrator)
        registerReviewMigrations(&migrator)
        registerScanJobMigrations(&migrator)
        registerWorkKeyMigrations(&migrator)
        registerRejectedRowMigrations(&migrator)
        registerClaimMigrations(&migrator)
        registerWorkKeysNullMigration(&migrator)
        registerListEntryMigration(&migrator)
        registerListingMigration(&migrator)
        registerBookLinkMigration(&migrator)
        registerReportHistoryMigration(&migrator)
        registerReviewDecisionMigration(&migrator)
        registerSearchWordsMigration(&migrator)
        registerRateBudgetMigration(&migrator)
        registerQuestionsInFlightMigration(&migrator)
        return migrator
    }
}
