import BookpipeStore
import Foundation
import Testing

/// `bookpipe stats`, `bookpipe rejected`, `bookpipe import --dry-run`, and how every command
/// answers a usage error.
@Suite(.timeLimit(.minutes(5))) struct LibraryCommandsTests {
    /// Three good rows (one with a bad ISBN checksum, one with a date that is not one) and a row
    /// with an unclosed quote.
    static let export = """
        Title,Author,ISBN,Date Added
        Dune,Frank Herbert,9780441013593,2021/3/5
        Emma,Jane Austen,9780141439588,someday
        "Broken "quote" here,Someone,,
        Persuasion,Jane Austen,,2020-01-01

        """

    static let rejectedReason = "unclosed quote starting at line 4, column 1; the row was skipped and reading went on at line 5"

    func imported() throws -> (directory: URL, library: String) {
        let directory = try CLI.temporaryDirectory()
        try Self.export.write(to: directory.appendingPathComponent("t.csv"), atomically: true, encoding: .utf8)
        let storygraph = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
        let result = try CLI.run(["import", "t.csv", storygraph, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                                 in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return (directory, directory.appendingPathComponent("lib.sqlite").path)
    }

    @Test("stats counts records by format, status and review state, lists the files and the last runs, newest first")
    func stats() throws {
        let (directory, library) = try imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storygraph = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
        _ = try CLI.run(["import", "t.csv", "--no-enrich", "--library", "lib.sqlite", "--progress", "none"], in: directory)
        let result = try CLI.run(["stats", "--library", "lib.sqlite"], in: directory)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let runs = try LibraryStore(path: library).runs()
        #expect(runs.count == 2)
        #expect(result.stdout == """
            lib.sqlite: 14 records, 1 rejected rows
              books: 14
              by format: generic 3, storygraph 11
              by status: pending 14
              by review state: notRouted 14
            files imported: 2
              t.csv (generic): 3 records, 1 rejected, complete
              \(storygraph) (storygraph): 11 records, 0 rejected, complete
            last runs: 2 of 2, newest first
              #2 \(runs[1].startedAt) finished: bookpipe import t.csv --no-enrich --library lib.sqlite --progress none
              #1 \(runs[0].startedAt) finished: bookpipe import t.csv \(storygraph) --no-enrich --library lib.sqlite --progress none

            """)
        let one = try CLI.run(["stats", "--library", "lib.sqlite", "--runs", "1"], in: directory)
        #expect(one.stdout.contains("last runs: 1 of 2, newest first\n  #2 "))
    }

    @Test("Commands that only look (stats, rejected, export, report --no-history, show, search, list) leave the library's bytes and modification time as they were")
    func lookingWritesNothing() async throws {
        let (directory, library) = try imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The first search and list build their indexes (a write); after them, the library is only read.
        #expect(try CLI.run(["search", "dune", "--library", "lib.sqlite"], in: directory).status == 0)
        #expect(try CLI.run(["list", "dune", "--library", "lib.sqlite"], in: directory).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: library))
        let modified = try FileManager.default.attributesOfItem(atPath: library)[.modificationDate] as? Date
        let id = try #require(try await LibraryStore(path: library, access: .readOnly).search("dune").first?.id)
        for arguments in [["stats"], ["rejected"], ["export", "--format", "jsonl", "--output", "out.jsonl"],
                          ["report", "--json", "report.json", "--no-history"], ["show", id], ["search", "dune"],
                          ["list", "author:herbert", "dune"], ["list", "--sort", "title-"], ["show", "1"]] {
            let result = try CLI.run(arguments + ["--library", "lib.sqlite"], in: directory)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: library)) == before, "\(arguments) changed the library")
            #expect(try FileManager.default.attributesOfItem(atPath: library)[.modificationDate] as? Date == modified,
                    "\(arguments) touched the library")
        }
    }

    @Test("rejected lists file:line and the reason, or CSV with the row as read; an empty list says so")
    func rejected() throws {
        let (directory, _) = try imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = try CLI.run(["rejected", "--library", "lib.sqlite"], in: directory)
        #expect(text.status == 0)
        #expect(text.stdout == "t.csv:4:1: \(Self.rejectedReason)\n")
        let csv = try CLI.run(["rejected", "--csv", "--library", "lib.sqlite"], in: directory)
        #expect(csv.status == 0)
        #expect(csv.stdout == "file,line,row,column,reason,rawText\r\n"
                + "t.csv,4,3,1,\"\(Self.rejectedReason)\",\"\"\"Broken \"\"quote\"\" here,Someone,,\"\r\n")
        let storygraph = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
        #expect(try CLI.run(["import", storygraph, "--no-enrich", "--library", "clean.sqlite", "--progress", "none"],
                            in: directory).status == 0)
        let none = try CLI.run(["rejected", "--library", "clean.sqlite"], in: directory)
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr == "clean.sqlite: no rejected rows.\n")
        let noneCSV = try CLI.run(["rejected", "--csv", "--library", "clean.sqlite"], in: directory)
        #expect(noneCSV.stdout == "file,line,row,column,reason,rawText\r\n")
    }

    @Test("stats and rejected on a path without a library say so, exit 1 and create nothing")
    func noLibrary() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for command in ["stats", "rejected"] {
            let result = try CLI.run([command, "--library", "none.sqlite"], in: directory)
            #expect(result.status == 1)
            #expect(result.stderr == "none.sqlite: no library here. Import something first, or pass --library.\n")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    @Test("import --dry-run detects, reads and normalises, reports rejections and findings, and writes nothing")
    func dryRun() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.export.write(to: directory.appendingPathComponent("t.csv"), atomically: true, encoding: .utf8)
        let result = try CLI.run(["import", "t.csv", "--dry-run", "--library", "lib.sqlite", "--progress", "none"], in: directory)
        #expect(result.status == 0)
        let format = "generic comma-separated file (columns guessed: title=\"Title\", author=\"Author\", isbn=\"ISBN\")"
        #expect(result.stderr == """
            t.csv: detected \(format)
            t.csv: \(format), utf-8: 4 rows read, none stored (dry run), 1 rejected
              rejected t.csv:4:1: \(Self.rejectedReason)
              finding: 1 × date.unparseable (warning)
              finding: 1 × isbn.invalid-checksum (warning)
            dry run: nothing was written (lib.sqlite was not opened).

            """)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["t.csv"], "no library file")
        let missing = try CLI.run(["import", "missing.csv", "--dry-run", "--library", "lib.sqlite", "--progress", "none"],
                                  in: directory)
        #expect(missing.status == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["t.csv"])
    }

    @Test("Bare bookpipe prints its help on standard error and exits 2; so does a command group without a subcommand",
          arguments: [[], ["image"], ["catalog"], ["pipelines"]])
    func bareCommand(_ arguments: [String]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(arguments, in: directory)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        let help = try CLI.run(arguments + ["--help"], in: directory)
        #expect(help.status == 0)
        #expect(result.stderr == help.stdout, "the same help as --help")
        #expect(result.stderr.contains("USAGE: " + (["bookpipe"] + arguments).joined(separator: " ") + " <subcommand>"))
    }

    @Test("A usage error names the command that was run, with its own usage, and exits 2",
          arguments: [
            (["import", "x.csv", "--offline"],
             "Error: --offline uses only the local catalogue: pass --catalog FILE (build one with `bookpipe catalog import DUMP --catalog FILE`).",
             "bookpipe import"),
            (["import", "x.csv", "--delimiter", "ab"],
             "Error: --delimiter takes one character (',' ';' '|') or 'tab', not 'ab'.", "bookpipe import"),
            (["stats", "--runs=-1"], "Error: --runs must be 0 or more, not -1.", "bookpipe stats"),
            (["export", "--format", "xml"],
             "Error: The value 'xml' is invalid for '--format <format>'. Please provide one of 'json', 'jsonl', 'csv' or 'wingtip'.",
             "bookpipe export"),
            (["image", "crops", "a.jpg"], "Error: Missing expected argument '--boxes <boxes>'", "bookpipe image crops"),
          ])
    func usageErrors(_ arguments: [String], _ message: String, _ command: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(arguments, in: directory)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == message, "\(result.stderr)")
        #expect(lines.contains { $0.hasPrefix("Usage: \(command) ") }, "\(result.stderr)")
        #expect(lines.contains("  See '\(command) --help' for more information."), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }
}
