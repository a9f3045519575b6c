import BookpipeCore
import Foundation
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
    /// - `record_rows`: rows of a file that are finished without a record of their own (a
    ///   removed record's row: importing the same file again does not bring it back), as ranges.
    /// - `records.digest`: ``ListIdentity/readDigest(of:)`` of the values the list last gave
    ///   the record: equal digests mean a row of a newer export is unchanged.
    ///
    /// Records stored before v13 get their entry and digest here, computed by the same rules as
    /// an import's (their file's format, header and path give the list and its id column).
    static func registerListEntryMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v13: list entries") { db in
            try db.execute(sql: """
                ALTER TABLE records ADD COLUMN entry TEXT;
                ALTER TABLE records ADD COLUMN digest INTEGER;
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
            try fillListEntries(db)
        }
    }

    /// Gives every CSV record without an entry its entry and digest (see the v13 migration).
    static func fillListEntries(_ db: Database) throws {
        let files = try Row.fetchAll(db, sql: """
            SELECT f.id, f.header, o.format, o.path, group_concat(o.id) AS origins
            FROM source_files f JOIN record_origins o ON o.file_id = f.id
            WHERE o.scan = '' GROUP BY f.id, o.format, o.path
            """)
        let update = try db.makeStatement(sql: "UPDATE records SET entry = ?, digest = ? WHERE key = ?")
        for file in files {
            let fileID: Int64 = file["id"]
            let format: String = file["format"]
            let header = (file["header"] as String?).flatMap {
                try? JSONDecoder().decode([String].self, from: Data($0.utf8))
            } ?? []
            let list = ListIdentity.listName(format: format, path: file["path"], explicit: nil)
            let idColumn = ListIdentity.idColumn(format: format, header: header)
            let range = RecordKey.range(fileID: fileID)
            let origins: String = file["origins"]
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins)
                WHERE r.key >= ? AND r.key < ? AND r.origin IN (\(origins)) AND r.entry IS NULL ORDER BY r.key
                """, arguments: [range.lower, range.upper])
            var updates: [(entry: String, digest: Int64, key: Int64)] = []
            while let row = try cursor.next() {
                // A record this version cannot read keeps no entry (it is imported as before).
                guard var record = try? RecordCoding.decode(row, path: db.description) else { continue }
                // Keys by today's normalisation, as an import computes them for the newer export's rows.
                if record.normalized != nil { Normalizer.normalize(&record) }
                guard let key = ListIdentity.entryKey(of: record, idColumn: idColumn) else { continue }
                updates.append((ListIdentity.entry(list: list, key: key), ListIdentity.readDigest(of: record), row["key"]))
            }
            for item in updates { try update.execute(arguments: [item.entry, item.digest, item.key]) }
        }
    }
}
