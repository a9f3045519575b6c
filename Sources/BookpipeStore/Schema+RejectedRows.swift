import GRDB

extension Schema {
    /// v10 (issue 12): a rejected row is kept per place in its file, not per line. v1 keyed
    /// `rejected_rows` by (file hash, line), so when several rejections share a line — every
    /// detection of a minified one-line scan result, every scan of a one-line envelope — only the
    /// first was kept, while the import's summary counted them all. The table is rebuilt (SQLite
    /// cannot change a primary key) with every existing row, and made unique on the file hash, the
    /// line, the column and the row number instead (a missing column or row counts as 0, so
    /// storing the same rejection again, as a rerun does, still keeps it once). The unique index
    /// starts with the file hash, as the old key did, for the per-file queries.
    static func registerRejectedRowMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v10-rejected-rows-by-place: every rejection of a line kept") { db in
            try db.execute(sql: """
                CREATE TABLE rejected_rows_by_place (
                    file_hash TEXT NOT NULL,
                    line INTEGER NOT NULL,
                    row INTEGER,                     -- the data row (a detection's row number); NULL: none (a whole scan)
                    column_number INTEGER,
                    file TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    raw_text TEXT NOT NULL,
                    run_id INTEGER REFERENCES runs(id)
                );
                INSERT INTO rejected_rows_by_place (file_hash, line, row, column_number, file, reason, raw_text, run_id)
                    SELECT file_hash, line, row, column_number, file, reason, raw_text, run_id FROM rejected_rows;
                DROP TABLE rejected_rows;
                ALTER TABLE rejected_rows_by_place RENAME TO rejected_rows;
                CREATE UNIQUE INDEX rejected_rows_place
                    ON rejected_rows(file_hash, line, coalesce(column_number, 0), coalesce(row, 0));
                """)
        }
    }
}
