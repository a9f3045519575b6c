import ArgumentParser
import BookpipeCore
import BookpipeLibrary
import BookpipeExport
import BookpipeStore
import Foundation

/// `bookpipe stats`: what the library holds.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Counts the library's records by format, status and review state; lists the files imported and the last runs.")

    @Option(help: "How many of the last runs to list.")
    var runs = 5

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        guard runs >= 0 else { throw ValidationError("--runs must be 0 or more, not \(runs).") }
        let store = try openExistingAnyLibrary(library)
        let statistics: LibraryStatistics
        let books: [[String]]
        do {
            statistics = try await store.statistics()
            books = BookGrouping.books(try await store.bookMembers(), decisions: try await store.linkDecisions())
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        // Records of several lists that are one book count once.
        let joined = books.reduce(0) { $0 + $1.count - 1 }
        var text = Self.text(statistics, libraryPath: PostgresLibraryName.redacted(library.libraryPath), runs: runs)
        if let end = text.firstIndex(of: "\n") {
            text.insert(contentsOf: "\n  books: \(statistics.records - joined)"
                + (joined > 0 ? " (\(joined) \(joined == 1 ? "record is" : "records are") the same book as another record; `bookpipe show ID` says which)" : ""),
                at: end)
        }
        print(text, terminator: "")
    }

    /// The report printed for `statistics`.
    static func text(_ statistics: LibraryStatistics, libraryPath: String, runs: Int) -> String {
        func counts(_ pairs: [(String, Int)]) -> String {
            let present = pairs.filter { $0.1 > 0 }
            return present.isEmpty ? "none" : present.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
        }
        var lines = ["\(libraryPath): \(statistics.records) records, \(statistics.rejected) rejected rows"]
        lines.append("  by format: " + counts(statistics.byFormat.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        lines.append("  by status: " + counts(RecordStatus.allCases.map { ($0.rawValue, statistics.byStatus[$0] ?? 0) }))
        let reviewStates = ["verified", "needsReview", "userEdited", "notRouted"]
        lines.append("  by review state: " + counts(reviewStates.map { ($0, statistics.byReviewState[$0] ?? 0) }))
        lines.append("files imported: \(statistics.files.count)")
        for file in statistics.files {
            let state = file.info.isComplete ? "complete" : "incomplete (import it again to finish)"
            lines.append("  \(file.info.path) (\(file.info.format)): \(file.records) record\(file.records == 1 ? "" : "s"), \(file.rejected) rejected, \(state)")
        }
        let shown = statistics.runs.suffix(runs).reversed()
        lines.append("last runs: \(shown.count) of \(statistics.runs.count), newest first")
        for run in shown {
            lines.append("  #\(run.id) \(run.startedAt) \(run.status.rawValue): \(run.command)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `bookpipe rejected`: the rows imports rejected, with where and why.
struct RejectedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rejected",
        abstract: "Lists the rows imports rejected: file:line and the reason (--csv for a spreadsheet).",
        discussion: """
            One line per row, file:line[:column]: reason, in file and line order. --csv writes file, line, row, \
            column, reason and rawText (the row as read) instead.
            """)

    @Flag(help: "Write CSV (file, line, row, column, reason, rawText) instead of one line per row.")
    var csv = false

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        let store = try openExistingAnyLibrary(library)
        let rows: [RejectedRow]
        do {
            rows = try await store.rejections()
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        var output = StandardOutput()
        if csv {
            RejectedRowsExport.writeCSV(rows, to: &output)
        } else if rows.isEmpty {
            printError("\(library.libraryPath): no rejected rows.")
        } else {
            RejectedRowsExport.writeText(rows, to: &output)
        }
    }
}

/// Standard output as a text stream.
struct StandardOutput: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardOutput.write(Data(string.utf8))
    }
}
