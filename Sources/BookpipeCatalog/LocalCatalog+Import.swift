import BookpipeEnrichment
import BookpipeCore
import BookpipePipeline
import Foundation
import GRDB
import Synchronization

extension LocalCatalog {
    /// Dump lines per write transaction: large enough to amortise the commit, small enough that
    /// an interrupted import loses seconds of work, not minutes.
    public static let linesPerTransaction = 5_000
    /// The writer's page cache during an import, in KiB (readers keep 32 MiB).
    static let importCacheKiB = 131_072
    /// Works and editions whose search entries are rebuilt in one transaction.
    static let searchUnitsPerTransaction = 5_000

    /// Imports an Open Library dump (`.txt`, or gzip-compressed `.txt.gz`) into the catalogue.
    ///
    /// Reads `/type/edition`, `/type/work` and `/type/author` lines (other types are counted and
    /// ignored; `/type/delete` and `/type/redirect` remove the key), in any order and any mix, so
    /// the separate editions, works and authors dumps can be imported one after the other.
    ///
    /// - **Streaming**: the file is read in chunks, and lines are stored in transactions of
    ///   ``linesPerTransaction`` lines; memory does not grow with the file.
    /// - **Idempotent**: a record replaces the stored one only when its revision is newer (or the
    ///   same revision was modified later); re-importing a file changes nothing.
    /// - **Tolerant**: a malformed line is skipped and reported with its line number in
    ///   ``CatalogImportSummary/problems``; the rest imports.
    /// - After the lines, the search entries of every work and edition that changed are rebuilt
    ///   (also those an earlier, interrupted import left pending).
    ///
    /// ```swift
    /// let summary = try await catalog.import(dumpFile: "ol_dump_2026-01-31.txt.gz") { progress in
    ///     print(progress.lines)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - path: The dump file.
    ///   - progress: Called after every transaction (reading) and every batch of rebuilt search
    ///     entries (indexing), from the task that writes.
    /// - Returns: What was read, stored, skipped and why.
    /// - Throws: ``CatalogError/dumpNotFound(path:)``, ``CatalogError/dumpUnreadable(path:reason:)``,
    ///   ``CatalogError/notADump(path:reason:)`` when the first lines are not dump lines (nothing is
    ///   stored then), ``CatalogError/writeFailed(path:what:reason:)``; and
    ///   ``CatalogError/interrupted(dump:linesCommitted:)`` when the calling task is cancelled: the
    ///   import stops after the current transaction, keeps what was committed, and importing the
    ///   same file again finishes the job.
    public func `import`(
        dumpFile path: String, progress: @escaping @Sendable (CatalogImportProgress) -> Void = { _ in }
    ) async throws(CatalogError) -> CatalogImportSummary {
        let reader = try DumpLineReader(path: path)
        let (hasRemovedKeys, isEmpty) = try read("removed keys") { db in
            let hasRemovedKeys = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM removed_keys)") ?? false
            let isEmpty = try Bool.fetchOne(db, sql: """
                SELECT NOT EXISTS (SELECT 1 FROM authors) AND NOT EXISTS (SELECT 1 FROM works)
                    AND NOT EXISTS (SELECT 1 FROM editions) AND NOT EXISTS (SELECT 1 FROM search_pending)
                    AND NOT EXISTS (SELECT 1 FROM search_documents)
                """) ?? false
            return (hasRemovedKeys, isEmpty && !hasRemovedKeys)
        }
        try write("the indexes") { db in
            if isEmpty {
                try CatalogSchema.dropIndexesBuiltAfterFreshImport(db)
            } else {
                try CatalogSchema.createIndexesBuiltAfterFreshImport(db)
            }
        }
        let writer = WriteCatalogChunks(catalog: self, file: path, isCompressed: reader.isCompressed,
                                        fileSize: reader.fileSize, hasRemovedKeys: hasRemovedKeys, isFresh: isEmpty,
                                        progress: progress)
        // The catalogue's own pipeline on the same engine as imports: the reader, a parser that
        // decodes the JSON of one chunk while the writer stores the previous one (a second core),
        // and the writer. One chunk waits between steps, so memory stays at a few chunks.
        let source = ReadDumpLines(reader: reader)
        let pipeline = Pipeline("catalog-import") {
            source
            ParseDumpLines()
            writer
        }
        // Bulk settings on the writer while the import runs: a larger page cache for the B-trees that
        // grow in key order, and checkpoints every 64 MiB of WAL instead of every 4 MiB (a page
        // changed many times is copied once). Both are bounded; both are restored afterwards.
        useBulkWriteSettings(true)
        defer { useBulkWriteSettings(false) }
        let result = await PipelineRunner(channelCapacity: 1).execute(pipeline, context: StageContext(pipelineName: "catalog-import"))
        switch result.outcome {
        case .finished:
            return writer.summary
        case .cancelled:
            throw .interrupted(dump: path, linesCommitted: writer.linesCommitted)
        case .failed:
            var error = result.error
            if case .stepFailed(_, _, let underlying)? = error as? PipelineError { error = underlying }
            if let error = error as? CatalogError {
                if case .interrupted = error { throw .interrupted(dump: path, linesCommitted: writer.linesCommitted) }
                throw error
            }
            throw .writeFailed(path: self.path, what: path, reason: "\(error.map { "\($0)" } ?? "the import failed")")
        }
    }

    /// Switches the writer's bulk settings on or off (see ``import(dumpFile:progress:)``); a failure
    /// only costs speed.
    private func useBulkWriteSettings(_ on: Bool) {
        let sql = on ? "PRAGMA cache_size = -\(Self.importCacheKiB); PRAGMA wal_autocheckpoint = 16384"
            : "PRAGMA cache_size = -32768; PRAGMA wal_autocheckpoint = 1000"
        try? pool.writeWithoutTransaction { db in try db.execute(sql: sql) }
    }

    /// Rebuilds the search entries of every work and edition marked as changed.
    ///
    /// Imports call this at their end; call it yourself only to finish an interrupted import
    /// without re-reading its dump.
    ///
    /// - Parameters:
    ///   - file: The dump named in progress reports.
    ///   - progress: Called after every batch.
    /// - Returns: How many works and editions had their entries rebuilt.
    /// - Throws: ``CatalogError/writeFailed(path:what:reason:)``;
    ///   ``CatalogError/interrupted(dump:linesCommitted:)`` when the calling task is cancelled
    ///   (the remaining entries stay pending).
    @discardableResult
    public func rebuildPendingSearchEntries(
        file: String = "", progress: (CatalogImportProgress) -> Void = { _ in }
    ) throws(CatalogError) -> Int {
        // The rebuild reads editions by work; a fresh import builds that index after its records.
        try write("the indexes") { db in try CatalogSchema.createIndexesBuiltAfterFreshImport(db) }
        let pending = try read("pending search entries") { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM search_pending") ?? 0
        }
        // Two cores: a reader connection reads and computes the documents of the next batch of units
        // while the writer stores the current one. Units go in key order, a batch at a time after
        // the last unit of the previous one; the writer touches only the documents and pending marks
        // of the units in hand, so what the reader reads of the next ones is what the writer would.
        let prepareBatch: @Sendable (String) throws(CatalogError) -> [SearchIndexer.UnitDocuments] = { after throws(CatalogError) in
            try self.read("pending search entries") { db in
                let units = try String.fetchAll(db, sql: "SELECT unit FROM search_pending WHERE unit > ? ORDER BY unit LIMIT ?",
                                                arguments: [after, Self.searchUnitsPerTransaction])
                return try SearchIndexer(db: db).documents(ofBatch: units)
            }
        }
        var rebuilt = 0
        var batch = try prepareBatch("")
        while let last = batch.last?.unit {
            let next = BackgroundResult { () throws(CatalogError) in try prepareBatch(last) }
            let written: Result<Void, CatalogError> = Result { () throws(CatalogError) in
                try write("search entries") { db in
                    let writer = try SearchDocumentWriter(db: db)
                    for unit in batch { try writer.replace(unit) }
                }
            }
            let prepared = next.wait()
            try written.get()
            rebuilt += batch.count
            progress(CatalogImportProgress(
                file: file, phase: .indexing, lines: 0, bytesRead: 0, totalBytes: nil,
                searchUnitsRebuilt: rebuilt, searchUnitsPending: max(pending - rebuilt, 0)))
            if Task.isCancelled { throw .interrupted(dump: file, linesCommitted: 0) }
            batch = try prepared.get()
        }
        return rebuilt
    }
}

