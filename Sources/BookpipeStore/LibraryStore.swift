import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB
import Synchronization

/// The library: one SQLite file (WAL) holding runs, source files, every source row as a record,
/// rejected rows, works, authors and identifiers.
///
/// Rules (GRDB's): one writer per database file, and this type owns it; every write is a short
/// explicit transaction, so a process killed at any instant leaves either the whole batch or none
/// of it. Record ids are stable (`<file hash>:<row>`), and inserts are idempotent, so rerunning an
/// interrupted import stores each row exactly once.
///
/// Pipelines write through the library's one writer (``submitInsert(_:runID:)``,
/// ``committed(_:)``, see ``LibraryWriter``): their writes are committed in order on GRDB's
/// writer queue, in transactions that grow with the load, and nobody blocks a thread waiting.
///
/// ```swift
/// let store = try LibraryStore(path: "library.sqlite")
/// try store.insert([record])
/// ```
public final class LibraryStore: Sendable {
    /// The database file's path.
    public let path: String
    let pool: DatabasePool
    /// File and origin ids already looked up.
    let keyCache: KeyCache
    /// The writer pipelines submit to.
    let writer: LibraryWriter
    /// True while ``prepareForBulkInsert(expectedRows:)`` has turned synced commits off.
    let unsyncedBulkInsert = Mutex(false)
    /// Meanwhile, what gets the pages written to the disk during the import (``BulkWriteback``).
    let bulkWriteback = BulkWriteback()
    /// The rest of each run's claim queue in this process (``ClaimQueues``).
    let claimQueues = ClaimQueues()

    /// How a command opens the library.
    public enum Access: Sendable {
        /// Reads and writes; a new file is created, an older schema brought up to date.
        case readWrite
        /// Reads only, when the library exists and its schema is this version's: nothing is written,
        /// not even the transaction that sets up the write-ahead log when it is missing, so looking
        /// at a library (`stats`, `export`, `report`, `show`) leaves the file and its modification
        /// time as they were and makes no disk syncs. Works on read-only media too (a read-only
        /// file or folder, see `LibraryStore+ReadOnly.swift`). Otherwise (an older schema, a file
        /// SQLite cannot open for reading alone) it is opened as ``readWrite`` where the library
        /// can be written. Writes through a store opened for reading fail with
        /// ``StoreError/writeFailed(path:what:reason:)``.
        case readOnly
    }

    /// Opens (or creates) a library and brings its schema up to date; or, with `access`
    /// ``Access/readOnly``, opens an up-to-date library for reading only.
    /// - Throws: ``StoreError/missingFolder(path:folder:)`` when the folder that should hold the
    ///   file does not exist (nothing is created); ``StoreError/damaged(path:reason:)`` when the file
    ///   is not a database or its contents are damaged; ``StoreError/cannotOpen(path:reason:)`` when
    ///   the file cannot be opened otherwise (for ``Access/readWrite``: also when the file or its
    ///   folder cannot be written); ``StoreError/migrationFailed(path:reason:)`` when the
    ///   schema cannot be updated.
    public convenience init(path: String, access: Access = .readWrite) throws(StoreError) {
        if let folder = Self.missingFolder(of: path) { throw StoreError.missingFolder(path: path, folder: folder) }
        if access == .readOnly, let pool = try Self.poolForReading(path: path) {
            self.init(path: path, pool: pool)
            return
        }
        if FileManager.default.fileExists(atPath: path), !Self.isWritable(path) {
            throw StoreError.cannotOpen(path: path, reason: Self.readOnlyForWriting)
        }
        self.init(path: path, pool: try Self.openPool(path: path, readOnly: false))
        try migrate()
    }

    /// Opens an up-to-date library for reading only, never writing it: nil when that is not
    /// possible without writing (an older schema that opening for writing would upgrade).
    /// For `import --dry-run`, which must not change the library.
    /// - Throws: ``StoreError`` when the file cannot be opened for reading.
    public static func openedForReadingOnly(path: String) throws(StoreError) -> LibraryStore? {
        if let folder = Self.missingFolder(of: path) { throw StoreError.missingFolder(path: path, folder: folder) }
        guard let pool = try Self.poolForReading(path: path) else { return nil }
        return LibraryStore(path: path, pool: pool)
    }

