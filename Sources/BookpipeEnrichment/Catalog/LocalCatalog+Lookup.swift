import BookpipeCore
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
    /// See ``CatalogSearchQuery`` for how the query is built (user text never becomes FTS5
    /// syntax). Matches are ranked with ``MatchScorer`` (title, then author agreement), then by
    /// FTS5's bm25, so the work a person means is among the first even for one-word titles such
    /// as "It". The candidates' scores are left at zero: deciding is the caller's job.
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

    static func candidates(forISBNs isbns: [String], in db: Database) throws -> [String: [Candidate]] {
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

    static func search(title: String, author: String?, limit: Int, in db: Database) throws -> [Candidate] {
        let query = CatalogSearchQuery(title: title, author: author)
        guard !query.steps.isEmpty, limit > 0 else { return [] }
        let match = try db.cachedStatement(sql: """
            SELECT rowid, bm25(search_index, 10.0, 1.0) FROM search_index WHERE search_index MATCH ?
            ORDER BY 2 LIMIT \(rowsPerSearchStep)
            """)
        var ranks: [Int64: Double] = [:]
        for step in query.steps {
            if step.onlyIfNothingFound, !ranks.isEmpty { continue }
            for row in try Row.fetchAll(match, arguments: [step.expression]) {
                let id: Int64 = row[0]
                let rank: Double = row[1]
                ranks[id] = min(ranks[id] ?? rank, rank)
            }
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
            let authors: String = row[3]
            // A lone edition (no work) is indexed under its own key: stored as its edition, never as a work.
            let unit: String = row[0]
            let candidate = Candidate(
                workKey: WorkKey.sanitized(unit), editionKey: (row[1] as String?) ?? (WorkKey.isWork(unit) ? nil : unit),
                title: row[2],
                authors: authors.isEmpty ? [] : authors.split(separator: "\n").map(String.init), year: row[4],
                source: sourceName)
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
