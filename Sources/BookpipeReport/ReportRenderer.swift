import BookpipeCore
import BookpipeExport
import BookpipeLibrary
import Foundation
import Mustache

/// Turns a ``QualityReport`` into its four forms: JSON (for programs; versioned), CSV (the problem
/// rows), HTML (one self-contained page with charts) and a terminal summary.
public enum ReportRenderer {
    /// The report as JSON: sorted keys, one line (`schemaVersion` first by sort order is not
    /// promised; read it by key). Absent optional values are left out.
    /// - Throws: `EncodingError` if a value cannot be encoded (a non-finite number).
    public static func json(_ report: QualityReport) throws -> Data {
        // The findings' items (all but a few kilobytes of a large report) are written by hand with
        // the store's JSON writer; the rest by `JSONEncoder`, with the items spliced in where its
        // output has `"items":[]`. The bytes are those `JSONEncoder` writes for the whole report
        // (a test compares them).
        var rest = report
        rest.findings.items = []
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let head = [UInt8](try encoder.encode(rest))
        // Keys are sorted and a quote inside a string is escaped, so the first `,"items":[],`
        // after `"findings":{"byCode":` is the findings' items.
        guard let findings = head.firstRange(of: Array(#""findings":{"byCode":"#.utf8)),
              let empty = head[findings.upperBound...].firstRange(of: Array(#","items":[],"#.utf8))
        else { throw EncodingError.invalidValue(report, .init(codingPath: [], debugDescription: "no findings.items in the encoded report")) }
        var output: [UInt8] = []
        output.reserveCapacity(head.count + report.findings.items.count * 256)
        output.append(contentsOf: head[..<(empty.lowerBound + #","items":["#.utf8.count)])
        for (index, finding) in report.findings.items.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendJSON(finding, to: &output)
        }
        output.append(contentsOf: head[(empty.upperBound - 2)...])  // "],"
        return Data(output)
    }

    /// One finding as `JSONEncoder` writes it with sorted keys and unescaped slashes.
    static func appendJSON(_ finding: QualityReport.Finding, to output: inout [UInt8]) {
        func key(_ name: StaticString, first: Bool = false) {
            if !first { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        output.append(UInt8(ascii: "{"))
        key("code", first: true)
        JSONText.appendString(finding.code, to: &output)
        if let field = finding.field {
            key("field")
            JSONText.appendString(field, to: &output)
        }
        key("message")
        JSONText.appendString(finding.message, to: &output)
        key("rows")
        output.append(UInt8(ascii: "["))
        for (index, row) in finding.rows.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "{"))
            key("file", first: true)
            JSONText.appendString(row.file, to: &output)
            if let id = row.id {
                key("id")
                JSONText.appendString(id, to: &output)
            }
            key("line")
            JSONText.appendInteger(row.line, to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(UInt8(ascii: "]"))
        key("severity")
        JSONText.appendString(finding.severity, to: &output)
        if let title = finding.title {
            key("title")
            JSONText.appendString(title, to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// The CSV header of ``csv(_:)``.
    public static let csvHeader = ["severity", "code", "field", "record_ids", "locations", "title", "message"]

    /// The problem rows as CSV: one line per finding (a duplicate group is one finding naming all
    /// its records, space-separated), CRLF line ends, RFC 4180 quoting. A cell that a spreadsheet
    /// would run as a formula or that starts with a tab or carriage return (`= + - @ \t \r`) is
    /// written with a leading `'`.
    public static func csv(_ report: QualityReport) -> String {
        var output = CSVWriting.line(csvHeader)
        output.reserveCapacity(report.findings.items.count * 160)
        for finding in report.findings.items {
            output += CSVWriting.line([
                finding.severity, finding.code, finding.field ?? "",
                finding.rows.compactMap(\.id).joined(separator: " "),
                finding.rows.map { "\($0.file):\($0.line)" }.joined(separator: " "),
                finding.title ?? "", finding.message,
            ])
        }
        return output
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
        lines.append("  duplicates: \(duplicates.sameISBN) same ISBN, \(duplicates.sameWork) same work, "
            + "\(duplicates.sameTitleAndAuthor) same title and author (\(duplicates.records) records)")
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
        let top = report.findings.byCode.prefix(5).map { "\($0.code) \($0.count)" }.joined(separator: ", ")
        lines.append("  findings: " + (top.isEmpty ? "none" : top))
        return lines.joined(separator: "\n")
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

    /// Writes each asked-for form of `report` (`-` writes to standard output).
    /// - Throws: ``ReportError/cannotWrite(path:reason:)`` when a file cannot be written.
    public func write(_ report: QualityReport) throws(ReportError) {
        func store(_ data: Data, to path: String) throws(ReportError) {
            if path == "-" {
                FileHandle.standardOutput.write(data)
                return
            }
            do {
                try data.write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw ReportError.cannotWrite(path: path, reason: (error as NSError).localizedDescription)
            }
        }
        if let json {
            let data: Data
            do { data = try ReportRenderer.json(report) } catch {
                throw ReportError.cannotWrite(path: json, reason: "\(error)")
            }
            try store(data + Data("\n".utf8), to: json)
        }
        if let csv { try store(Data(ReportRenderer.csv(report).utf8), to: csv) }
        if let html {
            let page: String
            do { page = try ReportRenderer.html(report) } catch {
                throw ReportError.cannotWrite(path: html, reason: "the HTML template is broken: \(error)")
            }
            try store(Data(page.utf8), to: html)
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
