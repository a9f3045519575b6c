import ArgumentParser
import BookpipePostgres
import BookpipeStore
import Foundation

/// `bookpipe backup DEST`: a complete, consistent copy of the library, made while other runs may
/// write to it (``LibraryStore/backup(to:overwrite:copiesPhotos:)``).
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copies the library to DEST: one consistent file, even while another command writes to it, plus its photos.",
        discussion: """
            DEST is one complete SQLite file (no -wal or -shm beside it), a snapshot of every batch committed when \
            the backup starts. The library's managed photos (<library>.photos/) are copied to DEST.photos/, where \
            `--library DEST` finds them. An existing DEST (or DEST.photos) is never replaced unless --overwrite is given. \
            To restore, move DEST (and DEST.photos) back in place of the library, or pass --library DEST. \
            A PostgreSQL library (--library postgres://…) is dumped by pg_dump in its custom format, a consistent \
            snapshot while workers write; restore it with pg_restore --no-owner --dbname=URL DEST.
            """)

    @Argument(help: "The file to write the copy to; its folder must exist.")
    var destination: String

    @Flag(help: "Replace DEST when it exists (and add to DEST.photos/).")
    var overwrite = false

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        if LibraryLocation.isServer(library.libraryPath) {
            let written: PostgresBackup.Written
            do {
                written = try PostgresBackup.dump(url: library.libraryPath, to: destination, overwrite: overwrite)
            } catch {
                printError(error.description)
                throw ExitCode(1)
            }
            printError("wrote \(written.path) (\(PostgresLibraryName.redacted(library.libraryPath)) as a pg_dump custom-format dump, "
                       + "\(written.bytes) bytes); restore it with: pg_restore --no-owner --dbname=URL \(written.path)")
            return
        }
        let store = try openExistingLibrary(library)
        let backup: LibraryBackup
        do {
            backup = try store.backup(to: destination, overwrite: overwrite)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        try? await store.close()
        printError("wrote \(backup.path) (\(backup.records) records, \(backup.bytes) bytes)")
        if let photos = backup.photosFolder {
            printError("wrote \(photos) (\(backup.photos) photo\(backup.photos == 1 ? "" : "s"), \(backup.photoBytes) bytes)")
        }
    }
}
