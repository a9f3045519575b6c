import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// The most matching records ``search(_:limit:ranking:)`` ranks by default.
    ///
    /// Ranking costs FTS5 a bm25 score per matching record: `the`, held by 900,000 records of a
    /// million, took 0.45 s to rank in full. Reading the first 2,000 matches in rowid order and
    /// ranking only those took 15 ms (what is left is bm25 counting each word's records once), and
    /// is the whole ranking whenever fewer records match.
    public static let searchRankingLimit = 2_000

    /// Records whose title, authors or ISBN match `text`, best first.
    ///
    /// Case and diacritics do not matter (`"murakami"` finds "Murakami", `"garcia"` finds
    /// "García"); every word must occur (the last one, unless a single character, may be the start
    /// of a word); a title match ranks above an author match. An ISBN-10 or ISBN-13, with or
    /// without hyphens, finds the records that carry it in either form.
    ///
    /// **Order.** Records are ranked by FTS5's bm25 (title weighted 10, authors 4, ISBN 1; a
    /// shorter field with the words scores better), equal ranks in library order. At most
    /// `ranking` matches are ranked: the first ones in library order (files in the order they were
    /// imported, rows in file order). When more records match (a very common word), the hits are
    /// the best of those and ``SearchResults/moreMatch`` says so; more words narrow the search.
    ///
    /// The index is brought up to date first (``refreshSearchIndex()``): the first search of a
    /// large library indexes it (seconds per million records), later ones only what changed.
    ///
    /// ```swift
    /// let hits = try await store.search("le guin earthsea")
    /// ```
    /// - Parameters:
    ///   - text: the words, or an ISBN.
    ///   - limit: the most hits returned.
    ///   - ranking: the most matching records ranked (``searchRankingLimit`` by default).
    /// - Returns: the hits, best first; none for a text without letters or digits.
    /// - Throws: ``StoreError`` when the index cannot be updated or read. Cancelling the task
    ///   stops between chunks of indexing; what was indexed is kept.
    public func search(_ text: String, limit: Int = 20,
                       ranking: Int = LibraryStore.searchRankingLimit) async throws(StoreError) -> SearchResults {
        guard let query = SearchQuery(text), limit > 0 else { return SearchResults(hits: [], ranked: 0, moreMatch: false) }
        try await refreshSearchIndex()
        let ranking = max(ranking, limit)
        return try read("search") { db in
            // FTS5 reads matches in rowid (library) order and stops after `ranking + 1`; bm25 is
            // computed for those rows only. The one past `ranking` only tells that more match.
            var candidates = try Row.fetchAll(db, sql: """
                SELECT rowid AS key, bm25(record_search, 10.0, 4.0, 1.0) AS rank FROM record_search
                WHERE record_search MATCH ? ORDER BY rowid LIMIT ?
                """, arguments: [query.match, ranking + 1]).map { (key: $0["key"] as Int64, rank: $0["rank"] as Double) }
            let moreMatch = candidates.count > ranking
            if moreMatch { candidates.removeLast() }
            let best = candidates.sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.key < $1.key }.prefix(limit)
            let statement = try db.cachedStatement(
                sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?")
            let hits = try best.compactMap { candidate -> SearchHit? in
                guard let stored = try Row.fetchOne(statement, arguments: [candidate.key]) else { return nil }
                let record = try RecordCoding.decode(stored, path: path)
                return SearchHit(id: record.id, title: record.title, authors: record.authors,
                                 isbn13: record.normalized?.isbn13, status: record.status, file: record.origin.file,
                                 line: record.origin.line, rank: candidate.rank)
            }
            return SearchResults(hits: hits, ranked: candidates.count, moreMatch: moreMatch)
        }
    }

    /// The files whose records are not all indexed, and how many records an update changed since
    /// they were indexed.
    private func searchIndexWork() throws(StoreError) -> (files: [SearchIndexFileState], staleCount: Int) {
        try read("search index state") { db -> ([SearchIndexFileState], Int) in
            let indexed = Dictionary(uniqueKeysWithValues: try Row.fetchAll(
                db, sql: "SELECT file_id, indexed FROM record_search_files").map { ($0["file_id"] as Int64, $0["indexed"] as Int) })
            let files = try Row.fetchAll(db, sql: "SELECT file_id, sum(n) AS n FROM record_counts GROUP BY file_id")
                .map { SearchIndexFileState(fileID: $0["file_id"], stored: $0["n"], indexed: indexed[$0["file_id"] as Int64] ?? 0) }
                .filter { $0.stored != $0.indexed }
            return (files, try Int.fetchOne(db, sql: "SELECT count(*) FROM record_search_stale") ?? 0)
        }
    }

    /// True when ``refreshSearchIndex()`` has nothing to do (two small reads): a search then only
    /// reads, so it can run on a library opened with ``Access/readOnly``.
    /// - Throws: ``StoreError`` when the reads fail.
    public func searchIndexIsCurrent() throws(StoreError) -> Bool {
        let work = try searchIndexWork()
        return work.files.isEmpty && work.staleCount == 0
    }

    /// Brings the search index up to date: indexes the records of files whose count of records
    /// differs from the count indexed, and the records an update changed since. Does nothing
    /// (two small reads) when nothing changed.
    /// - Returns: how many records were (re-)indexed.
    /// - Throws: ``StoreError`` when a read or write fails; chunks written before are kept.
    @discardableResult
    public func refreshSearchIndex() async throws(StoreError) -> Int {
        let (files, staleCount) = try searchIndexWork()
        var total = 0
        let chunk = 20_000
        if staleCount > 0 {
            while true {
                let done = try await perform("search index") { db -> Int in
                    let keys = try Int64.fetchAll(db, sql: "SELECT key FROM record_search_stale ORDER BY key LIMIT ?",
                                                  arguments: [chunk])
                    guard !keys.isEmpty else { return 0 }
                    let list = keys.map(String.init).joined(separator: ",")
                    try db.execute(sql: "DELETE FROM record_search WHERE rowid IN (\(list))")
                    try Self.indexRecords(db, path: self.path, sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key IN (\(list))", arguments: [])
                    try db.execute(sql: "DELETE FROM record_search_stale WHERE key IN (\(list))")
                    return keys.count
                }
                total += done
                if done < chunk { break }
                do { try Task.checkCancellation() } catch { throw StoreError.readFailed(path: path, what: "search", reason: "cancelled") }
            }
        }
        for file in files {
            let range = RecordKey.range(fileID: file.fileID)
            // Where to go on from: nothing indexed yet, or past the file's last indexed row (rows
            // are stored in row order, so new rows come after it).
            var after = try await perform("search index") { db -> Int64 in
                if file.indexed == 0 {
                    try db.execute(sql: "DELETE FROM record_search WHERE rowid >= ? AND rowid < ?",
                                   arguments: [range.lower, range.upper])
                    try db.execute(sql: """
                        INSERT INTO record_search_files (file_id, indexed) VALUES (?, 0)
                        ON CONFLICT (file_id) DO UPDATE SET indexed = 0
                        """, arguments: [file.fileID])
                    return range.lower - 1
                }
                return try Int64.fetchOne(db, sql: """
                    SELECT rowid FROM record_search WHERE rowid >= ? AND rowid < ? ORDER BY rowid DESC LIMIT 1
                    """, arguments: [range.lower, range.upper]) ?? range.lower - 1
            }
            var indexedNow = file.indexed == 0 ? 0 : file.indexed
            while true {
                let start = after
                let (count, last) = try await perform("search index") { db -> (Int, Int64) in
                    let sql = "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins)"
                        + " WHERE r.key > ? AND r.key < ? ORDER BY r.key LIMIT \(chunk)"
                    let (count, last) = try Self.indexRecords(db, path: self.path, sql: sql, arguments: [start, range.upper])
                    try db.execute(sql: "UPDATE record_search_files SET indexed = indexed + ? WHERE file_id = ?",
                                   arguments: [count, file.fileID])
                    return (count, last ?? range.upper)
                }
                total += count
                indexedNow += count
                after = last
                if count < chunk { break }
                do { try Task.checkCancellation() } catch { throw StoreError.readFailed(path: path, what: "search", reason: "cancelled") }
            }
            if indexedNow != file.stored {
                // Rows arrived out of order (a gap filled later): index what is missing, then count.
                let (missing, _) = try await perform("search index") { db -> (Int, Int64?) in
                    let sql = "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins)"
                        + " WHERE r.key >= ? AND r.key < ?"
                        + " AND NOT EXISTS (SELECT 1 FROM record_search s WHERE s.rowid = r.key)"
                    let result = try Self.indexRecords(db, path: self.path, sql: sql, arguments: [range.lower, range.upper])
                    try db.execute(sql: """
                        UPDATE record_search_files SET indexed = (SELECT count(*) FROM records WHERE key >= ? AND key < ?)
                        WHERE file_id = ?
                        """, arguments: [range.lower, range.upper, file.fileID])
                    return result
                }
                total += missing
            }
        }
        return total
    }

    /// Indexes the records `sql` selects (full rows with origin columns).
    /// - Returns: how many, and the last key.
    @discardableResult
    static func indexRecords(_ db: Database, path: String, sql: String, arguments: StatementArguments) throws -> (Int, Int64?) {
        let insert = try db.cachedStatement(sql: "INSERT INTO record_search (rowid, title, authors, isbn) VALUES (?, ?, ?, ?)")
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        var count = 0
        var last: Int64?
        while let row = try cursor.next() {
            let key: Int64 = row["key"]
            let record = try RecordCoding.decode(row, path: path)
            let text = SearchQuery.indexedText(record)
            try insert.execute(arguments: [key, text.title, text.authors, text.isbn])
            count += 1
            last = key
        }
        return (count, last)
    }
}

