import Foundation

/// An expectations file (`bookpipe report --check checks.yaml`): checks on the report's figures
/// that pass or fail, each at a level. A YAML list, one check a line, its level after a colon
/// (`error` when none is given):
///
/// ```yaml
/// checks:
///   - isbn13.filled >= 90%
///   - duplicates.books == 0: warn
///   - errors == 0: error
///   - matched >= 85%: warn
/// ```
///
/// A check is `FIGURE OPERATOR VALUE`; operators `>= > <= < == !=`; a share (`….filled`,
/// `matched`) is compared in per cent (`90%` or `90`). ``figures`` names every figure.
public struct CheckFile: Sendable, Hashable {
    /// One check as written.
    public struct Check: Sendable, Hashable {
        /// The figure's name (``CheckFile/figures``).
        public var figure: String
        /// `>=`, `>`, `<=`, `<`, `==` or `!=`.
        public var comparison: String
        /// The value compared with.
        public var value: Double
        /// `warn` or `error`.
        public var level: String
        /// The check's text as written (`isbn13.filled >= 90%`).
        public var text: String
        /// Its 1-based line in the file.
        public var line: Int
    }

    /// The file's path, as given.
    public var path: String
    /// The checks, in the file's order.
    public var checks: [Check]

    /// Figures a check may name; `code.<finding code>` names the findings of one code too.
    public static let figures: [String] = [
        "records", "errors", "warnings", "findings", "rejected", "failed", "notFound", "needsSelection", "pending",
        "matched", "review.waiting", "duplicates.books", "duplicates.groups", "duplicates.records",
        "isbn.invalid", "isbn.disagree", "year.impossible", "dates.unreadable",
    ] + ["isbn13", "cover", "year", "pages", "publisher", "author"].flatMap { ["\($0).filled", "\($0).missing"] }

    /// Figures that are shares of the records in scope, in per cent.
    public static func isShare(_ figure: String) -> Bool { figure == "matched" || figure.hasSuffix(".filled") }

    /// The levels a check may have.
    public static let levels = ["warn", "error"]

