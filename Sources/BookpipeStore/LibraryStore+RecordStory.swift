import BookpipeCore
import Foundation
import GRDB

extension LibraryStore {
    /// The review actions taken on one record, oldest first (what `bookpipe show` tells as its
    /// review history).
    /// - Parameter recordID: A record id (`<file hash>:<row>`).
    /// - Returns: The actions (none for an id of no record); nil when the library keeps no log of
    ///   review actions.
    /// - Throws: ``StoreError`` when the read fails.
    public func reviewActions(recordID: String) throws(StoreError) -> [ReviewAction]? {
        try read("review history") { db in
            guard try Self.keepsReviewLog(db) else { return nil }
            guard let (hash, row) = RecordKey.parse(id: recordID) else { return [] }
            return try Row.fetchAll(db, sql: """
                SELECT a.action, a.before, a.after, a.acted_at FROM review_actions a JOIN source_files f ON f.id = a.key >> 32
                WHERE f.hash = ? AND a.key = (f.id << 32 | ?) ORDER BY a.id
                """, arguments: [hash, row]).map { action in
                ReviewAction(recordID: recordID, action: action["action"], before: action["before"], after: action["after"],
                             at: Date(timeIntervalSince1970: action["acted_at"]))
            }
        }
    }

    /// The other records that duplicate one record, by kind (as ``QualityFigures/duplicateGroups``
    /// groups them, seen from this record; the whole library). Kinds with no other record are absent.
    /// - Parameter recordID: A record id (`<file hash>:<row>`).
    /// - Returns: Its duplicates in ``DuplicateKind`` order; empty for an id of no record.
    /// - Throws: ``StoreError`` when the read fails.
    public func duplicates(ofRecord recordID: String) throws(StoreError) -> [RecordDuplicates] {
        try read("duplicates") { db in
            guard let (hash, row) = RecordKey.parse(id: recordID),
                  let key = try Int64.fetchOne(db, sql: "SELECT (id << 32 | ?) FROM source_files WHERE hash = ?",
                                               arguments: [row, hash]) else { return [] }
            let others = """
                SELECT f.hash || ':' || (o.key & 4294967295) FROM records o JOIN source_files f ON f.id = o.key >> 32
                """
            var found: [RecordDuplicates] = []
            for kind in DuplicateKind.allCases {
                let condition = switch kind {
                case .sameISBN13: "o.isbn13 = t.isbn13"
                case .sameWork: """
                    o.status = 'enriched' AND t.status = 'enriched'
                    AND nullif(json_extract(t.enrichment, '$.match.workKey'), '') = json_extract(o.enrichment, '$.match.workKey')
                    """
                case .sameTitleAndFirstAuthor: """
                    t.title_key <> '' AND o.title_key = t.title_key
                    AND coalesce(json_extract(o.normalized, '$[1][0]'), '') = coalesce(json_extract(t.normalized, '$[1][0]'), '')
                    """
                }
                let ids = try String.fetchAll(db, sql: """
                    \(others) JOIN records t ON t.key = ? WHERE o.key <> t.key AND \(condition) ORDER BY o.key
                    """, arguments: [key])
                if !ids.isEmpty { found.append(RecordDuplicates(kind: kind, recordIDs: ids)) }
            }
            return found
        }
    }
}
