import BookpipeCore
import BookpipePostgres
import BookpipeStore
import Foundation
import Testing

/// `--library postgres://…`: the commands that work on a PostgreSQL library (stats, list, show,
/// export, enrich) give what they give on SQLite for the same records; the others refuse in one line.
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

    @Test("stats, list, show, export and enrich work on a PostgreSQL library and give what SQLite gives; report refuses in one line",
          .timeLimit(.minutes(2)))
    func sameAsSQLite() async throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        let sqlite = directory.appendingPathComponent("library.sqlite").path
        let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
        let dump = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path
        #expect(try CLI.run(["catalog", "import", dump, "--catalog", catalog], in: directory).status == 0)
        let imported = try CLI.run(["import", goodreads, "--no-enrich", "--library", sqlite, "--progress", "none"], in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")

        // The same records, files and order in a PostgreSQL library.
        let url = try Self.newLibraryURL()
        let source = try LibraryStore(path: sqlite)
        let target = try PostgresLibrary(url: url)
        for file in try source.sourceFiles() {
            try await target.registerSourceFile(file, runID: nil)
            var records: [BookRecord] = []
            try await source.forEachRecord { if $0.origin.fileHash == file.hash { records.append($0) } }
            _ = try await target.submitInsert(records, runID: nil)
            _ = try await target.finishSourceFile(hash: file.hash, rowsTotal: file.rowsTotal ?? records.count,
                                                  reading: file.reading, matchedRows: 0)
        }
        try await source.close()

        for library in [sqlite, url] {
            let enriched = try CLI.run(["enrich", "--library", library, "--catalog", catalog, "--offline", "--progress", "none"],
                                       in: directory)
            #expect(enriched.status == 0, "\(library): \(enriched.stderr)")
            #expect(enriched.stderr.contains("rows from catalog."), "\(enriched.stderr)")
        }
        func output(_ arguments: [String], _ library: String) throws -> String {
            let result = try CLI.run(arguments + ["--library", library], in: directory)
            #expect(result.status == 0, "\(arguments) on \(library): \(result.stderr)")
            return result.stdout
        }
        #expect(try output(["export", "--format", "json"], url) == output(["export", "--format", "json"], sqlite))
        #expect(try output(["list", "author:tolkien"], url) == output(["list", "author:tolkien"], sqlite))
        #expect(try output(["list", "--sort", "year-"], url) == output(["list", "--sort", "year-"], sqlite))
        #expect(try output(["show", "3"], url) == output(["show", "3"], sqlite))
        let stats = try output(["stats"], url)
        let sqliteStats = try output(["stats"], sqlite)
        #expect(stats.contains("enriched "), "enrich matched records on both: \(stats)")
        // The first line names the library; the counts below it are the same.
        #expect(stats.split(separator: "\n").dropFirst().prefix(5) == sqliteStats.split(separator: "\n").dropFirst().prefix(5))

        let report = try CLI.run(["report", "--library", url], in: directory)
        #expect(report.status == 1)
        #expect(report.stderr.contains("does not work on a PostgreSQL library yet"))
        #expect(report.stderr.split(separator: "\n").count == 1)
    }
}
