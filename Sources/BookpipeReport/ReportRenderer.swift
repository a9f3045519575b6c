import BookpipeCore
import BookpipeExport
import BookpipeLibrary
import Foundation
import Mustache

/// Turns a ``QualityReport`` into its four forms: JSON (for programs; versioned), CSV (the problem
/// rows), HTML (one self-contained page with charts) and a terminal summary.
public enum ReportRenderer {
    /// The report as JSON: the model (``QualityReport``) through one `JSONEncoder`, sorted keys, one
    /// line. Absent optional values are left out.
    /// - Throws: `EncodingError` if a value cannot be encoded (a non-finite number).
    public static func json(_ report: QualityReport) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }

    /// The CSV header of ``csv(_:)``.
    public static let csvHeader = ["severity", "code", "field", "record_id", "location", "title", "message", "action"]

    /// The listed findings' rows as CSV (``QualityReport/Findings/items``, a few per code: see
    /// ``csvLines(_:findings:_:)`` for every finding), then a line per check that failed.
    public static func csv(_ report: QualityReport) -> String {
        var output = ""
        output.reserveCapacity(report.findings.items.count * 180)
        output += CSVWriting.line(csvHeader)
        let actions = Dictionary(report.findings.byCode.map { ($0.code, $0.action) }, uniquingKeysWith: { first, _ in first })
        for finding in report.findings.items { csvLines(finding, action: actions[finding.code] ?? "") { output += $0 } }
        csvCheckLines(report) { output += $0 }
        return output
    }

    /// The problem rows as CSV, one line at a time: a line per record and code of every finding
    /// (``ReportFindings``: a duplicate group gives a line for each of its records; a rejected row,
    /// which is no record, a line with an empty id), then a line per check that failed. CRLF line
    /// ends, RFC 4180 quoting. A cell that a spreadsheet would run as a formula or that starts with a
    /// tab or carriage return (`= + - @ \t \r`) is written with a leading `'`.
    /// - Returns: How many problem rows (lines after the header).
    /// - Throws: ``StoreError`` when the records' titles cannot be read, or what `body` throws.
    @discardableResult
    public static func csvLines(_ report: QualityReport, findings: ReportFindings, _ body: (String) throws -> Void) async throws -> Int {
        try body(CSVWriting.line(csvHeader))
        let actions = Dictionary(report.findings.byCode.map { ($0.code, $0.action) }, uniquingKeysWith: { first, _ in first })
        var rows = 0
        try await findings.forEach { finding in
            rows += finding.rows.count
            try csvLines(finding, action: actions[finding.code] ?? "", body)
        }
        try csvCheckLines(report) { line in
            rows += 1
            try body(line)
        }
        return rows
    }

    private static func csvLines(_ finding: QualityReport.Finding, action: String, _ body: (String) throws -> Void) rethrows {
        for row in finding.rows {
            try body(CSVWriting.line([
                finding.severity, finding.code, finding.field ?? "", row.id ?? "", "\(row.file):\(row.line)",
                row.title ?? "", finding.message, action,
            ]))
        }
    }

    private static func csvCheckLines(_ report: QualityReport, _ body: (String) throws -> Void) rethrows {
        for check in report.checks where !check.passed {
            try body(CSVWriting.line([
                check.level == "error" ? "error" : "warning", "check.failed", "", "", check.location, "",
                "\(check.check) does not hold: the value is \(CheckFile.format(check.actual))", "bookpipe report --check",
            ]))
        }
    }

    /// A few lines for a terminal.
    public static func terminalSummary(_ report: QualityReport) -> String {
        let rows = report.rows
        func share(_ part: Int, _ whole: Int) -> String {
            whole == 0 ? "–" : String(format: "%.1f %%", Double(part) * 100 / Double(whole))
        }
        var lines = ["data quality of \(report.library) (\(report.scope.kind == "run" ? "run \(report.scope.runID ?? 0)" : "all records")):"]
        let states = ["enriched", "needsCandidateSelection", "notFound", "failed", "pending"]
            .map { "\(rows.byStatus[$0] ?? 0) \($0)" }.joined(separator: ", ")
        lines.append("  rows: \(rows.records) records (\(states)), \(rows.rejected) rejected")
        lines.append("  completeness: " + report.completeness.map { "\($0.field) \(share($0.present, $0.total))" }
            .joined(separator: ", "))
        let matching = report.matching
        let accepted = matching.bySource.reduce(0) { $0 + $1.count }
        lines.append("  matches: \(accepted) accepted" + (matching.bySource.isEmpty ? "" : " ("
            + matching.bySource.map { "\($0.name) \($0.count)" }.joined(separator: ", ") + ")")
            + (matching.meanScore.map { String(format: ", mean score %.1f", $0) } ?? "")
            + ", \(rows.byStatus["needsCandidateSelection"] ?? 0) waiting for a person to choose")
        let validity = report.validity
        lines.append("  validity: \(validity.invalidISBN) invalid ISBN, \(validity.isbn10And13Disagree) ISBN-10/13 disagree, "
            + "\(validity.impossibleYear) impossible years, \(validity.unparseableDate) unreadable dates")
        let duplicates = report.duplicates
        lines.append("  duplicates: \(duplicates.books) books have a duplicate (\(duplicates.groups) group\(duplicates.groups == 1 ? "" : "s"), \(duplicates.records) records; "
            + duplicates.byReason.map { "\($0.count) \($0.name)" }.joined(separator: ", ") + ")")
        let review = report.review
        let outcomes = review.reviewed.map {
            "\($0) reviewed (\(review.correctedInReview ?? 0) corrected, \(review.verifiedAsRead ?? 0) verified as they were)"
        } ?? "no review history"
        let age = review.oldestWaitingDays.map { String(format: ", oldest %.1f days", $0) } ?? ""
        lines.append("  review: \(review.waiting) waiting (\(review.waitingScans) scan detection\(review.waitingScans == 1 ? "" : "s"), "
            + "\(review.waitingMatches) uncertain match\(review.waitingMatches == 1 ? "" : "es")\(age)), "
            + "\(outcomes); encoding repairs in \(report.encoding.repairedRecords) records")
        for source in report.sources {
            lines.append("  \(source.name): \(source.requests) requests, \(source.cacheHits) cache hits, \(source.retries) retries, "
                + "\(source.rateLimited) × 429" + (source.meanLatencyMilliseconds.map { ", mean latency \(Int($0.rounded())) ms" } ?? ""))
        }
        if !rows.failureReasons.isEmpty {
            lines.append("  failed lookups: " + rows.failureReasons.prefix(3).map { "\($0.count) \($0.name)" }.joined(separator: "; "))
        }
        if let last = report.runs.last {
            lines.append("  runs: \(report.runs.count); last #\(last.id) \(last.status) \(last.startedAt)"
                + (last.durationSeconds.map { " (\(DurationText.describe(seconds: $0)))" } ?? ""))
        }
        lines += findingLines(report.findings.byCode)
        for check in report.checks {
            lines.append("  check \(check.passed ? "passed" : check.level == "error" ? "FAILED" : "failed (warning)"): "
                + "\(check.check) (value \(CheckFile.format(check.actual)); \(check.location))")
        }
        if let previous = report.previous, let delta = report.delta {
            let changes = HeadlineComparison.changes(delta).map { "\($0.name) \($0.text)\($0.isWorse ? " (worse)" : "")" }
            lines.append("  since report #\(previous.id) (\(previous.generatedAt)): "
                + (changes.isEmpty ? "no change" : changes.joined(separator: ", ")))
        }
        return lines.joined(separator: "\n")
    }

    /// Finding codes a terminal shows before "and N more" (a screenful); errors are always shown.
    public static let terminalCodeLines = 20

    /// One line per finding code: every error, then warnings by count, then information by count, each with
    /// what to do; "and N more" only past ``terminalCodeLines``.
    static func findingLines(_ codes: [QualityReport.CodeCount]) -> [String] {
        guard !codes.isEmpty else { return ["  findings: none"] }
        var lines = ["  findings (code, count, what to do):"]
        let errors = codes.filter { $0.severity == "error" }
        let rank = ["warning": 0, "info": 1]
        let others = codes.filter { $0.severity != "error" }.sorted {
            let left = rank[$0.severity] ?? 2, right = rank[$1.severity] ?? 2
            if left != right { return left < right }
            return $0.count != $1.count ? $0.count > $1.count : $0.code < $1.code
        }
        let room = max(0, terminalCodeLines - errors.count)
        let shown = others.count <= room ? others : Array(others.prefix(max(0, room - 1)))
        for code in errors + shown {
            lines.append("    \(code.severity) \(code.code) \(code.count) — \(code.action)")
        }
        if shown.count < others.count {
            let rest = others.dropFirst(shown.count)
            lines.append("    and \(rest.count) more (\(rest.reduce(0) { $0 + $1.count }) findings): the JSON and HTML reports list every code")
        }
        return lines
    }

    /// Rows listed per finding code in the HTML page (the rest are counted and are in the JSON and CSV).
    public static let htmlRowsPerCode = 100

    /// The report as one self-contained HTML page (no network: inline CSS and SVG, no script),
    /// rendered from the embedded templates with HTML escaping on for every value, and every data
    /// text isolated for bidirectional text (`<bdi>`).
    /// - Throws: `MustacheTemplate`'s parse error if the embedded template is broken (a build defect).
    public static func html(_ report: QualityReport) throws -> String {
        let template = try MustacheTemplate(string: String(decoding: PackageResources.report_html_mustache, as: UTF8.self))
        return template.render(HTMLView.make(report))
    }
}

