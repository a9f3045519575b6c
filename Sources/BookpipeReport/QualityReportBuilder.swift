import BookpipeCore
import BookpipeLibrary
import Foundation

/// Computes a ``QualityReport`` from a library's figures: the library computes the aggregates and
/// lists the rows behind them (``LibraryReportStore/qualityFigures(_:acceptsDate:)``; the SQLite engine makes
/// a few scans that decode no record), and the builder turns them into the report's counts, findings
/// and wording in plain Swift: which findings count as invalid ISBNs, what a date must look like
/// (``DateValidation``), the order and limit of the listed findings.
///
/// Works on any library, including one imported with `--no-enrich` (then every record is
/// `pending`, and the matching and source sections are empty).
///
/// ```swift
/// let report = try QualityReportBuilder(store: store).build()
/// try ReportRenderer.html(report).write(toFile: "report.html", atomically: true, encoding: .utf8)
/// ```
public struct QualityReportBuilder: Sendable {
    /// What to include.
    public struct Options: Sendable, Hashable {
        /// Only the records last written by this run; nil: the whole library.
        public var runID: Int64?
        /// The most findings listed (counts are always complete); nil: all.
        public var findingLimit: Int?
        /// The most findings of one code listed in the report (the JSON and the page); the counts are
        /// complete, each code names the query that lists all its records where one does, and the
        /// CSV (``ReportFindings``) has every one.
        public var listedPerCode: Int

        /// Creates options.
        public init(runID: Int64? = nil, findingLimit: Int? = nil, listedPerCode: Int = ReportRenderer.htmlRowsPerCode) {
            self.runID = runID
            self.findingLimit = findingLimit
            self.listedPerCode = listedPerCode
        }
    }

    /// The library.
    public let store: any Library
    /// What to include.
    public let options: Options
    /// The time the report is made at (injected for tests).
    public let now: Date

    /// Creates a builder.
    public init(store: any Library, options: Options = Options(), now: Date = Date()) {
        self.store = store
        self.options = options
        self.now = now
    }

    /// Computes the report from the library's figures (``LibraryReportStore/qualityFigures(_:acceptsDate:)``,
    /// one snapshot), then reads the titles of the records its listed findings concern (a second
    /// read: a record removed in between is listed without its title).
    ///
    /// The report lists at most ``Options/listedPerCode`` findings of each code (the counts are
    /// complete); ``compose()`` also gives every finding, for the CSV.
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func build() async throws(StoreError) -> QualityReport {
        try await compose().report
    }

    /// Computes the report as ``build()`` does, and keeps what every finding is made from
    /// (``ReportFindings``), so the CSV can list every one while the report lists a few per code.
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func compose() async throws(StoreError) -> ComposedReport {
        var composition = try await makeComposition()
        var report = composition.report()
        // Titles of every record the listed findings and the completeness samples name.
        var ids = Set<String>()
        for finding in report.findings.items { for row in finding.rows { if let id = row.id { ids.insert(id) } } }
        for field in report.completeness { for row in field.missingSample { if let id = row.id { ids.insert(id) } } }
        let titles = try await store.recordTitles(ids: Array(ids))
        ReportFindings.fillTitles(&report.findings.items, titles)
        for index in report.completeness.indices {
            for row in report.completeness[index].missingSample.indices {
                if let id = report.completeness[index].missingSample[row].id {
                    report.completeness[index].missingSample[row].title = titles[id]
                }
            }
        }
        return ComposedReport(report: report, findings: ReportFindings(composition: composition, store: store))
    }

    /// The library's figures and which records are one book, composed (the members are let go here).
    private func makeComposition() async throws(StoreError) -> Composition {
        let figures = try await store.qualityFigures(QualityScope(runID: options.runID), acceptsDate: DateValidation.isReadableOrBlank)
        // Which records are one book (issue 22's grouping): duplicates are counted between books.
        let members = try await store.bookMembers()
        let books = BookGrouping.books(members, decisions: try await store.linkDecisions())
        var bookOf: [String: String] = [:], listOf: [String: String] = [:]
        for book in books where book.count > 1 {
            for id in book { bookOf[id] = book[0] }
        }
        for member in members where bookOf[member.recordID] != nil { listOf[member.recordID] = member.list }
        return Composition(figures: figures, options: options, now: now, library: store.location, bookOf: bookOf, listOf: listOf)
    }
}

/// A report (``QualityReport``, a few findings listed per code) and every one of its findings
/// (``ReportFindings``), as ``QualityReportBuilder/compose()`` makes them.
public struct ComposedReport: Sendable {
    /// The report.
    public var report: QualityReport
    /// Every finding of the report, in its order, composed as read.
    public let findings: ReportFindings
}

