import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

/// The report lists a few findings per code (the JSON and the page) with the full count and the
/// query that lists them all; the CSV is written from every finding, as they are composed.
@Suite struct ReportFindingsTests {
    /// 7 records without an author and 5 duplicated pairs (10 records), one list.
    static func makeLibrary() throws -> LibraryStore {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        var records = (1...7).map { ReportFixture.record($0, title: "Nameless \($0)", authors: []) }
        for pair in 0..<5 {
            for copy in 0..<2 {
                records.append(ReportFixture.record(10 + pair * 2 + copy, title: "Twice \(pair)", authors: ["Ann Lee"]))
            }
        }
        try store.insert(records)
        return store
    }

    @Test("The JSON lists at most listedPerCode findings of a code, the first in row order, with the full count, how many are listed and the query that lists them all")
    func cappedJSON() async throws {
        let store = try Self.makeLibrary()
        let report = try await QualityReportBuilder(store: store, options: .init(listedPerCode: 3)).build()
        let object = try #require(try JSONSerialization.jsonObject(with: ReportRenderer.json(report)) as? [String: Any])
        let findings = try #require(object["findings"] as? [String: Any])
        let items = try #require(findings["items"] as? [[String: Any]])
        let byCode = try #require(findings["byCode"] as? [[String: Any]])
        func code(_ name: String) throws -> [String: Any] { try #require(byCode.first { $0["code"] as? String == name }) }

        let authorless = try code("author.empty")
        #expect(authorless["count"] as? Int == 7 && authorless["listed"] as? Int == 3)
        #expect(authorless["query"] as? String == "bookpipe list missing:author")
        let listedAuthorless = items.filter { $0["code"] as? String == "author.empty" }
        #expect(listedAuthorless.compactMap { ($0["rows"] as? [[String: Any]])?.first?["line"] as? Int } == [2, 3, 4])

        let duplicates = try code("duplicate.book")
        #expect(duplicates["count"] as? Int == 5 && duplicates["listed"] as? Int == 3)
        #expect(items.filter { $0["code"] as? String == "duplicate.book" }.count == 3)
        #expect(findings["listedPerCode"] as? Int == 3)
        #expect(findings["truncated"] as? Int == (7 - 3) + (5 - 3))
        // The counts the headline and the checks read stay complete.
        #expect(report.duplicates.groups == 5 && report.duplicates.records == 10)
        #expect(report.findings.byCode.map(\.count).reduce(0, +) == 12)

        let validator = try SchemaValidator(path: ReportFixture.repositoryRoot.appendingPathComponent("docs/report.schema.json").path)
        #expect(validator.validate(object) == [])
    }

    @Test("The CSV has a line per record and code of every finding, not only the listed ones, in the report's order, with titles")
    func csvOfEveryFinding() async throws {
        let store = try Self.makeLibrary()
        let composed = try await QualityReportBuilder(store: store, options: .init(listedPerCode: 3)).compose()
        #expect(composed.findings.count == 12)
        var lines: [String] = []
        let rows = try await ReportRenderer.csvLines(composed.report, findings: composed.findings) { lines.append($0) }
        #expect(rows == 7 + 10 && lines.count == rows + 1)
        #expect(lines.filter { $0.contains(",author.empty,") }.count == 7)
        #expect(lines.filter { $0.contains(",duplicate.book,") }.count == 10)
        #expect(lines.last?.contains("Twice 4") == true)
        // The listed findings are the first of the full list, composed by the same code.
        var all: [QualityReport.Finding] = []
        try await composed.findings.forEach { all.append($0) }
        for code in ["author.empty", "duplicate.book"] {
            #expect(Array(all.filter { $0.code == code }.prefix(3)) == composed.report.findings.items.filter { $0.code == code })
        }

        let path = ReportFixture.temporaryPath("problems", extension: "csv")
        let written = try await ReportDestinations(csv: path).write(composed.report, findings: composed.findings)
        #expect(written == 17)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == lines.joined())
    }
}
