import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    // MARK: - Listing

    /// Calls `body` with each record `query` matches, in `order` (then library order), at most
    /// `limit`; the listing is brought up to date first, so every record has its number.
    public func listRecords(_ query: LibraryQuery, order: [ListingOrder], limit: Int?,
                            _ body: (ListedRecord) throws -> Void) async throws {
        try await refreshListing()
        let files = try withConnection("listing") { connection in
            try connection.execute("SELECT id, coalesce(path, ''), coalesce(format, '') FROM source_files",
                                   what: "listing", reading: true).rows
        }
        var values: [String?] = []
        func parameter(_ value: String?) -> String {
            values.append(value)
            return "$\(values.count)"
        }
        var conditions: [String] = []
        for condition in query.conditions {
            let sql = Self.sql(for: condition.test, files: files, parameter: parameter)
            conditions.append(condition.isNegated ? "NOT coalesce((\(sql)), false)" : "(\(sql))")
        }
        let orderBy = (order.map(Self.sql(for:)) + ["r.number"]).joined(separator: ", ")
        let sql = "SELECT r.number, r.gone_since IS NOT NULL, r.data FROM records r"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY \(orderBy)" + (limit.map { " LIMIT \(max(0, $0))" } ?? "")
        let rows = try withConnection("listing") { connection in
            try connection.execute(sql, values, what: "listing", reading: true).rows
        }
        for row in rows {
            let record = try decode(BookRecord.self, row[2], what: "a listed record")
            try body(ListedRecord(number: row[0].flatMap { Int($0) } ?? 0, record: record, isGone: row[1] == "t"))
        }
    }

    /// A condition testing one word against ' word word ' text: a prefix of a word (one letter: the whole word).
    static func wordMatch(_ column: String, _ word: String, parameter: (String?) -> String) -> String {
        word.count > 1 ? "\(column) LIKE '% ' || \(parameter(word)) || '%'"
            : "\(column) LIKE '% ' || \(parameter(word)) || ' %'"
    }

    static func sql(for test: LibraryQuery.Test, files: [[String?]], parameter: (String?) -> String) -> String {
        func words(_ words: [String], _ column: String) -> String {
            words.isEmpty ? "true" : words.map { wordMatch(column, $0, parameter: parameter) }.joined(separator: " AND ")
        }
        func bounds(_ column: String, _ bounds: LibraryQuery.Bounds) -> String {
            var parts: [String] = []
            if let lower = bounds.lower { parts.append("\(column) \(bounds.includesLower ? ">=" : ">") \(parameter(String(lower)))::float8") }
            if let upper = bounds.upper { parts.append("\(column) \(bounds.includesUpper ? "<=" : "<") \(parameter(String(upper)))::float8") }
            return parts.isEmpty ? "\(column) IS NOT NULL" : parts.joined(separator: " AND ")
        }
        switch test {
        case .words(let list):
            // Title or authors, each by its own trigram index (migration 5): a word never spans the two.
            return list.isEmpty ? "true" : list.map { word in
                "(\(wordMatch("r.search_title", word, parameter: parameter)) OR \(wordMatch("r.search_authors", word, parameter: parameter)))"
            }.joined(separator: " AND ")
        case .title(let list): return words(list, "r.search_title")
        case .author(let list): return words(list, "r.search_authors")
        case .isbn(let digits): return "r.isbn13 LIKE \(parameter(digits)) || '%'"
        case .year(let range): return bounds("r.year", range)
        case .rating(let range): return bounds("r.rating", range)
        case .shelf(let key): return "r.shelf_key = \(parameter(key))"
        case .status(let status): return "r.status = \(parameter(status.rawValue))"
        case .review(let state):
            switch state {
            case .waiting: return "(r.review_status = 'needsReview' OR r.status = 'needsCandidateSelection')"
            case .verified, .needsReview, .userEdited: return "r.review_status = \(parameter(state.rawValue))"
            }
        case .file(let key):
            // Few files: their paths and formats are compared here, with the query's own folding.
            let ids = files.filter { TextFolding.key($0[1] ?? "").contains(key) || TextFolding.key($0[2] ?? "").contains(key) }
                .compactMap { $0[0] }
            return "r.file_id = ANY(\(parameter("{" + ids.joined(separator: ",") + "}"))::bigint[])"
        case .gone(let isGone): return isGone ? "r.gone_since IS NOT NULL" : "r.gone_since IS NULL"
        case .ids(let ids): return "r.id = ANY(\(parameter(array(ids)))::text[])"
        case .invalidISBN:
            // Which codes mean an invalid ISBN is the library's rule (QualityCodes), bound here.
            let excluded = ["isbn.10-13-disagree"] + QualityCodes.isbnRepairs.sorted()
            return "EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(r.data::jsonb -> 'findings', '[]'::jsonb)) f "
                + "WHERE left(f ->> 'code', 5) = 'isbn.' AND f ->> 'code' <> ALL(\(parameter(array(excluded)))::text[]))"
        case .finding(let code):
            return "EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(r.data::jsonb -> 'findings', '[]'::jsonb)) f "
                + "WHERE f ->> 'code' = \(parameter(code)) OR left(f ->> 'code', \(code.count + 1)) = \(parameter(code + ".")))"
        case .missing(let value):
            switch value {
            case .isbn: return "r.isbn13 IS NULL"
            case .year: return "jsonb_typeof(r.data::jsonb -> 'year') IS DISTINCT FROM 'number'"
            case .pages: return "jsonb_typeof(r.data::jsonb -> 'pageCount') IS DISTINCT FROM 'number'"
            case .publisher: return "jsonb_typeof(r.data::jsonb -> 'publisher') IS DISTINCT FROM 'string'"
            case .author: return "coalesce(jsonb_array_length(r.data::jsonb -> 'normalized' -> 'authors'), 0) = 0"
            case .cover:
                return "NOT coalesce(r.status = 'enriched' AND (r.isbn13 IS NOT NULL "
                    + "OR (r.data::jsonb -> 'enrichment' -> 'match' ->> 'editionKey') ~ 'OL[0-9].*M$'), false)"
            }
        }
    }

    /// An order's SQL; text sorts by code point (`COLLATE "C"`), as the SQLite engine does.
    static func sql(for order: ListingOrder) -> String {
        let column: String
        var isText = true
        switch order.field {
        case .number: column = "r.number"; isText = false
        case .title: column = "r.title_key"
        case .author: column = "r.author_key"
        case .year: column = "r.year"; isText = false
        case .rating: column = "r.rating"; isText = false
        case .shelf: column = "r.shelf_key"
        case .status: column = "r.status"
        case .isbn: column = "r.isbn13"
        }
        // Records without the value come last either way.
        return "\(column) IS NULL, \(column)" + (isText ? " COLLATE \"C\"" : "") + (order.isDescending ? " DESC" : "")
    }

    /// Whether every record has its number and no record changed since the last listing.
    public func listingIsCurrent() async throws(StoreError) -> Bool {
        try withConnection("listing state") { connection in
            try connection.execute("SELECT NOT EXISTS (SELECT 1 FROM record_queue WHERE NOT listed)", what: "listing state",
                                   reading: true).scalar == "t"
        }
    }

    /// Gives numbers, in library order, to the records that have none (the counter row is locked,
    /// so two processes listing at once never give a number twice), and marks every record listed.
    /// Returns how many records were (re)listed.
    @discardableResult
    public func refreshListing() async throws(StoreError) -> Int {
        try transaction("listing") { connection in
            let next = try connection.execute("SELECT value FROM library_counters WHERE name = 'listing' FOR UPDATE",
                                              what: "listing").scalar ?? "1"
            let numbered = try connection.execute("""
                WITH unnumbered AS (
                    SELECT id, row_number() OVER (ORDER BY file_id, row) - 1 AS position FROM records WHERE number IS NULL)
                UPDATE records r SET number = $1::bigint + unnumbered.position FROM unnumbered WHERE r.id = unnumbered.id
                """, [next], what: "listing").affected
            if numbered > 0 {
                try connection.execute("UPDATE library_counters SET value = value + $1 WHERE name = 'listing'",
                                       [String(numbered)], what: "listing")
            }
            // The records not listed, by `record_queue`'s partial index (migration 9); its trigger marks them there too.
            return try connection.execute("""
                UPDATE records r SET listed = true FROM record_queue q WHERE NOT q.listed AND r.id = q.id AND NOT r.listed
                """, what: "listing").affected
        }
    }

    /// The ids of the records `reference` names, in library order, at most `limit`.
    public func recordIDs(for reference: RecordReference, limit: Int) async throws(StoreError) -> [String] {
        try withConnection("record reference") { connection in
            switch reference {
            case .number(let number):
                return try connection.execute("SELECT id FROM records WHERE number = $1 LIMIT $2", [String(number), String(limit)],
                                              what: "record reference", reading: true).rows.compactMap { $0[0] }
            case .id(let prefix, let row):
                return try connection.execute("""
                    SELECT r.id FROM records r JOIN source_files f ON f.id = r.file_id
                    WHERE f.hash LIKE $1 || '%' AND ($2::integer IS NULL OR r.row = $2::integer)
                    ORDER BY r.file_id, r.row LIMIT $3
                    """, [prefix.filter(\.isHexDigit), Self.text(row), String(limit)], what: "record reference",
                    reading: true).rows.compactMap { $0[0] }
            }
        }
    }

    /// Removes these records (unknown ids skipped), logging each removal; their rows stay finished.
    public func removeRecords(ids: [String], command: String, at time: Date) async throws(StoreError) -> [RecordChange] {
        var unique: [String] = []
        for id in ids where !unique.contains(id) { unique.append(id) }
        return try transaction("removal") { connection in
            let rows = try connection.execute("""
                SELECT r.data FROM unnest($1::text[]) WITH ORDINALITY AS wanted(id, position)
                JOIN records r ON r.id = wanted.id ORDER BY wanted.position FOR UPDATE OF r
                """, [Self.array(unique)], what: "removal").rows
            let records = try self.records(from: rows)
            return try self.remove(records, command: command, at: time, keepRowsFinished: true, connection)
        }
    }

    /// Logs and deletes records, in the caller's transaction.
    func remove(_ records: [BookRecord], command: String, at time: Date, keepRowsFinished: Bool,
                _ connection: PostgresConnection) throws -> [RecordChange] {
        let changes = RemovalRules.changes(removing: records, command: command, at: time)
        try log(changes, runID: nil, connection)
        let ids = Self.array(records.map(\.id))
        if keepRowsFinished {
            try connection.execute("""
                INSERT INTO removed_rows (file_id, row) SELECT file_id, row FROM records WHERE id = ANY($1::text[])
                ON CONFLICT DO NOTHING
                """, [ids], what: "removal")
        }
        try connection.execute("DELETE FROM records WHERE id = ANY($1::text[])", [ids], what: "removal")
        return changes
    }

    /// Removes a file's records (each removal logged), its rejected rows and its registration.
    public func forgetSourceFile(hash: String, command: String, at time: Date) async throws(StoreError) -> ForgottenFile? {
        try transaction("forget") { connection -> ForgottenFile? in
            guard let file = try connection.execute("SELECT id, path FROM source_files WHERE hash = $1 FOR UPDATE", [hash],
                                                    what: "forget").rows.first, let fileID = file[0]
            else { return nil }
            let rows = try connection.execute("SELECT data FROM records WHERE file_id = $1 ORDER BY row FOR UPDATE",
                                              [fileID], what: "forget").rows
            let records = try self.records(from: rows)
            _ = try self.remove(records, command: command, at: time, keepRowsFinished: false, connection)
            let rejected = try connection.execute("DELETE FROM rejected_rows WHERE file_hash = $1", [hash], what: "forget").affected
            try connection.execute("DELETE FROM source_files WHERE id = $1", [fileID], what: "forget")
            return ForgottenFile(path: file[1] ?? "", records: records.count, rejectedRows: rejected)
        }
    }

    // MARK: - Search

    /// The records matching `text`, as the SQLite engine reads a search: a whole ISBN-10 or
    /// ISBN-13 (hyphens or not) finds the records carrying it; otherwise every word must be a word
    /// of the title or the authors (ignoring case and accents), the last one a word's start unless
    /// it is a single letter or digit. Best first: more words in the title, then library order
    /// (the SQLite engine ranks by bm25). At most `ranking` matches are ranked; `limit` are returned.
    public func search(_ text: String, limit: Int, ranking: Int) async throws(StoreError) -> SearchResults {
        let words = LibraryQuery.words(text)
        guard !words.isEmpty, limit > 0 else { return SearchResults(hits: [], ranked: 0, moreMatch: false) }
        let ranking = max(ranking, limit)
        var values: [String?] = []
        func parameter(_ value: String?) -> String {
            values.append(value)
            return "$\(values.count)"
        }
        let condition: String
        var titleScore = "0"
        if let isbn = Self.fullISBN(text) {
            condition = "r.search_isbns LIKE '% ' || \(parameter(isbn)) || ' %'"
        } else {
            func match(_ column: String, _ index: Int) -> String {
                let word = words[index]
                return index == words.count - 1 && word.count > 1
                    ? "\(column) LIKE '% ' || \(parameter(word)) || '%'" : "\(column) LIKE '% ' || \(parameter(word)) || ' %'"
            }
            // Title or authors, each by its own trigram index (migration 5): a word never spans the two.
            condition = words.indices.map { "(\(match("r.search_title", $0)) OR \(match("r.search_authors", $0)))" }
                .joined(separator: " AND ")
            titleScore = words.indices.map { "(CASE WHEN \(match("r.search_title", $0)) THEN 1 ELSE 0 END)" }
                .joined(separator: " + ")
        }
        let rows = try withConnection("search") { connection in
            try connection.execute("""
                SELECT r.data, \(titleScore) FROM records r WHERE \(condition) ORDER BY r.file_id, r.row LIMIT \(ranking + 1)
                """, values, what: "search", reading: true).rows
        }
        let moreMatch = rows.count > ranking
        var candidates: [(record: BookRecord, rank: Double, position: Int)] = []
        for (position, row) in rows.prefix(ranking).enumerated() {
            candidates.append((try decode(BookRecord.self, row[0], what: "a found record"),
                               -Double(row[1].flatMap { Int($0) } ?? 0), position))
        }
        let best = candidates.sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.position < $1.position }.prefix(limit)
        let hits = best.map { candidate in
            SearchHit(id: candidate.record.id, title: candidate.record.title, authors: candidate.record.authors,
                      isbn13: candidate.record.normalized?.isbn13, status: candidate.record.status,
                      file: candidate.record.origin.file, line: candidate.record.origin.line, rank: candidate.rank)
        }
        return SearchResults(hits: hits, ranked: candidates.count, moreMatch: moreMatch)
    }

    /// The ISBN-13 of a whole, valid ISBN-10 or ISBN-13 (hyphens and spaces allowed); nil otherwise.
    static func fullISBN(_ text: String) -> String? {
        let compact = text.filter { $0 != "-" && !$0.isWhitespace }
        guard compact.count == 10 || compact.count == 13, case .success(let isbn) = ISBN.parse(compact) else { return nil }
        return isbn.isbn13
    }

    /// Always true: the words a search matches are written with each record, in its statement.
    public func searchIndexIsCurrent() async throws(StoreError) -> Bool { true }

    /// Nothing to do (see ``searchIndexIsCurrent()``); returns 0.
    public func refreshSearchIndex() async throws(StoreError) -> Int { 0 }

    // MARK: - List entries

    /// The records of a list that came from files other than `excludingFile`, in library order.
    public func listEntries(list: String, excludingFile fileHash: String?) async throws(StoreError) -> [StoredListEntry] {
        let prefix = list + String(ListIdentity.separator)
        return try withConnection("list entries") { connection in
            try connection.execute("""
                SELECT r.id, r.entry, r.digest, r.gone_since IS NOT NULL FROM records r JOIN source_files f ON f.id = r.file_id
                WHERE r.list_name = $1 AND ($2::text IS NULL OR f.hash <> $2) ORDER BY r.file_id, r.row
                """, [list, fileHash], what: "list entries", reading: true).rows.compactMap { row -> StoredListEntry? in
                guard let id = row[0], let entry = row[1], entry.hasPrefix(prefix) else { return nil }
                return StoredListEntry(recordID: id, key: String(entry.dropFirst(prefix.count)),
                                       digest: row[2].flatMap { Int64($0) }, isGone: row[3] == "t")
            }
        }
    }

    /// Applies a newer export's values, logs the changes, and counts the records present again.
    public func applyImportedUpdates(_ updates: [ImportedUpdate], runID: Int64?, at time: Date) async throws(StoreError) {
        guard !updates.isEmpty else { return }
        try transaction("\(updates.count) imported updates") { connection in
            try self.writeUpdates(updates.map { RecordUpdate(record: $0.record, importedDigest: $0.digest) }, runID: runID,
                                  connection)
            try self.log(updates.flatMap(\.changes), runID: runID, connection)
        }
    }

    /// Marks records as present in their list again.
    public func markPresent(recordIDs: [String]) async throws(StoreError) {
        guard !recordIDs.isEmpty else { return }
        try withConnection("records present again", reading: false) { connection in
            try connection.execute("UPDATE records SET gone_since = NULL WHERE id = ANY($1::text[])", [Self.array(recordIDs)],
                                   what: "records present again")
        }
    }

    /// Marks records as no longer in the newest export of their list.
    public func markGone(recordIDs: [String], fileHash: String, at time: Date) async throws(StoreError) {
        guard !recordIDs.isEmpty else { return }
        try withConnection("records gone from their list", reading: false) { connection in
            try connection.execute("""
                UPDATE records SET gone_since = coalesce(gone_since, $2::float8)
                WHERE id = ANY($1::text[]) AND EXISTS (SELECT 1 FROM source_files WHERE hash = $3)
                """, [Self.array(recordIDs), Self.text(time), fileHash], what: "records gone from their list")
        }
    }

    // MARK: - Books

    /// The members of records that may be one book with another, and of every record a person's
    /// decision names, in library order.
    public func bookMembers() async throws(StoreError) -> [BookMember] {
        try withConnection("book members") { connection in
            try connection.execute("""
                WITH keyed AS (
                    SELECT id, file_id, row, list_name, coalesce(list_name, '') AS list, isbn13, work_key, edition_key
                    FROM records WHERE isbn13 IS NOT NULL OR work_key IS NOT NULL),
                shared_isbn AS (
                    SELECT isbn13 FROM keyed WHERE isbn13 IS NOT NULL GROUP BY isbn13 HAVING count(DISTINCT list) > 1),
                shared_edition AS (
                    SELECT work_key, edition_key FROM keyed WHERE work_key IS NOT NULL AND edition_key IS NOT NULL
                    GROUP BY work_key, edition_key HAVING count(DISTINCT list) > 1)
                SELECT id, list_name, isbn13, work_key, edition_key, file_id, row FROM keyed
                WHERE isbn13 IN (SELECT isbn13 FROM shared_isbn)
                   OR (work_key, edition_key) IN (SELECT work_key, edition_key FROM shared_edition)
                UNION
                SELECT id, list_name, isbn13, work_key, edition_key, file_id, row FROM records
                WHERE id IN (SELECT first FROM record_links UNION SELECT second FROM record_links)
                ORDER BY 6, 7
                """, what: "book members", reading: true).rows.map { row in
                BookMember(recordID: row[0] ?? "", list: row[1], isbn13: row[2],
                           workKey: row[3].flatMap { $0.isEmpty ? nil : $0 }, editionKey: row[4])
            }
        }
    }

    /// Every person's link decision, the latest for each pair.
    public func linkDecisions() async throws(StoreError) -> [LinkDecision] {
        try withConnection("link decisions") { connection in
            try connection.execute("SELECT first, second, linked FROM record_links ORDER BY first, second",
                                   what: "link decisions", reading: true).rows.map {
                LinkDecision($0[0] ?? "", $0[1] ?? "", linked: $0[2] == "t")
            }
        }
    }

    /// Records a person's decision about two records and logs it on both; false when either is unknown.
    public func recordLinkDecision(_ decision: LinkDecision, at time: Date) async throws(StoreError) -> Bool {
        try transaction("link decision") { connection -> Bool in
            let known = try connection.execute("SELECT count(*) FROM records WHERE id = $1 OR id = $2",
                                               [decision.first, decision.second], what: "link decision").scalar
            guard known == "2" else { return false }
            try connection.execute("""
                INSERT INTO record_links (first, second, linked, decided_at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (first, second) DO UPDATE SET linked = excluded.linked, decided_at = excluded.decided_at
                """, [decision.first, decision.second, Self.text(decision.linked), Self.text(time)], what: "link decision")
            let kind: RecordChange.Kind = decision.linked ? .linked : .unlinked
            try self.log([(decision.first, decision.second), (decision.second, decision.first)].map { id, other in
                RecordChange(recordID: id, field: "book", old: decision.linked ? nil : other, new: decision.linked ? other : nil,
                             kind: kind, source: "person", changedAt: time)
            }, runID: nil, connection)
            return true
        }
    }
}