/// One report made from the library's figures: plain Swift over values. It keeps where each finding
/// comes from (``FindingSource``: a place in the figures), not the finding, and composes a finding
/// when one is listed or written (``finding(_:code:)``), so a million findings are not held as text.
struct Composition: Sendable {
    let figures: QualityFigures
    /// The duplicate groups of books.
    let duplicates: DuplicateBooks.Result
    let options: QualityReportBuilder.Options
    let now: Date
    let library: String
    /// The values outside which a value is an outlier.
    let plausible: PlausibleValues
    var codeCounts: [String: (severity: String, count: Int)] = [:]
    /// Where each code's findings come from, in the order found (row order).
    var sources: [String: [FindingSource]] = [:]
    /// The codes in the report's order: errors, then warnings, then info, each by code.
    var codeOrder: [String] = []

    /// - Parameters:
    ///   - bookOf: The book (its first record's id) of each record that is one book with others.
    ///   - listOf: The list of each record in `bookOf`.
    init(figures: QualityFigures, options: QualityReportBuilder.Options, now: Date, library: String, bookOf: [String: String],
         listOf: [String: String]) {
        self.figures = figures
        self.options = options
        self.now = now
        self.library = library
        plausible = QualityScope(runID: options.runID).plausible
        duplicates = DuplicateBooks.group(figures.duplicateGroups, bookOf: bookOf, listOf: listOf)
    }

    static func reference(_ place: RecordPlace) -> QualityReport.RowReference {
        QualityReport.RowReference(id: place.id, file: place.file, line: place.line)
    }

