import Foundation

/// The shared fixtures (real sample inputs and API responses) in `../shared/fixtures`.
///
/// The folder is found from this source file's location (`<repo>/../shared/fixtures`), or from
/// the `BOOKPIPE_FIXTURES` environment variable when set. It is not part of the repository: the
/// team's machines and CI have it beside their clones, a fresh clone does not. Tests that read it
/// carry the trait `.enabled(if: TestFixtures.sharedAvailable)`, so on a fresh clone they are
/// skipped and the run prints one line naming them (``TestFixtures/sharedAvailable``). Inputs the
/// project wrote itself live in the repository (each test target's `Inputs`, `samples/`).
///
/// ```swift
/// @Test("The Books API fixture maps to an edition candidate", .enabled(if: TestFixtures.sharedAvailable))
/// func booksAPI() throws { let data = try TestFixtures.data("openlibrary-books-api-jscmd-data-bookwyrm.json") }
/// ```
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

    /// The URL of fixture `name` (for example `openlibrary-books-api-jscmd-data-bookwyrm.json`,
    /// or `real/goodreads_31col_de.csv`).
    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// The path of fixture `name`.
    public static func path(_ name: String) -> String { url(name).path }

    /// The bytes of fixture `name`.
    /// - Throws: the file system's error, naming the path, if it cannot be read.
    public static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// What is not run without the shared fixtures, for the one line printed then.
    public static let testsNeedingShared = [
        "real-export comparison with Python's csv module (BookpipeIngestTests.RealExportTests)",
        "shared fixture imports (BookpipeIngestTests.CSVRecordReaderFixtureTests)",
        "fixture titles check (BookpipeCoreTests.TitleNormalizerTests)",
        "Open Library / Google Books response fixtures (BookpipeEnrichmentTests: FakeBookServices, "
            + "GoogleBooksSource, HTTPClient, LoopbackHTTPServer, OpenLibrarySource)",
        "list, remove and forget on real exports (BookpipeCLITests.ListCommandTests)",
        "a real Goodreads export edited and imported again (BookpipeCLITests.ReimportCommandTests.realExportEdited)",
    ]

    /// True when the shared fixtures folder exists. The first time it is false, one line saying
    /// which tests are not run goes to standard output (once per test run, whichever test asks first).
    public static let sharedAvailable: Bool = {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
        if !exists {
            print("bookpipe tests: \(directory.standardizedFileURL.path) not found (set BOOKPIPE_FIXTURES to run them), "
                + "so these were not run: " + testsNeedingShared.joined(separator: "; "))
        }
        return exists
    }()
}
