import BookpipeEnrichment
import BookpipeCore
import GRDB

/// Rebuilds the search entries of one *unit*: a work key (the work's own title, its editions'
/// other titles, or, when the work record is absent, the titles of the editions that name it),
/// or the key of an edition that names no work.
///
/// Entries index comparison keys (``TextFolding/key(_:)`` for titles, ``AuthorNormalizer/key(_:)``
/// for names and alternate names), so `Philosopher's`, `Philosophers` and `PHILOSOPHER’S`, or
/// `Långstrump` and `Langstrump`, are the same word to the index and to the query.
struct SearchIndexer {
    /// At most this many distinct edition titles are indexed per work besides its own title
    /// (a few works have thousands of editions; their common titles come first by key order).
    static let maximumEditionTitlesPerWork = 50
    /// At most this many editions of one work are read to find those titles.
    static let maximumEditionsReadPerWork = 5_000

    let db: Database

    init(db: Database) {
        self.db = db
    }

    /// An author as the index needs it: the display name, and the comparison keys of the name
    /// and its alternate names (computed once per author record, at import).
    struct AuthorName {
        var name: String
        var searchKey: String
    }

    /// The comparison keys (``AuthorNormalizer/key(_:)``) of a name and its alternate names,
    /// without duplicates, separated by ` ; `.
    static func searchKey(name: String, alternateNames: [String]) -> String {
        var keys: [String] = []
        for name in [name] + alternateNames {
            let key = AuthorNormalizer.key(name)
            if !key.isEmpty, !keys.contains(key) { keys.append(key) }
        }
        return keys.joined(separator: " ; ")
    }

    private struct EditionRow {
        var key: String
        var title: String
        var subtitle: String?
        var year: Int?

        init(_ row: Row) {
            key = row[0]
            title = row[1]
            subtitle = row[2]
            year = row[3]
        }

        var displayTitle: String { LocalCatalog.displayTitle(title, subtitle: subtitle) }
    }

    func rebuild(unit: String) throws {
        try removeDocuments(of: unit)

        let work = try rows("SELECT title, subtitle, first_publish_year FROM works WHERE key = ?", key: unit) { row in
            (title: row[0] as String, subtitle: row[1] as String?, year: row[2] as Int?)
        }.first
        let editions = try rows("""
            SELECT key, title, subtitle, publish_year FROM editions WHERE work_key = ? ORDER BY key LIMIT \(Self.maximumEditionsReadPerWork)
            """, key: unit, EditionRow.init)

        if let (title, subtitle, year) = work {
            let display = LocalCatalog.displayTitle(title, subtitle: subtitle)
            var authors = try authorNames(sql: Self.workAuthorsSQL, key: unit)
            if authors.isEmpty {
                for edition in editions.prefix(20) {
                    authors = try authorNames(sql: Self.editionAuthorsSQL, key: edition.key)
                    if !authors.isEmpty { break }
                }
            }
            try insert(unit: unit, workKey: unit, editionKey: nil, title: display, authors: authors,
                       year: year ?? editions.compactMap(\.year).min())
            var seen: Set<String> = [TextFolding.key(display), TextFolding.key(title)]
            var added = 0
            for edition in editions where added < Self.maximumEditionTitlesPerWork {
                let editionTitle = edition.displayTitle
                guard seen.insert(TextFolding.key(editionTitle)).inserted else { continue }
                let editionAuthors = try authorNames(sql: Self.editionAuthorsSQL, key: edition.key)
                try insert(unit: unit, workKey: unit, editionKey: edition.key, title: editionTitle,
                           authors: editionAuthors.isEmpty ? authors : editionAuthors, year: year ?? edition.year)
                added += 1
            }
        } else if !editions.isEmpty {
            // The work record is absent: the editions that name it stand in for it, one entry per
            // distinct title, with the earliest year of the editions under that title.
            var order: [String] = []
            var byTitle: [String: (edition: EditionRow, year: Int?)] = [:]
            for edition in editions {
                let key = TextFolding.key(edition.displayTitle)
                if var entry = byTitle[key] {
                    if let year = edition.year, entry.year.map({ year < $0 }) ?? true { entry.year = year }
                    byTitle[key] = entry
                } else if order.count < Self.maximumEditionTitlesPerWork {
                    order.append(key)
                    byTitle[key] = (edition, edition.year)
                }
            }
            for key in order {
                guard let (edition, year) = byTitle[key] else { continue }
                try insert(unit: unit, workKey: unit, editionKey: edition.key, title: edition.displayTitle,
                           authors: try authorNames(sql: Self.editionAuthorsSQL, key: edition.key), year: year)
            }
        }

        if let lone = try rows("SELECT key, title, subtitle, publish_year FROM editions WHERE key = ? AND work_key IS NULL",
                               key: unit, EditionRow.init).first {
            try insert(unit: unit, workKey: lone.key, editionKey: lone.key, title: lone.displayTitle,
                       authors: try authorNames(sql: Self.editionAuthorsSQL, key: lone.key), year: lone.year)
        }
    }

