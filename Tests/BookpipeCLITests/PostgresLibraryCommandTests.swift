import BookpipeCore
import BookpipePostgres
import Foundation
import Testing

/// `--library postgres://…`: the commands that work on a PostgreSQL library (import, enrich,
/// review, link, remove, forget, search, stats, list, show, export, report) give what they give on SQLite for the same
/// lists; the others refuse in one line.
@Suite(.serialized) struct PostgresLibraryCommandTests {
    /// A new, empty database on the test server (`BOOKPIPE_TEST_POSTGRES`, started by
    /// scripts/run-tests.sh), as a `postgresql://` URL over the cluster's unix socket.
    static func newLibraryURL() throws -> String {
        guard let server = ProcessInfo.processInfo.environment["BOOKPIPE_TEST_POSTGRES"], !server.isEmpty else {
            throw CocoaError(.featureUnsupported, userInfo: [NSDebugDescriptionErrorKey:
                "BOOKPIPE_TEST_POSTGRES is not set: run the tests with `bash scripts/run-tests.sh` (it starts a throwaway "
                + "PostgreSQL cluster), or eval \"$(bash scripts/postgres-test-cluster.sh start)\" first."])
        }
        var settings: [String: String] = [:]
        for pair in server.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { settings[parts[0]] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "'")) }
        }
        let name = "cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try PostgresServer.createDatabase(name, on: server)
        let host = settings["host"].map { "host=\($0)&" } ?? ""
        return "postgresql:///\(name)?\(host)user=\(settings["user"] ?? "bookpipe")"
    }

    @Test("backup of a PostgreSQL library: a pg_dump custom-format dump that pg_restore loads into a new database with the same export; an existing file is kept",
          .timeLimit(.minutes(5)))
    func backupIsARestorableDump() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        let url = try Self.newLibraryURL()
        #expect(try CLI.run(["import", goodreads, "--no-enrich", "--library", url, "--progress", "none"], in: directory).status == 0)
        let backup = try CLI.run(["backup", "library.dump", "--library", url], in: directory)
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stderr.contains("as a pg_dump custom-format dump"), "\(backup.stderr)")
        let dump = directory.appendingPathComponent("library.dump").path
        #expect(try Data(contentsOf: URL(fileURLWithPath: dump)).prefix(5) == Data("PGDMP".utf8), "pg_dump's custom format")
        #expect(!FileManager.default.fileExists(atPath: dump + ".partial"))

        let again = try CLI.run(["backup", "library.dump", "--library", url], in: directory)
        #expect(again.status == 1 && again.stderr.contains("library.dump exists; a backup never replaces a file unless --overwrite"),
                "\(again.stderr)")

        let restored = try Self.newLibraryURL()
        let restore = Process()
        restore.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        restore.arguments = ["pg_restore", "--no-owner", "--dbname=" + restored, dump]
        try restore.run()
        restore.waitUntilExit()
        #expect(restore.terminationStatus == 0)
        let original = try CLI.run(["export", "--format", "jsonl", "--library", url], in: directory)
        let copy = try CLI.run(["export", "--format", "jsonl", "--library", restored], in: directory)
        #expect(original.status == 0 && copy.status == 0, "\(original.stderr) \(copy.stderr)")
        #expect(original.stdout.split(separator: "\n").count == 59)
        #expect(copy.stdout == original.stdout, "the restored library exports what the original does")
    }

    @Test("import, enrich, review, link, remove, forget, search, stats, list, show and export work on a PostgreSQL library and give what SQLite gives, report included",
          .timeLimit(.minutes(5)))
    func sameAsSQLite() async throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        let sqlite = directory.appendingPathComponent("library.sqlite").path
        let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        let storygraph = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
        let dump = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path
        #expect(try CLI.run(["catalog", "import", dump, "--catalog", catalog], in: directory).status == 0)
        let url = try Self.newLibraryURL()
        for library in [sqlite, url] {
            let imported = try CLI.run(["import", goodreads, storygraph, "--no-enrich", "--library", library, "--progress", "none"],
                                       in: directory)
            #expect(imported.status == 0, "\(library): \(imported.stderr)")
            #expect(imported.stderr.contains("70 records"), "\(imported.stderr)")
            let enriched = try CLI.run(["enrich", "--library", library, "--catalog", catalog, "--offline", "--progress", "none"],
                                       in: directory)
            #expect(enriched.status == 0, "\(library): \(enriched.stderr)")
            #expect(enriched.stderr.contains("rows from catalog."), "\(enriched.stderr)")
            // The uncertain match (Children of Dune) is chosen by a person on both.
            let chosen = try CLI.run(["review", "choose", "1bd891400412d29e6e6d2c6d21e88ceb:13", "1", "--library", library],
                                     in: directory)
            #expect(chosen.status == 0, "\(library): \(chosen.stderr)")
            // A person links two records, removes one and forgets a file, on both.
            for arguments in [["link", "1bd891400412d29e6e6d2c6d21e88ceb:1", "1bd891400412d29e6e6d2c6d21e88ceb:2"],
                              ["remove", "1bd891400412d29e6e6d2c6d21e88ceb:3", "--yes"],
                              ["forget", storygraph, "--yes"]] {
                let result = try CLI.run(arguments + ["--library", library], in: directory)
                #expect(result.status == 0, "\(arguments) on \(library): \(result.stderr)")
            }
        }
        func output(_ arguments: [String], _ library: String) throws -> String {
            let result = try CLI.run(arguments + ["--library", library], in: directory)
            #expect(result.status == 0, "\(arguments) on \(library): \(result.stderr)")
            return result.stdout
        }
        let exported = try output(["export", "--format", "json"], url)
        #expect(exported.contains("Children of Dune"))
        #expect(try exported == output(["export", "--format", "json"], sqlite))
        #expect(try output(["list", "author:herbert"], url) == output(["list", "author:herbert"], sqlite))
        #expect(try output(["list", "--sort", "year-"], url) == output(["list", "--sort", "year-"], sqlite))
        // The same story, but for when the person chose (each library's own decision time).
        func story(_ library: String) throws -> String {
            try output(["show", "13"], library)
                .replacingOccurrences(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, with: "TIME", options: .regularExpression)
        }
        #expect(try story(url) == story(sqlite))
        #expect(try story(url).contains("review history: TIME choose"))
        #expect(try output(["show", "1bd891400412d29e6e6d2c6d21e88ceb:1"], url).contains("1bd891400412d29e6e6d2c6d21e88ceb:2"),
                "the link shows")
        #expect(try output(["stats"], url).contains("58 records"), "one removed, the StoryGraph file forgotten")
        let stats = try output(["stats"], url)
        let sqliteStats = try output(["stats"], sqlite)
        // The first line names the library; the counts below it are the same.
        #expect(stats.split(separator: "\n").dropFirst().prefix(5) == sqliteStats.split(separator: "\n").dropFirst().prefix(5))
        #expect(stats.contains("enriched "), "enrich matched records on both: \(stats)")
        #expect(try output(["review", "list"], url) == output(["review", "list"], sqlite))

        // The same records found (ranked by each engine's own means: compared as sets).
        for query in [["dune"], ["frank", "herb"], ["0441013597"], ["978-0-441-01359-3"], ["the"], ["herbert"]] {
            func found(_ library: String) throws -> [Substring] {
                try output(["search"] + query + ["--limit", "100"], library).split(separator: "\n").sorted()
            }
            #expect(try found(url) == found(sqlite), "search \(query)")
            #expect(try !found(url).isEmpty, "search \(query)")
        }

        // The report: the same JSON and CSV (but for what names the library and when things happened).
        #expect(try Self.report(url, in: directory) == Self.report(sqlite, in: directory))
        #expect(try Self.report(url, in: directory).json.contains("\"records\":58"))
    }

    @Test("A newer export on both engines, then the same file twice more: each later run says already imported, and the file stays complete",
          .timeLimit(.minutes(5)))
    func newerExportStaysImported() throws {
        let directory = try CLI.temporaryDirectory()
        let older = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        let newer = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export-december.csv").path
        for library in [directory.appendingPathComponent("library.sqlite").path, try Self.newLibraryURL()] {
            func importing(_ file: String) throws -> String {
                let result = try CLI.run(["import", file, "--no-enrich", "--library", library, "--progress", "none"], in: directory)
                #expect(result.status == 0, "\(library): \(result.stderr)")
                return result.stderr
            }
            _ = try importing(older)
            let applied = try importing(newer)
            #expect(applied.contains("59 rows read, 1 new, 1 changed"), "\(library): \(applied)")
            // The entries it matched are other files' records: a run that finds the file complete
            // must not count only its own record and call it unfinished.
            for _ in 0..<2 {
                let again = try importing(newer)
                #expect(again.contains("already imported (59 rows); nothing changed."), "\(library): \(again)")
            }
            let stats = try CLI.run(["stats", "--library", library], in: directory)
            #expect(stats.stdout.contains("goodreads_library_export-december.csv (goodreads): 1 record, 0 rejected, complete"),
                    "\(library): \(stats.stdout)")
        }
    }

    /// A report's JSON and CSV (`--no-history`), with what differs between two libraries holding the
    /// same records normalised: the library's location and the command lines naming it, times (when
    /// the report was made, when each run started and ended), run durations and the sources' measured
    /// latency.
    static func report(_ library: String, in directory: URL, arguments: [String] = []) throws -> (json: String, csv: String) {
        let csv = directory.appendingPathComponent("report-\(UUID().uuidString).csv").path
        let result = try CLI.run(["report", "--no-history", "--json", "-", "--csv", csv, "--library", library] + arguments,
                                 in: directory)
        #expect(result.status == 0, "report on \(library): \(result.stderr)")
        func normalised(_ text: String) -> String {
            text.replacingOccurrences(of: #""(library|command)":"(\\.|[^"\\])*""#, with: "\"$1\":\"LIBRARY\"",
                                      options: .regularExpression)
                .replacingOccurrences(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, with: "TIME", options: .regularExpression)
                .replacingOccurrences(of: #""(durationSeconds|meanLatencyMilliseconds)":[0-9.eE+-]+"#, with: "\"$1\":0",
                                      options: .regularExpression)
        }
        let rows = (try? String(contentsOfFile: csv, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: csv)
        return (normalised(result.stdout), normalised(rows))
    }

    @Test("report on PostgreSQL: the 18 real exports imported on both engines give the same report JSON and CSV; --check and --compare work; the history is kept",
          .timeLimit(.minutes(10)))
    func reportOfRealExports() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = ProcessInfo.processInfo.environment["BOOKPIPE_REAL_FIXTURES"] ?? "/work/shared/fixtures/real"
        let exports = try FileManager.default.contentsOfDirectory(atPath: folder)
            .filter { $0.hasSuffix(".csv") || $0.hasSuffix(".tsv") }.sorted().map { folder + "/" + $0 }
        #expect(exports.count >= 10, "the real exports are missing from \(folder)")
        let sqlite = directory.appendingPathComponent("library.sqlite").path
        let url = try Self.newLibraryURL()
        // Each export as a list of its own (two exports of one list disagree); one the reader refuses
        // (headerless) is refused on both.
        for (index, export) in exports.enumerated() {
            let statuses = try [sqlite, url].map { library in
                try CLI.run(["import", export, "--list", "list\(index)", "--no-enrich", "--library", library, "--progress", "none"],
                            in: directory).status
            }
            #expect(statuses[0] == statuses[1], "\(export): \(statuses)")
        }
        let onServer = try Self.report(url, in: directory), onFile = try Self.report(sqlite, in: directory)
        #expect(onServer.json == onFile.json)
        #expect(onServer.csv == onFile.csv)
        #expect(onServer.json.contains("\"duplicates\""), "a report with its sections")
        #expect(onServer.csv.split(whereSeparator: \.isNewline).count > 100, "the problem rows (CRLF lines)")

        // Checks: an error-level check that fails exits 1 on both.
        let checks = directory.appendingPathComponent("checks.yaml")
        try "checks:\n  - duplicates.books == 0: error\n".write(to: checks, atomically: true, encoding: .utf8)
        for library in [sqlite, url] {
            let checked = try CLI.run(["report", "--no-history", "--check", checks.path, "--json", "-", "--library", library],
                                      in: directory)
            #expect(checked.status == 1, "\(library): \(checked.stderr)")
        }
        // History: the first report is kept, the second compares with it (and --compare names it).
        let first = try CLI.run(["report", "--json", "-", "--library", url], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        let second = try CLI.run(["report", "--json", "-", "--compare", "1", "--library", url], in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("\"previous\""), "the second report compares with the first")
        #expect(try CLI.run(["report", "--no-history", "--json", "-", "--compare", "9", "--library", url], in: directory).status == 2)
    }
}
