import ArgumentParser
import BookpipeStore
import Foundation

/// The commands that work on a library that must exist already: those that only read it
/// (`stats`, `export`, `report`, `search`, `show`, `rejected`, `review list`, `backup`) and those
/// that only add to it (`enrich`, `review` decisions, `run` of a pipeline that reads the
/// library's records). None of them creates a library: on a path where none is (a typo in
/// `--library`, a cron job pointed at the wrong folder) they say so and exit 1, and no file is
/// left behind.
enum ExistingLibrary {
    /// What a command says when no library is at `path`.
    static func missingMessage(_ path: String) -> String {
        "\(path): no library here. Import something first, or pass --library."
    }
}

/// Says there is no library at the path and exits 1 unless a file is there, so a command that
/// works on an existing library never creates an empty one (a typo in `--library`).
func requireExistingLibrary(_ options: LibraryOptions) throws {
    guard FileManager.default.fileExists(atPath: options.libraryPath) else {
        printError(ExistingLibrary.missingMessage(options.libraryPath))
        throw ExitCode(1)
    }
}

/// Opens the library a read-only command looks at, for reading only (nothing is written, see
/// ``LibraryStore/Access/readOnly``; a read-only file or folder is fine), or says there is none
/// and exits 1 (no empty library is created by looking).
func openExistingLibrary(_ options: LibraryOptions) throws -> LibraryStore {
    try requireExistingLibrary(options)
    do {
        return try LibraryStore(path: options.libraryPath, access: .readOnly)
    } catch {
        printError(error.description)
        throw ExitCode(1)
    }
}
