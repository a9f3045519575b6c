import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// The members of every record that has an ISBN-13, a matched edition, or a person's link
    /// decision, in key order (one pass over `records`).
    /// - Throws: ``StoreError`` when the read fails.
    public func bookMembers() throws(StoreError) -> [BookMember] {
        try read("book members") { db in
            let hashes = Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files")
                .map { ($0["id"] as Int64, $0["hash"] as String) })
            let decided = Set(try String.fetchAll(db, sql: "SELECT first FROM record_links UNION SELECT second FROM record_links"))
            var members: [BookMember] = []
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT key, entry, isbn13, json_extract(enrichment, '$.match.workKey') AS work,
                       json_extract(enrichment, '$.match.editionKey') AS edition
                FROM records WHERE isbn13 IS NOT NULL OR enrichment IS NOT NULL OR ? ORDER BY key
                """, arguments: [!decided.isEmpty])
            while let row = try cursor.next() {
                let key: Int64 = row["key"]
                guard let hash = hashes[key >> RecordKey.rowBits] else { continue }
                let id = "\(hash):\(key & RecordKey.rowMask)"
                let isbn13: String? = row["isbn13"]
                let work: String? = row["work"]
                let edition: String? = row["edition"]
                guard isbn13 != nil || (work != nil && edition != nil) || decided.contains(id) else { continue }
                let entry: String? = row["entry"]
                members.append(BookMember(recordID: id, list: entry.map { String(ListIdentity.list(ofEntry: $0)) },
                                          isbn13: isbn13, workKey: work, editionKey: edition))
            }
            return members
        }
    }

    /// Every person's link decision.
    /// - Throws: ``StoreError`` when the read fails.
    public func linkDecisions() throws(StoreError) -> [LinkDecision] {
        try read("link decisions") { db in
            try Row.fetchAll(db, sql: "SELECT first, second, linked FROM record_links ORDER BY first, second").map {
                LinkDecision($0["first"], $0["second"], linked: $0["linked"])
            }
        }
    }

    /// Records a person's link decision and logs it on both records, in one transaction.
    /// - Returns: false when either record is not in the library.
    /// - Throws: ``StoreError`` when the write fails.
    public func recordLinkDecision(_ decision: LinkDecision, at time: Date) async throws(StoreError) -> Bool {
        try await perform("link decision") { db -> Bool in
            guard let first = try self.reviewKey(id: decision.first, db: db),
                  let second = try self.reviewKey(id: decision.second, db: db) else { return false }
            try db.execute(sql: """
                INSERT INTO record_links (first, second, linked, decided_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (first, second) DO UPDATE SET linked = excluded.linked, decided_at = excluded.decided_at
                """, arguments: [decision.first, decision.second, decision.linked, time.timeIntervalSince1970])
            let kind: RecordChange.Kind = decision.linked ? .linked : .unlinked
            for (key, other) in [(first, decision.second), (second, decision.first)] {
                try db.execute(sql: """
                    INSERT INTO record_changes (key, field, old, new, kind, source, run_id, changed_at)
                    VALUES (?, 'book', ?, ?, ?, 'person', NULL, ?)
                    """, arguments: [key, decision.linked ? nil : other, decision.linked ? other : nil, kind.rawValue,
                                     time.timeIntervalSince1970])
            }
            return true
        }
    }
}
