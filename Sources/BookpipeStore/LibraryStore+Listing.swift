import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

extension LibraryStore {
    /// Calls `body` with each record `query` matches, in `order` then by number, at most `limit`.
    ///
    /// The listing (``refreshListing()``) and, for a query with words, the search index
    /// (``refreshSearchIndex()``) are brought up to date first: the first listing of a large
    /// library builds them (seconds per million records), later ones only take in what changed.
    /// Words are matched by the search index (FTS5: case and diacritics folded, each word the
    /// start of a word); other fields by the listing's indexes.
    /// - Throws: ``StoreError`` when the listing cannot be updated or read; `body`'s error.
    ///   Cancelling stops between chunks of indexing.
    public func listRecords(_ query: LibraryQuery, order: [ListingOrder] = [], limit: Int? = nil,
                            _ body: (ListedRecord) throws -> Void) async throws {
        if query.hasWords { try await refreshSearchIndex() }
        try await refreshListing()
        // Few origins and files (one per file and path): read whole, to match paths and name ids.
        let (origins, fileIDs) = try read("listing") { db in
            (try Row.fetchAll(db, sql: "SELECT id, path, format FROM record_origins")
                .map { (id: $0["id"] as Int64, path: $0["path"] as String, format: $0["format"] as String) },
             Dictionary(try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files").map { ($0["hash"] as String, $0["id"] as Int64) },
                        uniquingKeysWith: { first, _ in first }))
        }
        var conditions: [String] = []
        var arguments = StatementArguments()
        // One condition drives the query through its index: the one that usually narrows most
        // (``indexPreference(_:)``). The others are tested on the rows it yields (`+column` keeps
        // SQLite from using their indexes): without statistics, SQLite would as soon walk the 300,000
        // entries of a shelf as the 4,000 of a year, and statistics (ANALYZE) on a library where
        // every record is `pending` make it scan the table for `status:failed`.
        let driving = query.conditions.indices.filter { !query.conditions[$0].isNegated }
            .min { Self.indexPreference(query.conditions[$0].test) < Self.indexPreference(query.conditions[$1].test) }
        // Word tests that must hold are one FTS5 query (its posting lists intersected), not one each.
        var words: [String] = []
        for (index, condition) in query.conditions.enumerated() {
            if !condition.isNegated, let match = Self.match(condition.test) {
                words.append(match)
                continue
            }
            let (sql, values) = Self.sql(for: condition.test, origins: origins, fileIDs: fileIDs,
                                         listing: index == driving ? "l." : "+l.")
            conditions.append(condition.isNegated ? "NOT coalesce((\(sql)), 0)" : "(\(sql))")
            arguments += values
        }
        if !words.isEmpty {
            let drives = driving.map { Self.match(query.conditions[$0].test) != nil } ?? false
            conditions.append("\(drives ? "l." : "+l.")key IN (SELECT rowid FROM record_search WHERE record_search MATCH ?)")
            arguments += [words.joined(separator: " AND ")]
        }
        let orderBy = (order.map(Self.sql(for:)) + ["l.number"]).joined(separator: ", ")
        let sql = """
            SELECT l.number AS listing_number, g.key IS NOT NULL AS listing_gone, r.*, \(RecordCoding.originColumns)
            FROM record_listing l JOIN records r ON r.key = l.key JOIN record_origins o ON o.id = r.origin
                JOIN source_files f ON f.id = o.file_id LEFT JOIN record_gone g ON g.key = l.key
            """ + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY \(orderBy)" + (limit.map { " LIMIT \($0)" } ?? "")
        try readListing(sql: sql, arguments: arguments, body)
    }

    /// Reads a listing's rows in one snapshot, calling `body` with each.
    private func readListing(sql: String, arguments: StatementArguments, _ body: (ListedRecord) throws -> Void) throws {
        do {
            try pool.read { db in
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try cursor.next() {
                    try body(ListedRecord(number: row["listing_number"], record: try RecordCoding.decode(row, path: path),
                                          isGone: row["listing_gone"]))
                }
            }
        } catch let error as DatabaseError {
            if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
            throw StoreError.readFailed(path: path, what: "listing", reason: Self.reason(error))
        }
    }

