import BookpipeCore
import BookpipeExport
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

@Suite struct QualityReportTests {
    @Test("Counts terminal states, duplicates, validity, completeness and the review queue from the library")
    func metrics() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let report = try await QualityReportBuilder(store: store).build()
        #expect(report.schemaVersion == 2)
        #expect(report.rows.records == 12)
        #expect(report.rows.rejected == 1)
        #expect(report.rows.byStatus == ["enriched": 5, "failed": 1, "needsCandidateSelection": 1, "notFound": 1, "pending": 4])
        #expect(report.rows.failureReasons == [.init(name: "HTTP 503 after 5 requeues", count: 1)])
        // Records 1 and 2 share an ISBN-13, a work and a title and author: one group of two books, three reasons.
        #expect(report.duplicates == .init(books: 2, groups: 1, records: 2, byReason: [
            .init(name: "sameISBN13", count: 1), .init(name: "sameWork", count: 1), .init(name: "sameTitleAndFirstAuthor", count: 1)]))
        #expect(report.validity == .init(invalidISBN: 1, isbn10And13Disagree: 0, impossibleYear: 1, unparseableDate: 1))
        #expect(report.encoding.repairedRecords == 1)
        let isbn = try #require(report.completeness.first { $0.field == "isbn" })
        #expect(isbn.present == 2 && isbn.total == 12 && isbn.query == "bookpipe list missing:isbn")
        #expect(isbn.missingSample.count == 10 && isbn.missingSample.first?.title == "The Left Hand of Darkness")
        #expect(report.completeness.first { $0.field == "year" }?.present == 1)
        // The queue as `review list` shows it: the scan detection below the threshold and the uncertain match.
        #expect(report.review.waiting == 2 && report.review.waitingScans == 1 && report.review.waitingMatches == 1)
        #expect(report.review.scanDetections == 1)
        #expect(report.review.confidenceHistogram[4].count == 1)
        #expect(report.matching.bySource == [.init(name: "catalog", count: 5)])
        #expect(report.matching.scoreHistogram.map(\.count).reduce(0, +) == 5)
        #expect(report.matching.scoreHistogram[14].count == 1)  // 280 goes in the last bucket
        #expect(report.matching.candidateScoreHistogram[3].count == 1)  // 75
    }

    @Test("Every finding names its rows by id and file:line; duplicates name every record of the group")
    func findingsLinkToRows() async throws {
        let (store, records) = try await ReportFixture.makeLibrary()
        let report = try await QualityReportBuilder(store: store).build()
        let duplicate = try #require(report.findings.items.first { $0.code == "duplicate.book" })
        #expect(duplicate.rows == [.init(id: records[0].id, file: "export.csv", line: 2, title: "A Wizard of Earthsea"),
                                   .init(id: records[1].id, file: "export.csv", line: 3, title: "A Wizard of Earthsea")])
        #expect(duplicate.title == "A Wizard of Earthsea")
        let date = try #require(report.findings.items.first { $0.code == "date.unparseable" })
        #expect(date.rows == [.init(id: records[3].id, file: "export.csv", line: 5, title: ReportFixture.hostileTitle)])
        #expect(date.message.contains("\"31/31/2020\""))
        let rejected = try #require(report.findings.items.first { $0.code == "row.rejected" })
        #expect(rejected.rows == [.init(id: nil, file: "export.csv", line: 40)] && rejected.severity == "error")
        #expect(report.findings.items.first?.severity == "error")
        #expect(report.findings.byCode.first { $0.code == "lookup.failed" }?.count == 1)
    }

    @Test("A library imported without enrichment gives a report: every record pending, no matching, no sources")
    func noEnrichment() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        try store.insert((1...5).map { ReportFixture.record($0, title: "Book \($0)") })
        let report = try await QualityReportBuilder(store: store).build()
        #expect(report.rows.byStatus["pending"] == 5 && report.rows.records == 5)
        #expect(report.matching.bySource.isEmpty && report.sources.isEmpty && report.matching.meanScore == nil)
        #expect(try !ReportRenderer.html(report).isEmpty)
    }

    @Test("A date the importer could not read (left empty, with its finding) counts as an unreadable date, once per record")
    func importersUnreadableDates() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        var twoBadDates = ReportFixture.record(1, title: "Book 1")
        for field in ["Date Added", "Date Read"] {
            twoBadDates.addFinding(Finding(code: "date.unparseable", severity: .warning, field: field,
                                           message: "\"someday\" is not a date bookpipe can read (column \"\(field)\")"))
        }
        try store.insert([twoBadDates, ReportFixture.record(2, title: "Book 2")])
        let report = try await QualityReportBuilder(store: store).build()
        #expect(report.validity.unparseableDate == 1)
        #expect(report.findings.byCode.first { $0.code == "date.unparseable" }?.count == 2)
    }

    @Test("The finding limit shortens the list, errors first, while the counts stay complete")
    func findingLimit() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let full = try await QualityReportBuilder(store: store).build()
        let limited = try await QualityReportBuilder(store: store, options: .init(findingLimit: 2)).build()
        #expect(limited.findings.items.count == 2)
        #expect(limited.findings.truncated == full.findings.items.count - 2)
        // Every code is still counted in full; only what is listed shrinks.
        #expect(limited.findings.byCode.map { [$0.code: $0.count] } == full.findings.byCode.map { [$0.code: $0.count] })
        #expect(limited.findings.byCode.compactMap(\.listed).reduce(0, +) == 2)
        #expect(limited.findings.items.allSatisfy { $0.severity == "error" })
    }

    @Test("A run's report counts only the records that run wrote")
    func runScope() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        let first = try await store.beginRun(command: "import a", pipeline: "csv-import")
        try store.insert([ReportFixture.record(1, title: "One")], runID: first)
        let second = try await store.beginRun(command: "import b", pipeline: "csv-import")
        try store.insert([ReportFixture.record(2, title: "Two"), ReportFixture.record(3, title: "Three")], runID: second)
        try await store.recordRunSources([SourceCounters(name: "openlibrary", requests: 10, cacheHits: 2, retries: 3,
                                                            rateLimited: 1, failures: 0, meanLatencyMilliseconds: 120)],
                                         runID: second)
        let report = try await QualityReportBuilder(store: store, options: .init(runID: second)).build()
        #expect(report.rows.records == 2)
        #expect(report.runs.map(\.id) == [second] && report.runs.first?.records == 2)
        #expect(report.sources == [.init(name: "openlibrary", requests: 10, cacheHits: 2, retries: 3, rateLimited: 1,
                                         failures: 0, meanLatencyMilliseconds: 120, cachedAnswers: 0)])
        #expect(try await QualityReportBuilder(store: store, options: .init(runID: first)).build().sources.isEmpty)
    }

    @Test("The JSON report validates against docs/report.schema.json, and a report without schemaVersion does not")
    func jsonSchema() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let data = try await ReportRenderer.json(try QualityReportBuilder(store: store).build())
        let validator = try SchemaValidator(path: ReportFixture.repositoryRoot.appendingPathComponent("docs/report.schema.json").path)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(validator.validate(object) == [])
        object["schemaVersion"] = nil
        object["surprise"] = 1
        #expect(validator.validate(object) == ["$: missing required schemaVersion", "$: unexpected property surprise"])
    }

    @Test("The CSV has one line per finding and neutralises cells a spreadsheet would run or that start with tab or CR")
    func csv() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let report = try await QualityReportBuilder(store: store).build()
        let text = ReportRenderer.csv(report)
        let lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.first == "severity,code,field,record_id,location,title,message,action")
        // A line per record and code: the duplicate group of two records gives two.
        #expect(lines.count == report.findings.items.reduce(0) { $0 + $1.rows.count } + 1)
        #expect(lines.filter { $0.contains(",duplicate.book,") }.count == 2)
        #expect(text.contains(",\"'=HYPERLINK(\"\"http://x\"\")\","))
        #expect(CSVWriting.quoted("-1") == "'-1" && CSVWriting.quoted("+1") == "'+1" && CSVWriting.quoted("@SUM") == "'@SUM")
        #expect(CSVWriting.quoted("\tx") == "'\tx" && CSVWriting.quoted("\rx") == "\"'\rx\"")
        #expect(CSVWriting.quoted("a,b") == "\"a,b\"" && CSVWriting.quoted("plain") == "plain")
    }

    @Test("The HTML page escapes data text and isolates it from bidirectional overrides")
    func htmlEscaping() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let html = try await ReportRenderer.html(try QualityReportBuilder(store: store).build())
        #expect(!html.contains(ReportFixture.hostileTitle))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!html.lowercased().contains("<script"))
        // Every right-to-left override sits inside a <bdi> element.
        for range in html.ranges(of: "\u{202E}") {
            let before = html[..<range.lowerBound]
            let open = try #require(before.range(of: "<bdi>", options: .backwards))
            #expect(before.range(of: "</bdi>", options: .backwards).map { $0.lowerBound < open.lowerBound } ?? true)
        }
        #expect(html.contains("unicode-bidi: isolate"))
        #expect(html.contains("rgb(255, 59, 48)") && html.contains("@media print"))
        #expect(!html.contains("http://") || !html.contains("src=\"http"))
    }
}

