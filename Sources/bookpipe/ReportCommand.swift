import ArgumentParser
import BookpipeReport
import BookpipeStore
import Foundation

/// `bookpipe report`: the library's data-quality report (BookpipeReport computes and renders it).
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Writes the library's data-quality report: HTML (charts, tables of problems), JSON, CSV of problem rows.",
        discussion: """
            Computed from the library alone (no network): works on a --no-enrich import too. Prints a summary; \
            --html, --json and --csv write the report's files ('-' for standard output). JSON schema: docs/report-schema.md.
            """)

    @Option(help: "Only the records last written by this run (see the JSON report's runs).")
    var run: Int64?

    @Flag(help: "The whole library (the default).")
    var all = false

    @Option(help: "Write the HTML page here.")
    var html: String?

    @Option(help: "Write the JSON report here.")
    var json: String?

    @Option(help: "Write the CSV of problem rows (one line per finding) here.")
    var csv: String?

    @Option(help: "List at most this many findings in the files (counts stay complete).")
    var findingLimit: Int?

    @OptionGroup var library: LibraryOptions

    func validate() throws {
        if all && run != nil { throw ValidationError("--run and --all exclude each other.") }
        let toStandardOutput = [html, json, csv].filter { $0 == "-" }.count
        if toStandardOutput > 1 { throw ValidationError("Only one of --html, --json and --csv can be '-' (standard output).") }
    }

    func run() async throws {
        try LibraryLocation.requireFile(library, command: "report")
        guard FileManager.default.fileExists(atPath: library.libraryPath) else {
            printError("\(library.libraryPath): no library here. Import something first, or pass --library.")
            throw ExitCode(1)
        }
        do {
            let store = try LibraryStore(path: library.libraryPath, access: .readOnly)
            if let run, try !store.runs().contains(where: { $0.id == run }) {
                printError("\(library.libraryPath): no run \(run). The report's runs table lists them: bookpipe report --json -.")
                throw ExitCode(2)
            }
            let report = try await QualityReportBuilder(store: store, options: .init(runID: run, findingLimit: findingLimit)).build()
            try ReportDestinations(html: html, json: json, csv: csv).write(report)
            let findings = report.findings.byCode.reduce(0) { $0 + $1.count }
            let records = "\(report.rows.records) record\(report.rows.records == 1 ? "" : "s")"
            for (path, what) in [(json, "JSON report"), (html, "HTML report")] {
                if let path, path != "-" { printError("wrote \(path) (\(what): \(records), \(findings) finding\(findings == 1 ? "" : "s"))") }
            }
            if let csv, csv != "-" {
                let rows = report.findings.items.count
                printError("wrote \(csv) (problem rows: \(rows) row\(rows == 1 ? "" : "s"))")
            }
            let summary = ReportRenderer.terminalSummary(report)
            if [html, json, csv].contains("-") { printError(summary) } else { print(summary) }
        } catch let error as StoreError {
            printError(error.description)
            throw ExitCode(1)
        } catch let error as ReportError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}