    /// An FTS5 expression: every word the start of a word (a single character: that word exactly,
    /// as ``SearchQuery`` does, since its prefix would match nearly every record).
    private static func match(_ words: [String], columns: String) -> String {
        let phrases = words.map { word in
            "\"\(word.replacingOccurrences(of: "\"", with: "\"\""))\"" + (word.count > 1 ? " *" : "")
        }
        return "\(columns) : (\(phrases.joined(separator: " AND ")))"
    }

    /// The FTS5 expression of a word test; nil for other tests.
    private static func match(_ test: LibraryQuery.Test) -> String? {
        switch test {
        case .words(let words): return match(words, columns: "{title authors}")
        case .title(let words): return match(words, columns: "title")
        case .author(let words): return match(words, columns: "authors")
        default: return nil
        }
    }

    /// How well a test's index narrows a listing, usually (lower is better): an ISBN or ids name a
    /// record or two, words some, a year or rating a few thousand in a million, a shelf, file, status or
    /// review state a large share.
    private static func indexPreference(_ test: LibraryQuery.Test) -> Int {
        switch test {
        case .ids: return 0
        case .isbn: return 1
        case .words, .title, .author: return 2
        case .year(let bounds): return bounds.lower != nil && bounds.lower == bounds.upper ? 3 : 5
        case .rating(let bounds): return bounds.lower != nil && bounds.lower == bounds.upper ? 4 : 6
        case .shelf: return 7
        case .file: return 8
        case .review: return 9
        case .status: return 10
        case .gone: return 11
        case .finding, .invalidISBN: return 12
        case .missing: return 13
        }
    }

    /// The SQL condition that matches `test`, with its arguments; `listing` is how the listing row's
    /// columns are named (`l.`, or `+l.` to keep SQLite from using their index).
    private static func sql(for test: LibraryQuery.Test, origins: [(id: Int64, path: String, format: String)],
                            fileIDs: [String: Int64], listing l: String) -> (String, StatementArguments) {
        func bounds(_ column: String, _ bounds: LibraryQuery.Bounds) -> (String, StatementArguments) {
            var parts: [String] = []
            var values = StatementArguments()
            if let lower = bounds.lower {
                parts.append("\(column) \(bounds.includesLower ? ">=" : ">") ?")
                values += [lower]
            }
            if let upper = bounds.upper {
                parts.append("\(column) \(bounds.includesUpper ? "<=" : "<") ?")
                values += [upper]
            }
            return (parts.isEmpty ? "\(column) IS NOT NULL" : parts.joined(separator: " AND "), values)
        }
        switch test {
        case .words, .title, .author:
            return ("\(l)key IN (SELECT rowid FROM record_search WHERE record_search MATCH ?)", [match(test) ?? ""])
        case .isbn(let digits): return ("\(l)isbn13 >= ? AND \(l)isbn13 < ?", [digits, digits + "~"])
        case .year(let range): return bounds("\(l)year", range)
        case .rating(let range): return bounds("\(l)rating", range)
        case .shelf(let key): return ("\(l)shelf = ?", [key])
        case .status(let status): return ("\(l)status = ?", [status.rawValue])
        case .review(let state):
            switch state {
            case .waiting:
                return ("\(l)review = ? OR \(l)status = ?", [ReviewStatus.needsReview.rawValue,
                                                         RecordStatus.needsCandidateSelection.rawValue])
            case .verified: return ("\(l)review = ?", [ReviewStatus.verified.rawValue])
            case .needsReview: return ("\(l)review = ?", [ReviewStatus.needsReview.rawValue])
            case .userEdited: return ("\(l)review = ?", [ReviewStatus.userEdited.rawValue])
            }
        case .file(let key):
            // Few origins (one per file and path): compared here, with the query's own folding.
            let ids = origins.filter { TextFolding.key($0.path).contains(key) || TextFolding.key($0.format).contains(key) }
            return (ids.isEmpty ? "0" : "\(l)origin IN (\(ids.map { String($0.id) }.joined(separator: ",")))", [])
        case .gone(let isGone): return (isGone ? "g.key IS NOT NULL" : "g.key IS NULL", [])
        case .invalidISBN:
            // Which codes mean an invalid ISBN is the library's rule (QualityCodes), bound here.
            let excluded = ["isbn.10-13-disagree"] + QualityCodes.isbnRepairs.sorted()
            return ("""
                r.findings IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(r.findings) j
                    WHERE json_extract(j.value, '$.code') GLOB 'isbn.*'
                    AND json_extract(j.value, '$.code') NOT IN (\(excluded.map { _ in "?" }.joined(separator: ", "))))
                """, StatementArguments(excluded))
        case .finding(let code):
            return ("""
                r.findings IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(r.findings) j
                    WHERE json_extract(j.value, '$.code') = ? OR substr(json_extract(j.value, '$.code'), 1, ?) = ?)
                """, [code, code.utf8.count + 1, code + "."])
        case .missing(let value): return (missingCondition(value), [])
        case .ids(let ids):
            let keys = ids.compactMap { id -> Int64? in
                guard let (hash, row) = RecordKey.parse(id: id), let fileID = fileIDs[hash] else { return nil }
                return RecordKey.make(fileID: fileID, row: row)
            }
            return (keys.isEmpty ? "0" : "\(l)key IN (\(keys.map(String.init).joined(separator: ",")))", [])
        }
    }

    private static func sql(for order: ListingOrder) -> String {
        let column: String
        switch order.field {
        case .number: column = "l.number"
        case .title: column = "l.title"
        case .author: column = "l.author"
        case .year: column = "l.year"
        case .rating: column = "l.rating"
        case .shelf: column = "l.shelf"
        case .status: column = "l.status"
        case .isbn: column = "l.isbn13"
        }
        // Records without the value come last either way.
        return "\(column) IS NULL, \(column)" + (order.isDescending ? " DESC" : "")
    }

    // MARK: - Keeping the listing up to date

    /// The files whose records are not all listed, and how many records an update changed since.
    private func listingWork() throws(StoreError) -> (files: [SearchIndexFileState], staleCount: Int) {
        try read("listing state") { db -> ([SearchIndexFileState], Int) in
            let listed = Dictionary(uniqueKeysWithValues: try Row.fetchAll(
                db, sql: "SELECT file_id, listed FROM record_listing_files").map { ($0["file_id"] as Int64, $0["listed"] as Int) })
            let stored = Dictionary(uniqueKeysWithValues: try Row.fetchAll(
                db, sql: "SELECT file_id, sum(n) AS n FROM record_counts GROUP BY file_id").map { ($0["file_id"] as Int64, $0["n"] as Int) })
            let files = Set(listed.keys).union(stored.keys).sorted()
                .map { SearchIndexFileState(fileID: $0, stored: stored[$0] ?? 0, indexed: listed[$0] ?? 0) }
                .filter { $0.stored != $0.indexed }
            return (files, try Int.fetchOne(db, sql: "SELECT count(*) FROM record_listing_stale") ?? 0)
        }
    }

    /// True when the listing holds every record as it is (two small reads): a listing without
    /// words then only reads (one with words also needs ``searchIndexIsCurrent()``).
    /// - Throws: ``StoreError`` when the reads fail.
    public func listingIsCurrent() throws(StoreError) -> Bool {
        let work = try listingWork()
        return work.files.isEmpty && work.staleCount == 0
    }

    /// Brings the listing up to date: lists (and numbers) the records of files whose count of
    /// records differs from the count listed, lists again the records an update changed, and drops
    /// the rows of records that are no longer stored. Does nothing (two small reads) when nothing changed.
    /// - Returns: how many records were (re-)listed.
    /// - Throws: ``StoreError`` when a read or write fails; chunks written before are kept.
    @discardableResult
    public func refreshListing() async throws(StoreError) -> Int {
        let (files, staleCount) = try listingWork()
        var total = 0
        let chunk = 20_000
        let select = "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins)"
        if staleCount > 0 {
            while true {
                let done = try await perform("listing") { db -> Int in
                    let keys = try Int64.fetchAll(db, sql: "SELECT key FROM record_listing_stale ORDER BY key LIMIT ?",
                                                  arguments: [chunk])
                    guard !keys.isEmpty else { return 0 }
                    let list = keys.map(String.init).joined(separator: ",")
                    try Self.listRecords(db, path: self.path, sql: select + " WHERE r.key IN (\(list)) ORDER BY r.key",
                                         arguments: [], updating: true)
                    try db.execute(sql: "DELETE FROM record_listing_stale WHERE key IN (\(list))")
                    return keys.count
                }
                total += done
                if done < chunk { break }
                try Self.checkCancellation(path)
            }
        }
        // Listing many records at once (the first listing of a large library): the secondary indexes
        // are dropped and built again after the rows are in, by sorting (measured on a million
        // records: inserting into seven indexes in key order, which is random order for each of them,
        // rewrote most of their pages at every chunk's commit). A listing cut short leaves them
        // missing: the next one builds them (queries meanwhile are only slower).
        let newRecords = files.reduce(0) { $0 + max($1.stored - $1.indexed, 0) }
        let listedBefore = files.isEmpty ? 0 : try read("listing") { db in
            try Int.fetchOne(db, sql: "SELECT coalesce(sum(listed), 0) FROM record_listing_files") ?? 0
        }
        let rebuildsIndexes = newRecords >= Self.listingIndexRebuildMinimum && newRecords > listedBefore
        if rebuildsIndexes {
            try await perform("listing indexes") { db in
                for (name, _) in Self.listingIndexes { try db.execute(sql: "DROP INDEX IF EXISTS \(name)") }
            }
        }
        for file in files {
            let range = RecordKey.range(fileID: file.fileID)
            var after = try await perform("listing") { db -> Int64 in
                try db.execute(sql: "INSERT OR IGNORE INTO record_listing_files (file_id, listed) VALUES (?, 0)",
                               arguments: [file.fileID])
                return try Int64.fetchOne(db, sql: "SELECT max(key) FROM record_listing WHERE key >= ? AND key < ?",
                                          arguments: [range.lower, range.upper]) ?? range.lower - 1
            }
            var listedNow = file.indexed
            while file.stored > listedNow {
                let start = after
                let (count, last) = try await perform("listing") { db -> (Int, Int64) in
                    let (count, last) = try Self.listRecords(db, path: self.path,
                        sql: select + " WHERE r.key > ? AND r.key < ? ORDER BY r.key LIMIT \(chunk)",
                        arguments: [start, range.upper])
                    try db.execute(sql: "UPDATE record_listing_files SET listed = listed + ? WHERE file_id = ?",
                                   arguments: [count, file.fileID])
                    return (count, last ?? range.upper)
                }
                total += count
                listedNow += count
                after = last
                if count < chunk { break }
                try Self.checkCancellation(path)
            }
            if listedNow != file.stored {
                // Records removed by another path, or rows that arrived out of order: drop the rows of
                // records no longer stored, list the missing ones, then count.
                total += try await perform("listing") { db -> Int in
                    try db.execute(sql: """
                        DELETE FROM record_listing WHERE key >= ? AND key < ?
                            AND NOT EXISTS (SELECT 1 FROM records r WHERE r.key = record_listing.key)
                        """, arguments: [range.lower, range.upper])
                    let (missing, _) = try Self.listRecords(db, path: self.path,
                        sql: select + " WHERE r.key >= ? AND r.key < ?"
                            + " AND NOT EXISTS (SELECT 1 FROM record_listing l WHERE l.key = r.key) ORDER BY r.key",
                        arguments: [range.lower, range.upper])
                    try db.execute(sql: """
                        UPDATE record_listing_files SET listed = (SELECT count(*) FROM record_listing WHERE key >= ? AND key < ?)
                        WHERE file_id = ?
                        """, arguments: [range.lower, range.upper, file.fileID])
                    return missing
                }
            }
        }
        if total > 0 || rebuildsIndexes {
            try await perform("listing indexes") { db in
                for (name, columns) in Self.listingIndexes {
                    try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(name) ON record_listing(\(columns))")
                }
            }
        }
        return total
    }

    /// The listing's secondary indexes (as the v14 migration made them): name and columns.
    static let listingIndexes = [
        ("record_listing_isbn13", "isbn13"), ("record_listing_year", "year"), ("record_listing_shelf", "shelf"),
        ("record_listing_status", "status"), ("record_listing_review", "review"), ("record_listing_rating", "rating"),
        ("record_listing_origin", "origin"),
    ]

    /// The fewest new records for which a refresh drops the listing's indexes and builds them again
    /// (when they also outnumber the records listed before).
    static let listingIndexRebuildMinimum = 50_000

    private static func checkCancellation(_ path: String) throws(StoreError) {
        do { try Task.checkCancellation() } catch { throw StoreError.readFailed(path: path, what: "listing", reason: "cancelled") }
    }

    /// Lists the records `sql` selects (full rows with origin columns, in key order): each gets
    /// the next number; with `updating`, the listed rows of the records are written again instead
    /// (their numbers kept; a record not listed yet is left to the file's listing).
    /// - Returns: how many were listed, and the last key.
    @discardableResult
    static func listRecords(_ db: Database, path: String, sql: String, arguments: StatementArguments,
                            updating: Bool = false) throws -> (Int, Int64?) {
        let statement = try db.cachedStatement(sql: updating ? """
            UPDATE record_listing SET origin = ?, title = ?, author = ?, isbn13 = ?, year = ?, shelf = ?, status = ?,
                review = ?, rating = ? WHERE key = ?
            """ : """
            INSERT INTO record_listing (origin, title, author, isbn13, year, shelf, status, review, rating, key, number)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var next = try Int64.fetchOne(db, sql: "SELECT next FROM record_numbers") ?? 1
        let start = next
        var count = 0
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        var last: Int64?
        while let row = try cursor.next() {
            let key: Int64 = row["key"]
            let record = try RecordCoding.decode(row, path: path)
            var values: StatementArguments = [
                row["origin"] as Int64, TextFolding.key(record.title), record.authors.first.map(TextFolding.key),
                record.normalized?.isbn13, record.year, record.shelf.map(TextFolding.key), record.status.rawValue,
                record.reviewStatus.rawValue, record.rating, key,
            ]
            if !updating {
                values += [next]
                next += 1
            }
            try statement.execute(arguments: values)
            count += 1
            last = key
        }
        if next != start { try db.execute(sql: "UPDATE record_numbers SET next = ?", arguments: [next]) }
        return (count, last)
    }

    // MARK: - Naming records

    /// The ids of the records `reference` names, in library order, at most `limit`.
    /// - Throws: ``StoreError`` when the read fails.
    public func recordIDs(for reference: RecordReference, limit: Int) throws(StoreError) -> [String] {
        try read("record reference") { db -> [String] in
            switch reference {
            case .number(let number):
                return try String.fetchAll(db, sql: """
                    SELECT f.hash || ':' || (l.key & 4294967295) FROM record_listing l
                    JOIN records r ON r.key = l.key JOIN source_files f ON f.id = l.key >> 32 WHERE l.number = ?
                    """, arguments: [number])
            case .id(let prefix, let row):
                guard prefix.allSatisfy(\.isHexDigit) else { return [] }
                var ids: [String] = []
                for file in try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files WHERE hash LIKE ? ORDER BY id",
                                             arguments: [prefix + "%"]) {
                    let fileID: Int64 = file["id"], hash: String = file["hash"]
                    let range = RecordKey.range(fileID: fileID)
                    let keys: [Int64]
                    if let row {
                        keys = try Int64.fetchAll(db, sql: "SELECT key FROM records WHERE key = ?",
                                                  arguments: [RecordKey.make(fileID: fileID, row: row)])
                    } else {
                        keys = try Int64.fetchAll(db, sql: "SELECT key FROM records WHERE key >= ? AND key < ? ORDER BY key LIMIT ?",
                                                  arguments: [range.lower, range.upper, limit - ids.count])
                    }
                    ids += keys.map { "\(hash):\($0 & RecordKey.rowMask)" }
                    if ids.count >= limit { break }
                }
                return Array(ids.prefix(limit))
            }
        }
    }

    // MARK: - Removing records

    /// Removes these records and logs each removal, in one transaction (see
    /// ``LibraryListingStore/removeRecords(ids:command:at:)``): the record, its count, its rows in
    /// the search index and the listing, its enrichment time, edits, claim and gone mark go; its
    /// row is noted in `record_rows`, so importing its file again skips it. Its review history stays.
    /// - Throws: ``StoreError`` when the write fails; nothing is removed then.
    public func removeRecords(ids: [String], command: String, at time: Date) async throws(StoreError) -> [RecordChange] {
        guard !ids.isEmpty else { return [] }
        return try await perform("removal of \(ids.count) records") { db -> [RecordChange] in
            var keys: [(key: Int64, fileID: Int64)] = []
            var records: [BookRecord] = []
            let statement = try db.cachedStatement(
                sql: "SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key = ?")
            var seen = Set<Int64>()
            for id in ids {
                guard let (hash, row) = RecordKey.parse(id: id),
                      let fileID = try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash])
                else { continue }
                let key = RecordKey.make(fileID: fileID, row: row)
                guard seen.insert(key).inserted, let stored = try Row.fetchOne(statement, arguments: [key]) else { continue }
                records.append(try RecordCoding.decode(stored, path: self.path))
                keys.append((key, fileID))
            }
            let changes = RemovalRules.changes(removing: records, command: command, at: time)
            try Self.deleteRecords(db, keys: keys, records: records, changes: changes, keepRows: true)
            return changes
        }
    }

    /// Forgets an imported file (see ``LibraryListingStore/forgetSourceFile(hash:command:at:)``).
    ///
    /// The file's row in `source_files` stays, unregistered (no path, never completed), as the
    /// holder of its id: the high bits of its records' keys, which the removals' log and review
    /// history still name, are then never given to another file. Importing the file again
    /// registers it anew and reads every row.
    /// - Throws: ``StoreError`` when the write fails; nothing is removed then.
    public func forgetSourceFile(hash: String, command: String, at time: Date) async throws(StoreError) -> ForgottenFile? {
        try await perform("forgetting \(hash)") { db -> ForgottenFile? in
            guard let file = try Row.fetchOne(db, sql: "SELECT id, path FROM source_files WHERE hash = ?", arguments: [hash]),
                  let path = file["path"] as String? else { return nil }
            let fileID: Int64 = file["id"]
            let range = RecordKey.range(fileID: fileID)
            var keys: [(key: Int64, fileID: Int64)] = []
            var records: [BookRecord] = []
            let cursor = try Row.fetchCursor(db, sql: """
                SELECT r.*, \(RecordCoding.originColumns) FROM \(RecordCoding.joins) WHERE r.key >= ? AND r.key < ? ORDER BY r.key
                """, arguments: [range.lower, range.upper])
            while let row = try cursor.next() {
                records.append(try RecordCoding.decode(row, path: self.path))
                keys.append((row["key"], fileID))
            }
            let changes = RemovalRules.changes(removing: records, command: command, at: time)
            try Self.deleteRecords(db, keys: keys, records: records, changes: changes, keepRows: false)
            try db.execute(sql: "DELETE FROM rejected_rows WHERE file_hash = ?", arguments: [hash])
            let rejected = db.changesCount
            try db.execute(sql: "DELETE FROM record_rows WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM record_gone WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM record_search_files WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM record_listing_files WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM record_counts WHERE file_id = ?", arguments: [fileID])
            try db.execute(sql: "DELETE FROM scan_jobs WHERE photo_hash = ?", arguments: [hash])
            try db.execute(sql: """
                UPDATE source_files SET path = NULL, format = NULL, header = NULL, encoding = NULL, size = NULL,
                    rows_total = NULL, first_run_id = NULL, completed_at = NULL, reading = NULL
                WHERE id = ?
                """, arguments: [fileID])
            return ForgottenFile(path: path, records: records.count, rejectedRows: rejected)
        }
    }

    /// Deletes records by key with every row kept by their key, logs `changes`, and keeps the
    /// counts (`record_counts`, the search index's and the listing's per-file counts) right.
    /// With `keepRows`, each record's row is noted in `record_rows` (a finished row of its file).
    private static func deleteRecords(_ db: Database, keys: [(key: Int64, fileID: Int64)], records: [BookRecord],
                                      changes: [RecordChange], keepRows: Bool) throws {
        let log = try db.cachedStatement(sql: """
            INSERT INTO record_changes (key, field, old, new, kind, source, run_id, changed_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
            """)
        let indexed = try db.cachedStatement(sql: "SELECT 1 FROM record_search WHERE rowid = ?")
        let listed = try db.cachedStatement(sql: "SELECT 1 FROM record_listing WHERE key = ?")
        var counted = RecordCountChanges()
        var unindexed: [Int64: Int] = [:]
        var unlisted: [Int64: Int] = [:]
        for (index, (key, fileID)) in keys.enumerated() {
            let change = changes[index]
            try log.execute(arguments: [key, change.field, change.old, change.new, change.kind?.rawValue, change.source,
                                        change.changedAt.timeIntervalSince1970])
            counted.add(fileID: fileID, status: records[index].status.rawValue, -1)
            if try Bool.fetchOne(indexed, arguments: [key]) == true {
                try db.execute(sql: "DELETE FROM record_search WHERE rowid = ?", arguments: [key])
                unindexed[fileID, default: 0] += 1
            }
            if try Bool.fetchOne(listed, arguments: [key]) == true {
                try db.execute(sql: "DELETE FROM record_listing WHERE key = ?", arguments: [key])
                unlisted[fileID, default: 0] += 1
            }
            for table in ["records", "record_enrichment", "record_edits", "record_claims", "record_gone",
                          "record_search_stale", "record_listing_stale"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE key = ?", arguments: [key])
            }
            if keepRows {
                let row = key & RecordKey.rowMask
                try db.execute(sql: "INSERT OR IGNORE INTO record_rows (file_id, first_row, last_row) VALUES (?, ?, ?)",
                               arguments: [fileID, row, row])
            }
        }
        try counted.apply(db)
        try db.execute(sql: "DELETE FROM record_counts WHERE n = 0")
        for (fileID, count) in unindexed {
            try db.execute(sql: "UPDATE record_search_files SET indexed = indexed - ? WHERE file_id = ?", arguments: [count, fileID])
        }
        for (fileID, count) in unlisted {
            try db.execute(sql: "UPDATE record_listing_files SET listed = listed - ? WHERE file_id = ?", arguments: [count, fileID])
        }
    }
}

extension LibraryStore {
    /// The SQL condition on `records r` that holds when a record lacks `value`: the report's
    /// completeness (``qualityFigures(_:acceptsDate:)``), negated, and `missing:` of a listing.
    static func missingCondition(_ value: LibraryQuery.MissingValue) -> String {
        switch value {
        case .isbn: return "r.isbn13 IS NULL"
        case .year: return "json_type(r.fields, '$[3]') IS NOT 'integer'"
        case .pages: return "json_type(r.fields, '$[5]') IS NOT 'integer'"
        case .publisher: return "coalesce(json_type(r.fields, '$[4]') NOT IN ('integer', 'text'), 1)"
        case .author: return "coalesce(json_array_length(r.normalized, '$[1]'), 0) = 0"
        case .cover:
            return """
                NOT coalesce(r.status = 'enriched' AND (r.isbn13 IS NOT NULL
                    OR json_extract(r.enrichment, '$.match.editionKey') GLOB '*OL[0-9]*M'), 0)
                """
        }
    }
}
