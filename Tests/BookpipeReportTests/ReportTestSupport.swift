import BookpipeCore
import BookpipeStore
import Foundation

/// A library with one of everything a report counts, in a temporary SQLite file.
enum ReportFixture {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func temporaryPath(_ name: String = "library", extension ext: String = "sqlite") -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("report-\(name)-\(UUID().uuidString).\(ext)").path
    }

    static let hostileTitle = "<script>alert(1)</script>"
    /// A right-to-left override inside a title.
    static let overrideTitle = "Evil \u{202E}txt.exe"

    static func record(_ row: Int, title: String, authors: [String] = ["Ursula K. Le Guin"], isbn: String? = nil,
                       status: RecordStatus = .pending, score: Int? = nil, workKey: String? = nil,
                       dateAdded: String? = nil, year: Int? = nil, findings: [Finding] = [],
                       fileHash: String = "aaaa", file: String = "export.csv") -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: file, fileHash: fileHash, row: row, line: row + 1, format: "goodreads",
                                                     rawFields: [title, authors.joined(separator: ", ")]),
                                title: title, authors: authors, rawISBNs: isbn.map { [$0] } ?? [], year: year)
        record.dateAdded = dateAdded
        Normalizer.normalize(&record)
        for finding in findings { record.addFinding(finding) }
        switch status {
        case .pending: break
        case .enriched:
            let match = Match(workKey: workKey ?? "/works/OL\(row)W", editionKey: "/books/OL\(row)M", title: title,
                              authors: authors, score: score ?? 150, source: "catalog")
            record.enrichment = EnrichmentResult(status: .enriched, match: match)
        case .failed:
            record.enrichment = EnrichmentResult(status: .failed, failure: "HTTP 503 after 5 requeues")
        case .needsCandidateSelection:
            record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
                Candidate(workKey: "/works/OL1W", title: title, authors: authors, source: "catalog", score: score ?? 75,
                          breakdown: ["title": 50, "author": 25]),
                Candidate(workKey: "/works/OL2W", title: title + " II", authors: authors, source: "catalog", score: 60,
                          breakdown: ["title": 50]),
            ])
        case .notFound:
            record.enrichment = EnrichmentResult(status: .notFound)
        }
        return record
    }

    /// 12 records: 5 enriched (two of one work, two with one ISBN), 1 failed, 1 needing selection,
    /// 1 not found, 4 pending; a hostile title, a bidi override, a formula title, a bad date, an
    /// impossible year, an invalid ISBN, a repaired encoding, a scan detection waiting for review;
    /// one rejected row.
    static func makeLibrary() async throws -> (LibraryStore, [BookRecord]) {
        let store = try LibraryStore(path: temporaryPath())
        var records = [
            record(1, title: "A Wizard of Earthsea", isbn: "9780547773742", status: .enriched, score: 280, workKey: "/works/OLEW"),
            record(2, title: "A Wizard of Earthsea", isbn: "9780547773742", status: .enriched, score: 230, workKey: "/works/OLEW"),
            record(3, title: "The Left Hand of Darkness", status: .enriched, score: 150, dateAdded: "2020/10/21"),
            record(4, title: hostileTitle, status: .enriched, score: 100, dateAdded: "31/31/2020"),
            record(5, title: overrideTitle, authors: ["José Saramago"], status: .enriched, score: 180),
            record(6, title: "=HYPERLINK(\"http://x\")", status: .failed),
            record(7, title: "The Dispossessed", status: .needsCandidateSelection, score: 75),
            record(8, title: "Unknown Book", status: .notFound),
            record(9, title: "Old Book", year: 3020),
            record(10, title: "Bad ISBN", isbn: "9780547773743"),
            record(11, title: "Café", findings: [
                Finding(code: "encoding.latin1-repaired", severity: .info, field: "Title", message: "Bytes were read as Latin-1.")]),
            record(12, title: "Scanned", fileHash: "bbbb", file: "scan.json"),
        ]
        records[11].scan = ScanDetection(confidence: 0.42, boundingBox: nil, photoPath: nil)
        records[11].reviewStatus = .needsReview
        try store.insert(records)
        try await store.insertRejections([RejectedRow(fileHash: "aaaa", file: "export.csv", line: 40, row: 39, column: 3,
                                                      reason: "unclosed quote", rawText: "\"x")], runID: nil)
        return (store, records)
    }
}

/// A JSON Schema validator for the subset `docs/report.schema.json` uses: `type`, `properties`,
/// `required`, `additionalProperties: false`, `items`, `enum`, `const`, `minimum`, `$ref` to `$defs`.
struct SchemaValidator {
    let root: [String: Any]

    init(path: String) throws {
        root = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
    }

    /// The problems found (empty: valid), each with its JSON path.
    func validate(_ value: Any) -> [String] {
        var problems: [String] = []
        check(value, against: root, at: "$", problems: &problems)
        return problems
    }

    private func check(_ value: Any, against schema: [String: Any], at path: String, problems: inout [String]) {
        if let ref = schema["$ref"] as? String {
            let name = String(ref.dropFirst("#/$defs/".count))
            guard let target = (root["$defs"] as? [String: Any])?[name] as? [String: Any] else {
                problems.append("\(path): unknown $ref \(ref)")
                return
            }
            check(value, against: target, at: path, problems: &problems)
            return
        }
        if let constant = schema["const"], !equal(constant, value) { problems.append("\(path): must be \(constant)") }
        if let options = schema["enum"] as? [Any], !options.contains(where: { equal($0, value) }) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        if let type = schema["type"] as? String, !matches(value, type: type) {
            problems.append("\(path): expected \(type), found \(Swift.type(of: value))")
            return
        }
        if let minimum = schema["minimum"] as? Double, let number = value as? NSNumber, number.doubleValue < minimum {
            problems.append("\(path): \(number) is below \(minimum)")
        }
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where object[name] == nil {
                problems.append("\(path): missing required \(name)")
            }
            for (name, item) in object {
                if let property = properties[name] as? [String: Any] {
                    check(item, against: property, at: "\(path).\(name)", problems: &problems)
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path): unexpected property \(name)")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() { check(item, against: items, at: "\(path)[\(index)]", problems: &problems) }
        }
    }

    private func matches(_ value: Any, type: String) -> Bool {
        // Foundation reads JSON's true and false as NSNumbers too: a boolean is a number 0 or 1.
        let number = value as? NSNumber
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "integer": return number.map { $0.doubleValue.rounded() == $0.doubleValue } ?? false
        case "number": return number != nil
        case "boolean": return number.map { $0.doubleValue == 0 || $0.doubleValue == 1 } ?? false
        default: return false
        }
    }

    private func equal(_ a: Any, _ b: Any) -> Bool {
        if let a = a as? NSNumber, let b = b as? NSNumber { return a == b }
        if let a = a as? String, let b = b as? String { return a == b }
        return false
    }
}
