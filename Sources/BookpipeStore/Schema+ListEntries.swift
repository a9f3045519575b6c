import GRDB

extension Schema {
    /// v13 (issue 22): a record is an entry of a list, not only a row of a file.
    ///
    /// - `records.entry`: the record's identity in its list, `<list>` U+001F `<key>` (see
    ///   ``ListEntry``): the id the export gives the row (Goodreads' `Book Id`), else its ISBN-13,
    ///   else its normalised title and first author. NULL for scan detections, and for records
    ///   stored before v13 until the next import of their list fills it in. No index: an import
    ///   of a newer export reads its list's entries once, in key order (an index on `records`
    ///   doubles the cost of every insert; see v3).
    /// - `record_gone`: the records that the newest complete export of their list no longer
    ///   holds. They are kept (and listed with `gone:yes`) until `import --prune` or `remove`.
    /// - `record_rows`: the rows of a file that did not become records of their own (an entry that
    ///   was already in the library, updated or unchanged), as ranges, so a re-import that was
    ///   interrupted skips them when it is run again. A file's own records say which of its rows
    ///   are stored by their keys, as before.
    static func registerListEntryMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v13: list entries") { db in
            try db.execute(sql: """
                ALTER TABLE records ADD COLUMN entry TEXT;
                CREATE TABLE record_gone (
                    key INTEGER PRIMARY KEY,         -- records.key
                    file_id INTEGER NOT NULL,        -- the export (source_files.id) that no longer holds it
                    since REAL NOT NULL              -- seconds since 1970
                );
                CREATE TABLE record_rows (
                    file_id INTEGER NOT NULL,        -- source_files.id
                    first_row INTEGER NOT NULL,
                    last_row INTEGER NOT NULL,
                    PRIMARY KEY (file_id, first_row)
                ) WITHOUT ROWID;
                """)
        }
    }
}
