import BookpipeEnrichment
import BookpipeCore
import Foundation
import GRDB

extension LocalCatalog {
    /// The name candidates from the catalogue carry as their ``Candidate/source``.
    public static let sourceName = "catalog"

    /// The editions that carry each ISBN-13, as candidates.
    ///
    /// Each candidate is one edition: ``Candidate/workKey`` is its work's key (`/works/OL…W`; empty
    /// when it names no work — never the edition's key), ``Candidate/editionKey`` the edition's,
    /// ``Candidate/title`` the work's title ("Title: Subtitle"), or the edition's when the work
    /// record is absent, ``Candidate/authors`` the work's authors (else the edition's),
    /// ``Candidate/year`` the work's first publication year (else the edition's),
    /// ``Candidate/publisher`` the edition's first publisher, and
    /// ``Candidate/isbn13s`` every ISBN-13 of the edition.
    ///
    /// - Parameter isbn13s: Valid ISBN-13s (an ISBN-10 is accepted and converted).
    /// - Returns: For every ISBN passed that the catalogue has, its editions, keyed as passed.
    /// - Throws: ``CatalogError/readFailed(path:what:reason:)``.
    public func candidates(forISBNs isbn13s: [String]) throws(CatalogError) -> [String: [Candidate]] {
        try read("ISBN lookups") { db in try Self.candidates(forISBNs: isbn13s, in: db) }
    }

    /// Searches works by title and author: up to `limit` candidates, one per work, best first.
    ///
    /// When the catalogue holds an entry with the same title, the answer comes from its title index
    /// (``CatalogTitleIndex``: a few B-tree lookups); otherwise from full-text search (see
    /// ``CatalogSearchQuery`` for how the query is built; user text never becomes FTS5 syntax).
    /// Both give the scorer the same decision (decision note 0020). Matches are ranked with
    /// ``MatchScorer`` (title, then author agreement), then by the shorter title or FTS5's bm25, so
    /// the work a person means is among the first even for one-word titles such as "It". The
    /// candidates' scores are left at zero: deciding is the caller's job.
    ///
    /// - Parameters:
    ///   - title: The search title (a series suffix is removed here too).
    ///   - author: One author, "First Last" or "Last, First", or nil.
    ///   - limit: The most candidates returned.
    /// - Returns: The candidates; empty when nothing matches.
    /// - Throws: ``CatalogError/readFailed(path:what:reason:)``.
    public func search(title: String, author: String?, limit: Int = 10) throws(CatalogError) -> [Candidate] {
        try read("a title search") { db in try Self.search(title: title, author: author, limit: limit, in: db) }
    }

    // MARK: - Queries

    /// The editions of every ISBN in four queries whatever the number of ISBNs (editions, work
    /// authors, edition authors, edition ISBNs, each over a JSON array of keys), with the same
    /// answer as ``candidatesOneByOne(forISBNs:in:)``, the readable specification it is tested against.
    static func candidates(forISBNs isbns: [String], in db: Database) throws -> [String: [Candidate]] {
        var passedByISBN13: [String: [String]] = [:]
        for passed in isbns {
            guard case .success(let isbn) = ISBN.parse(passed), !(passedByISBN13[isbn.isbn13] ?? []).contains(passed) else {
                continue
            }
            passedByISBN13[isbn.isbn13, default: []].append(passed)
        }
        guard !passedByISBN13.isEmpty else { return [:] }
        struct EditionRow {
            var isbn13: String
            var editionKey: String
            var workKey: String?
            var hasWork: Bool
            var title: String
            var year: Int?
            var publishers: String?
        }
        var rows: [EditionRow] = []
        let editions = try db.cachedStatement(sql: """
            SELECT i.isbn13, e.key, e.work_key, e.title, e.subtitle, e.publish_year, w.key, w.title, w.subtitle,
                w.first_publish_year, e.publishers
            FROM json_each(?) AS q
            JOIN edition_isbns AS i ON i.isbn13 = q.value
            JOIN editions AS e ON e.key = i.edition_key
            LEFT JOIN works AS w ON w.key = e.work_key
            ORDER BY i.isbn13, e.key
            """)
        let editionCursor = try Row.fetchCursor(editions, arguments: [try jsonArray(Array(passedByISBN13.keys))])
        while let row = try editionCursor.next() {
            let hasWork = (row[6] as String?) != nil
            let workYear: Int? = row[9]
            let editionYear: Int? = row[5]
            rows.append(EditionRow(
                isbn13: row[0], editionKey: row[1], workKey: row[2], hasWork: hasWork,
                title: hasWork ? displayTitle(row[7], subtitle: row[8]) : displayTitle(row[3], subtitle: row[4]),
                year: workYear ?? editionYear, publishers: row[10]))
        }
        guard !rows.isEmpty else { return [:] }

        func grouped(_ sql: String, _ keys: some Sequence<String>) throws -> [String: [String]] {
            var result: [String: [String]] = [:]
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [try jsonArray(Array(Set(keys)))])
            while let row = try cursor.next() { result[row[0], default: []].append(row[1]) }
            return result
        }
        let workAuthors = try grouped("""
            SELECT l.work_key, a.name FROM json_each(?) AS q
            JOIN work_authors AS l ON l.work_key = q.value JOIN authors AS a ON a.key = l.author_key
            ORDER BY l.work_key, l.position
            """, rows.filter(\.hasWork).compactMap(\.workKey))
        let editionAuthors = try grouped("""
            SELECT l.edition_key, a.name FROM json_each(?) AS q
            JOIN edition_authors AS l ON l.edition_key = q.value JOIN authors AS a ON a.key = l.author_key
            ORDER BY l.edition_key, l.position
            """, rows.filter { row in !row.hasWork || (row.workKey.flatMap { workAuthors[$0] } ?? []).isEmpty }.map(\.editionKey))
        let editionISBNs = try grouped("""
            SELECT i.edition_key, i.isbn13 FROM json_each(?) AS q
            JOIN edition_isbns AS i ON i.edition_key = q.value
            ORDER BY i.edition_key, i.isbn13
            """, rows.map(\.editionKey))

