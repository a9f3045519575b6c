import BookpipeCore
import BookpipeStore
import Foundation
import GRDB
import Testing
@testable import BookpipeReport

/// The fast paths of the report (hand-written JSON, duplicates found in one scan) against the
/// plain ways they replace.
@Suite struct ReportSpeedPathTests {
    static func encoderJSON(_ report: QualityReport) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }

    @Test("The JSON is byte for byte what JSONEncoder writes: hostile and right-to-left titles, escapes, a rejected row without id, no findings, a finding limit")
    func jsonBytes() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        var report = try QualityReportBuilder(store: store).build()
        report.findings.items.append(.init(code: "x.test", severity: "info", field: "Ti\"tle/\\", title: "tab\there\nline\u{1}\u{7F} é 🙂 \u{2028}",
                                           message: "quote \" slash / back \\", rows: [.init(id: nil, file: "a/b.csv", line: -3)]))
        #expect(try ReportRenderer.json(report) == Self.encoderJSON(report))
        report.findings.items = []
        #expect(try ReportRenderer.json(report) == Self.encoderJSON(report))
        let limited = try QualityReportBuilder(store: store, options: .init(findingLimit: 1)).build()
        #expect(try ReportRenderer.json(limited) == Self.encoderJSON(limited))
    }

    @Test("Duplicates found in one scan are the groups, order and members the three GROUP BY queries give")
    func duplicatesAsGroupBy() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        var records: [BookRecord] = []
        for row in 1...60 {
            let title = ["Émile", "emile", "Zed", "Alpha", "alpha beta"][row % 5]
            let author = ["Ann Lee", "Bob Ray", "Zoë Ö"][row % 3]
            records.append(ReportFixture.record(row, title: title, authors: [author],
                                                isbn: row % 4 == 0 ? ["9780547773742", "9780441478125", "9780316229296"][row % 3] : nil,
                                                status: row % 2 == 0 ? .enriched : .pending,
                                                workKey: row % 7 == 1 ? "" : "/works/OL\(row % 7)W"))
        }
        try store.insert(records)
        let report = try QualityReportBuilder(store: store).build()
        // What the three GROUP BYs give.
        var expected: [(String, String, [String])] = []
        let queries = [
            ("duplicate.same-isbn", "isbn13", "isbn13 IS NOT NULL"),
            // A Google Books match has no work key: no work to share.
            ("duplicate.same-work", "json_extract(enrichment, '$.match.workKey')",
             "status = 'enriched' AND json_extract(enrichment, '$.match.workKey') <> ''"),
            ("duplicate.same-title-author", "title_key || ' / ' || coalesce(json_extract(normalized, '$[1][0]'), '')",
             "title_key IS NOT NULL AND title_key <> ''"),
        ]
        try store.readDatabase("test") { db in
            for (code, groupBy, condition) in queries {
                for row in try Row.fetchAll(db, sql: """
                    SELECT \(groupBy) AS value, count(*) AS n FROM records r WHERE \(condition) GROUP BY 1 HAVING n > 1 ORDER BY n DESC, 1
                    """) {
                    let keys = try Int64.fetchAll(db, sql: "SELECT key FROM records r WHERE \(condition) AND \(groupBy) IS ? ORDER BY key",
                                                  arguments: [row["value"] as String?])
                    expected.append((code, "\(keys.count) records", keys.map { "\($0 & 0xFFFF_FFFF)" }))
                }
            }
        }
        let found = report.findings.items.filter { $0.code.hasPrefix("duplicate.") }
        #expect(found.count == expected.count && found.count > 6)
        for code in queries.map(\.0) {
            let mine = found.filter { $0.code == code }
            let theirs = expected.filter { $0.0 == code }
            #expect(mine.count == theirs.count && !mine.isEmpty, "\(code)")
            for (finding, group) in zip(mine, theirs) {
                #expect(finding.message.hasPrefix(group.1 + " "))
                #expect(finding.rows.compactMap { $0.id?.split(separator: ":").last.map(String.init) } == group.2)
            }
        }
    }
}
