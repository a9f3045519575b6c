import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``LibraryStore/backup(to:overwrite:copiesPhotos:)`` wrote.
public struct LibraryBackup: Sendable, Hashable {
    /// The copy of the library file.
    public var path: String
    /// The records the copy holds.
    public var records: Int
    /// The copy's size in bytes.
    public var bytes: Int64
    /// The copy of the managed photos folder (`<path>.photos`), or nil when the library has none.
    public var photosFolder: String?
    /// The photos in ``photosFolder``.
    public var photos: Int
    /// Their size in bytes.
    public var photoBytes: Int64
}

/// Why ``LibraryStore/backup(to:overwrite:copiesPhotos:)`` wrote nothing (or, for the photos, not everything).
public enum LibraryBackupError: Error, Sendable, CustomStringConvertible {
    /// The destination (or its photos folder) exists and `overwrite` was not asked for.
    case destinationExists(path: String)
    /// The destination is the library itself.
    case destinationIsTheLibrary(path: String)
    /// The destination's `-wal` holds changes: a library in use is there.
    case destinationInUse(path: String)
    /// The folder that should hold the destination does not exist.
    case missingFolder(path: String, folder: String)
    /// The copy could not be made or written; nothing is left at the destination.
    case copyFailed(path: String, reason: String)
    /// The library was copied, but a photo could not be.
    case photoCopyFailed(photo: String, destination: String, reason: String)

    /// A message for people: what, where, and what to do.
    public var description: String {
        switch self {
        case .destinationExists(let path):
            return "\(path) exists already; bookpipe never overwrites a file it did not make. "
                + "Choose another destination, or pass --overwrite to replace it."
        case .destinationIsTheLibrary(let path):
            return "\(path) is the library itself; choose another destination."
        case .destinationInUse(let path):
            return "\(path)-wal holds changes of a library in use at \(path); it was left alone. "
                + "Choose another destination, or let the command using it finish."
        case .missingFolder(let path, let folder):
            return "\(path): cannot write the backup: the folder \(folder) does not exist. Create it (mkdir -p \(folder)), or choose another destination."
        case .copyFailed(let path, let reason):
            return "\(path): the backup failed: \(reason). Nothing was written there."
        case .photoCopyFailed(let photo, let destination, let reason):
            return "\(destination): the library was copied but the photo \(photo) could not be: \(reason). "
                + "Free some space or fix the permissions and run the same backup again with --overwrite."
        }
    }
}

