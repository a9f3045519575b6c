import GRDB

extension Schema {
    /// v15 (issue 22): a person's decisions that two records are one book, or two (`bookpipe link`,
    /// `unlink`). Records of different lists that share an ISBN-13 or a matched edition are one
    /// book without a row here (``BookGrouping``); a decision overrides that for its pair.
    static func registerBookLinkMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v15: book links") { db in
            try db.execute(sql: """
                CREATE TABLE record_links (
                    first TEXT NOT NULL,             -- record ids, in order
                    second TEXT NOT NULL,
                    linked INTEGER NOT NULL,         -- 1: one book; 0: two books
                    decided_at REAL NOT NULL,        -- seconds since 1970
                    PRIMARY KEY (first, second)
                ) WITHOUT ROWID;
                """)
        }
    }
}