    /// Reads an expectations file.
    /// - Throws: ``CheckFileError`` naming the file and line (and the valid choices) for anything
    ///   that is not a check, or when the file cannot be read.
    public static func load(path: String) throws(CheckFileError) -> CheckFile {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CheckFileError(path: path, line: nil, problem: "cannot be read (\((error as NSError).localizedDescription))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CheckFileError(path: path, line: nil, problem: "is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    /// Parses an expectations file's text (`path` is for messages).
    /// - Throws: ``CheckFileError`` naming the line and what is wrong.
    public static func parse(_ text: String, path: String) throws(CheckFileError) -> CheckFile {
        var checks: [Check] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            var line = Substring(raw)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed == "checks:" || trimmed == "---" { continue }
            guard trimmed.hasPrefix("- ") else {
                throw CheckFileError(path: path, line: number, problem:
                    "\"\(trimmed)\" is not a check: write one per line as \"- FIGURE OPERATOR VALUE[: warn|error]\" under \"checks:\"")
            }
            var body = trimmed.dropFirst(2).trimmingCharacters(in: .whitespaces)
            if body.count >= 2, body.first == "\"" || body.first == "'", body.last == body.first {
                body = String(body.dropFirst().dropLast())
            }
            var level = "error"
            if let colon = body.lastIndex(of: ":") {
                let named = body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
                let normalized = named == "warning" ? "warn" : named
                guard levels.contains(normalized) else {
                    throw CheckFileError(path: path, line: number, problem:
                        "level \"\(named)\" is not one of: \(levels.joined(separator: ", "))")
                }
                level = normalized
                body = body[..<colon].trimmingCharacters(in: .whitespaces)
            }
            checks.append(try check(body, level: level, path: path, line: number))
        }
        return CheckFile(path: path, checks: checks)
    }

    private static func check(_ text: String, level: String, path: String, line: Int) throws(CheckFileError) -> Check {
        let operators = [">=", "<=", "==", "!=", ">", "<"]
        guard let found = operators.compactMap({ op in text.range(of: op).map { (op, $0) } })
            .min(by: { $0.1.lowerBound < $1.1.lowerBound }) else {
            throw CheckFileError(path: path, line: line, problem:
                "\"\(text)\" has no comparison: use one of \(operators.joined(separator: " "))")
        }
        let (comparison, range) = found
        let figure = text[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
        guard figures.contains(figure) || (figure.hasPrefix("code.") && figure.count > 5) else {
            throw CheckFileError(path: path, line: line, problem:
                "no figure \"\(figure)\"; figures: \(figures.joined(separator: ", ")), code.<finding code>")
        }
        var valueText = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
        let percent = valueText.hasSuffix("%")
        if percent { valueText = String(valueText.dropLast()).trimmingCharacters(in: .whitespaces) }
        guard let value = Double(valueText), value.isFinite else {
            throw CheckFileError(path: path, line: line, problem: "\"\(valueText)\" is not a number")
        }
        if percent && !isShare(figure) {
            throw CheckFileError(path: path, line: line, problem:
                "\(figure) is a count, not a share: compare it with a number (no %)")
        }
        return Check(figure: figure, comparison: comparison, value: value, level: level, text: text, line: line)
    }

    /// Each check's result on a report, in the file's order.
    public func evaluate(_ report: QualityReport) -> [QualityReport.CheckResult] {
        checks.map { check in
            let actual = Self.value(of: check.figure, in: report)
            let passed: Bool
            switch check.comparison {
            case ">=": passed = actual >= check.value - 1e-9
            case ">": passed = actual > check.value
            case "<=": passed = actual <= check.value + 1e-9
            case "<": passed = actual < check.value
            case "==": passed = abs(actual - check.value) < 1e-9
            default: passed = abs(actual - check.value) >= 1e-9
            }
            return QualityReport.CheckResult(check: check.text, level: check.level, actual: actual, passed: passed,
                                             location: "\(path):\(check.line)")
        }
    }

    /// A figure's value in a report (shares in per cent, rounded to 0.1).
    public static func value(of figure: String, in report: QualityReport) -> Double {
        let rows = report.rows
        func share(_ part: Int) -> Double {
            rows.records == 0 ? 0 : (Double(part) * 1000 / Double(rows.records)).rounded() / 10
        }
        func completeness(_ field: String) -> QualityReport.Completeness? {
            report.completeness.first { $0.field == (field == "isbn13" ? "isbn" : field) }
        }
        let severities = Dictionary(grouping: report.findings.byCode, by: \.severity).mapValues { $0.reduce(0) { $0 + $1.count } }
        switch figure {
        case "records": return Double(rows.records)
        case "errors": return Double(severities["error"] ?? 0)
        case "warnings": return Double(severities["warning"] ?? 0)
        case "findings": return Double(report.findings.byCode.reduce(0) { $0 + $1.count })
        case "rejected": return Double(rows.rejected)
        case "failed": return Double(rows.byStatus["failed"] ?? 0)
        case "notFound": return Double(rows.byStatus["notFound"] ?? 0)
        case "needsSelection": return Double(rows.byStatus["needsCandidateSelection"] ?? 0)
        case "pending": return Double(rows.byStatus["pending"] ?? 0)
        case "matched": return share(rows.byStatus["enriched"] ?? 0)
        case "review.waiting": return Double(report.review.waiting)
        case "duplicates.books": return Double(report.duplicates.books)
        case "duplicates.groups": return Double(report.duplicates.groups)
        case "duplicates.records": return Double(report.duplicates.records)
        case "isbn.invalid": return Double(report.validity.invalidISBN)
        case "isbn.disagree": return Double(report.validity.isbn10And13Disagree)
        case "year.impossible": return Double(report.validity.impossibleYear)
        case "dates.unreadable": return Double(report.validity.unparseableDate)
        case _ where figure.hasPrefix("code."):
            let code = String(figure.dropFirst(5))
            return Double(report.findings.byCode.first { $0.code == code }?.count ?? 0)
        case _ where figure.hasSuffix(".filled"):
            return share(completeness(String(figure.dropLast(7)))?.present ?? 0)
        case _ where figure.hasSuffix(".missing"):
            guard let field = completeness(String(figure.dropLast(8))) else { return 0 }
            return Double(field.total - field.present)
        default: return 0
        }
    }

    /// A figure's value for people: whole numbers without a fraction.
    public static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.1f", value)
    }
}

/// An expectations file that cannot be used: where and why.
public struct CheckFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file, as given.
    public var path: String
    /// The 1-based line, when the problem is on one.
    public var line: Int?
    /// What is wrong, and the valid choices.
    public var problem: String

    /// `checks.yaml:3: no figure "isbn13.fill"; figures: …`
    public var description: String {
        "\(path)\(line.map { ":\($0)" } ?? ""): \(problem)."
    }
}
