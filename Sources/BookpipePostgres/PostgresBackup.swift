import Foundation

/// `bookpipe backup DEST` for a PostgreSQL library: PostgreSQL's own dump (`pg_dump --format=custom`), a
/// consistent snapshot taken in one transaction while workers go on writing, which `pg_restore` loads
/// into any database (issue 28: "pg_dump-compatible").
///
/// The dump is written next to `DEST` and moved in place only when `pg_dump` succeeded, so a failed
/// or interrupted backup never leaves a partial file under the name, and an existing file is never
/// replaced unless asked.
public enum PostgresBackup {
    /// What a backup wrote.
    public struct Written: Sendable, Hashable {
        /// The dump file.
        public var path: String
        /// Its size.
        public var bytes: Int
    }

    /// Why a backup could not be made.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// `DEST` exists and replacing it was not asked for.
        case destinationExists(String)
        /// No `pg_dump` on this machine.
        case noDumpProgram
        /// `pg_dump` failed; its message (the password, if any, never in it: it comes from
        /// `~/.pgpass` or `PGPASSWORD`).
        case dumpFailed(status: Int32, message: String)
        /// The dump could not be moved into place.
        case cannotWrite(path: String, reason: String)

        /// One line for people.
        public var description: String {
            switch self {
            case .destinationExists(let path):
                return "\(path) exists; a backup never replaces a file unless --overwrite is given."
            case .noDumpProgram:
                return "pg_dump was not found (on PATH or in /usr/lib/postgresql/*/bin): install the PostgreSQL client "
                    + "programs (Debian: postgresql-client) to back up a PostgreSQL library."
            case .dumpFailed(let status, let message):
                return "pg_dump failed (exit \(status)): \(message)"
            case .cannotWrite(let path, let reason):
                return "\(path): cannot write the backup: \(reason)"
            }
        }
    }

    /// Dumps the library at `url` into `destination` (PostgreSQL's custom format).
    /// - Parameters:
    ///   - url: the library's `postgres://` URL.
    ///   - destination: the file to write; its folder must exist.
    ///   - overwrite: whether an existing `destination` may be replaced.
    /// - Throws: ``Failure``.
    public static func dump(url: String, to destination: String, overwrite: Bool) throws(Failure) -> Written {
        let files = FileManager.default
        if files.fileExists(atPath: destination), !overwrite { throw .destinationExists(destination) }
        guard let program = dumpProgram() else { throw .noDumpProgram }
        let partial = destination + ".partial"
        try? files.removeItem(atPath: partial)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["--format=custom", "--no-owner", "--file=" + partial, "--dbname=" + url]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .dumpFailed(status: -1, message: "\(error)")
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            try? files.removeItem(atPath: partial)
            let lines = message.split(separator: "\n").map(String.init)
            throw .dumpFailed(status: process.terminationStatus, message: PostgresLibrary.redacted(lines.joined(separator: " ")))
        }
        do {
            if files.fileExists(atPath: destination) { try files.removeItem(atPath: destination) }
            try files.moveItem(atPath: partial, toPath: destination)
        } catch {
            try? files.removeItem(atPath: partial)
            throw .cannotWrite(path: destination, reason: "\(error)")
        }
        let size = (try? files.attributesOfItem(atPath: destination))?[.size] as? Int
        return Written(path: destination, bytes: size ?? 0)
    }

    /// `pg_dump` on PATH, else the newest of Debian's `/usr/lib/postgresql/VERSION/bin` (a server's
    /// own programs are not always on PATH).
    static func dumpProgram() -> String? {
        let files = FileManager.default
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(folder)/pg_dump"
            if files.isExecutableFile(atPath: candidate) { return candidate }
        }
        let versions = ((try? files.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        return versions.map { "/usr/lib/postgresql/\($0)/bin/pg_dump" }.first(where: files.isExecutableFile(atPath:))
    }
}
