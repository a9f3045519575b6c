import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a library for reading on read-only media (a backup, a snapshot, a read-only mount,
/// `chmod a-w` on the file or its folder).
///
/// How SQLite reads a write-ahead-log library (see <https://sqlite.org/wal.html#readonly>): a
/// reader needs the `-shm` index beside the file. When the `-shm` (and `-wal`) exist, read-only
/// ones included, a read-only connection reads them. When they do not exist and cannot be created
/// (the folder is read-only), SQLite refuses ("attempt to write a readonly database") unless the
/// file is opened as *immutable* (`file:…?immutable=1`), which reads the file alone, takes no
/// lock and ignores any `-wal`. That is exact only when nothing can change the file and the `-wal`
/// holds nothing: then the library is the file alone, which is what a bookpipe command leaves when
/// it closes (``LibraryStore/close()`` empties the log) and what `bookpipe backup` writes.
extension LibraryStore {
    /// Opens an existing library for reading without writing anything, or returns nil when it is
    /// to be opened for writing instead (no file yet, or an older schema in a place that can be
    /// written: the read-write open brings it up to date).
    /// - Throws: ``StoreError/cannotOpen(path:reason:)`` when the library cannot be read where it
    ///   is and cannot be written either (an older schema on read-only media; a `-wal` holding
    ///   changes that SQLite cannot read without creating a `-shm` in a read-only folder);
    ///   ``StoreError/damaged(path:reason:)`` for a file that is not a library.
    static func poolForReading(path: String) throws(StoreError) -> DatabasePool? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        if let pool = try? openPool(path: path, readOnly: true),
           let isCurrent = try? pool.read({ db in try Schema.migrator.hasCompletedMigrations(db) }) {
            if isCurrent { return pool }
            if isWritable(path) { return nil }
            throw StoreError.cannotOpen(path: path, reason: Self.olderSchemaOnReadOnlyMedia)
        }
        // The place can be written: the read-write open says what is wrong, or opens it.
        guard !isWritable(path) else { return nil }
        if walHoldsChanges(path) {
            throw StoreError.cannotOpen(path: path, reason: """
                its latest changes are still in \(path)-wal, which SQLite reads only with a \(path)-shm file beside it, \
                and this folder is read-only. Open the library once where it can be written (any bookpipe command that \
                writes empties the -wal when it ends), or copy the library file, its -wal and its -shm to a writable folder
                """)
        }
        let pool: DatabasePool
        let isCurrent: Bool
        do {
            var configuration = Configuration()
            configuration.readonly = true
            pool = try DatabasePool(path: immutableURI(path), configuration: configuration)
            isCurrent = try pool.read { db in try Schema.migrator.hasCompletedMigrations(db) }
        } catch {
            if Self.isDamage(error) { throw StoreError.damaged(path: path, reason: Self.reason(error)) }
            throw StoreError.cannotOpen(path: path, reason: Self.reason(error))
        }
        guard isCurrent else { throw StoreError.cannotOpen(path: path, reason: Self.olderSchemaOnReadOnlyMedia) }
        return pool
    }

    static let olderSchemaOnReadOnlyMedia = "the library was written by an older bookpipe and is updated the first time "
        + "a command opens it, which needs write access; it is read-only here. Run any bookpipe command on it once where "
        + "it can be written"

    static let readOnlyForWriting = "it is read-only here (the file or its folder cannot be written), and this command "
        + "writes to it. Commands that only read (stats, export, report, search, show, review list, backup) work on it"

    /// True when this process may write both the file and its folder (where SQLite creates the
    /// `-wal` and `-shm`); false on read-only media or without the permissions.
    static func isWritable(_ path: String) -> Bool {
        let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        return access(path, W_OK) == 0 && access(folder, W_OK) == 0
    }

    /// True when the library's `-wal` exists and is not empty.
    static func walHoldsChanges(_ path: String) -> Bool {
        var status = stat()
        return stat(path + "-wal", &status) == 0 && status.st_size > 0
    }

    /// The `file:` URI SQLite opens `path` with as immutable (the path percent-encoded, so that
    /// `?`, `#` and `%` in a name stay part of the name).
    static func immutableURI(_ path: String) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/")
        let encoded = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(encoded)?immutable=1"
    }
}
