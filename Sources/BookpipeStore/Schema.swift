import GRDB

/// The library's versioned schema. Rule: a migration is never edited once released; a change is
/// a new migration (GRDB's rule: editing a shipped migration leaves existing libraries behind).
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
                    hash TEXT PRIMARY KEY,           -- content fingerprint: the first half of every record id
                    path TEXT NOT NULL,
                    format TEXT NOT NULL,
                    header TEXT NOT NULL,            -- JSON array of column names
                    encoding TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    rows_total INTEGER,              -- known once the whole file was read
                    first_run_id INTEGER REFERENCES runs(id),
                    completed_at TEXT                -- every row stored or rejected
                );
                CREATE TABLE records (
                    id TEXT PRIMARY KEY,             -- <file hash>:<row>
                    file_hash TEXT NOT NULL,
                    row INTEGER NOT NULL,
                    line INTEGER NOT NULL,
                    file TEXT NOT NULL,
                    format TEXT NOT NULL,
                    scan TEXT,                       -- scan file name for detections
                    raw TEXT NOT NULL,               -- JSON array of the row's fields
                    title TEXT NOT NULL,
                    authors TEXT NOT NULL,           -- JSON array
                    raw_isbns TEXT NOT NULL,         -- JSON array
                    year INTEGER,
                    publisher TEXT,
                    page_count INTEGER,
                    shelf TEXT,
                    rating REAL,
                    date_added TEXT,
                    date_read TEXT,
                    detection TEXT,                  -- JSON ScanDetection
                    normalized TEXT,                 -- JSON NormalizedForms
                    search_title TEXT,
                    title_key TEXT,
                    isbn13 TEXT,
                    enrichment TEXT,                 -- JSON EnrichmentResult
                    status TEXT NOT NULL,
                    review_status TEXT NOT NULL,
                    findings TEXT,                   -- JSON array of findings, NULL when none
                    locked_fields TEXT,              -- JSON array of fields a person edited
                    run_id INTEGER REFERENCES runs(id),
                    updated_at TEXT NOT NULL,
                    UNIQUE (file_hash, row)
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
        return migrator
    }
}