/// Runs a throwing job on a background thread; ``wait()`` blocks until its result is there.
private final class BackgroundResult<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, CatalogError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ job: @escaping @Sendable () throws(CatalogError) -> Value) {
        DispatchQueue.global().async { [self] in
            let value = Result { () throws(CatalogError) in try job() }
            result.withLock { $0 = value }
            done.signal()
        }
    }

    func wait() -> Result<Value, CatalogError> {
        done.wait()
        return result.withLock { $0 } ?? .failure(.interrupted(dump: "", linesCommitted: 0))
    }
}

/// What one import read, stored and skipped.
public struct CatalogImportSummary: Sendable, Hashable, Codable {
    /// The dump's path as given.
    public var file: String
    /// True when the dump was gzip-compressed.
    public var isCompressed: Bool
    /// Lines read (every physical line, including skipped and blank ones).
    public var lines = 0
    /// Valid `/type/edition` lines.
    public var editions = 0
    /// Valid `/type/work` lines.
    public var works = 0
    /// Valid `/type/author` lines.
    public var authors = 0
    /// `/type/delete` and `/type/redirect` lines.
    public var removals = 0
    /// Lines of other record types (ignored).
    public var otherTypes = 0
    /// Records stored: new keys, newer revisions, and removals applied.
    public var changed = 0
    /// Records already stored at the same or a newer revision (a re-import changes nothing).
    public var unchanged = 0
    /// Lines skipped because they could not be used.
    public var skipped = 0
    /// Skipped lines per reason.
    public var skippedByReason: [CatalogSkipReason: Int] = [:]
    /// The first ``maximumProblemsKept`` skipped lines, with their line numbers.
    public var problems: [CatalogLineProblem] = []
    /// ISBNs on editions that failed validation (not stored; the edition is).
    public var invalidISBNs = 0
    /// Works and editions whose search entries were rebuilt.
    public var searchUnitsRebuilt = 0
    /// Wall-clock time of the import.
    public var duration: Duration = .zero

