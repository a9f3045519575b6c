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

    struct EditionRow {
        var key: String
        var title: String
        var subtitle: String?
        var year: Int?

        init(_ row: Row, from column: Int = 0) {
            key = row[column]
            title = row[column + 1]
            subtitle = row[column + 2]
            year = row[column + 3]
        }

        var displayTitle: String { LocalCatalog.displayTitle(title, subtitle: subtitle) }
    }

    /// A work's own fields as its documents need them.
    struct WorkRow {
        var title: String
        var subtitle: String?
        var year: Int?
    }

    /// A search document as the writer inserts it: every key and title-index place computed.
    struct Document: Sendable {
        var workKey: String
        var editionKey: String?
        var title: String
        var authors: String
        var year: Int?
        var titleKey: String
        var authorsKey: String
        var titlePlaces: [CatalogTitleIndex.Entry]
        var authorSignature: Int64
    }

    /// A stored document the rebuild replaces, with what removing it from the indexes needs.
    struct OldDocument: Sendable {
        var id: Int64
        var titleKey: String
        var authorsKey: String
        var titlePlaces: [CatalogTitleIndex.Entry]
    }

    /// One unit's rebuild, read and computed, waiting for the writer.
    struct UnitDocuments: Sendable {
        var unit: String
        var old: [OldDocument]
        var new: [Document]
    }

    /// Reads what the unit's documents are made of and computes them (any connection: this only
    /// reads, so it can run on a reader while the writer stores the previous units).
    func documents(of unit: String) throws -> UnitDocuments {
        try documents(of: unit, from: QueriedRows(indexer: self))
    }

    /// The documents of a batch of units (in the order given, ascending keys): when the keys are dense
    /// in their range (a fresh import marks every work and edition), each table is read once by key
    /// range (``BatchRows``) instead of five or more lookups per unit; otherwise unit by unit.
    func documents(ofBatch units: [String]) throws -> [UnitDocuments] {
        guard let first = units.first, let last = units.last else { return [] }
        let rowsInRange = try Int.fetchOne(db, sql: """
            SELECT (SELECT count(*) FROM works WHERE key BETWEEN ?1 AND ?2)
                + (SELECT count(*) FROM editions WHERE key BETWEEN ?1 AND ?2)
            """, arguments: [first, last]) ?? 0
        guard rowsInRange <= 2 * units.count + 100 else { return try units.map { try documents(of: $0) } }
        let rows = try BatchRows(first: first, last: last, db: db)
        return try units.map { try documents(of: $0, from: rows) }
    }

    func documents(of unit: String, from source: some UnitRows) throws -> UnitDocuments {
        var result = UnitDocuments(unit: unit, old: try source.oldDocuments(of: unit), new: [])
        func add(workKey: String, editionKey: String?, title: String, authors: [AuthorName], year: Int?) {
            let titleKey = TextFolding.key(title)
            guard !titleKey.isEmpty else { return }
            let authorsKey = authors.map(\.searchKey).filter { !$0.isEmpty }.joined(separator: " ; ")
            result.new.append(Document(
                workKey: workKey, editionKey: editionKey, title: title, authors: authors.map(\.name).joined(separator: "\n"),
                year: year, titleKey: titleKey, authorsKey: authorsKey,
                titlePlaces: CatalogTitleIndex.entries(forTitle: title),
                authorSignature: CatalogTitleIndex.authorSignature([authorsKey])))
        }

        let work = try source.work(unit)
        let editions = try source.editions(ofWork: unit)

        if let work {
            let (title, year) = (work.title, work.year)
            let display = LocalCatalog.displayTitle(title, subtitle: work.subtitle)
            var authors = try source.workAuthors(unit)
            if authors.isEmpty {
                for edition in editions.prefix(20) {
                    authors = try source.editionAuthors(edition.key)
                    if !authors.isEmpty { break }
                }
            }
            add(workKey: unit, editionKey: nil, title: display, authors: authors,
                year: year ?? editions.compactMap(\.year).min())
            var seen: Set<String> = [TextFolding.key(display), TextFolding.key(title)]
            var added = 0
            for edition in editions where added < Self.maximumEditionTitlesPerWork {
                let editionTitle = edition.displayTitle
                guard seen.insert(TextFolding.key(editionTitle)).inserted else { continue }
                let editionAuthors = try source.editionAuthors(edition.key)
                add(workKey: unit, editionKey: edition.key, title: editionTitle,
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
                add(workKey: unit, editionKey: edition.key, title: edition.displayTitle,
                    authors: try source.editionAuthors(edition.key), year: year)
            }
        }

        if let lone = try source.editionWithoutWork(unit) {
            add(workKey: lone.key, editionKey: lone.key, title: lone.displayTitle,
                authors: try source.editionAuthors(lone.key), year: lone.year)
        }
        return result
    }

    /// Rebuilds the unit's documents on this (writer) connection.
    func rebuild(unit: String) throws {
        try SearchDocumentWriter(db: db).replace(documents(of: unit))
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
    func rows<Value>(_ sql: String, key: String, _ read: (Row) -> Value) throws -> [Value] {
        var values: [Value] = []
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [key])
        while let row = try cursor.next() { values.append(read(row)) }
        return values
    }

    func oldDocuments(of unit: String) throws -> [OldDocument] {
        try rows("SELECT id, title_key, authors_key, title FROM search_documents WHERE unit = ?", key: unit) { row in
            OldDocument(id: row[0], titleKey: row[1], authorsKey: row[2],
                        titlePlaces: CatalogTitleIndex.entries(forTitle: row[3]))
        }
    }
}

