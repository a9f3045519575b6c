import Foundation

/// The shared fixtures (real sample inputs and API responses) in `../shared/fixtures`.
///
/// The folder is found from this source file's location (`<repo>/../shared/fixtures`), or from
/// the `BOOKPIPE_FIXTURES` environment variable when set.
public enum TestFixtures {
    /// The fixtures folder.
    public static var directory: URL {
        if let override = ProcessInfo.processInfo.environment["BOOKPIPE_FIXTURES"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        return URL(fileURLWithPath: #filePath)       // <repo>/Sources/BookpipeTesting/TestFixtures.swift
            .deletingLastPathComponent()             // BookpipeTesting
            .deletingLastPathComponent()             // Sources
            .deletingLastPathComponent()             // <repo>
            .deletingLastPathComponent()             // parent of the repo
            .appendingPathComponent("shared/fixtures", isDirectory: true)
    }

    /// The URL of fixture `name` (for example `openlibrary-books-api-jscmd-data-bookwyrm.json`).
    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// The bytes of fixture `name`.
    /// - Throws: the file system's error, naming the path, if it cannot be read.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }
}
