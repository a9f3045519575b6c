import BookpipeCatalog
import ArgumentParser
import BookpipeEnrichment
import Foundation

/// `bookpipe catalog`: the local catalogue, Open Library dumps indexed for offline lookups.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Builds and inspects the local catalogue (Open Library dumps indexed for offline lookups).",
        discussion: """
            The catalogue is one SQLite file, separate from any library, so one big dump serves every library. \
            Dumps: https://openlibrary.org/developers/dumps (editions, works and authors; .txt or .txt.gz).
            """,
        subcommands: [Import.self, Stats.self, Search.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Imports Open Library dump files into the catalogue.",
            discussion: """
                Lines of any record type may come in any order and any file. Re-importing a file changes nothing; \
                a newer revision of a record replaces the older one. A malformed line is reported with its line number \
                and skipped. Ctrl-C stops after the current batch; running the same command again finishes the job.
                """)

        @Argument(help: "Open Library dump files (.txt or .txt.gz).")
        var dumps: [String]

        @OptionGroup var catalog: CatalogOptions

        @Option(help: "Progress on standard error: auto, bar, json or none.")
        var progress: ProgressMode = .auto

        func run() async throws {
            // Every file must exist before the catalogue is created or touched.
            var missing = false
            for dump in dumps where !FileManager.default.fileExists(atPath: dump) {
                printError("error: \(CatalogError.dumpNotFound(path: dump))")
                missing = true
            }
            if missing { throw ExitCode(1) }

            let catalogue = try catalog.open()
            var failed = false
            for dump in dumps {
                let mode = progress
                let task = Task { () throws -> CatalogImportSummary in
                    let printer = CatalogProgressPrinter(mode: mode)
                    defer { printer.finish() }
                    return try await catalogue.import(dumpFile: dump) { printer.show($0) }
                }
                let signals = SignalCancellation { task.cancel() }
                let result = await task.result
                _ = signals
                switch result {
                case .success(let summary):
                    print(CatalogReport.summary(summary))
                case .failure(CatalogError.interrupted(let dump, let lines)):
                    printError("Interrupted: \(lines) lines of \(dump) are safely in \(catalogue.path); "
                               + "run the same command again to finish (already stored lines are skipped quickly).")
                    throw ExitCode(130)
                case .failure(let error):
                    printError("error: \(error)")
                    failed = true
                }
            }
            if let counts = try? catalogue.counts() {
                print(CatalogReport.totals(counts, path: catalogue.path))
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prints what the catalogue holds.")

        @OptionGroup var catalog: CatalogOptions

        @Flag(help: "Print the counts as one JSON object on one line.")
        var json = false

        func run() async throws {
            let path = catalog.catalogPath
            guard FileManager.default.fileExists(atPath: path) else {
                printError("error: \(path): no catalogue here. Build one with `bookpipe catalog import DUMP...`, or pass --catalog.")
                throw ExitCode(1)
            }
            let catalogue = try catalog.open()
            let counts: CatalogCounts
            do {
                counts = try catalogue.counts()
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(counts), as: UTF8.self))
            } else {
                print(CatalogReport.stats(counts, path: path))
            }
        }
    }
}

extension CatalogCommand {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Looks books up in the catalogue by ISBN or by title and author, as enrichment does.")

        @Option(help: "A title to search for.")
        var title: String?

        @Option(help: "The author (\"First Last\" or \"Last, First\"), to rank and filter title matches.")
        var author: String?

        @Option(help: "An ISBN-10 or ISBN-13 to look up (repeatable).")
        var isbn: [String] = []

        @OptionGroup var catalog: CatalogOptions

        func validate() throws {
            if author != nil, title == nil { throw ValidationError("--author ranks title matches: pass --title too.") }
            if title == nil, isbn.isEmpty { throw ValidationError("Pass --title (with --author if known) or --isbn.") }
        }

        func run() async throws {
            let path = catalog.catalogPath
            guard FileManager.default.fileExists(atPath: path) else {
                printError("error: \(path): no catalogue here. Build one with `bookpipe catalog import DUMP...`, or pass --catalog.")
                throw ExitCode(1)
            }
            let source = LocalCatalogSource(catalog: try catalog.open())
            var lines: [String] = []
            if !isbn.isEmpty {
                let answers = try await source.lookUp(isbns: isbn)
                for value in isbn {
                    lines.append("ISBN \(value): " + CatalogReport.describe(answers[value] ?? .notFound))
                }
            }
            if let title {
                let answer = try await source.search(title: title, author: author)
                lines.append("\"\(title)\"\(author.map { " by \($0)" } ?? ""): " + CatalogReport.describe(answer))
            }
            print(lines.joined(separator: "\n"))
            let counters = source.statistics.snapshot
            if let mean = counters.meanLatency {
                printError("\(counters.requests) queries, \(String(format: "%.2f", CatalogReport.seconds(mean) * 1000)) ms each on average")
            }
            if counters.failures > 0 { throw ExitCode(1) }
        }
    }
}

/// The catalogue option every catalogue command takes.
struct CatalogOptions: ParsableArguments {
    @Option(name: .long, help: "The catalogue file (default $BOOKPIPE_CATALOG, the configuration file's, or ./catalog.sqlite).")
    var catalog: String?

    /// `--catalog`, `$BOOKPIPE_CATALOG`, the configuration file's `catalog`, or `catalog.sqlite`.
    var catalogPath: String {
        LoadedConfiguration.value(.catalog, flag: catalog) ?? "catalog.sqlite"
    }

    /// Opens the catalogue, or prints why not and exits 1.
    func open() throws -> LocalCatalog {
        do {
            return try LocalCatalog(path: catalogPath)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }
}