    /// How many problems a summary lists one by one (the counts cover all).
    public static let maximumProblemsKept = 100

    /// Creates an empty summary.
    public init(file: String, isCompressed: Bool = false) {
        self.file = file
        self.isCompressed = isCompressed
    }
}

/// A skipped dump line: where, and why.
public struct CatalogLineProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The dump's path.
    public var file: String
    /// 1-based line number.
    public var line: Int
    /// The kind of problem.
    public var reason: CatalogSkipReason
    /// What exactly is wrong, for people.
    public var detail: String

    /// Creates a problem.
    public init(file: String, line: Int, reason: CatalogSkipReason, detail: String) {
        self.file = file
        self.line = line
        self.reason = reason
        self.detail = detail
    }

    /// `file:line: detail; line skipped`.
    public var description: String { "\(file):\(line): \(detail); line skipped" }
}

extension CatalogSkipReason: CodingKeyRepresentable {}

/// Where an import is.
public struct CatalogImportProgress: Sendable, Hashable {
    /// What the import is doing.
    public enum Phase: String, Sendable, Hashable {
        /// Reading and storing lines.
        case reading
        /// Rebuilding the search entries of what changed.
        case indexing
    }

    /// The dump's path.
    public var file: String
    /// The phase.
    public var phase: Phase
    /// Lines read so far (reading).
    public var lines: Int
    /// Bytes read so far (decompressed bytes for gzip files).
    public var bytesRead: Int
    /// The file's size, when known (nil for gzip files: only the compressed size is known).
    public var totalBytes: Int?
    /// Works and editions whose search entries were rebuilt so far (indexing).
    public var searchUnitsRebuilt: Int
    /// Works and editions still waiting (indexing).
    public var searchUnitsPending: Int

    /// Creates a progress report.
    public init(file: String, phase: Phase, lines: Int, bytesRead: Int, totalBytes: Int?, searchUnitsRebuilt: Int,
                searchUnitsPending: Int) {
        self.file = file
        self.phase = phase
        self.lines = lines
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
        self.searchUnitsRebuilt = searchUnitsRebuilt
        self.searchUnitsPending = searchUnitsPending
    }
}