    mutating func report() -> QualityReport {
        // Terminal states and reasons.
        var byStatus = Dictionary(uniqueKeysWithValues: RecordStatus.allCases.map { ($0.rawValue, 0) })
        for (status, count) in figures.recordsByStatus { byStatus[status.rawValue, default: 0] += count }
        // A failure that gives no reason counts as "unknown" (with any literally so named).
        var reasons: [String?: Int] = [:]
        for (reason, count) in figures.failureReasons { reasons[reason ?? "unknown", default: 0] += count }
        let failureReasons = Self.counts(reasons, unnamed: "unknown").prefix(50)
        let total = figures.records
        let present = figures.completeness
        let fields: [(String, Int, LibraryQuery.MissingValue)] = [
            ("isbn", present.isbn13, .isbn), ("cover", present.cover, .cover), ("year", present.year, .year),
            ("pages", present.pages, .pages), ("publisher", present.publisher, .publisher),
            ("author", total - figures.authorless.count, .author),
        ]
        let completeness = fields.map { field, count, missing in
            QualityReport.Completeness(field: field, present: count, total: total, query: "bookpipe list missing:\(missing.rawValue)",
                                       missingSample: (figures.missingSamples[missing] ?? []).map(Self.reference))
        }

        // Profiles of the fields read.
        let profiles = figures.profiles.map { profile -> QualityReport.Profile in
            let values = profile.values
            func less(_ a: String, _ b: String) -> Bool {
                if profile.isNumeric, let x = Double(a), let y = Double(b) { return x < y }
                return a.utf8.lexicographicallyPrecedes(b.utf8)
            }
            let top = values.sorted { $0.value != $1.value ? $0.value > $1.value : less($0.key, $1.key) }.prefix(10)
            return QualityReport.Profile(field: profile.field, filled: values.values.reduce(0, +), total: total,
                                         distinct: values.count, minimum: values.keys.min(by: less),
                                         maximum: values.keys.max(by: less),
                                         top: top.map { QualityReport.Count(name: $0.key, count: $0.value) })
        }

        // Matching.
        let matches = figures.matches
        let bySource = Self.counts(matches.bySource, unnamed: "?")
        let scoreHistogram = Self.histogram(matches.scores, width: 20, buckets: 15)
        let candidateHistogram = Self.histogram(matches.leadingCandidateScores, width: 20, buckets: 15)

        // Review queue ages (the queue is what `bookpipe review list` shows: scan detections to
        // check and uncertain matches) and outcomes.
        let queue = figures.reviewQueue
        let ages = queue.queuedAt.map { max(0, now.timeIntervalSince1970 - $0.timeIntervalSince1970) / 86_400 }
        let reviewed = figures.reviewOutcomes
        let review = QualityReport.Review(
            waiting: queue.waiting, waitingScans: queue.waitingScans, waitingMatches: queue.waitingMatches,
            oldestWaitingDays: ages.first.map(Self.round2),
            medianWaitingDays: ages.isEmpty ? nil : Self.round2(ages[ages.count / 2]),
            corrected: queue.userEdited, verifiedAsRead: reviewed?.verified, correctedInReview: reviewed?.corrected,
            reviewed: reviewed.map { $0.corrected + $0.verified }, scanDetections: queue.scanDetections,
            missingConfidence: queue.missingConfidence,
            confidenceHistogram: Self.histogram(queue.confidences, width: 0.1, buckets: 10))

        // Findings stored on records. A record's findings are consecutive (library order), so a
        // record is counted once per figure by comparing with the previous one.
        var repairedRecords = DistinctCount(), invalidISBN = DistinctCount(), disagree = DistinctCount()
        var impossibleYear = Set<String>()
        // Records with a date that cannot be read: those the importer left empty with a finding, and
        // (below) those whose stored date does not read.
        var unparseable = Set<String>()
        // One problem, one code: a row with no title gets `title.missing` from the reader and
        // `title.empty` from normalisation; both are "no title", reported once as `title.missing`.
        var titleMissing = Set<String>()
        for stored in figures.findings where stored.finding.code == "title.missing" { titleMissing.insert(stored.record.id) }
        for (index, stored) in figures.findings.enumerated() {
            let id = stored.record.id
            var code = stored.finding.code
            if code == "title.empty" {
                if titleMissing.contains(id) { continue }
                code = "title.missing"
            }
            switch code {
            case "encoding.latin1-repaired": repairedRecords.add(id)
            case "isbn.10-13-disagree": disagree.add(id)
            case "year.impossible": impossibleYear.insert(id)
            case "date.unparseable": unparseable.insert(id)
            case _ where QualityCodes.isInvalidISBN(code):
                invalidISBN.add(id)
            default: break
            }
            append(.stored(Int32(index)), code: code, severity: stored.finding.severity.rawValue)
        }

        // Stored dates that cannot be read.
        for (index, dates) in figures.refusedDates.enumerated() {
            unparseable.insert(dates.record.id)
            for (isRead, value) in [(false, dates.dateAdded), (true, dates.dateRead)] {
                guard let value, !DateValidation.isReadableOrBlank(value) else { continue }
                append(.refusedDate(Int32(index), isRead: isRead), code: "date.unparseable", severity: "warning")
            }
        }

        // Lookup outcomes that need a person.
        for (index, outcome) in figures.openOutcomes.enumerated() {
            switch outcome.status {
            case .failed: append(.open(Int32(index)), code: "lookup.failed", severity: "error")
            case .needsCandidateSelection: append(.open(Int32(index)), code: "match.needs-selection", severity: "warning")
            case .notFound: append(.open(Int32(index)), code: "match.not-found", severity: "info")
            case .pending, .enriched: break
            }
            if outcome.needsReview { append(.reviewWaiting(Int32(index)), code: "review.waiting", severity: "warning") }
        }

        // Duplicates: groups of books (records that are one book, issue 22, count once), each
        // with its reasons.
        for index in duplicates.groups.indices {
            append(.duplicate(Int32(index)), code: "duplicate.book", severity: "warning")
        }
        // Values outside the plausible ones; a year the normaliser already called impossible is not
        // reported again.
        for (index, outlier) in figures.outliers.enumerated() {
            if outlier.kind == .year, impossibleYear.contains(outlier.record.id), Int(outlier.value) == outlier.recordYear { continue }
            append(.outlier(Int32(index)), code: FindingSource.code(of: outlier.kind), severity: "warning")
        }

        // Records with no author (none read, or none with a letter or digit).
        for index in figures.authorless.indices { append(.authorless(Int32(index)), code: "author.empty", severity: "warning") }

        // Rejected rows (not records: no id).
        for index in figures.rejections.indices { append(.rejection(Int32(index)), code: "row.rejected", severity: "error") }

        // Errors first, then warnings, then info (by code; in row order within a code); then the
        // limits: at most `listedPerCode` of each code, at most `findingLimit` in all. The builder
        // then reads the titles of the records the listed findings concern.
        let severityOrder = ["error": 0, "warning": 1, "info": 2]
        codeOrder = sources.keys.sorted { a, b in
            let left = severityOrder[codeCounts[a]?.severity ?? ""] ?? 3, right = severityOrder[codeCounts[b]?.severity ?? ""] ?? 3
            return left != right ? left < right : a < b
        }
        var listedItems: [QualityReport.Finding] = []
        var listedByCode: [String: Int] = [:]
        var room = options.findingLimit ?? Int.max
        for code in codeOrder {
            let listed = min(room, options.listedPerCode, sources[code]?.count ?? 0)
            guard listed > 0 else { continue }
            room -= listed
            listedByCode[code] = listed
            for source in (sources[code] ?? []).prefix(listed) { listedItems.append(finding(source, code: code)) }
        }
        let findingTotal = codeCounts.values.reduce(0) { $0 + $1.count }
        let truncated = findingTotal - listedItems.count

        // Runs, files, sources.
        let timeFormatter = ISO8601DateFormatter()
        let runs = figures.runs.map { run in
            QualityReport.Run(id: run.id, command: run.command, pipeline: run.pipeline,
                              startedAt: timeFormatter.string(from: run.startedAt),
                              finishedAt: run.finishedAt.map(timeFormatter.string(from:)), status: run.status.rawValue,
                              durationSeconds: run.finishedAt.map { Self.round2($0.timeIntervalSince(run.startedAt)) },
                              records: run.records, written: run.written)
        }
        let files = figures.files.compactMap { file -> QualityReport.File? in
            guard file.records + file.rejected > 0 else { return nil }
            return QualityReport.File(path: file.path ?? file.hash, format: file.format, encoding: file.encoding,
                                      records: file.records, rejected: file.rejected)
        }
        var sources = figures.sourceRequests.map { source in
            QualityReport.Source(name: source.name, requests: source.requests, cacheHits: source.cacheHits,
                                 retries: source.retries, rateLimited: source.rateLimited, failures: source.failures,
                                 meanLatencyMilliseconds: source.meanLatencyMilliseconds.map(Self.round2),
                                 cachedAnswers: figures.cachedAnswers[source.name] ?? 0)
        }
        for (name, count) in figures.cachedAnswers.sorted(by: { $0.key < $1.key }) where !sources.contains(where: { $0.name == name }) {
            sources.append(.init(name: name, requests: 0, cacheHits: 0, retries: 0, rateLimited: 0, failures: 0,
                                 meanLatencyMilliseconds: nil, cachedAnswers: count))
        }

        let severityRank = ["error": 0, "warning": 1, "info": 2]
        let byCode = codeCounts.map {
            QualityReport.CodeCount(code: $0.key, severity: $0.value.severity, count: $0.value.count,
                                    action: FindingGuide.action(for: $0.key), query: FindingGuide.query(for: $0.key),
                                    section: FindingGuide.section(for: $0.key), listed: listedByCode[$0.key] ?? 0)
        }.sorted {
            let left = severityRank[$0.severity] ?? 3, right = severityRank[$1.severity] ?? 3
            if left != right { return left < right }
            return $0.count != $1.count ? $0.count > $1.count : $0.code < $1.code
        }
        let timestamp = ISO8601DateFormatter().string(from: now)
        return QualityReport(
            schemaVersion: QualityReport.currentSchemaVersion, generatedAt: timestamp, library: library,
            scope: .init(kind: options.runID == nil ? "all" : "run", runID: options.runID),
            rows: .init(records: total, rejected: figures.rejectedRows, byStatus: byStatus, failureReasons: Array(failureReasons)),
            matching: .init(bySource: bySource, scoreHistogram: scoreHistogram, candidateScoreHistogram: candidateHistogram,
                            meanScore: matches.meanScore.map(Self.round2)),
            review: review, completeness: completeness, profiles: profiles,
            validity: .init(invalidISBN: invalidISBN.count, isbn10And13Disagree: disagree.count,
                            impossibleYear: impossibleYear.count, unparseableDate: unparseable.count),
            duplicates: .init(books: duplicates.books, groups: duplicates.groups.count, records: duplicates.records,
                              byReason: DuplicateKind.allCases.map { .init(name: $0.rawValue, count: duplicates.byReason[$0] ?? 0) }),
            encoding: .init(repairedRecords: repairedRecords.count,
                            files: files.map { .init(name: $0.path + " (\($0.encoding ?? "?"))", count: $0.records) }),
            sources: sources, runs: runs, files: files,
            findings: .init(byCode: byCode, items: listedItems, truncated: truncated, listedPerCode: options.listedPerCode))
    }