        var answers: [String: [Candidate]] = [:]
        for row in rows {
            var authors = row.hasWork ? row.workKey.flatMap { workAuthors[$0] } ?? [] : []
            if authors.isEmpty { authors = editionAuthors[row.editionKey] ?? [] }
            let candidate = Candidate(
                workKey: WorkKey.sanitized(row.workKey), editionKey: row.editionKey, title: row.title, authors: authors,
                year: row.year,
                publisher: SourceResponses.firstText(row.publishers?.split(separator: "\n").map(String.init) ?? []),
                isbn13s: editionISBNs[row.editionKey] ?? [], source: sourceName)
            for passed in passedByISBN13[row.isbn13] ?? [] { answers[passed, default: []].append(candidate) }
        }
        return answers
    }

    /// A JSON array of strings, the parameter of `json_each(?)`.
    private static func jsonArray(_ values: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(values), as: UTF8.self)
    }

    /// ``candidates(forISBNs:in:)`` one ISBN at a time, a few queries each: the readable
    /// specification of the answer, kept for the tests.
    static func candidatesOneByOne(forISBNs isbns: [String], in db: Database) throws -> [String: [Candidate]] {
        let editions = try db.cachedStatement(sql: """
            SELECT e.key, e.work_key, e.title, e.subtitle, e.publish_year, w.key, w.title, w.subtitle, w.first_publish_year,
                e.publishers
            FROM edition_isbns AS i
            JOIN editions AS e ON e.key = i.edition_key
            LEFT JOIN works AS w ON w.key = e.work_key
            WHERE i.isbn13 = ?
            ORDER BY e.key
            """)
        let editionISBNs = try db.cachedStatement(sql: "SELECT isbn13 FROM edition_isbns WHERE edition_key = ? ORDER BY isbn13")
        let indexer = SearchIndexer(db: db)
        var answers: [String: [Candidate]] = [:]
        for passed in isbns {
            guard case .success(let isbn) = ISBN.parse(passed) else { continue }
            var candidates: [Candidate] = []
            for row in try Row.fetchAll(editions, arguments: [isbn.isbn13]) {
                let editionKey: String = row[0]
                let workKey: String? = row[1]
                let hasWork = (row[5] as String?) != nil
                var authors: [String] = []
                if hasWork, let workKey {
                    authors = try indexer.authorNames(sql: SearchIndexer.workAuthorsSQL, key: workKey).map(\.name)
                }
                if authors.isEmpty {
                    authors = try indexer.authorNames(sql: SearchIndexer.editionAuthorsSQL, key: editionKey).map(\.name)
                }
                let title = hasWork ? displayTitle(row[6], subtitle: row[7]) : displayTitle(row[2], subtitle: row[3])
                let workYear: Int? = row[8]
                let editionYear: Int? = row[4]
                let publishers: String? = row[9]
                candidates.append(Candidate(
                    workKey: WorkKey.sanitized(workKey), editionKey: editionKey, title: title, authors: authors,
                    year: workYear ?? editionYear,
                    publisher: SourceResponses.firstText(publishers?.split(separator: "\n").map(String.init) ?? []),
                    isbn13s: try String.fetchAll(editionISBNs, arguments: [editionKey]), source: sourceName))
            }
            if !candidates.isEmpty { answers[passed] = candidates }
        }
        return answers
    }

    /// FTS5 rows read per query step before ranking.
    static let rowsPerSearchStep = 50
    /// FTS5 rows a fallback step (any title word) ranks at most: the first it matches.
    static let rowsPerFallbackStep = 200

    /// The search: the entries whose titles agree with the row's, found in the title index
    /// (``CatalogTitleIndex``), when one of them has the same title; otherwise the full-text steps
    /// (``searchByWords(title:author:limit:in:)``).
    ///
    /// Why the shortcut decides as the full-text steps would (under the default policy): the
    /// steps' candidates whose titles agree with the row's are the indexed ones that hold every word
    /// of the title (or of its main title), which are kept here; the others have no title points,
    /// so they score at most author + year (80) in ``MatchScorer/decide(for:candidates:)`` and can
    /// never be accepted; and beside a same-titled candidate (100 + author agreement, or a row
    /// without author whose rivals score at most the year's 30) they never come within the lead
    /// that would block its acceptance. They could only be listed for a person when nothing is
    /// accepted.
    static func search(title: String, author: String?, limit: Int, in db: Database) throws -> [Candidate] {
        guard limit > 0 else { return [] }
        if let agreeing = try sameTitleCandidates(title: title, author: author, limit: limit, in: db) {
            return agreeing
        }
        return try searchByWords(title: title, author: author, limit: limit, in: db)
    }

    /// The title index's candidates whose titles agree with `title` and hold all its words (or
    /// all of its main title's), best first; nil unless one of them has the same title.
    ///
    /// Bounded: every entry whose authors share a word with `author` is scored (author agreement
    /// needs one), and of the others only the shortest titles, until `limit` works are found —
    /// without author points they rank by title alone, and no more than `limit` are returned.
    static func sameTitleCandidates(title: String, author: String?, limit: Int, in db: Database) throws -> [Candidate]? {
        let matchQuery = MatchQuery(title: title, authors: author.map { [$0] } ?? [])
        let documents = try CatalogTitleIndex.documents(matching: matchQuery.title, authorKeys: matchQuery.authorKeys, in: db)
        guard !documents.isEmpty else { return nil }
        let authorWords = Set(matchQuery.authorKeys.flatMap { $0.split(separator: " ") })
        var mayAgree: [CatalogTitleIndex.Document] = []
        var others: [CatalogTitleIndex.Document] = []
        for document in documents {
            let shares = !authorWords.isEmpty
                && TextFolding.split(document.authorsKey, separator: " ").contains(where: authorWords.contains)
            if shares { mayAgree.append(document) } else { others.append(document) }
        }
        others.sort { ($0.titleKey.utf8.count, $0.id) < ($1.titleKey.utf8.count, $1.id) }

        // The row's words (or its main title's), each once: a document must hold all of one list.
        var wordLists = [CatalogSearchQuery.words(matchQuery.title.key)]
        if matchQuery.title.hasSubtitle { wordLists.append(CatalogSearchQuery.words(matchQuery.title.mainKey)) }
        let scorer = MatchScorer()
        var best: [String: (candidate: Candidate, score: Int, length: Int)] = [:]
        var hasSameTitle = false
        var unitsWithoutAuthor = Set<String>()
        for (index, document) in (mayAgree + others).enumerated() {
            if index >= mayAgree.count, unitsWithoutAuthor.count >= limit { break }
            let titleKey = document.titleKey
            // A handful of words on each side: compared in place, without building sets of strings.
            let documentWords = TextFolding.split(titleKey, separator: " ")
            guard wordLists.contains(where: { words in
                !words.isEmpty && words.allSatisfy { word in documentWords.contains { $0 == word } }
            }) else { continue }
            let unit = document.unit
            let candidate = documentCandidate(unit: unit, editionKey: document.editionKey, title: document.title,
                                              authors: document.authors, year: document.year)
            let scored = scorer.score(candidate, for: matchQuery)
            let titlePoints = scored.breakdown["title"] ?? 0
            guard titlePoints > 0 else { continue }
            if titlePoints >= scorer.policy.titleExact { hasSameTitle = true }
            if (scored.breakdown["author"] ?? 0) == 0 { unitsWithoutAuthor.insert(unit) }
            if let current = best[unit], (current.score, -current.length) >= (scored.score, -titleKey.utf8.count) { continue }
            best[unit] = (candidate, scored.score, titleKey.utf8.count)
        }
        guard hasSameTitle else { return nil }
        return best.values
            .sorted { lhs, rhs in
                if lhs.score != rhs.score { return lhs.score > rhs.score }
                if lhs.length != rhs.length { return lhs.length < rhs.length }
                return lhs.candidate.identity < rhs.candidate.identity
            }
            .prefix(limit)
            .map(\.candidate)
    }

    /// A search document as a candidate: a lone edition (no work) is indexed under its own key and
    /// stored as its edition, never as a work.
    private static func documentCandidate(unit: String, editionKey: String?, title: String, authors: String,
                                          year: Int?) -> Candidate {
        Candidate(
            workKey: WorkKey.sanitized(unit), editionKey: editionKey ?? (WorkKey.isWork(unit) ? nil : unit),
            title: title, authors: authors.isEmpty ? [] : TextFolding.split(authors, separator: "\n").map(String.init), year: year,
            source: sourceName)
    }

    /// The full-text search (``CatalogSearchQuery``'s steps, each ranked by bm25 and cut at
    /// ``rowsPerSearchStep``), ranked by ``MatchScorer`` then bm25: the general path, and the
    /// oracle the title index's shortcut is tested against.
    static func searchByWords(title: String, author: String?, limit: Int, in db: Database) throws -> [Candidate] {
        let query = CatalogSearchQuery(title: title, author: author)
        guard !query.steps.isEmpty, limit > 0 else { return [] }
        let match = try db.cachedStatement(sql: """
            SELECT rowid, bm25(search_index, 10.0, 1.0) FROM search_index WHERE search_index MATCH ?
            ORDER BY 2 LIMIT \(rowsPerSearchStep)
            """)
        // The fallback steps (any word) can match most of a catalogue: they rank only the first
        // entries they match, which is all of them unless the words are very common.
        let bounded = try db.cachedStatement(sql: """
            SELECT rowid, bm25(search_index, 10.0, 1.0) FROM search_index WHERE search_index MATCH ?
            LIMIT \(rowsPerFallbackStep)
            """)
        var ranks: [Int64: Double] = [:]
        for step in query.steps {
            if step.onlyIfNothingFound, !ranks.isEmpty { continue }
            var found: [(id: Int64, rank: Double)] = []
            for row in try Row.fetchAll(step.onlyIfNothingFound ? bounded : match, arguments: [step.expression]) {
                found.append((row[0], row[1]))
            }
            if step.onlyIfNothingFound {
                found = Array(found.sorted { ($0.rank, $0.id) < ($1.rank, $1.id) }.prefix(rowsPerSearchStep))
            }
            for (id, rank) in found { ranks[id] = min(ranks[id] ?? rank, rank) }
        }
        guard !ranks.isEmpty else { return [] }

        let document = try db.cachedStatement(sql: """
            SELECT work_key, edition_key, title, authors, year FROM search_documents WHERE id = ?
            """)
        let scorer = MatchScorer()
        let matchQuery = MatchQuery(title: title, authors: author.map { [$0] } ?? [])
        var best: [String: (candidate: Candidate, score: Int, rank: Double)] = [:]
        for (id, rank) in ranks.sorted(by: { $0.key < $1.key }) {
            guard let row = try Row.fetchOne(document, arguments: [id]) else { continue }
            let unit: String = row[0]
            let candidate = documentCandidate(unit: unit, editionKey: row[1], title: row[2], authors: row[3], year: row[4])
            let score = scorer.score(candidate, for: matchQuery).score
            if let current = best[unit],
               (current.score, -current.rank) >= (score, -rank) {
                continue
            }
            best[unit] = (candidate, score, rank)
        }
        return best.values
            .sorted { lhs, rhs in
                if lhs.score != rhs.score { return lhs.score > rhs.score }
                if lhs.rank != rhs.rank { return lhs.rank < rhs.rank }
                return lhs.candidate.identity < rhs.candidate.identity
            }
            .prefix(limit)
            .map(\.candidate)
    }
}