/// Writes rebuilt search documents (inside the caller's transaction): takes a unit's old documents
/// out of the table, the full-text index and the title index, inserts the new ones in all three,
/// and clears the unit's pending mark. Its title-index rows are the ones
/// ``CatalogTitleIndex/insert(documentID:title:authorsKey:in:)`` files, computed by the reader.
struct SearchDocumentWriter {
    let db: Database
    private let deleteFromFullText, deleteDocuments, deleteTitlePlace: Statement
    private let insertDocument, insertFullText, insertTitlePlace, clearPending: Statement

    init(db: Database) throws {
        self.db = db
        deleteFromFullText = try db.cachedStatement(sql: """
            INSERT INTO search_index (search_index, rowid, title_key, authors_key) VALUES ('delete', ?, ?, ?)
            """)
        deleteDocuments = try db.cachedStatement(sql: "DELETE FROM search_documents WHERE unit = ?")
        deleteTitlePlace = try db.cachedStatement(sql: "DELETE FROM search_titles WHERE title_core = ? AND words = ? AND document_id = ?")
        insertDocument = try db.cachedStatement(sql: """
            INSERT INTO search_documents (unit, work_key, edition_key, title, authors, year, title_key, authors_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insertFullText = try db.cachedStatement(sql: "INSERT INTO search_index (rowid, title_key, authors_key) VALUES (?, ?, ?)")
        insertTitlePlace = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO search_titles (title_core, words, document_id, title_words, author_signature)
            VALUES (?, ?, ?, ?, ?)
            """)
        clearPending = try db.cachedStatement(sql: "DELETE FROM search_pending WHERE unit = ?")
    }

    func replace(_ unit: SearchIndexer.UnitDocuments) throws {
        if !unit.old.isEmpty {
            for document in unit.old {
                try deleteFromFullText.execute(arguments: [document.id, document.titleKey, document.authorsKey])
            }
            try deleteDocuments.execute(arguments: [unit.unit])
            for document in unit.old {
                for place in document.titlePlaces {
                    try deleteTitlePlace.execute(arguments: [place.core, place.words, document.id])
                }
            }
        }
        for document in unit.new {
            try insertDocument.execute(arguments: [unit.unit, document.workKey, document.editionKey, document.title,
                                                   document.authors, document.year, document.titleKey, document.authorsKey])
            let id = db.lastInsertedRowID
            try insertFullText.execute(arguments: [id, document.titleKey, document.authorsKey])
            for place in document.titlePlaces {
                try insertTitlePlace.execute(arguments: [place.core, place.words, id, place.titleWords, document.authorSignature])
            }
        }
        try clearPending.execute(arguments: [unit.unit])
    }
}

extension LocalCatalog {
    /// `"Title: Subtitle"`, or the title alone.
    static func displayTitle(_ title: String, subtitle: String?) -> String {
        guard let subtitle, !subtitle.isEmpty else { return title }
        return "\(title): \(subtitle)"
    }
}
