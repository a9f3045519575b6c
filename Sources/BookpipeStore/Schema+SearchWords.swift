import GRDB

extension Schema {
    /// v17 (issue 25): the search index holds each record's folded words (``RecordWords``), the
    /// words `list`, `search`, a pipeline's `filter` step and the PostgreSQL engine all match, instead
    /// of the raw text folded by FTS5's tokenizer, which keeps `ß`, `ø`, `ł` and ligatures (`strasse`,
    /// `orsted`, `lodz`, `fish` found nothing).
    /// The index is emptied here; like a new library's, it is filled again by the first `search` or
    /// listing with words (seconds for a million records).
    static func registerSearchWordsMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v17: search index of folded words") { db in
            try db.execute(sql: """
                DELETE FROM record_search;
                DELETE FROM record_search_files;
                DELETE FROM record_search_stale;
                """)
        }
    }
}
