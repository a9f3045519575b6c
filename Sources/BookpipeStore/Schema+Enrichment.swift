import GRDB

extension Schema {
    /// v2: the lookup cache and stored host quotas (enrichment).
    static func registerEnrichmentMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v2: lookup cache, host quotas") { db in
            try db.execute(sql: """
                CREATE TABLE lookup_cache (
                    source TEXT NOT NULL,            -- openlibrary, googlebooks, …
                    question TEXT NOT NULL,          -- isbn:978… or title:<key>|author:<key>
                    answer TEXT NOT NULL,            -- JSON LookupAnswer (found or notFound; failures are never cached)
                    fetched_at REAL NOT NULL,        -- seconds since 1970
                    PRIMARY KEY (source, question)
                ) WITHOUT ROWID;
                CREATE TABLE host_quotas (
                    host TEXT PRIMARY KEY,           -- scheme://host:port
                    blocked_until REAL NOT NULL,     -- seconds since 1970
                    reason TEXT NOT NULL
                );
                """)
        }
    }
}
