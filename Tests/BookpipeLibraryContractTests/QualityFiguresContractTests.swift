import BookpipeCore
import BookpipeIngest
import BookpipeLibrary
import Foundation
import Testing

/// The report's figures are the library's, not the engine's: the same library stored on every
/// engine gives the same ``QualityFigures`` (issue 28, item 6: SQLite computes them in its scans,
/// PostgreSQL with aggregates on the server).
@Suite struct QualityFiguresContractTests {
    /// The real exports the figures are compared on (`/work/shared/fixtures/real`, or
    /// `BOOKPIPE_REAL_FIXTURES`); the suite fails when they are missing, never skips.
    static let fixtures: [String] = {
        let folder = ProcessInfo.processInfo.environment["BOOKPIPE_REAL_FIXTURES"] ?? "/work/shared/fixtures/real"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".csv") || $0.hasSuffix(".tsv") }.sorted().map { folder + "/" + $0 }
    }()

    /// A date rule that refuses some of the real exports' dates: `YYYY-MM-DD` or `YYYY/MM/DD`, or blank.
    static let acceptsDate: @Sendable (String) -> Bool = { text in
        text.isEmpty || text.range(of: #"^[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}$"#, options: .regularExpression) != nil
    }

    /// A file of rows with known problems, each counted somewhere in the figures.
    static func problemRows() -> [BookRecord] {
        func book(_ row: Int, title: String, authors: [String] = ["Ann Author"], isbn: String? = nil, year: Int? = 2001)
            -> BookRecord {
            var record = BookRecord(origin: RecordOrigin(file: "problems.csv", fileHash: "facade", row: row, line: row + 1,
                                                         format: "goodreads", rawFields: [title, "\(year ?? 0)", "3020"]),
                                    title: title, authors: authors, rawISBNs: isbn.map { [$0] } ?? [], year: year)
            record.shelf = row.isMultiple(of: 2) ? "read" : "to-read"
            record.rating = 4
            return record
        }
        var rows: [BookRecord] = [
            book(1, title: "Dune", isbn: "9780441013593"),
            book(2, title: "Dune", isbn: "9780441013593"),                 // the same ISBN, title and author
            book(3, title: "No Author", authors: []),                       // authorless
            book(4, title: "Bad Checksum", isbn: "9780441013594"),         // an invalid ISBN: a stored finding
            book(5, title: "Zero Pages", year: nil),
            book(6, title: "Calibre Rating"),
            book(7, title: "Read Early", year: 2010),
            book(8, title: "Odd Dates"),
            book(9, title: "Scan Without Confidence"),
            book(10, title: "Scan With Confidence"),
            book(11, title: "Half Rating"),
        ]
        rows[4].pageCount = 0
        rows[4].publisher = "Ace"
        rows[5].origin.format = "calibre"
        rows[5].rating = 9                                                  // fine on Calibre's 0–10 scale
        rows[10].rating = 7.5                                               // outside 0–5
        rows[6].dateRead = "2004/05/06"                                     // before the year 2010
        rows[7].dateAdded = "31.12.2020"                                    // refused by the date rule
        rows[7].dateRead = ""
        rows[8].scan = ScanDetection(confidence: nil, boundingBox: nil, photoPath: nil)
        rows[8].reviewStatus = .needsReview
        rows[9].scan = ScanDetection(confidence: 0.75, boundingBox: nil, photoPath: nil)
        rows[9].reviewStatus = .needsReview
        for index in rows.indices { Normalizer.normalize(&rows[index], currentYear: 2026) }
        return rows
    }

    /// Fills a library: every real export as an import run would store it (records, rejected rows,
    /// the file's registration), the problem rows, then an enrichment run that matches, fails, finds
    /// nothing and leaves candidates, and a person's review decisions.
    static func fill(_ library: any Library) async throws {
        let importRun = try await library.beginRun(command: "import", pipeline: "csv-import")
        for path in fixtures {
            // An export the reader refuses as a whole (a headerless one) is left out, as an import leaves it.
            guard let reader = try? CSVRecordReader(path: path) else { continue }
            var records: [BookRecord] = [], rejected: [RejectedRow] = []
            while let batch = try reader.nextBatch(maxRecords: 1_000) {
                records += batch.records
                rejected += batch.rejected
            }
            for index in records.indices { Normalizer.normalize(&records[index], currentYear: 2026) }
            try await library.registerSourceFile(SourceFileInfo(hash: reader.fileHash, path: path, format: reader.format.name,
                                                                header: reader.format.header, encoding: reader.format.encoding,
                                                                size: reader.totalBytes), runID: importRun)
            try await library.committed(try await library.submitInsert(records, runID: importRun))
            try await library.insertRejections(rejected, runID: importRun)
        }
        try await library.registerSourceFile(SourceFileInfo(hash: "facade", path: "problems.csv", format: "goodreads",
                                                            header: ["Title", "Year Published", "Original Publication Year"],
                                                            encoding: "utf-8", size: 100), runID: importRun)
        try await library.committed(try await library.submitInsert(problemRows(), runID: importRun))
        try await library.insertRejections([
            RejectedRow(fileHash: "facade", file: "problems.csv", line: 14, row: 13, column: 2, reason: "an unclosed quote",
                        rawText: "\"Broken,2001"),
            RejectedRow(fileHash: "facade", file: "problems.csv", line: 13, row: 12, column: nil, reason: "no title",
                        rawText: ",2001"),
        ], runID: importRun)
        try await library.finishRun(importRun, status: .finished, summary: nil)

        let enrichRun = try await library.beginRun(command: "enrich", pipeline: "enrich")
        var outcomes = try await library.records(ids: ["facade:1", "facade:2", "facade:4", "facade:5", "facade:6", "facade:11"])
        let match = Match(workKey: "/works/OL1W", editionKey: "/books/OL7M", title: "Dune", authors: ["Frank Herbert"],
                          score: 150, source: "catalog")
        outcomes[0].enrichment = EnrichmentResult(status: .enriched, match: match)
        outcomes[1].enrichment = EnrichmentResult(status: .enriched, match: Match(
            workKey: "/works/OL1W", editionKey: nil, title: "Dune", authors: [], score: 120, source: "openlibrary"))
        outcomes[2].enrichment = EnrichmentResult(status: .failed, failure: "timed out")
        outcomes[3].enrichment = EnrichmentResult(status: .notFound)
        outcomes[4].enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL2W", title: "Calibre", authors: [], source: "openlibrary", score: 90),
            Candidate(workKey: "/works/OL3W", title: "Calibre", authors: [], source: "openlibrary", score: 80),
        ])
        outcomes[5].enrichment = EnrichmentResult(status: .failed)
        _ = try await library.saveEnrichment(outcomes, runID: enrichRun)
        try await library.recordRunSources([
            SourceCounters(name: "openlibrary", requests: 6, cacheHits: 1, retries: 2, rateLimited: 1, failures: 1,
                           meanLatencyMilliseconds: 120.5),
            SourceCounters(name: "catalog", requests: 0, cacheHits: 0, retries: 0, rateLimited: 0, failures: 0,
                           meanLatencyMilliseconds: nil),
        ], runID: enrichRun)
        try await library.cacheAnswers(source: "openlibrary", [("isbn:9780441013593", "{}"), ("title:dune", "{}")],
                                       fetchedAt: Date(timeIntervalSince1970: 1_800_000_000))
        try await library.finishRun(enrichRun, status: .interrupted, summary: nil)
        // A person: an edit (corrected), a verification (verified).
        _ = try await library.edit(id: "facade:3", title: "Now Titled", authors: ["Someone"])
        try await library.verify(ids: ["facade:1"])
    }

    /// Figures as comparable text: every figure, lists in no particular order sorted, times left
    /// out (each engine stamps its own writes).
    static func comparable(_ figures: QualityFigures) -> [String: String] {
        func places(_ list: [RecordPlace]) -> String { list.map { "\($0.id)@\($0.file):\($0.line)" }.joined(separator: ", ") }
        var text: [String: String] = [
            "records": "\(figures.records)",
            "byStatus": figures.recordsByStatus.map { "\($0.key.rawValue)=\($0.value)" }.sorted().joined(separator: " "),
            "failureReasons": figures.failureReasons.map { "\($0.key ?? "-")=\($0.value)" }.sorted().joined(separator: " "),
            "rejectedRows": "\(figures.rejectedRows)",
            "completeness": "\(figures.completeness)",
            "reviewQueue": "\(figures.reviewQueue.waiting) \(figures.reviewQueue.waitingScans) \(figures.reviewQueue.waitingMatches) "
                + "\(figures.reviewQueue.userEdited) \(figures.reviewQueue.queuedAt.count) \(figures.reviewQueue.scanDetections) "
                + "\(figures.reviewQueue.missingConfidence) \(figures.reviewQueue.confidences.sorted())",
            "reviewOutcomes": "\(String(describing: figures.reviewOutcomes))",
            "matches": figures.matches.bySource.map { "\($0.key ?? "-")=\($0.value)" }.sorted().joined(separator: " ")
                + " \(figures.matches.scores.sorted()) \(String(describing: figures.matches.meanScore)) "
                + "\(figures.matches.leadingCandidateScores.sorted())",
            "findings": figures.findings.map { "\($0.record.id) \($0.finding)" }.joined(separator: "\n"),
            "refusedDates": figures.refusedDates.map { "\($0.record.id) \($0.dateAdded ?? "-") \($0.dateRead ?? "-")" }
                .joined(separator: "\n"),
            "openOutcomes": figures.openOutcomes.map {
                "\(places([$0.record])) \($0.status) \($0.failure ?? "-") \($0.candidates) \($0.needsReview)"
            }.joined(separator: "\n"),
            "duplicateGroups": figures.duplicateGroups.map { "\($0.kind) \($0.value): \(places($0.members))" }.joined(separator: "\n"),
            "rejections": figures.rejections.map { "\($0)" }.joined(separator: "\n"),
            "runs": figures.runs.map { "\($0.id) \($0.command) \($0.pipeline) \($0.status) \($0.records) \($0.written)" }
                .joined(separator: "\n"),
            "files": figures.files.map { "\($0)" }.joined(separator: "\n"),
            "sourceRequests": figures.sourceRequests.map { "\($0)" }.joined(separator: "\n"),
            "cachedAnswers": figures.cachedAnswers.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "),
            "authorless": places(figures.authorless),
            "outliers": figures.outliers.map { "\(places([$0.record])) \($0.kind) \($0.field) \($0.value) \($0.recordYear ?? -1)" }
                .joined(separator: "\n"),
        ]
        for (value, samples) in figures.missingSamples { text["missing " + value.rawValue] = places(samples) }
        for profile in figures.profiles {
            text["profile " + profile.field] = "\(profile.isNumeric) "
                + profile.values.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " | ")
        }
        text["profile order"] = figures.profiles.map(\.field).joined(separator: " ")
        return text
    }

    @Test("The same library (18 real exports, rows with known problems, runs, reviews) gives the same report figures on every engine, for the library and for one run")
    func sameFiguresOnEveryEngine() async throws {
        #expect(Self.fixtures.count >= 10, "the real exports are missing")
        var figures: [(engine: String, all: [String: String], run: [String: String])] = []
        for engine in LibraryEngine.all {
            let (library, _) = try engine.make()
            try await Self.fill(library)
            let plausible = PlausibleValues.standard(currentYear: 2026)
            figures.append((engine.description,
                            Self.comparable(try await library.qualityFigures(QualityScope(plausible: plausible),
                                                                             acceptsDate: Self.acceptsDate)),
                            Self.comparable(try await library.qualityFigures(QualityScope(runID: 2, plausible: plausible),
                                                                             acceptsDate: Self.acceptsDate))))
        }
        let sqlite = try #require(figures.first)
        // The library holds what each figure counts (so equal figures are not equal emptiness).
        #expect(sqlite.all["records"].flatMap { Int($0) } ?? 0 > 10_000)
        for key in ["refusedDates", "duplicateGroups", "outliers", "findings", "openOutcomes", "rejections", "authorless",
                    "sourceRequests", "missing isbn"] {
            #expect(sqlite.all[key]?.isEmpty == false, "nothing in \(key)")
        }
        #expect(sqlite.all["outliers"]?.contains("facade:5@problems.csv:6 pages pages 0 -1") == true)
        #expect(sqlite.all["outliers"]?.contains("facade:11@problems.csv:12 rating rating 7.5 2001") == true)
        #expect(sqlite.all["outliers"]?.contains("facade:7@problems.csv:8 readBeforePublication dateRead 2004/05/06 2010") == true)
        #expect(sqlite.all["outliers"]?.contains("facade:6@problems.csv:7 rating") == false, "a Calibre rating of 9 is on its scale")
        #expect(sqlite.all["outliers"]?.contains("facade:6@problems.csv:7 year Original Publication Year 3020 2001") == true)
        #expect(sqlite.all["reviewOutcomes"] == "Optional(BookpipeLibrary.QualityFigures.ReviewOutcomes(corrected: 1, verified: 1))")
        #expect(sqlite.run["records"] == "6")
        for other in figures.dropFirst() {
            for key in Set(sqlite.all.keys).union(other.all.keys).sorted() {
                #expect(other.all[key] == sqlite.all[key], "\(other.engine) differs from \(sqlite.engine) in \(key)")
            }
            for key in Set(sqlite.run.keys).union(other.run.keys).sorted() {
                #expect(other.run[key] == sqlite.run[key], "\(other.engine) differs from \(sqlite.engine) in \(key) (one run)")
            }
        }
    }
}