/// The state of one import and the SQL that stores records.
struct DumpImporter {
    struct Entry: Sendable {
        var line: Int
        var record: DumpRecord
    }

    var summary: CatalogImportSummary
    /// Whether `removed_keys` has rows: when it has none, records skip the tombstone lookup.
    var hasRemovedKeys = false
    /// Whether the catalogue held no records, tombstones or pending units when this import started.
    ///
    /// Then every record stored so far was stored by this import, and the unit of each is pending
    /// until the rebuild at the end, so records are inserted first and read back only when the key
    /// is already there (a key twice in one dump), and a new author marks no units (those naming it
    /// are pending already). An interrupted fresh import is resumed by a run that is not fresh.
    var isFresh = false

    init(file: String, isCompressed: Bool) {
        summary = CatalogImportSummary(file: file, isCompressed: isCompressed)
    }

    /// Adds what the parser found in one batch (line counts, record counts, problems) to the summary.
    mutating func merge(_ parsed: DumpParseJob.Result) {
        summary.lines += parsed.lineCount
        for record in parsed.entries { count(record.record) }
        for problem in parsed.problems { skip(line: problem.line, reason: problem.reason, detail: problem.detail) }
    }

    mutating func skip(line: Int, reason: CatalogSkipReason, detail: String) {
        summary.skipped += 1
        summary.skippedByReason[reason, default: 0] += 1
        if summary.problems.count < CatalogImportSummary.maximumProblemsKept {
            summary.problems.append(CatalogLineProblem(file: summary.file, line: line, reason: reason, detail: detail))
        }
    }

    mutating func count(_ record: DumpRecord) {
        switch record {
        case .author: summary.authors += 1
        case .work: summary.works += 1
        case .edition: summary.editions += 1
        case .removal: summary.removals += 1
        case .other: summary.otherTypes += 1
        }
    }

    /// Stores a batch of records (inside the caller's transaction).
    mutating func apply(_ entries: [Entry], in db: Database) throws {
        let sql = try ImportStatements(db)
        for entry in entries {
            switch entry.record {
            case .author(let author): try store(author, sql)
            case .work(let work): try store(work, sql)
            case .edition(let edition): try store(edition, sql)
            case .removal(let key, let revision, let lastModified):
                try remove(key: key, revision: revision, lastModified: lastModified, sql)
            case .other: break
            }
        }
    }

    // MARK: - Revisions

    private struct StoredVersion {
        var revision: Int
        var lastModified: String
        var workKey: String?
    }

    private static func isNewer(_ revision: Int, _ lastModified: String, than stored: StoredVersion) -> Bool {
        revision > stored.revision || (revision == stored.revision && lastModified > stored.lastModified)
    }

    private func storedVersion(_ statement: Statement, key: String) throws -> StoredVersion? {
        let cursor = try Row.fetchCursor(statement, arguments: [key])
        guard let row = try cursor.next() else { return nil }
        return StoredVersion(revision: row[0], lastModified: row[1], workKey: row.count > 2 ? row[2] : nil)
    }

    /// True when the record should be stored: newer than the stored version and than a removal.
    private mutating func shouldStore(_ header: DumpRecord.Header, stored: StoredVersion?, _ sql: ImportStatements) throws -> Bool {
        if let stored, !Self.isNewer(header.revision, header.lastModified, than: stored) {
            summary.unchanged += 1
            return false
        }
        guard try passesTombstone(header, sql) else {
            summary.unchanged += 1
            return false
        }
        summary.changed += 1
        return true
    }

    /// False when a removal of the key is as new as the record; otherwise true, and the removal
    /// (older than the record) is forgotten.
    private mutating func passesTombstone(_ header: DumpRecord.Header, _ sql: ImportStatements) throws -> Bool {
        guard hasRemovedKeys, let removed = try storedVersion(sql.removedVersion, key: header.key) else { return true }
        guard Self.isNewer(header.revision, header.lastModified, than: removed) else { return false }
        try sql.deleteRemoved.execute(arguments: [header.key])
        return true
    }

