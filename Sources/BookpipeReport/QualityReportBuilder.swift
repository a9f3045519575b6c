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

        /// Creates options.
        public init(runID: Int64? = nil, findingLimit: Int? = nil) {
            self.runID = runID
            self.findingLimit = findingLimit
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
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func build() async throws(StoreError) -> QualityReport {
        let figures = try await store.qualityFigures(QualityScope(runID: options.runID), acceptsDate: DateValidation.isReadableOrBlank)
        // Which records are one book (issue 22's grouping): duplicates are counted between books.
        let members = try await store.bookMembers()
        let books = BookGrouping.books(members, decisions: try await store.linkDecisions())
        var bookOf: [String: String] = [:], listOf: [String: String] = [:]
        for book in books where book.count > 1 {
            for id in book { bookOf[id] = book[0] }
        }
        for member in members where bookOf[member.recordID] != nil { listOf[member.recordID] = member.list }
        var composition = Composition(figures: figures, options: options, now: now, library: store.location,
                                      bookOf: bookOf, listOf: listOf)
        var report = composition.report()
        // Titles of every record the listed findings and the completeness samples name.
        var ids = Set<String>()
        for finding in report.findings.items { for row in finding.rows { if let id = row.id { ids.insert(id) } } }
        for field in report.completeness { for row in field.missingSample { if let id = row.id { ids.insert(id) } } }
        let titles = try await store.recordTitles(ids: Array(ids))
        for index in report.findings.items.indices {
            for row in report.findings.items[index].rows.indices {
                if let id = report.findings.items[index].rows[row].id { report.findings.items[index].rows[row].title = titles[id] }
            }
            report.findings.items[index].title = report.findings.items[index].rows.first?.title
        }
        for index in report.completeness.indices {
            for row in report.completeness[index].missingSample.indices {
                if let id = report.completeness[index].missingSample[row].id {
                    report.completeness[index].missingSample[row].title = titles[id]
                }
            }
        }
        return report
    }
}

/// One report made from the library's figures: plain Swift over values.
private struct Composition {
    let figures: QualityFigures
    let options: QualityReportBuilder.Options
    let now: Date
    let library: String
    /// Every finding, in the order found.
    var items: [QualityReport.Finding] = []
    /// The first record of each item (for its title), nil for a rejected row.
    var itemRecords: [String?] = []
    var codeCounts: [String: (severity: String, count: Int)] = [:]
    /// The book (its first record's id) of each record that is one book with others.
    let bookOf: [String: String]
    /// The list of each record in ``bookOf``.
    let listOf: [String: String]