@Suite struct TerminalSummaryTests {
    static func code(_ name: String, _ severity: String, _ count: Int) -> QualityReport.CodeCount {
        .init(code: name, severity: severity, count: count, action: "do \(name)", query: nil, section: "code-\(name)")
    }

    @Test("The terminal lists every code: errors always, then warnings by count, then information; 'and N more' only past a screenful")
    func everyCode() {
        let few = [Self.code("info.a", "info", 50), Self.code("warn.b", "warning", 1), Self.code("row.rejected", "error", 1),
                   Self.code("warn.c", "warning", 9)]
        #expect(ReportRenderer.findingLines(few) == [
            "  findings (code, count, what to do):",
            "    error row.rejected 1 — do row.rejected",
            "    warning warn.c 9 — do warn.c",
            "    warning warn.b 1 — do warn.b",
            "    info info.a 50 — do info.a",
        ])
        // A screenful is 20 codes: 25 warnings and 2 errors show both errors, 17 warnings and a line for the 8 others.
        let many = (1...25).map { Self.code("warn.\($0)", "warning", 100 - $0) } + [Self.code("e.1", "error", 1), Self.code("e.2", "error", 2)]
        let lines = ReportRenderer.findingLines(many)
        #expect(lines.count == 1 + 2 + 17 + 1)
        #expect(lines[1].hasPrefix("    error e.1") || lines[1].hasPrefix("    error e.2"))
        #expect(lines.last == "    and 8 more (\((18...25).map { 100 - $0 }.reduce(0, +)) findings): the JSON and HTML reports list every code")
        // Exactly a screenful: no "and more".
        #expect(ReportRenderer.findingLines(Array(many.prefix(20))).last?.contains("more") == false)
    }
}