/// Where a report's files go; nil skips a form.
public struct ReportDestinations: Sendable, Hashable {
    /// The HTML page.
    public var html: String?
    /// The JSON report.
    public var json: String?
    /// The CSV of problem rows.
    public var csv: String?

    /// Creates destinations.
    public init(html: String? = nil, json: String? = nil, csv: String? = nil) {
        self.html = html
        self.json = json
        self.csv = csv
    }

    /// True when no file is asked for.
    public var isEmpty: Bool { html == nil && json == nil && csv == nil }

    /// Writes each asked-for form of `report` (`-` writes to standard output): the JSON and the page
    /// from the report, the CSV from every finding (`findings`; without it, the report's listed ones).
    /// - Returns: How many problem rows the CSV has (0 without one).
    /// - Throws: ``ReportError/cannotWrite(path:reason:)`` when a file cannot be written, ``StoreError``
    ///   when the records' titles cannot be read for the CSV; cancellation (`CancellationError`) while the
    ///   CSV is written leaves no file.
    @discardableResult
    public func write(_ report: QualityReport, findings: ReportFindings? = nil) async throws -> Int {
        func store(_ data: Data, to path: String, ending: String = "") throws(ReportError) {
            if path == "-" {
                FileHandle.standardOutput.write(data)
                FileHandle.standardOutput.write(Data(ending.utf8))
                return
            }
            do {
                try ReportFile.write(to: path) { $0.write(data); $0.write(Data(ending.utf8)) }
            } catch {
                throw ReportError.cannotWrite(path: path, reason: (error as NSError).localizedDescription)
            }
        }
        if let json {
            let data: Data
            do { data = try ReportRenderer.json(report) } catch {
                throw ReportError.cannotWrite(path: json, reason: "\(error)")
            }
            try store(data, to: json, ending: "\n")
        }
        var rows = 0
        if let csv {
            if let findings {
                rows = try await streamCSV(report, findings: findings, to: csv)
            } else {
                let text = ReportRenderer.csv(report)
                rows = report.findings.items.reduce(0) { $0 + $1.rows.count } + report.checks.count(where: { !$0.passed })
                try store(Data(text.utf8), to: csv)
            }
        }
        if let html {
            let page: String
            do { page = try ReportRenderer.html(report) } catch {
                throw ReportError.cannotWrite(path: html, reason: "the HTML template is broken: \(error)")
            }
            try store(Data(page.utf8), to: html)
        }
        return rows
    }
}

