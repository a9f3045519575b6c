import GRDB

extension Schema {
    static func registerScanJobMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v8-scan-jobs") { db in
            try db.execute(sql: """
                CREATE TABLE scan_jobs (
                    photo_hash TEXT PRIMARY KEY,     -- source_files.hash of the photo: its detections' ids
                    photo TEXT NOT NULL,             -- the photo as the user named it
                    provider TEXT NOT NULL,          -- gemini, cloudflare: the current or last attempt's
                    attempt INTEGER NOT NULL,        -- 1, or 2 with the fallback provider
                    phase TEXT NOT NULL,             -- running, complete, failed
                    job_id TEXT,                     -- the backend's job id, once accepted
                    books INTEGER,                   -- detections of the completed job
                    failure TEXT,                    -- why the photo failed
                    job_ms INTEGER,                  -- upload to complete
                    rate_limited INTEGER NOT NULL DEFAULT 0,
                    run_id INTEGER,
                    updated_at REAL NOT NULL         -- seconds since 1970
                ) WITHOUT ROWID;
                """)
        }
    }
}
