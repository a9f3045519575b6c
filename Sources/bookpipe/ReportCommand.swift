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
            --html, --json and --csv write the report's files ('-' for standard output). JSON schema: docs/report-schema.md. \
            Each report's headline figures are kept in the library, and the next report shows the change (--compare \
            picks another saved report; --no-history keeps nothing). --check FILE runs an expectations file and exits 1 \
            when a check of level error fails (exit 0 when only warnings fail).
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

    @Option(help: ArgumentHelp("Run the checks of this expectations file (e.g. checks.yaml: '- isbn13.filled >= 90%', '- errors == 0: error').",
                               valueName: "file"))
    var check: String?

    @Option(help: ArgumentHelp("Compare with this saved report (its number, or a date YYYY-MM-DD: the last report of that day or before) instead of the previous one.",
                               valueName: "report|date"))
    var compare: String?

    @Flag(help: "Do not keep this report's figures in the library (and open it read-only).")
    var noHistory = false

    @OptionGroup var library: LibraryOptions

    func validate() throws {
        if all && run != nil { throw ValidationError("--run and --all exclude each other.") }
        let toStandardOutput = [html, json, csv].filter { $0 == "-" }.count
        if toStandardOutput > 1 { throw ValidationError("Only one of --html, --json and --csv can be '-' (standard output).") }
    }

    func run() async throws {
        let isServer = LibraryLocation.isServer(library.libraryPath)
        guard isServer || FileManager.default.fileExists(atPath: library.libraryPath) else {
            printError("\(library.libraryPath): no library here. Import something first, or pass --library.")
            throw ExitCode(1)
        }
        var comparison = ReportComparison.previous
        if let compare {
            guard let parsed = ReportComparison.parse(compare) else {
                printError("--compare \"\(compare)\": give a saved report's number (the JSON report's history and previous name them) or a date YYYY-MM-DD.")
                throw ExitCode(2)
            }
            comparison = parsed
        }
        var checks: CheckFile?
        if let check {
            do { checks = try CheckFile.load(path: check) } catch {
                printError(error.description)
                throw ExitCode(2)
            }
        }
        do {
            // The report keeps its figures (a write) unless told not to, or the library cannot be written
            // (a PostgreSQL library: the server says so when the figures are saved).
            let folder = (library.libraryPath as NSString).deletingLastPathComponent
            let writable = isServer || FileManager.default.isWritableFile(atPath: library.libraryPath)
                && FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder)
            let keepsHistory = !noHistory && writable
            let store = try LibraryLocation.open(library.libraryPath, access: keepsHistory ? .readWrite : .readOnly)
            let libraryName = isServer ? PostgresLibraryName.redacted(library.libraryPath) : library.libraryPath
            if let run, try await !store.runs().contains(where: { $0.id == run }) {
                printError("\(libraryName): no run \(run). The report's runs table lists them: bookpipe report --json -.")
                throw ExitCode(2)
            }
            let now = Date()
            let composed = try await QualityReportBuilder(store: store, options: .init(runID: run, findingLimit: findingLimit), now: now)
                .compose()
            var report = composed.report
            if let checks { report.checks = checks.evaluate(report) }
            if try await !ReportHistory.compare(&report, in: store, with: comparison) {
                printError("\(libraryName): no saved report \(compare ?? "") to compare with; bookpipe report --json - lists the saved ones under history.")
                throw ExitCode(2)
            }
            if keepsHistory {
                do { try await ReportHistory.save(report, in: store, at: now) } catch {
                    printError("\(libraryName): this report's figures were not kept for the next one to compare with: \(error)")
                }
            } else if !noHistory {
                printError("\(libraryName): the library cannot be written, so this report's figures are not kept for the next one to compare with.")
            }
            let rows = try await ReportDestinations(html: html, json: json, csv: csv).write(report, findings: composed.findings)
            let findings = report.findings.byCode.reduce(0) { $0 + $1.count }
            let records = "\(report.rows.records) record\(report.rows.records == 1 ? "" : "s")"
            for (path, what) in [(json, "JSON report"), (html, "HTML report")] {
                if let path, path != "-" { printError("wrote \(path) (\(what): \(records), \(findings) finding\(findings == 1 ? "" : "s"))") }
            }
            if let csv, csv != "-" {
                printError("wrote \(csv) (problem rows: \(rows) row\(rows == 1 ? "" : "s"))")
            }
            let summary = ReportRenderer.terminalSummary(report)
            if [html, json, csv].contains("-") { printError(summary) } else { print(summary) }
            if report.checks.contains(where: { !$0.passed && $0.level == "error" }) {
                printError("A check of level error failed (see above): exit 1.")
                throw ExitCode(1)
            }
        } catch let error as StoreError {
            printError(error.description)
            throw ExitCode(1)
        } catch let error as ReportError {
            printError(error.description)
            throw ExitCode(1)
        }
    }
}
