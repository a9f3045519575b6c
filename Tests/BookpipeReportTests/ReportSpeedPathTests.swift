import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

/// The fast paths of the report (hand-written JSON; duplicates found by the library in one scan,
/// whose groups `QualityFiguresTests` compares with `GROUP BY`) against the plain ways they replace.
@Suite struct ReportSpeedPathTests {
    static func encoderJSON(_ report: QualityReport) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(report)
    }

    @Test("The JSON is byte for byte what JSONEncoder writes: hostile and right-to-left titles, escapes, a rejected row without id, no findings, a finding limit")
    func jsonBytes() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        var report = try await QualityReportBuilder(store: store).build()
        report.findings.items.append(.init(code: "x.test", severity: "info", field: "Ti\"tle/\\", title: "tab\there\nline\u{1}\u{7F} é 🙂 \u{2028}",
                                           message: "quote \" slash / back \\", rows: [.init(id: nil, file: "a/b.csv", line: -3)]))
        #expect(try ReportRenderer.json(report) == Self.encoderJSON(report))
        report.findings.items = []
        #expect(try ReportRenderer.json(report) == Self.encoderJSON(report))
        let limited = try await QualityReportBuilder(store: store, options: .init(findingLimit: 1)).build()
        #expect(try ReportRenderer.json(limited) == Self.encoderJSON(limited))
    }

    @Test("Duplicate findings are the library's duplicate groups, in their order, with their members; one finding per group")
    func duplicatesAsGroups() async throws {
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
        let report = try await QualityReportBuilder(store: store).build()
        let groups = try store.qualityFigures(.library) { _ in true }.duplicateGroups
        let codes: [DuplicateKind: String] = [.sameISBN13: "duplicate.same-isbn", .sameWork: "duplicate.same-work",
                                              .sameTitleAndFirstAuthor: "duplicate.same-title-author"]
        let found = report.findings.items.filter { $0.code.hasPrefix("duplicate.") }
        #expect(found.count == groups.count && found.count > 6)
        for kind in DuplicateKind.allCases {
            let mine = found.filter { $0.code == codes[kind] }
            let theirs = groups.filter { $0.kind == kind }
            #expect(mine.count == theirs.count && !mine.isEmpty, "\(kind)")
            for (finding, group) in zip(mine, theirs) {
                #expect(finding.message.hasPrefix("\(group.members.count) records ") && finding.message.hasSuffix(" \(group.value)"))
                #expect(finding.rows.map(\.id) == group.members.map(\.id))
                #expect(finding.rows.map(\.line) == group.members.map(\.line))
            }
        }
        #expect(report.duplicates.sameISBN == groups.filter { $0.kind == .sameISBN13 }.count)
        #expect(report.duplicates.records == Set(groups.flatMap { $0.members.map(\.id) }).count)
    }
}
