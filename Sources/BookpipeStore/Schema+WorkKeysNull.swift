import BookpipeCore
import Foundation
import GRDB

extension Schema {
    /// v12 (issue 23): a work key is a `/works/…` key or null, never `""`. Until now a match or a
    /// candidate without a work (a Google Books volume) was stored with `"workKey": ""`, which
    /// every reader had to treat as "no work" by hand; ``Match`` and ``Candidate`` now write null.
    /// Every stored enrichment that still holds an empty work key is read and written again (the
    /// same values; the empty keys become null). Nothing else changes.
    static func registerWorkKeysNullMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v12-work-keys-null") { db in
            try nullEmptyWorkKeys(db)
        }
    }

    /// Rewrites the enrichment of every record that holds `"workKey": ""` (see the v12 migration).
    static func nullEmptyWorkKeys(_ db: Database) throws {
        let rows = try Row.fetchAll(db, sql: #"SELECT key, enrichment FROM records WHERE enrichment LIKE '%"workKey":""%'"#)
        let update = try db.makeStatement(sql: "UPDATE records SET enrichment = ? WHERE key = ?")
        let decoder = JSONDecoder()
        for row in rows {
            let key: Int64 = row["key"]
            let text: String = row["enrichment"]
            // A value this version cannot read is left as it is (it is read as before).
            guard let result = try? decoder.decode(EnrichmentResult.self, from: Data(text.utf8)) else { continue }
            try update.execute(arguments: [RecordCoding.encode(result), key])
        }
    }
}
