import BookpipeTesting
import Foundation
import Testing

/// The configuration files (`bookpipe.yaml` beside the library, the user's config.yaml) and
/// `bookpipe config`, through the binary.
@Suite(.timeLimit(.minutes(5))) struct ConfigCommandTests {
    /// A folder with a small export, and an environment whose home and config folder are inside it.
    func setUp() throws -> (directory: URL, environment: [String: String]) {
        let directory = try CLI.temporaryDirectory()
        try "Title,Author,ISBN\nDune,Frank Herbert,9780441013593\nEmma,Jane Austen,\n"
            .write(to: directory.appendingPathComponent("t.csv"), atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        for name in ["BOOKPIPE_LIBRARY", "BOOKPIPE_CATALOG", "BOOKPIPE_CONTACT", "BOOKPIPE_OPENLIBRARY_URL",
                     "BOOKPIPE_GOOGLEBOOKS_URL", "BOOKPIPE_SCAN_URL"] {
            environment.removeValue(forKey: name)
        }
        environment["HOME"] = directory.path
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("xdg").path
        return (directory, environment)
    }

    func write(_ text: String, to path: String, in directory: URL) throws {
        let url = directory.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    @Test("The library named in ./bookpipe.yaml is the one import writes and stats reads, relative to the file")
    func libraryFromFile() throws {
        let (directory, environment) = try setUp()
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("library: shelf/books.sqlite\n", to: "bookpipe.yaml", in: directory)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("shelf"), withIntermediateDirectories: true)
        let imported = try CLI.run(["import", "t.csv", "--no-enrich", "--progress", "none"], in: directory, environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("shelf/books.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("library.sqlite").path))
        let stats = try CLI.run(["stats"], in: directory, environment: environment)
        #expect(stats.status == 0)
        #expect(stats.stdout.hasPrefix("\(directory.path)/shelf/books.sqlite: 2 records"), "\(stats.stdout)")
    }

    @Test("The catalogue set in the user's config.yaml reaches enrichment (a missing one is named); --catalog wins over it")
    func catalogFromUserFile() throws {
        let (directory, environment) = try setUp()
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("catalog: ~/catalogs/none.sqlite\n", to: "xdg/bookpipe/config.yaml", in: directory)
        let result = try CLI.run(["import", "t.csv", "--offline", "--progress", "none"], in: directory, environment: environment)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("Error: \(directory.path)/catalogs/none.sqlite: no such catalogue;"), "\(result.stderr)")
        let flagged = try CLI.run(["import", "t.csv", "--offline", "--catalog", "other.sqlite", "--progress", "none"],
                                  in: directory, environment: environment)
        #expect(flagged.stderr.hasPrefix("Error: other.sqlite: no such catalogue;"), "\(flagged.stderr)")
    }

    @Test("config shows each value and where it came from: flag, env, file:line (beside the library first), default")
    func showsOrigins() throws {
        let (directory, baseEnvironment) = try setUp()
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("# this library\ncontact: mailto:me@example.org\nsources: [catalog, openlibrary]\n", to: "bookpipe.yaml", in: directory)
        try write("contact: mailto:user@example.org\nmax-cache-age: 30d\ncatalog: /data/ol.sqlite\n",
                  to: "xdg/bookpipe/config.yaml", in: directory)
        var environment = baseEnvironment
        environment["BOOKPIPE_CATALOG"] = "/env/ol.sqlite"
        let result = try CLI.run(["config", "--openlibrary-url", "http://127.0.0.1:9"], in: directory, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            configuration files, the first winning:
              \(directory.path)/bookpipe.yaml (read)
              \(directory.path)/xdg/bookpipe/config.yaml (read)
            library           library.sqlite         default
            catalog           /env/ol.sqlite         env BOOKPIPE_CATALOG
            contact           mailto:me@example.org  \(directory.path)/bookpipe.yaml:2
            sources           catalog,openlibrary    \(directory.path)/bookpipe.yaml:3
            openlibrary-url   http://127.0.0.1:9     flag --openlibrary-url
            googlebooks-url   (not set)              default
            max-cache-age     30d                    \(directory.path)/xdg/bookpipe/config.yaml:2
            openlibrary-rate  (not set)              default
            googlebooks-rate  (not set)              default
            scan-backend      (not set)              default

            """)
        let json = try CLI.run(["config", "--json"], in: directory, environment: baseEnvironment)
        let lines = json.stdout.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines[1] == #"{"key":"catalog","origin":"\#(directory.path)/xdg/bookpipe/config.yaml:3","value":"/data/ol.sqlite"}"#)
        #expect(lines[9] == #"{"key":"scan-backend","origin":"default"}"#)
    }

    @Test("A bad key or value stops every command but completion with exit 2, naming file, line and the valid choices")
    func badFile() throws {
        let (directory, environment) = try setUp()
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("contact: me\nsources: catalog, openlibary\n", to: "bookpipe.yaml", in: directory)
        // scan's own checks (no backend) would fail too: the file's problem is the one told.
        for arguments in [["config"], ["stats"], ["import", "t.csv", "--no-enrich"], ["scan", "shelf.jpg"]] {
            let result = try CLI.run(arguments, in: directory, environment: environment)
            #expect(result.status == 2)
            #expect(result.stderr == """
                \(directory.path)/bookpipe.yaml:2:10: error: unknown source 'openlibary'
                  did you mean 'openlibrary'? valid sources: catalog, openlibrary, googlebooks

                """)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("library.sqlite").path))
        // Completion reads no setting: it still works, so the shell is not broken by a typo in the file.
        #expect(try CLI.run(["completion", "bash"], in: directory, environment: environment).status == 0)
    }

    @Test("The file beside a library named with --library is read, not the current folder's")
    func besideTheLibrary() throws {
        let (directory, environment) = try setUp()
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("contact: here\n", to: "bookpipe.yaml", in: directory)
        try write("contact: beside\n", to: "elsewhere/bookpipe.yaml", in: directory)
        let result = try CLI.run(["config", "--json", "--library", "elsewhere/lib.sqlite"], in: directory, environment: environment)
        #expect(result.stdout.contains(#"{"key":"contact","origin":"elsewhere/bookpipe.yaml:1","value":"beside"}"#)
                || result.stdout.contains(#""origin":"\#(directory.path)/elsewhere/bookpipe.yaml:1","value":"beside"}"#), "\(result.stdout)")
    }

    @Test("The rate in bookpipe.yaml replaces the pipeline file's; --openlibrary-rate wins over it")
    func rateFromFile() throws {
        let (directory, environment) = try setUp()
        defer { try? FileManager.default.removeItem(at: directory) }
        let books = FakeBook.generated(count: 4, seed: 5)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        try EnrichCommandTests.writeExport(books, to: directory.appendingPathComponent("export.csv"))
        try EnrichCommandTests.quickPipeline.write(to: directory.appendingPathComponent("quick.yaml"), atomically: true, encoding: .utf8)
        try write("openlibrary-rate: 150\nopenlibrary-url: \(services.baseURL)\n", to: "bookpipe.yaml", in: directory)
        let imported = try CLI.run(["import", "export.csv", "--no-enrich", "--progress", "none"], in: directory, environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let fromFile = try CLI.run(["enrich", "--pipeline", "quick.yaml", "--progress", "none"], in: directory, environment: environment)
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stderr.contains("at 150/s"), "\(fromFile.stderr)")
        let flagged = try CLI.run(["enrich", "--all", "--pipeline", "quick.yaml", "--openlibrary-rate", "120", "--progress", "none"],
                                  in: directory, environment: environment)
        #expect(flagged.stderr.contains("at 120/s"), "\(flagged.stderr)")
        let wrong = try CLI.run(["enrich", "--openlibrary-rate", "0"], in: directory, environment: environment)
        #expect(wrong.status == 2)
        #expect(wrong.stderr.hasPrefix("Error: --openlibrary-rate takes a number of requests per second above 0, such as 3 or 0.5, not '0'."),
                "\(wrong.stderr)")
    }
}