extension LibraryStore {
    /// Writes a complete copy of the library to `destination`, with SQLite's online backup API:
    /// the copy is one snapshot of the library, consistent while other processes (an import, an
    /// enrichment) keep writing — it holds every batch committed before the snapshot and none
    /// after.
    ///
    /// **One file.** The copy uses a rollback journal (`journal_mode=DELETE`), not a write-ahead
    /// log: it is complete on its own (no `-wal` or `-shm` beside it), can be copied, mailed or
    /// read on read-only media as it is, and the first bookpipe command that writes to it turns the
    /// log back on.
    ///
    /// **Photos.** A library's managed photos live beside it (`<library>.photos/`, see
    /// ``ManagedPhotos``); review needs them to show the spine crops of scans not yet reviewed. So
    /// the backup copies them to `<destination>.photos/`, where the copy opened as a library
    /// finds them: restoring is moving both back. Photos are copied before and after the
    /// snapshot (they are immutable and named after their bytes), so every photo the snapshot's
    /// records name is in the copy even while a scan import adds photos.
    ///
    /// **Never overwrites** a file, unless `overwrite` is true: the copy is written to a temporary
    /// file beside `destination` and linked into place only if nothing is there, so a file
    /// appearing meanwhile is kept too. A failed backup leaves nothing at the destination.
    /// - Parameters:
    ///   - destination: The file to write; its folder must exist.
    ///   - overwrite: Replace `destination` (and add to `<destination>.photos/`) when they exist.
    ///   - copiesPhotos: Copy the managed photos too (default); false copies the library file only
    ///     (a scratch copy, as `search` makes of a read-only library to index it).
    /// - Returns: What was written.
    /// - Throws: ``LibraryBackupError``.
    public func backup(to destination: String, overwrite: Bool = false,
                       copiesPhotos: Bool = true) throws(LibraryBackupError) -> LibraryBackup {
        let photos = ManagedPhotos(libraryPath: path)
        let destinationPhotos = ManagedPhotos(libraryPath: destination).folder
        try checkDestination(destination, photosFolder: destinationPhotos, overwrite: overwrite)
        let hasPhotos = copiesPhotos && FileManager.default.fileExists(atPath: photos.folder)
        if hasPhotos { try Self.copyPhotos(from: photos.folder, to: destinationPhotos) }

        let folder = Self.folder(of: destination)
        let name = destination.split(separator: "/").last.map(String.init) ?? destination
        let temporary = folder + "/." + name + ".backup-\(getpid()).tmp"
        for suffix in ["", "-journal"] { unlink(temporary + suffix) }
        let records: Int
        do {
            let copy = try DatabaseQueue(path: temporary)
            try pool.backup(to: copy)
            records = try copy.writeWithoutTransaction { db in
                // The pages copied say "write-ahead log", as the library's do: make the copy one file.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
            }
            try copy.close()
        } catch {
            for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) }
            throw LibraryBackupError.copyFailed(path: destination, reason: Self.reason(error))
        }
        try Self.moveIntoPlace(temporary, destination, overwrite: overwrite)

        var backup = LibraryBackup(path: destination, records: records, bytes: Self.size(of: destination),
                                   photosFolder: nil, photos: 0, photoBytes: 0)
        if hasPhotos {
            try Self.copyPhotos(from: photos.folder, to: destinationPhotos)
            backup.photosFolder = destinationPhotos
            for photo in Self.photoNames(in: destinationPhotos) {
                backup.photos += 1
                backup.photoBytes += Self.size(of: destinationPhotos + "/" + photo)
            }
        }
        return backup
    }

    /// Refuses a destination that is the library, is in use, or exists (unless `overwrite`).
    private func checkDestination(_ destination: String, photosFolder: String, overwrite: Bool) throws(LibraryBackupError) {
        if let folder = Self.missingFolder(of: destination) {
            throw LibraryBackupError.missingFolder(path: destination, folder: folder)
        }
        let library = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        if URL(fileURLWithPath: destination).resolvingSymlinksInPath().path == library {
            throw LibraryBackupError.destinationIsTheLibrary(path: destination)
        }
        if Self.walHoldsChanges(destination) { throw LibraryBackupError.destinationInUse(path: destination) }
        guard !overwrite else { return }
        for existing in [destination, photosFolder] where FileManager.default.fileExists(atPath: existing) {
            throw LibraryBackupError.destinationExists(path: existing)
        }
    }

    /// Puts the finished copy at `destination`: a hard link, which fails when a file is there
    /// (unless `overwrite`: a rename, which replaces it). Removes the temporary file either way.
    private static func moveIntoPlace(_ temporary: String, _ destination: String, overwrite: Bool) throws(LibraryBackupError) {
        defer { unlink(temporary) }
        if overwrite {
            guard rename(temporary, destination) == 0 else {
                throw LibraryBackupError.copyFailed(path: destination, reason: String(cString: strerror(errno)))
            }
            return
        }
        if link(temporary, destination) == 0 { return }
        let code = errno
        if code == EEXIST { throw LibraryBackupError.destinationExists(path: destination) }
        // A file system without hard links: checked just before, so only a file appearing in
        // this instant could be replaced.
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EXDEV,
              !FileManager.default.fileExists(atPath: destination), rename(temporary, destination) == 0 else {
            throw LibraryBackupError.copyFailed(path: destination, reason: String(cString: strerror(code)))
        }
    }

    /// Copies the photos of `source` that `target` does not hold yet (each to a temporary name,
    /// then renamed), creating `target`.
    private static func copyPhotos(from source: String, to target: String) throws(LibraryBackupError) {
        do {
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        } catch {
            throw LibraryBackupError.photoCopyFailed(photo: source, destination: target, reason: "\(error.localizedDescription)")
        }
        for photo in photoNames(in: source) {
            let from = source + "/" + photo, to = target + "/" + photo
            // Named after their bytes: a photo of that name and size is that photo.
            if FileManager.default.fileExists(atPath: to), size(of: to) == size(of: from) { continue }
            let partial = to + ".backup-\(getpid()).tmp"
            unlink(partial)
            do {
                try FileManager.default.copyItem(atPath: from, toPath: partial)
            } catch {
                unlink(partial)
                // Deleted by a cleanup since it was listed: its detections are all reviewed.
                if !FileManager.default.fileExists(atPath: from) { continue }
                throw LibraryBackupError.photoCopyFailed(photo: from, destination: target, reason: "\(error.localizedDescription)")
            }
            guard rename(partial, to) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(partial)
                throw LibraryBackupError.photoCopyFailed(photo: from, destination: target, reason: reason)
            }
        }
    }

    /// The photo files of a managed folder (`<sha256>.jpg`; not the temporary files of a copy).
    private static func photoNames(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".jpg") && !$0.hasPrefix(".") }.sorted()
    }

    private static func size(of path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