    static let workAuthorsSQL = """
        SELECT a.name, a.search_key FROM work_authors AS l JOIN authors AS a ON a.key = l.author_key
        WHERE l.work_key = ? ORDER BY l.position
        """
    static let editionAuthorsSQL = """
        SELECT a.name, a.search_key FROM edition_authors AS l JOIN authors AS a ON a.key = l.author_key
        WHERE l.edition_key = ? ORDER BY l.position
        """

    func authorNames(sql: String, key: String) throws -> [AuthorName] {
        try rows(sql, key: key) { row in AuthorName(name: row[0], searchKey: row[1]) }
    }

    /// The rows of a query by one key, each read as it comes from the cursor: GRDB's `fetchAll` and
    /// `fetchOne` copy every `Row` first, and a rebuild runs four or more such queries per unit.
    private func rows<Value>(_ sql: String, key: String, _ read: (Row) -> Value) throws -> [Value] {
        var values: [Value] = []
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [key])
        while let row = try cursor.next() { values.append(read(row)) }
        return values
    }

    private func removeDocuments(of unit: String) throws {
        let old = try rows("SELECT id, title_key, authors_key, title FROM search_documents WHERE unit = ?", key: unit) { row in
            (id: row[0] as Int64, titleKey: row[1] as String, authorsKey: row[2] as String, title: row[3] as String)
        }
        guard !old.isEmpty else { return }
        let delete = try db.cachedStatement(sql: """
            INSERT INTO search_index (search_index, rowid, title_key, authors_key) VALUES ('delete', ?, ?, ?)
            """)
        for document in old {
            try delete.execute(arguments: [document.id, document.titleKey, document.authorsKey])
        }
        try db.cachedStatement(sql: "DELETE FROM search_documents WHERE unit = ?").execute(arguments: [unit])
        for document in old { try CatalogTitleIndex.delete(documentID: document.id, title: document.title, in: db) }
    }

    private func insert(unit: String, workKey: String, editionKey: String?, title: String, authors: [AuthorName],
                        year: Int?) throws {
        let titleKey = TextFolding.key(title)
        guard !titleKey.isEmpty else { return }
        let authorsKey = authors.map(\.searchKey).filter { !$0.isEmpty }.joined(separator: " ; ")
        try db.cachedStatement(sql: """
            INSERT INTO search_documents (unit, work_key, edition_key, title, authors, year, title_key, authors_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [unit, workKey, editionKey, title, authors.map(\.name).joined(separator: "\n"),
                                     year, titleKey, authorsKey])
        let id = db.lastInsertedRowID
        try db.cachedStatement(sql: "INSERT INTO search_index (rowid, title_key, authors_key) VALUES (?, ?, ?)")
            .execute(arguments: [id, titleKey, authorsKey])
        try CatalogTitleIndex.insert(documentID: id, title: title, authorsKey: authorsKey, in: db)
    }
}

extension LocalCatalog {
    /// `"Title: Subtitle"`, or the title alone.
    static func displayTitle(_ title: String, subtitle: String?) -> String {
        guard let subtitle, !subtitle.isEmpty else { return title }
        return "\(title): \(subtitle)"
    }
}
