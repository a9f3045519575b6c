import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// The records of a list that came from files other than `excludingFile`, in key order.
    ///
    /// One pass over `records` reading three small columns (no index on `entry`: see the v13
    /// migration); a million records take about half a second.
    /// - Throws: ``StoreError`` when the read fails.
    public func listEntries(list: String, excludingFile fileHash: String?) throws(StoreError) -> [StoredListEntry] {
        try read("list entries") { db in
            let prefix = list + String(ListIdentity.separator)
            // Entries of the list are the strings from `prefix` up to `prefix` with its last
            // character (U+001F) raised by one.
            let upper = list + "\u{20}"
            let excluded = try fileHash.flatMap { hash in
                try keyCache.fileID(hash) ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash])
            }
            let hashes = Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files")
                .map { ($0["id"] as Int64, $0["hash"] as String) })
            let gone = Set(try Int64.fetchAll(db, sql: "SELECT key FROM record_gone"))
            var entries: [StoredListEntry] = []
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT key, entry, digest FROM records WHERE entry >= ? AND entry < ? ORDER BY key
                """, arguments: [prefix, upper])
            let prefixLength = prefix.utf8.count
            while let row = try cursor.next() {
                let key: Int64 = row["key"]
                let fileID = key >> RecordKey.rowBits
                if fileID == excluded { continue }
                guard let hash = hashes[fileID] else { continue }
                let entry: String = row["entry"]
                let entryKey = String(decoding: entry.utf8.dropFirst(prefixLength), as: UTF8.self)
                entries.append(StoredListEntry(recordID: "\(hash):\(key & RecordKey.rowMask)", key: entryKey,
                                               digest: row["digest"], isGone: gone.contains(key)))
            }
            return entries
        }
    }

    /// Applies a newer export's values to records, logs the changes and counts the records as
    /// present again, in one transaction through the library's writer (after every write
    /// submitted before).
    /// - Throws: ``StoreError`` when the write fails; nothing of it is written.
    public func applyImportedUpdates(_ updates: [ImportedUpdate], runID: Int64?, at time: Date) async throws(StoreError) {
        guard !updates.isEmpty else { return }
        let seconds = time.timeIntervalSince1970
        try await perform("\(updates.count) imported updates") { db in
            try self.writeUpdates(updates.map(\.record), runID: runID, db: db)
            let setDigest = try db.cachedStatement(sql: "UPDATE records SET digest = ?, entry = coalesce(?, entry) WHERE key = ?")
            let present = try db.cachedStatement(sql: "DELETE FROM record_gone WHERE key = ?")
            let logChange = try db.cachedStatement(sql: """
                INSERT INTO record_changes (key, field, old, new, kind, source, run_id, changed_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for update in updates {
                guard let key = try self.reviewKey(id: update.record.id, db: db) else { continue }
                try setDigest.execute(arguments: [update.digest, update.record.listEntry, key])
                try present.execute(arguments: [key])
                for change in update.changes {
                    try logChange.execute(arguments: [key, change.field, change.old, change.new, change.kind?.rawValue,
                                                      change.source, runID, seconds])
                }
            }
        }
    }

    /// Marks records as present in their list again.
    /// - Throws: ``StoreError`` when the write fails.
    public func markPresent(recordIDs: [String]) async throws(StoreError) {
        guard !recordIDs.isEmpty else { return }
        try await perform("records present again") { db in
            let present = try db.cachedStatement(sql: "DELETE FROM record_gone WHERE key = ?")
            for id in recordIDs {
                if let key = try self.reviewKey(id: id, db: db) { try present.execute(arguments: [key]) }
            }
        }
    }

    /// Marks records as no longer in the newest export of their list.
    /// - Throws: ``StoreError`` when the write fails.
    public func markGone(recordIDs: [String], fileHash: String, at time: Date) async throws(StoreError) {
        guard !recordIDs.isEmpty else { return }
        let seconds = time.timeIntervalSince1970
        try await perform("records gone from their list") { db in
            guard let fileID = try self.keyCache.fileID(fileHash)
                ?? Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [fileHash]) else { return }
            let gone = try db.cachedStatement(sql: """
                INSERT INTO record_gone (key, file_id, since) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET file_id = excluded.file_id
                """)
            for id in recordIDs {
                if let key = try self.reviewKey(id: id, db: db) { try gone.execute(arguments: [key, fileID, seconds]) }
            }
        }
    }
}