extension ReportDestinations {
    /// Writes the CSV of every finding a megabyte at a time, as the findings are composed (to a
    /// temporary file moved into place at the end); returns the problem rows written.
    func streamCSV(_ report: QualityReport, findings: ReportFindings, to path: String) async throws -> Int {
        func lines(into handle: FileHandle) async throws -> Int {
            var buffer = ""
            buffer.reserveCapacity(1 << 20)
            let rows = try await ReportRenderer.csvLines(report, findings: findings) { line in
                buffer += line
                if buffer.utf8.count >= 1 << 20 {
                    handle.write(Data(buffer.utf8))
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            handle.write(Data(buffer.utf8))
            return rows
        }
        if path == "-" { return try await lines(into: FileHandle.standardOutput) }
        do {
            return try await ReportFile.write(to: path, lines)
        } catch let error as StoreError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ReportError.cannotWrite(path: path, reason: (error as NSError).localizedDescription)
        }
    }
}

/// A report file written whole or not at all: into a temporary file beside it, moved into place at the end.
enum ReportFile {
    static func write(to path: String, _ body: (FileHandle) throws -> Void) throws {
        let temporary = try create(beside: path)
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try body(handle)
            try finish(handle, temporary, path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// ``write(to:_:)`` with a body that suspends (reads the library as it writes).
    static func write<Result>(to path: String, _ body: (FileHandle) async throws -> Result) async throws -> Result {
        let temporary = try create(beside: path)
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            let result = try await body(handle)
            try finish(handle, temporary, path)
            return result
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// An empty temporary file beside `path`.
    private static func create(beside path: String) throws -> URL {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = URL(fileURLWithPath: (folder.isEmpty ? "." : folder) + "/.\(name).\(UUID().uuidString).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                                                          NSLocalizedDescriptionKey: "The file could not be created."])
        }
        return temporary
    }

    /// Syncs the written file and moves it into place.
    private static func finish(_ handle: FileHandle, _ temporary: URL, _ path: String) throws {
        try handle.synchronize()
        // rename(2) replaces the target in one step.
        guard rename(temporary.path, path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path,
                                                          NSLocalizedDescriptionKey: String(cString: strerror(errno))])
        }
    }
}

/// A report that could not be written.
public enum ReportError: Error, Sendable, CustomStringConvertible {
    /// A file could not be written.
    case cannotWrite(path: String, reason: String)

    /// A message for people.
    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason):
            // Foundation's reasons end with a full stop of their own.
            let reason = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            return "\(path): cannot write the report: \(reason). Check the folder exists and is writable."
        }
    }
}