    /// On a fresh import: inserts the record's row unless its key is stored (`insert` runs an
    /// `INSERT OR IGNORE`). True when the row is new and stays, false when the key is stored (the
    /// caller goes the ordinary way) — or when a removal as new as the record was seen, in which case
    /// the row is taken out again and `handled` is set.
    private mutating func insertedFresh(_ header: DumpRecord.Header, _ sql: ImportStatements, db: Database,
                                        insert: () throws -> Void, undo: Statement, handled: inout Bool) throws -> Bool {
        try insert()
        guard db.changesCount > 0 else { return false }
        if try !passesTombstone(header, sql) {
            try undo.execute(arguments: [header.key])
            summary.unchanged += 1
            handled = true
            return false
        }
        summary.changed += 1
        return true
    }

    // MARK: - Records

    private mutating func store(_ author: DumpRecord.AuthorRecord, _ sql: ImportStatements) throws {
        let header = author.header
        let arguments: StatementArguments = [
            header.key, author.name, author.alternateNames.isEmpty ? nil : author.alternateNames.joined(separator: "\n"),
            SearchIndexer.searchKey(name: author.name, alternateNames: author.alternateNames),
            header.revision, header.lastModified]
        if isFresh {
            // Units naming a new author were stored by this import and are pending: none to mark.
            var handled = false
            if try insertedFresh(header, sql, db: sql.db, insert: { try sql.insertAuthor.execute(arguments: arguments) },
                                 undo: sql.deleteAuthor, handled: &handled) || handled { return }
        }
        let stored = try storedVersion(sql.authorVersion, key: header.key)
        guard try shouldStore(header, stored: stored, sql) else { return }
        try sql.replaceAuthor.execute(arguments: arguments)
        if !isFresh { try markUnits(referencingAuthor: header.key, sql) }
    }

    private mutating func store(_ work: DumpRecord.WorkRecord, _ sql: ImportStatements) throws {
        let header = work.header
        let arguments: StatementArguments = [header.key, work.title, work.subtitle, work.firstPublishYear,
                                             header.revision, header.lastModified]
        var stored: StoredVersion?
        var handled = false
        if try !(isFresh && insertedFresh(header, sql, db: sql.db, insert: { try sql.insertWork.execute(arguments: arguments) },
                                          undo: sql.deleteWork, handled: &handled)) {
            if handled { return }
            stored = try storedVersion(sql.workVersion, key: header.key)
            guard try shouldStore(header, stored: stored, sql) else { return }
            try sql.replaceWork.execute(arguments: arguments)
            if stored != nil { try sql.deleteWorkAuthors.execute(arguments: [header.key]) }
        }
        for (position, authorKey) in work.authorKeys.enumerated() {
            try sql.linkWorkAuthor.execute(arguments: [header.key, position, authorKey])
        }
        try sql.markUnit.execute(arguments: [header.key])
    }

    private mutating func store(_ edition: DumpRecord.EditionRecord, _ sql: ImportStatements) throws {
        let header = edition.header
        let arguments: StatementArguments = [
            header.key, edition.workKey, edition.title, edition.subtitle, edition.publishYear, edition.pageCount,
            edition.publishers.isEmpty ? nil : edition.publishers.joined(separator: "\n"),
            header.revision, header.lastModified]
        var stored: StoredVersion?
        var handled = false
        if try !(isFresh && insertedFresh(header, sql, db: sql.db, insert: { try sql.insertEdition.execute(arguments: arguments) },
                                          undo: sql.deleteEdition, handled: &handled)) {
            if handled { return }
            stored = try storedVersion(sql.editionVersion, key: header.key)
            guard try shouldStore(header, stored: stored, sql) else { return }
            try sql.replaceEdition.execute(arguments: arguments)
            if stored != nil {
                try sql.deleteEditionISBNs.execute(arguments: [header.key])
                try sql.deleteEditionAuthors.execute(arguments: [header.key])
            }
        }
        var isbns: [String] = []
        for raw in edition.isbn13s + edition.isbn10s {
            switch ISBN.parse(raw) {
            case .success(let isbn):
                if !isbns.contains(isbn.isbn13) { isbns.append(isbn.isbn13) }
            case .failure:
                summary.invalidISBNs += 1
            }
        }
        for isbn in isbns { try sql.insertISBN.execute(arguments: [isbn, header.key]) }
        for (position, authorKey) in edition.authorKeys.enumerated() {
            try sql.linkEditionAuthor.execute(arguments: [header.key, position, authorKey])
        }
        let unit = edition.workKey ?? header.key
        try sql.markUnit.execute(arguments: [unit])
        if let stored {
            let oldUnit = stored.workKey ?? header.key
            if oldUnit != unit { try sql.markUnit.execute(arguments: [oldUnit]) }
        }
    }