/// A search text turned into an FTS5 query, and what a record contributes to the index.
package struct SearchQuery: Sendable, Hashable {
    /// The FTS5 MATCH expression.
    package var match: String

    /// Nil when the text has no letters or digits.
    package init?(_ text: String) {
        let compact = text.filter { !$0.isWhitespace && $0 != "-" }
        if compact.count == 10 || compact.count == 13, case .success(let isbn) = ISBN.parse(compact) {
            match = "isbn : \"\(isbn.isbn13)\""
            return
        }
        // The index holds folded words (RecordWords), so the text's words are folded the same way.
        let words = LibraryQuery.words(text)
        guard !words.isEmpty else { return nil }
        // The last word may be the start of a word, unless it is a single letter or digit: as a
        // prefix that matches nearly every record, and FTS5 merges the lists of every term it
        // starts (0.18 s for "a" on a million records).
        match = words.enumerated().map { index, word in
            "\"\(word)\"" + (index == words.count - 1 && word.count > 1 ? " *" : "")
        }.joined(separator: " ")
    }

    /// The text indexed for a record: its title's and authors' words as every engine indexes them
    /// (``RecordWords``: folded, so the tokenizer finds them as they are), and every valid ISBN as
    /// ISBN-13 and ISBN-10.
    package static func indexedText(_ record: BookRecord) -> (title: String, authors: String, isbn: String) {
        var isbns: [String] = []
        for isbn13 in record.normalized?.allISBN13s ?? [] {
            isbns.append(isbn13)
            if case .success(let isbn) = ISBN.parse(isbn13), let ten = isbn.isbn10 { isbns.append(ten) }
        }
        return (RecordWords.title(record).joined(separator: " "), RecordWords.authors(record).joined(separator: " "),
                isbns.joined(separator: " "))
    }
}

/// One file's records: how many are stored, how many the search index holds.
struct SearchIndexFileState {
    var fileID: Int64
    var stored: Int
    var indexed: Int
}
