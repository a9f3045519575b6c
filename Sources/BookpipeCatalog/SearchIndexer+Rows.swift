import GRDB

/// Where ``SearchIndexer`` reads what one unit's documents are made of.
protocol UnitRows {
    /// The unit's stored documents (the ones its rebuild replaces).
    func oldDocuments(of unit: String) throws -> [SearchIndexer.OldDocument]
    /// The work record of the unit, if there is one.
    func work(_ unit: String) throws -> SearchIndexer.WorkRow?
    /// The editions naming the unit as their work, in key order, at most
    /// ``SearchIndexer/maximumEditionsReadPerWork``.
    func editions(ofWork unit: String) throws -> [SearchIndexer.EditionRow]
    /// The edition whose key is the unit, when it names no work.
    func editionWithoutWork(_ unit: String) throws -> SearchIndexer.EditionRow?
    /// The authors of a work, in their order.
    func workAuthors(_ workKey: String) throws -> [SearchIndexer.AuthorName]
    /// The authors of an edition, in their order.
    func editionAuthors(_ editionKey: String) throws -> [SearchIndexer.AuthorName]
}

extension SearchIndexer {
    /// Reads a unit's rows with one query per table and key (any number of units, sparse or dense).
    struct QueriedRows: UnitRows {
        let indexer: SearchIndexer

        func oldDocuments(of unit: String) throws -> [OldDocument] { try indexer.oldDocuments(of: unit) }

        func work(_ unit: String) throws -> WorkRow? {
            try indexer.rows("SELECT title, subtitle, first_publish_year FROM works WHERE key = ?", key: unit) { row in
                WorkRow(title: row[0], subtitle: row[1], year: row[2])
            }.first
        }

        func editions(ofWork unit: String) throws -> [EditionRow] {
            try indexer.rows("""
                SELECT key, title, subtitle, publish_year FROM editions WHERE work_key = ? ORDER BY key
                LIMIT \(SearchIndexer.maximumEditionsReadPerWork)
                """, key: unit) { EditionRow($0) }
        }

        func editionWithoutWork(_ unit: String) throws -> EditionRow? {
            try indexer.rows("SELECT key, title, subtitle, publish_year FROM editions WHERE key = ? AND work_key IS NULL",
                             key: unit) { EditionRow($0) }.first
        }

        func workAuthors(_ workKey: String) throws -> [AuthorName] {
            try indexer.authorNames(sql: SearchIndexer.workAuthorsSQL, key: workKey)
        }

        func editionAuthors(_ editionKey: String) throws -> [AuthorName] {
            try indexer.authorNames(sql: SearchIndexer.editionAuthorsSQL, key: editionKey)
        }
    }

    /// The rows of every unit whose key lies between `first` and `last` (inclusive), read with one
    /// query per table over the key range: works and their author links by work key, editions by
    /// their work key (the `editions_work_key` index, in key order), editions without a work and
    /// stored documents by key. Rows of keys in the range that are not in the batch are read and
    /// not used, so this pays only when the batch's keys are dense in the range.
    struct BatchRows: UnitRows {
        private var old: [String: [OldDocument]] = [:]
        private var works: [String: WorkRow] = [:]
        private var editionsByWork: [String: [EditionRow]] = [:]
        private var editionsWithoutWork: [String: EditionRow] = [:]
        private var authorsOfWorks: [String: [AuthorName]] = [:]
        private var authorsOfEditions: [String: [AuthorName]] = [:]

        init(first: String, last: String, db: Database) throws {
            let range: StatementArguments = [first, last]
            func each(_ sql: String, _ body: (Row) -> Void) throws {
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: range)
                while let row = try cursor.next() { body(row) }
            }
            try each("SELECT unit, id, title_key, authors_key, title FROM search_documents WHERE unit BETWEEN ? AND ?") { row in
                old[row[0], default: []].append(OldDocument(
                    id: row[1], titleKey: row[2], authorsKey: row[3], titlePlaces: CatalogTitleIndex.entries(forTitle: row[4])))
            }
            try each("SELECT key, title, subtitle, first_publish_year FROM works WHERE key BETWEEN ? AND ?") { row in
                works[row[0]] = WorkRow(title: row[1], subtitle: row[2], year: row[3])
            }
            try each("""
                SELECT work_key, key, title, subtitle, publish_year FROM editions WHERE work_key BETWEEN ? AND ?
                ORDER BY work_key, key
                """) { row in
                let workKey: String = row[0]
                guard editionsByWork[workKey]?.count ?? 0 < SearchIndexer.maximumEditionsReadPerWork else { return }
                editionsByWork[workKey, default: []].append(EditionRow(row, from: 1))
            }
            try each("""
                SELECT key, title, subtitle, publish_year FROM editions WHERE key BETWEEN ? AND ? AND work_key IS NULL
                """) { row in
                let edition = EditionRow(row)
                editionsWithoutWork[edition.key] = edition
            }
            try each("""
                SELECT l.work_key, a.name, a.search_key FROM work_authors AS l JOIN authors AS a ON a.key = l.author_key
                WHERE l.work_key BETWEEN ? AND ? ORDER BY l.work_key, l.position
                """) { row in
                authorsOfWorks[row[0], default: []].append(AuthorName(name: row[1], searchKey: row[2]))
            }
            for editions in ["e.work_key BETWEEN ? AND ?", "e.key BETWEEN ? AND ? AND e.work_key IS NULL"] {
                try each("""
                    SELECT l.edition_key, a.name, a.search_key FROM editions AS e
                    JOIN edition_authors AS l ON l.edition_key = e.key JOIN authors AS a ON a.key = l.author_key
                    WHERE \(editions) ORDER BY l.edition_key, l.position
                    """) { row in
                    authorsOfEditions[row[0], default: []].append(AuthorName(name: row[1], searchKey: row[2]))
                }
            }
        }

        func oldDocuments(of unit: String) -> [OldDocument] { old[unit] ?? [] }
        func work(_ unit: String) -> WorkRow? { works[unit] }
        func editions(ofWork unit: String) -> [EditionRow] { editionsByWork[unit] ?? [] }
        func editionWithoutWork(_ unit: String) -> EditionRow? { editionsWithoutWork[unit] }
        func workAuthors(_ workKey: String) -> [AuthorName] { authorsOfWorks[workKey] ?? [] }
        func editionAuthors(_ editionKey: String) -> [AuthorName] { authorsOfEditions[editionKey] ?? [] }
    }
}