    /// Applies `/type/delete` or `/type/redirect`: the key's record goes (when older), and a
    /// tombstone keeps older copies of it from coming back.
    private mutating func remove(key: String, revision: Int, lastModified: String, _ sql: ImportStatements) throws {
        if let tombstone = try storedVersion(sql.removedVersion, key: key),
           !Self.isNewer(revision, lastModified, than: tombstone) {
            summary.unchanged += 1
            return
        }
        var removedSomething = false
        // A stored record as new as the removal already keeps older copies out: no tombstone then,
        // so importing a dump again (or resuming it) leaves the tombstones it left the first time.
        var keptNewer = false
        if let edition = try storedVersion(sql.editionVersion, key: key) {
            if Self.isNewer(revision, lastModified, than: edition) {
                for statement in [sql.deleteEdition, sql.deleteEditionISBNs, sql.deleteEditionAuthors] {
                    try statement.execute(arguments: [key])
                }
                try sql.markUnit.execute(arguments: [edition.workKey ?? key])
                removedSomething = true
            } else {
                keptNewer = true
            }
        }
        if let work = try storedVersion(sql.workVersion, key: key) {
            if Self.isNewer(revision, lastModified, than: work) {
                for statement in [sql.deleteWork, sql.deleteWorkAuthors] {
                    try statement.execute(arguments: [key])
                }
                try sql.markUnit.execute(arguments: [key])
                removedSomething = true
            } else {
                keptNewer = true
            }
        }
        if let author = try storedVersion(sql.authorVersion, key: key) {
            if Self.isNewer(revision, lastModified, than: author) {
                try sql.deleteAuthor.execute(arguments: [key])
                if !isFresh { try markUnits(referencingAuthor: key, sql) }
                removedSomething = true
            } else {
                keptNewer = true
            }
        }
        if !keptNewer {
            try sql.replaceRemoved.execute(arguments: [key, revision, lastModified])
            hasRemovedKeys = true
        }
        if removedSomething { summary.changed += 1 } else { summary.unchanged += 1 }
    }

    // MARK: - Search units

    /// Marks every work and edition that names the author (its search entries show the name).
    private func markUnits(referencingAuthor authorKey: String, _ sql: ImportStatements) throws {
        try sql.markWorksOfAuthor.execute(arguments: [authorKey])
        try sql.markEditionsOfAuthor.execute(arguments: [authorKey])
    }
}

/// The statements that store records, looked up once per transaction: GRDB's statement cache
/// hashes the SQL text on every lookup, which cost about 2 % of an import when done per record.
private struct ImportStatements {
    let db: Database
    let authorVersion, workVersion, editionVersion, removedVersion: Statement
    let insertAuthor, replaceAuthor, deleteAuthor: Statement
    let insertWork, replaceWork, deleteWork, deleteWorkAuthors, linkWorkAuthor: Statement
    let insertEdition, replaceEdition, deleteEdition, deleteEditionISBNs, deleteEditionAuthors: Statement
    let insertISBN, linkEditionAuthor: Statement
    let replaceRemoved, deleteRemoved: Statement
    let markUnit, markWorksOfAuthor, markEditionsOfAuthor: Statement