    init(figures: QualityFigures, options: QualityReportBuilder.Options, now: Date, library: String, bookOf: [String: String],
         listOf: [String: String]) {
        self.listOf = listOf
        self.figures = figures
        self.options = options
        self.now = now
        self.library = library
        self.bookOf = bookOf
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

        // Findings stored on records.
        var repairedRecords = Set<String>()
        var invalidISBN = Set<String>(), disagree = Set<String>(), impossibleYear = Set<String>()
        // Records with a date that cannot be read: those the importer left empty with a finding, and
        // (below) those whose stored date does not read.
        var unparseable = Set<String>()
        // One problem, one code: a row with no title gets `title.missing` from the reader and
        // `title.empty` from normalisation; both are "no title", reported once as `title.missing`.
        var titleMissing = Set<String>()
        for stored in figures.findings where stored.finding.code == "title.missing" { titleMissing.insert(stored.record.id) }
        for stored in figures.findings {
            let id = stored.record.id
            var code = stored.finding.code
            if code == "title.empty" {
                if titleMissing.contains(id) { continue }
                code = "title.missing"
            }
            switch code {
            case "encoding.latin1-repaired": repairedRecords.insert(id)
            case "isbn.10-13-disagree": disagree.insert(id)
            case "year.impossible": impossibleYear.insert(id)
            case "date.unparseable": unparseable.insert(id)
            case _ where QualityCodes.isInvalidISBN(code):
                invalidISBN.insert(id)
            default: break
            }
            append(QualityReport.Finding(code: code, severity: stored.finding.severity.rawValue, field: stored.finding.field,
                                         title: nil, message: stored.finding.message, rows: [Self.reference(stored.record)]),
                   record: id)
        }

        // Stored dates that cannot be read.
        for dates in figures.refusedDates {
            unparseable.insert(dates.record.id)
            for (field, value) in [("dateAdded", dates.dateAdded), ("dateRead", dates.dateRead)] {
                guard let value, !DateValidation.isReadableOrBlank(value) else { continue }
                append(QualityReport.Finding(
                    code: "date.unparseable", severity: "warning", field: field, title: nil,
                    message: "\"\(value)\" in \(field) is not a date bookpipe can read (expected e.g. 2021/03/14 or 2021-03-14).",
                    rows: [Self.reference(dates.record)]),
                       record: dates.record.id)
            }
        }

        // Lookup outcomes that need a person.
        for outcome in figures.openOutcomes {
            let id = outcome.record.id
            let location = [Self.reference(outcome.record)]
            let finding: QualityReport.Finding?
            switch outcome.status {
            case .failed:
                finding = .init(code: "lookup.failed", severity: "error", field: nil, title: nil,
                                message: "The lookup failed: \(outcome.failure ?? "unknown reason"). Retry with `bookpipe enrich --failed`.",
                                rows: location)
            case .needsCandidateSelection:
                finding = .init(code: "match.needs-selection", severity: "warning", field: nil, title: nil,
                                message: "\(outcome.candidates) candidates, none safe to accept; a person chooses.",
                                rows: location)
            case .notFound:
                finding = .init(code: "match.not-found", severity: "info", field: nil, title: nil,
                                message: "No source has this book.", rows: location)
            case .pending, .enriched: finding = nil
            }
            if let finding { append(finding, record: id) }
            if outcome.needsReview {
                append(.init(code: "review.waiting", severity: "warning", field: nil, title: nil,
                             message: "Waiting for a person to verify or correct it.", rows: location),
                       record: id)
            }
        }

        // Duplicates: groups of books (records that are one book, issue 22, count once), each
        // with its reasons.
        let duplicates = DuplicateBooks.group(figures.duplicateGroups, bookOf: bookOf, listOf: listOf)
        for group in duplicates.groups {
            let reasons = group.reasons.map { "\($0.kind.rawValue) \($0.value)" }
            let wording = group.reasons.map { reason -> String in
                switch reason.kind {
                case .sameISBN13: return "the same ISBN-13 \(reason.value)"
                case .sameWork: return "the same work \(reason.value)"
                case .sameTitleAndFirstAuthor: return "the same title and first author (\(reason.value))"
                }
            }
            append(.init(code: "duplicate.book", severity: "warning", field: nil, title: nil,
                         message: (group.books == 1 ? "1 book held twice by one list" : "\(group.books) books")
                            + " (\(group.members.count) records): " + wording.joined(separator: "; "),
                         rows: group.members.map(Self.reference), reasons: reasons),
                   record: group.members.first?.id)
        }
        // Values outside the plausible ones; a year the normaliser already called impossible is not
        // reported again.
        let plausible = QualityScope(runID: options.runID).plausible
        for outlier in figures.outliers {
            let id = outlier.record.id
            let finding: QualityReport.Finding
            switch outlier.kind {
            case .year:
                if impossibleYear.contains(id), Int(outlier.value) == outlier.recordYear { continue }
                finding = .init(code: "year.outlier", severity: "warning", field: outlier.field, title: nil,
                                message: "\(outlier.field) \(outlier.value) is outside \(plausible.years.lowerBound)…\(plausible.years.upperBound).",
                                rows: [Self.reference(outlier.record)])
            case .pages:
                finding = .init(code: "pages.outlier", severity: "warning", field: outlier.field, title: nil,
                                message: "\(outlier.value) pages is outside \(plausible.pages.lowerBound)…\(plausible.pages.upperBound).",
                                rows: [Self.reference(outlier.record)])
            case .rating:
                finding = .init(code: "rating.outlier", severity: "warning", field: outlier.field, title: nil,
                                message: "The rating \(outlier.value) is outside the export's scale.", rows: [Self.reference(outlier.record)])
            case .readBeforePublication:
                finding = .init(code: "date.read-before-publication", severity: "warning", field: outlier.field, title: nil,
                                message: "Read on \(outlier.value), before its publication year \(outlier.recordYear.map(String.init) ?? "?").",
                                rows: [Self.reference(outlier.record)])
            }
            append(finding, record: id)
        }

        // Records with no author (none read, or none with a letter or digit).
        for place in figures.authorless {
            append(.init(code: "author.empty", severity: "warning", field: "author", title: nil,
                         message: "The record has no author; it can only be matched by its ISBN or title.",
                         rows: [Self.reference(place)]),
                   record: place.id)
        }

        // Rejected rows (not records: no id).
        for rejection in figures.rejections {
            append(.init(code: "row.rejected", severity: "error", field: nil, title: nil, message: rejection.reason,
                         rows: [.init(id: nil, file: rejection.file, line: rejection.line)]),
                   record: nil)
        }

        // Errors first, then warnings, then info (by code; in row order within a code); then the
        // limit. The builder then reads the titles of the records the listed findings concern.
        let severityOrder = ["error": 0, "warning": 1, "info": 2]
        let order = items.indices.sorted { a, b in
            let left = (severityOrder[items[a].severity] ?? 3, items[a].code)
            let right = (severityOrder[items[b].severity] ?? 3, items[b].code)
            return left != right ? left < right : a < b
        }
        let listed = options.findingLimit.map { min($0, items.count) } ?? items.count
        let truncated = items.count - listed
        let listedItems = order.prefix(listed).map { items[$0] }

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
                                    section: FindingGuide.section(for: $0.key))
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
            findings: .init(byCode: byCode, items: listedItems, truncated: truncated))
    }

    private mutating func append(_ finding: QualityReport.Finding, record: String?) {
        codeCounts[finding.code, default: (finding.severity, 0)].count += 1
        items.append(finding)
        itemRecords.append(record)
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