    private init(path: String, pool: DatabasePool) {
        self.path = path
        self.pool = pool
        let cache = KeyCache()
        keyCache = cache
        let writeback = bulkWriteback
        writer = LibraryWriter(pool: pool) { jobs, db in
            writeback.startWriting()
            var records: [(records: EncodedRecords, runID: Int64?)] = []
            for job in jobs {
                switch job {
                case .records(let encoded, let runID):
                    records.append((encoded, runID))
                case .work(let work):
                    if !records.isEmpty {
                        _ = try Self.insertEncoded(records, db: db, cache: cache, path: path)
                        records = []
                    }
                    try work(db)
                }
            }
            if !records.isEmpty { _ = try Self.insertEncoded(records, db: db, cache: cache, path: path) }
        }
    }

    static func openPool(path: String, readOnly: Bool) throws(StoreError) -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.readonly = readOnly
        configuration.prepareDatabase { db in
            // 16 KiB pages (new libraries only; SQLite ignores this once the file has pages): for
            // rows of a few hundred bytes, fewer pages to split, write and index (measured: a
            // million-row import writes its rows in 10-15 % less time than with 4 KiB pages).
            if !readOnly { try db.execute(sql: "PRAGMA page_size = 16384; PRAGMA synchronous = NORMAL") }
        }
        // Turning a new file to WAL needs it to itself for a moment, and SQLite does not wait for
        // that: another process creating the same library at once makes the open fail as busy.
        var openAttempt = 0
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch {
                openAttempt += 1
                guard openAttempt < 20, Self.isRaceWithAnotherMigration(error) else {
                    if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
                    throw StoreError.cannotOpen(path: path, reason: Self.reason(error))
                }
                usleep(useconds_t(5_000 * openAttempt))
            }
        }
    }

    /// Brings the schema up to date.
    private func migrate() throws(StoreError) {
        // Two processes opening a new or older library at once (an import, and `bookpipe export` or
        // a second import) may both see a migration as not applied yet; the one that loses finds
        // its tables already made and rolls back. Each migration commits with its record, so
        // trying again applies only what the other process has not: a few tries always converge.
        var attempt = 0
        while true {
            do {
                try Schema.migrator.migrate(pool)
                break
            } catch {
                attempt += 1
                if attempt < 20, Self.isRaceWithAnotherMigration(error) { continue }
                if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
                throw StoreError.migrationFailed(path: path, reason: Self.reason(error))
            }
        }
    }

    /// True for the errors a migration meets when another process migrates the same file at the
    /// same moment: its tables already exist, the file is locked, or — for a migration that only
    /// rewrites rows (v9) — the other process recorded the migration first.
    static func isRaceWithAnotherMigration(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED { return true }
        let message = error.message ?? ""
        return message.contains("already exists") || message.contains("duplicate column")
            || (error.resultCode == .SQLITE_CONSTRAINT && message.contains("grdb_migrations"))
    }

    /// The folder that should hold `path` when it does not exist (or is not a folder); nil otherwise.
    static func missingFolder(of path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue ? nil : folder
    }

    /// True for SQLite's answers about a file that is not a database or is damaged
    /// (`SQLITE_NOTADB`, `SQLITE_CORRUPT`), as opposed to one that cannot be reached.
    static func isDamage(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    }

    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }

    /// Runs a write transaction, mapping database errors to ``StoreError``.
    func write<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.write(body)
        } catch let error as StoreError {
            throw error
        } catch {
            if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
            throw StoreError.writeFailed(path: path, what: what, reason: Self.reason(error))
        }
    }

    /// Runs a read, mapping database errors to ``StoreError``.
    func read<T>(_ what: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.read(body)
        } catch let error as StoreError {
            throw error
        } catch {
            if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
            throw StoreError.readFailed(path: path, what: what, reason: Self.reason(error))
        }
    }
}