    private mutating func append(_ source: FindingSource, code: String, severity: String) {
        codeCounts[code, default: (severity, 0)].count += 1
        sources[code, default: []].append(source)
    }

    /// Named counts, most first, then by name (ascending by UTF-8 bytes, the unnamed first).
    private static func counts(_ counts: [String?: Int], unnamed: String) -> [QualityReport.Count] {
        counts.sorted { a, b in
            if a.value != b.value { return a.value > b.value }
            guard let left = a.key else { return b.key != nil }
            guard let right = b.key else { return false }
            return left.utf8.lexicographicallyPrecedes(right.utf8)
        }.map { QualityReport.Count(name: $0.key ?? unnamed, count: $0.value) }
    }

    /// Buckets of `width` from 0; values past the last bucket go in it; values that are not finite are left out.
    private static func histogram(_ values: [Double], width: Double, buckets: Int) -> [QualityReport.Bucket] {
        var counts = [Int](repeating: 0, count: buckets)
        for value in values where value.isFinite {
            counts[min(buckets - 1, max(0, Int((value / width + 1e-9).rounded(.down))))] += 1
        }
        return counts.enumerated().map {
            QualityReport.Bucket(from: round2(Double($0.offset) * width), to: round2(Double($0.offset + 1) * width),
                                 count: $0.element)
        }
    }

    static func round2(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}
