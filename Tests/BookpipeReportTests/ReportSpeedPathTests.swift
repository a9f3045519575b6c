import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

/// The JSON is the model through one encoder; duplicates are the library's shared values grouped
/// into books.
@Suite struct ReportSpeedPathTests {
    @Test("The JSON is the model through one JSONEncoder: it decodes back to the same report, hostile and right-to-left titles, escapes and a rejected row without id included")
    func jsonRoundTrip() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        var report = try await QualityReportBuilder(store: store).build()
        report.findings.items.append(.init(code: "x.test", severity: "info", field: "Ti\"tle/\\", title: "tab\there\nline\u{1}\u{7F} é 🙂 \u{2028}",
                                           message: "quote \" slash / back \\", rows: [.init(id: nil, file: "a/b.csv", line: -3)]))
        try await ReportHistory.compare(&report, in: store)
        let data = try ReportRenderer.json(report)
        #expect(try JSONDecoder().decode(QualityReport.self, from: data) == report)
        #expect(!String(decoding: data, as: UTF8.self).contains("\\/"))
        report.findings.items = []
        #expect(try JSONDecoder().decode(QualityReport.self, from: ReportRenderer.json(report)) == report)
    }

    @Test("Duplicate findings are groups of books: every shared value whose records are two books or more is in exactly one group, with its reason; records that are one book are no duplicate")
    func duplicatesAsBooks() async throws {
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
        let shared = try store.qualityFigures(.library) { _ in true }.duplicateGroups
        let found = report.findings.items.filter { $0.code == "duplicate.book" }
        #expect(report.findings.items.allSatisfy { !$0.code.hasPrefix("duplicate.") || $0.code == "duplicate.book" })
        #expect(found.count == report.duplicates.groups && found.count >= 1)
        for group in shared {
            let holding = found.filter { finding in Set(group.members.map(\.id)).isSubset(of: Set(finding.rows.compactMap(\.id))) }
            #expect(holding.count == 1, "\(group.kind) \(group.value)")
            #expect(holding.first?.reasons?.contains("\(group.kind.rawValue) \(group.value)") == true)
        }
        // One list: every record is a book of its own, so books = records in the groups.
        #expect(report.duplicates.books == report.duplicates.records)
        #expect(report.duplicates.records == Set(found.flatMap { $0.rows.compactMap(\.id) }).count)
    }

    @Test("Entries of two lists with one ISBN-13 are one book, not a duplicate; the same book twice in one list is")
    func oneBookAcrossLists() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        func entry(_ row: Int, file: String, list: String) -> BookRecord {
            var record = ReportFixture.record(row, title: "Dune", authors: ["Frank Herbert"], isbn: "9780441013593",
                                              fileHash: file, file: file + ".csv")
            record.listEntry = ListIdentity.entry(list: list, key: "id:\(row)")
            return record
        }
        try store.insert([entry(1, file: "aaaa", list: "goodreads"), entry(1, file: "bbbb", list: "storygraph")])
        var report = try await QualityReportBuilder(store: store).build()
        #expect(report.duplicates.books == 0 && report.duplicates.groups == 0)
        try store.insert([entry(2, file: "aaaa", list: "goodreads")])
        report = try await QualityReportBuilder(store: store).build()
        // The goodreads list holds Dune twice; with the storygraph entry the three records are one book
        // (issue 22's grouping), which one list holds twice: one book with a duplicate.
        #expect(report.duplicates.books == 1 && report.duplicates.groups == 1 && report.duplicates.records == 3)
        let finding = try #require(report.findings.items.first { $0.code == "duplicate.book" })
        #expect(finding.reasons?.first == "sameISBN13 9780441013593")
        #expect(finding.message.hasPrefix("1 book held twice by one list (3 records): the same ISBN-13 9780441013593"))
    }
}
