import BookpipeCore
import BookpipePipeline
import Testing
@testable import BookpipeStages

/// The enrichment part of a run's summary comes from the run's events alone.
@Suite struct EnrichmentSummaryTests {
    static func counters(_ name: String, requests: Int = 0, failures: Int = 0) -> SourceCounters {
        SourceCounters(name: name, requests: requests, cacheHits: 0, retries: 0, rateLimited: 0, failures: failures,
                       meanLatencyMilliseconds: nil)
    }

    @Test("Batches' events add up: outcomes, changes counted per field and kind, rows left at the deadline")
    func addsUp() {
        var report = RunReport()
        report.events = [
            .recordsLookedUp([.enriched: 18, .notFound: 2]),
            .recordsChanged(byField: ["match": 1, "year": 2], matchesByKind: ["moved": 1]),
            .recordsLookedUp([.enriched: 5, .failed: 1]),
            .recordsChanged(byField: ["match": 2], matchesByKind: ["repaired": 2, "unknown-kind": 3]),
            .recordsLeft(7, because: .deadline),
            .recordsLeft(3, because: .deadline),
            .sourcesUsed([SourceOutcome(counters: Self.counters("openlibrary", requests: 9, failures: 1), isRemote: true)]),
        ]
        let summary = EnrichmentSummary(report: report)
        #expect(summary.rowsDone == 26)
        #expect(summary.outcomes == [.enriched: 23, .notFound: 2, .failed: 1])
        #expect(summary.changesByField == ["match": 3, "year": 2])
        #expect(summary.matchChanges == [.moved: 1, .repaired: 2])
        #expect(summary.stoppedAtDeadline && summary.rowsLeftAtDeadline == 10)
        #expect(summary.enrichmentRan && !summary.noSourceLeft)
        let lines = summary.lines()
        #expect(lines.first == "enriched in this run: 26 rows (23 enriched, 2 notFound, 1 failed)")
        #expect(lines.contains("  openlibrary: 9 requests, 0 cache hits, 0 retries, 0 × 429, 1 failed lookups"))
        #expect(lines.contains("changed records by field: match 3: 1 to another work, 2 edition key → work key, year 2"))
        #expect(lines.last?.hasPrefix("stopped at the deadline: 10 rows left") == true)
        #expect(summary.everyLookupFailedMessage == nil)
    }

    @Test("Every source unreachable: the error names each host and the rows not asked; all lookups failed is said too")
    func noSourceLeft() {
        var report = RunReport()
        report.events = [
            .recordsLookedUp([.failed: 4]),
            .recordsLeft(40, because: .noSourceReachable),
            .sourcesUsed([
                SourceOutcome(counters: Self.counters("openlibrary", failures: 4), isRemote: true,
                              unreachable: .init(host: "127.0.0.1:9", cause: "connection refused", lookupsInARow: 4)),
                SourceOutcome(counters: Self.counters("googlebooks"), isRemote: true,
                              unreachable: .init(host: "localhost:9", cause: "connection refused", lookupsInARow: 4)),
            ]),
        ]
        let summary = EnrichmentSummary(report: report)
        #expect(summary.noSourceLeft)
        let message = summary.noSourceLeftMessage(catalogPath: "/data/catalog.sqlite") ?? ""
        #expect(message.hasPrefix("error: no source could be reached: openlibrary at 127.0.0.1:9 (connection refused), "
                                  + "googlebooks at localhost:9 (connection refused). 40 rows were not asked"))
        #expect(message.hasSuffix("add --offline to look rows up in it alone, with no network."))
        #expect(summary.everyLookupFailedMessage?.hasPrefix("error: every lookup of this run failed (4 rows)") == true)
        #expect(summary.changeLines.filter { $0.contains("could not be reached") }.count == 2)
    }

    @Test("A run with no enrichment event says nothing about enrichment")
    func nothing() {
        let summary = EnrichmentSummary(report: RunReport())
        #expect(!summary.enrichmentRan && summary.rowsDone == 0 && summary.noSourceLeftMessage(catalogPath: nil) == nil)
    }
}

/// `import --dry-run`'s finding counts come from the run's events, batch by batch.
@Suite struct FindingTallyTests {
    /// Emits two batches of two files' records, some with findings.
    struct TwoBatches: SourceStage {
        func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
            let invalid = Finding(code: "isbn.invalid", severity: .warning, field: "ISBN", message: "bad")
            let noTitle = Finding(code: "title.empty", severity: .error, field: "Title", message: "empty")
            func record(_ file: String, _ row: Int, _ findings: [Finding]) -> BookRecord {
                var record = BookRecord(origin: RecordOrigin(file: file, fileHash: file, row: row, line: row + 1))
                record.findings = findings
                return record
            }
            try await emit([record("a.csv", 1, [invalid]), record("a.csv", 2, [invalid, noTitle]), record("b.csv", 1, [])])
            try await emit([record("a.csv", 3, [invalid]), record("b.csv", 2, [noTitle])])
        }
    }

    @Test("Counts add up across batches per file and code, most frequent first; records pass on unchanged")
    func counts() async throws {
        let result = await PipelineRunner().execute(Pipeline("dry") {
            TwoBatches()
            CountFindings()
        }, context: StageContext(pipelineName: "dry"))
        #expect(result.error == nil)
        #expect(result.report.recordsByStep["count-findings"] == 5)
        let tally = FindingTally(report: result.report)
        #expect(tally.entries(file: "a.csv").map { "\($0.code) \($0.count)" } == ["isbn.invalid 3", "title.empty 1"])
        #expect(tally.entries(file: "b.csv").map { "\($0.code) \($0.count) \($0.severity)" } == ["title.empty 1 error"])
        #expect(tally.entries(file: "c.csv").isEmpty)
    }
}