    init(_ db: Database) throws {
        self.db = db
        authorVersion = try db.cachedStatement(sql: "SELECT revision, last_modified FROM authors WHERE key = ?")
        workVersion = try db.cachedStatement(sql: "SELECT revision, last_modified FROM works WHERE key = ?")
        editionVersion = try db.cachedStatement(sql: "SELECT revision, last_modified, work_key FROM editions WHERE key = ?")
        removedVersion = try db.cachedStatement(sql: "SELECT revision, last_modified FROM removed_keys WHERE key = ?")
        let authorColumns = "authors (key, name, alternate_names, search_key, revision, last_modified) VALUES (?, ?, ?, ?, ?, ?)"
        insertAuthor = try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(authorColumns)")
        replaceAuthor = try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(authorColumns)")
        deleteAuthor = try db.cachedStatement(sql: "DELETE FROM authors WHERE key = ?")
        let workColumns = "works (key, title, subtitle, first_publish_year, revision, last_modified) VALUES (?, ?, ?, ?, ?, ?)"
        insertWork = try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(workColumns)")
        replaceWork = try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(workColumns)")
        deleteWork = try db.cachedStatement(sql: "DELETE FROM works WHERE key = ?")
        deleteWorkAuthors = try db.cachedStatement(sql: "DELETE FROM work_authors WHERE work_key = ?")
        linkWorkAuthor = try db.cachedStatement(sql: "INSERT OR REPLACE INTO work_authors (work_key, position, author_key) VALUES (?, ?, ?)")
        let editionColumns = """
            editions (key, work_key, title, subtitle, publish_year, page_count, publishers, revision, last_modified)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        insertEdition = try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(editionColumns)")
        replaceEdition = try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(editionColumns)")
        deleteEdition = try db.cachedStatement(sql: "DELETE FROM editions WHERE key = ?")
        deleteEditionISBNs = try db.cachedStatement(sql: "DELETE FROM edition_isbns WHERE edition_key = ?")
        deleteEditionAuthors = try db.cachedStatement(sql: "DELETE FROM edition_authors WHERE edition_key = ?")
        insertISBN = try db.cachedStatement(sql: "INSERT OR IGNORE INTO edition_isbns (isbn13, edition_key) VALUES (?, ?)")
        linkEditionAuthor = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO edition_authors (edition_key, position, author_key) VALUES (?, ?, ?)
            """)
        replaceRemoved = try db.cachedStatement(sql: "INSERT OR REPLACE INTO removed_keys (key, revision, last_modified) VALUES (?, ?, ?)")
        deleteRemoved = try db.cachedStatement(sql: "DELETE FROM removed_keys WHERE key = ?")
        markUnit = try db.cachedStatement(sql: "INSERT OR IGNORE INTO search_pending (unit) VALUES (?)")
        markWorksOfAuthor = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO search_pending (unit) SELECT work_key FROM work_authors WHERE author_key = ?
            """)
        markEditionsOfAuthor = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO search_pending (unit)
            SELECT coalesce(e.work_key, e.key) FROM edition_authors AS a JOIN editions AS e ON e.key = a.edition_key
            WHERE a.author_key = ?
            """)
    }
}

/// Parses one chunk of dump lines (the ``ParseDumpLines`` step of a catalogue import).
enum DumpParseJob {
    struct RawLine: Sendable {
        var number: Int
        var bytes: [UInt8]
        var isTruncated: Bool
    }

    struct Problem: Sendable {
        var line: Int
        var reason: CatalogSkipReason
        var detail: String
    }

    struct Result: Sendable {
        var lineCount = 0
        var entries: [DumpImporter.Entry] = []
        var problems: [Problem] = []
        var sawDumpLine = false
        var firstProblem: String?
        var bytesRead = 0
    }

    static func parse(_ lines: [RawLine], bytesRead: Int) -> Result {
        var result = Result()
        result.lineCount = lines.count
        result.bytesRead = bytesRead
        result.entries.reserveCapacity(lines.count)
        for line in lines {
            if line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                continue  // Blank lines carry nothing; they are not worth a problem report.
            }
            if line.isTruncated {
                result.problems.append(Problem(
                    line: line.number, reason: .lineTooLong,
                    detail: "the line is longer than \(DumpLineReader.maximumLineLength >> 20) MiB"))
                continue
            }
            if !result.sawDumpLine, DumpRecord.looksLikeDumpLine(line.bytes[...]) { result.sawDumpLine = true }
            switch DumpRecord.parse(line.bytes[...]) {
            case .success(let record):
                result.entries.append(DumpImporter.Entry(line: line.number, record: record))
            case .failure(let problem):
                if result.firstProblem == nil { result.firstProblem = "line \(line.number): \(problem.detail)" }
                result.problems.append(Problem(line: line.number, reason: problem.reason, detail: problem.detail))
            }
        }
        return result
    }
}
