import BookpipeCore
import BookpipeLibrary
import Foundation
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

    /// v9 (issue 14), registered after v8: a work key is an Open Library work or nothing. Google
    /// Books matches (and candidates) stored `googlebooks:<volume id>` as their work key, and the
    /// candidates of unmatched records an edition key (`/books/OL…M`): cleared, the key kept as the
    /// edition key; the works table loses those non-works. Nothing is asked again and nothing
    /// invented. (A match on an Open Library edition key is left for `bookpipe enrich`, which asks
    /// for its work and logs the repair.)
    static func registerWorkKeyMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v9-work-keys: no source-specific work keys") { db in
            try clearSourceSpecificWorkKeys(db)
        }
    }

    /// Rewrites the enrichment of every record whose match or candidates carry a work key that is
    /// no work (see the v9 migration).
    static func clearSourceSpecificWorkKeys(_ db: Database) throws {
        // JSON may write `/` as `\/`: both spellings.
        let rows = try Row.fetchAll(db, sql: #"""
            SELECT key, enrichment FROM records WHERE enrichment LIKE '%"workKey":"googlebooks:%'
                OR (status != 'enriched' AND (enrichment LIKE '%"workKey":"/books/%' OR enrichment LIKE '%"workKey":"\/books\/%'))
            """#)
        let update = try db.makeStatement(sql: "UPDATE records SET enrichment = ? WHERE key = ?")
        let decoder = JSONDecoder()
        for row in rows {
            let key: Int64 = row["key"]
            let text: String = row["enrichment"]
            guard var result = try? decoder.decode(EnrichmentResult.self, from: Data(text.utf8)) else { continue }
            // An Open Library edition key as the match: `enrich` repairs it (and its candidate).
            let repairedByEnrich = result.match?.workKey.hasPrefix("/books/") == true ? result.match?.workKey : nil
            if let workKey = result.match?.workKey, !WorkKey.isWork(workKey), repairedByEnrich == nil {
                if result.match?.editionKey == nil { result.match?.editionKey = workKey }
                result.match?.workKey = ""
            }
            for index in result.candidates.indices where !result.candidates[index].workKey.isEmpty
                && !WorkKey.isWork(result.candidates[index].workKey) && result.candidates[index].workKey != repairedByEnrich {
                if result.candidates[index].editionKey == nil {
                    result.candidates[index].editionKey = result.candidates[index].workKey
                }
                result.candidates[index].workKey = ""
            }
            try update.execute(arguments: [RecordCoding.encode(result), key])
        }
        try db.execute(sql: """
            DELETE FROM identifiers WHERE work_key LIKE 'googlebooks:%';
            DELETE FROM works WHERE key LIKE 'googlebooks:%';
            """)
    }
}
