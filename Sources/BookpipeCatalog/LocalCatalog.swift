import BookpipeEnrichment
import BookpipeCore
import Foundation
import GRDB

/// A local copy of Open Library's bibliographic records, imported from its dumps into one SQLite
/// file (WAL) and searched with FTS5: the offline metadata source, and a way around rate limits.
///
/// The catalogue is a file of its own, separate from any library, so one big dump (tens of GB)
/// serves every library on the machine.
///
/// ```swift
/// let catalog = try LocalCatalog(path: "catalog.sqlite")
/// let summary = try await catalog.import(dumpFile: "ol_dump_editions_latest.txt.gz")
/// print(summary.editions, summary.skipped)
/// let source = LocalCatalogSource(catalog: catalog)
/// ```
///
/// Rules (GRDB's): this type owns the one writer of the file, and every write is an explicit
/// transaction of a few thousand dump lines, so a process killed at any instant leaves whole
/// batches only, and re-importing the same dump continues where it stopped.
public final class LocalCatalog: Sendable {
    /// The catalogue file's path.
    public let path: String
    let pool: DatabasePool

    /// Opens (or creates) a catalogue and brings its schema up to date.
    ///
    /// - Parameter path: The SQLite file; created when missing.
    /// - Throws: ``CatalogError/cannotOpen(path:reason:)`` when the file cannot be opened or is not
    ///   a catalogue, ``CatalogError/fullTextSearchUnavailable(path:)`` when SQLite lacks FTS5,
    ///   ``CatalogError/migrationFailed(path:reason:)`` when the schema cannot be updated.
    public init(path: String) throws(CatalogError) {
        self.path = path
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // One reader per core: a search is CPU work, and each connection keeps its own page cache,
        // so fewer connections hit their caches more often (GRDB's default is five).
        configuration.maximumReaderCount = max(2, ProcessInfo.processInfo.activeProcessorCount)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw .cannotOpen(path: path, reason: Self.reason(error))
        }
        do {
            let hasFTS5 = try pool.read { db in
                try Bool.fetchOne(db, sql: "SELECT sqlite_compileoption_used('ENABLE_FTS5')") ?? false
            }
            guard hasFTS5 else { throw CatalogError.fullTextSearchUnavailable(path: path) }
        } catch let error as CatalogError {
            throw error
        } catch {
            throw .cannotOpen(path: path, reason: Self.reason(error))
        }
        do {
            try CatalogSchema.migrator.migrate(pool)
            try pool.write { db in try CatalogSchema.createIndexesBuiltAfterFreshImport(db) }
        } catch {
            throw .migrationFailed(path: path, reason: Self.reason(error))
        }
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }

    /// How many records, ISBNs and search entries the catalogue holds.
    /// - Throws: ``CatalogError/readFailed(path:what:reason:)``.
    public func counts() throws(CatalogError) -> CatalogCounts {
        try read("the counts") { db in
            func count(_ table: String) throws -> Int {
                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
            }
            return CatalogCounts(
                editions: try count("editions"), works: try count("works"), authors: try count("authors"),
                isbn13s: try count("edition_isbns"), searchDocuments: try count("search_documents"),
                pendingSearchUnits: try count("search_pending"), imports: try count("imports"),
                lastImportAt: try String.fetchOne(db, sql: "SELECT finished_at FROM imports ORDER BY id DESC LIMIT 1"))
        }
    }

    /// Runs a write transaction, mapping database errors to ``CatalogError``.
    func write<T>(_ what: String, _ body: (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.write(body)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw .writeFailed(path: path, what: what, reason: Self.reason(error))
        }
    }

    /// Runs a read, mapping database errors to ``CatalogError``.
    func read<T>(_ what: String, _ body: (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.read(body)
        } catch let error as CatalogError {
            throw error
        } catch {
            throw .readFailed(path: path, what: what, reason: Self.reason(error))
        }
    }
}

/// What a catalogue holds.
public struct CatalogCounts: Sendable, Hashable, Codable {
    /// Edition records.
    public var editions: Int
    /// Work records.
    public var works: Int
    /// Author records.
    public var authors: Int
    /// ISBN-13 → edition entries.
    public var isbn13s: Int
    /// Title/author search entries (works, other edition titles, editions without a work record).
    public var searchDocuments: Int
    /// Works and editions whose search entries wait to be rebuilt (non-zero only after an
    /// interrupted import; the next import rebuilds them).
    public var pendingSearchUnits: Int
    /// Finished imports.
    public var imports: Int
    /// When the last import finished (ISO 8601), if any.
    public var lastImportAt: String?

    /// Creates counts.
    public init(editions: Int, works: Int, authors: Int, isbn13s: Int, searchDocuments: Int,
                pendingSearchUnits: Int, imports: Int, lastImportAt: String?) {
        self.editions = editions
        self.works = works
        self.authors = authors
        self.isbn13s = isbn13s
        self.searchDocuments = searchDocuments
        self.pendingSearchUnits = pendingSearchUnits
        self.imports = imports
        self.lastImportAt = lastImportAt
    }
}
