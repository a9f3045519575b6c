import Foundation
import Testing

/// "Did you mean" for misspelt commands and options, and `bookpipe completion`.
@Suite(.timeLimit(.minutes(5))) struct UsageSuggestionsTests {
    @Test("A misspelt command or option gets the closest name, the usage of where it was looked for, and exit 2", arguments: [
        (["imprt", "x.csv"], """
            error: unknown command 'imprt'; did you mean 'import'?
            Usage: bookpipe <subcommand>
              See 'bookpipe --help' for more information.

            """),
        (["import", "--no-enrichment", "x.csv"], """
            error: unknown option '--no-enrichment'; did you mean '--no-enrich'?
            Usage: bookpipe import [<options>] <files> ...
              See 'bookpipe import --help' for more information.

            """),
        (["review", "lst"], """
            error: unknown command 'review lst'; did you mean 'review list'?
            Usage: bookpipe review <subcommand>
              See 'bookpipe review --help' for more information.

            """),
        (["review", "list", "--jsn"], """
            error: unknown option '--jsn'; did you mean '--json'?
            Usage: bookpipe review list [--kind <kind>] [--json] [--library <library>]
              See 'bookpipe review list --help' for more information.

            """),
        (["frobnicate"], """
            error: unknown command 'frobnicate'
            Usage: bookpipe <subcommand>
              See 'bookpipe --help' for more information.

            """),
    ])
    func didYouMean(arguments: [String], expected: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(arguments, in: directory)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == expected)
    }

    @Test("An option given a value that looks like a command is not taken for a misspelt command")
    func optionValues() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["export", "--format", "jsn"], in: directory)
        #expect(result.status == 2)
        #expect(!result.stderr.contains("unknown command"), "\(result.stderr)")
    }

    @Test("completion prints each shell's script, naming the commands; an unknown shell is a usage error", arguments: [
        ("bash", "-F _bookpipe bookpipe"), ("zsh", "#compdef bookpipe"), ("fish", "complete -c 'bookpipe'"),
    ])
    func completion(shell: String, marker: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["completion", shell], in: directory)
        #expect(result.status == 0)
        #expect(result.stdout.contains(marker))
        #expect(result.stdout.contains("import-scan"))
        let bad = try CLI.run(["completion", "tcsh"], in: directory)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("'tcsh'"))
    }
}
