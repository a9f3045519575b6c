import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// The members of the records that may be one book with another: those sharing an ISBN-13 or
    /// a matched edition with a record of another list, and every record a decision names; in key
    /// order. SQLite groups the library in one pass, so a library where few books are shared
    /// hands few members to ``BookGrouping``.
    /// - Throws: ``StoreError`` when the read fails.
    public func bookMembers() throws(StoreError) -> [BookMember] {
        try read("book members") { db in
            let hashes = Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files")
                .map { ($0["id"] as Int64, $0["hash"] as String) })
            let decided = Set(try String.fetchAll(db, sql: "SELECT first FROM record_links UNION SELECT second FROM record_links"))
            // Keys are integers: written into the statement (a person's decisions are few).
            let decidedKeys = try decided.compactMap { try self.reviewKey(id: $0, db: db) }.map(String.init).joined(separator: ",")
            var members: [BookMember] = []
            // A record's list is its entry up to U+001F; records without one (scan detections) are
            // one list of their own, as ``BookGrouping`` compares them (nil equals nil).
            // Records of one list share nothing with another list: a library of one list (the common
            // case) needs only the records a decision names, and no grouping of every ISBN (a fifth of
            // a report's reading at 100,000 records).
            let lists = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM (SELECT DISTINCT coalesce(substr(entry, 1, instr(entry, char(31)) - 1), '') FROM records
                    WHERE isbn13 IS NOT NULL OR enrichment IS NOT NULL LIMIT 2)
                """) ?? 0
            let decidedRecords = """
                SELECT r.key, r.entry, r.isbn13, json_extract(r.enrichment, '$.match.workKey'),
                       json_extract(r.enrichment, '$.match.editionKey')
                FROM records r WHERE r.key IN (\(decidedKeys))
                """
            let cursor = try Row.fetchCursor(db, sql: lists < 2 ? decidedRecords + " ORDER BY 1" : """
                WITH keyed AS (
                    SELECT key, entry, isbn13,
                           json_extract(enrichment, '$.match.workKey') AS work,
                           json_extract(enrichment, '$.match.editionKey') AS edition,
                           coalesce(substr(entry, 1, instr(entry, char(31)) - 1), '') AS list
                    FROM records WHERE isbn13 IS NOT NULL OR enrichment IS NOT NULL
                ),
                shared_isbn AS (
                    SELECT isbn13 FROM keyed WHERE isbn13 IS NOT NULL GROUP BY isbn13 HAVING count(DISTINCT list) > 1
                ),
                shared_edition AS (
                    SELECT work, edition FROM keyed WHERE work IS NOT NULL AND edition IS NOT NULL
                    GROUP BY work, edition HAVING count(DISTINCT list) > 1
                )
                SELECT key, entry, isbn13, work, edition FROM keyed
                WHERE isbn13 IN (SELECT isbn13 FROM shared_isbn)
                   OR (work IS NOT NULL AND edition IS NOT NULL
                       AND EXISTS (SELECT 1 FROM shared_edition s WHERE s.work = keyed.work AND s.edition = keyed.edition))
                UNION
                \(decidedRecords)
                ORDER BY 1
                """)
            while let row = try cursor.next() {
                let key: Int64 = row[0]
                guard let hash = hashes[key >> RecordKey.rowBits] else { continue }
                let entry: String? = row[1]
                members.append(BookMember(recordID: "\(hash):\(key & RecordKey.rowMask)",
                                          list: entry.map { String(ListIdentity.list(ofEntry: $0)) },
                                          isbn13: row[2], workKey: row[3], editionKey: row[4]))
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
