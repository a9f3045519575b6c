import ArgumentParser
import BookpipeLibrary
import BookpipePostgres
import BookpipeStore
import Foundation

/// Where `--library` (or `$BOOKPIPE_LIBRARY`) points: a SQLite file, or a PostgreSQL library
/// named by a `postgres://` URL (issue 28, docs/decisions/0025). The one place that tells them
/// apart: commands that work on either engine open their library here.
enum LibraryLocation {
    /// True when `location` names a PostgreSQL library.
    static func isServer(_ location: String) -> Bool {
        PostgresLibrary.isLibraryURL(location)
    }

    /// Opens the library at `location`: a PostgreSQL library for a `postgres://` URL (its schema
    /// brought up to date), else the SQLite file with `access`.
    static func open(_ location: String, access: LibraryStore.Access) throws(StoreError) -> any Library {
        if isServer(location) { return try PostgresLibrary(url: location) }
        return try LibraryStore(path: location, access: access)
    }
}

/// A PostgreSQL URL as messages show it.
enum PostgresLibraryName {
    /// The URL with its password hidden.
    static func redacted(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://"),
              let colon = url[scheme.upperBound..<at].firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
    }
}

/// Opens the existing library a command only reads, of either engine: a SQLite file for reading
/// only (see ``openExistingLibrary(_:)``), or a PostgreSQL library. No library: says so, exits 1.
func openExistingAnyLibrary(_ options: LibraryOptions) throws -> any Library {
    guard LibraryLocation.isServer(options.libraryPath) else { return try openExistingLibrary(options) }
    do {
        return try LibraryLocation.open(options.libraryPath, access: .readOnly)
    } catch {
        printError(error.description)
        throw ExitCode(1)
    }
}
