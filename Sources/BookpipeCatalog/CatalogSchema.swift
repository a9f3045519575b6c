import BookpipeEnrichment
import GRDB

/// The local catalogue's versioned schema.
///
/// Rule: a migration is never edited once released; a change is a new migration. Editing a
/// shipped migration leaves existing catalogues (built from a dump that took an hour to import)
/// with a schema the code no longer expects.
///
/// Layout:
/// - `authors`, `works`, `editions`: one row per Open Library record, with the revision and
///   last-modified time that decide whether a re-imported line replaces it.
/// - `edition_isbns`: ISBN-13 → edition (ISBN-10s are stored converted; invalid ones are not).
/// - `work_authors`, `edition_authors`: ordered author links.
/// - `search_documents` + `search_index` (FTS5, external content): what title/author search
///   finds. One *unit* (a work key, or the key of an edition that names no work) owns its
///   documents: the work's title, its editions' other titles, or the titles of editions whose
///   work record is absent. Titles and author names are indexed as comparison keys
///   (``TextFolding/key(_:)``, ``AuthorNormalizer/key(_:)``), so the index and the query fold text
///   identically.
/// - `search_pending`: units whose documents must be rebuilt because a record they depend on
///   changed. Imports fill it and drain it at the end; an interrupted import leaves it for the
///   next one, so the index never silently stays stale.
/// - `removed_keys`: keys a `/type/delete` or `/type/redirect` line removed, with its revision,
///   so an older record of the key imported later does not come back.
/// - `imports`: one row per finished import, with its summary.
/// - `search_titles` (v2): every search document under the core of its title and of its main
///   title (see ``CatalogTitleIndex``), so a title search reads the entries that can agree with a
///   title by B-tree lookups and needs full-text search only when none does.
enum CatalogSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: records, ISBNs, author links, FTS5 search index") { db in
            try db.execute(sql: """
                CREATE TABLE authors (
                    key TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    alternate_names TEXT,            -- names separated by newlines, NULL when none
                    search_key TEXT NOT NULL,        -- author keys of the name and alternate names, indexed with works
                    revision INTEGER NOT NULL,
                    last_modified TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE works (
                    key TEXT PRIMARY KEY NOT NULL,
                    title TEXT NOT NULL,
                    subtitle TEXT,
                    first_publish_year INTEGER,
                    revision INTEGER NOT NULL,
                    last_modified TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE editions (
                    key TEXT PRIMARY KEY NOT NULL,
                    work_key TEXT,                   -- may name a work that is not in the catalogue
                    title TEXT NOT NULL,
                    subtitle TEXT,
                    publish_year INTEGER,
                    page_count INTEGER,
                    publishers TEXT,                 -- separated by newlines, NULL when none
                    revision INTEGER NOT NULL,
                    last_modified TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX editions_work_key ON editions(work_key);
                CREATE TABLE edition_isbns (
                    isbn13 TEXT NOT NULL,
                    edition_key TEXT NOT NULL,
                    PRIMARY KEY (isbn13, edition_key)
                ) WITHOUT ROWID;
                CREATE INDEX edition_isbns_edition_key ON edition_isbns(edition_key);
                CREATE TABLE work_authors (
                    work_key TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    author_key TEXT NOT NULL,
                    PRIMARY KEY (work_key, position)
                ) WITHOUT ROWID;
                CREATE INDEX work_authors_author_key ON work_authors(author_key);
                CREATE TABLE edition_authors (
                    edition_key TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    author_key TEXT NOT NULL,
                    PRIMARY KEY (edition_key, position)
                ) WITHOUT ROWID;
                CREATE INDEX edition_authors_author_key ON edition_authors(author_key);
                CREATE TABLE search_documents (
                    id INTEGER PRIMARY KEY,
                    unit TEXT NOT NULL,              -- work key, or edition key of an edition without work
                    work_key TEXT NOT NULL,          -- the candidate's work key (an edition key when it names none)
                    edition_key TEXT,                -- the edition whose title this is, NULL for the work's own title
                    title TEXT NOT NULL,             -- display title, "Title: Subtitle"
                    authors TEXT NOT NULL,           -- display names separated by newlines
                    year INTEGER,
                    title_key TEXT NOT NULL,         -- indexed
                    authors_key TEXT NOT NULL        -- indexed: author keys and alternate-name keys
                );
                CREATE INDEX search_documents_unit ON search_documents(unit);
                CREATE VIRTUAL TABLE search_index USING fts5(
                    title_key, authors_key,
                    content = 'search_documents', content_rowid = 'id',
                    tokenize = 'unicode61 remove_diacritics 2'
                );
                CREATE TABLE search_pending (
                    unit TEXT PRIMARY KEY NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE removed_keys (          -- /type/delete and /type/redirect seen, so an older
                    key TEXT PRIMARY KEY NOT NULL,   -- record of the key does not come back
                    revision INTEGER NOT NULL,
                    last_modified TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE imports (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    path TEXT NOT NULL,
                    finished_at TEXT NOT NULL,
                    summary TEXT NOT NULL            -- JSON CatalogImportSummary
                );
                """)
        }
        migrator.registerMigration("v2: title index of the search documents") { db in
            try db.execute(sql: """
                CREATE TABLE search_titles (
                    title_core TEXT NOT NULL,        -- title key without leading articles (CatalogTitleIndex)
                    words INTEGER NOT NULL,          -- words of the key it came from
                    document_id INTEGER NOT NULL,    -- search_documents.id
                    title_words INTEGER NOT NULL,    -- words of the whole title's key
                    author_signature INTEGER NOT NULL, -- bits of the authors' words (CatalogTitleIndex)
                    PRIMARY KEY (title_core, words, document_id)
                ) WITHOUT ROWID;
                """)
            // A catalogue built before v2: file every existing document (about 8 s of CPU per million).
            let documents = try Row.fetchCursor(db, sql: "SELECT id, title, authors_key FROM search_documents")
            while let document = try documents.next() {
                try CatalogTitleIndex.insert(documentID: document[0], title: document[1], authorsKey: document[2], in: db)
            }
        }
        return migrator
    }

    /// The secondary indexes a fresh import builds after storing its records — one sort each instead
    /// of a B-tree insert per row — with the SQL of v1 (SQLite stores it without `IF NOT EXISTS`, so
    /// the schema reads the same). A fresh import needs none of them while it stores: it marks no
    /// units through authors, and replacing a record deletes links by their primary keys.
    /// `edition_isbns_edition_key` stays: a removal deletes ISBNs through it.
    static let indexesBuiltAfterFreshImport = [
        "CREATE INDEX IF NOT EXISTS editions_work_key ON editions(work_key)",
        "CREATE INDEX IF NOT EXISTS work_authors_author_key ON work_authors(author_key)",
        "CREATE INDEX IF NOT EXISTS edition_authors_author_key ON edition_authors(author_key)",
    ]

    /// Drops ``indexesBuiltAfterFreshImport`` (at the start of a fresh import, on empty tables).
    static func dropIndexesBuiltAfterFreshImport(_ db: Database) throws {
        try db.execute(sql: """
            DROP INDEX IF EXISTS editions_work_key; DROP INDEX IF EXISTS work_authors_author_key;
            DROP INDEX IF EXISTS edition_authors_author_key
            """)
    }

    /// Creates whichever of ``indexesBuiltAfterFreshImport`` are missing: after a fresh import's
    /// records, and whenever a catalogue is opened or imported into (a fresh import that was
    /// interrupted left them out). Costs a schema lookup when all are there.
    static func createIndexesBuiltAfterFreshImport(_ db: Database) throws {
        let present = try Int.fetchOne(db, sql: """
            SELECT count(*) FROM sqlite_master WHERE type = 'index'
            AND name IN ('editions_work_key', 'work_authors_author_key', 'edition_authors_author_key')
            """) ?? 0
        guard present < indexesBuiltAfterFreshImport.count else { return }
        for sql in indexesBuiltAfterFreshImport { try db.execute(sql: sql) }
    }
}
