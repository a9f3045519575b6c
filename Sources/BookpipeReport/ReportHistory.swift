import BookpipeLibrary
import Foundation

/// A report's headline figures, the change since a saved report, and which changes are worse.
public enum HeadlineComparison {
    /// One headline figure: its key in ``QualityReport/Headline`` (and in the library's history),
    /// its label, whether a rise is worse, and whether it is a share in per cent.
    public struct Figure: Sendable {
        /// The key (`duplicateBooks`).
        public var key: String
        /// For people (`books with a duplicate`).
        public var label: String
        /// True: more is worse (errors); false: less is worse (matched); nil: neither (records).
        public var higherIsWorse: Bool?
        /// A share in per cent.
        public var isShare: Bool
        /// Reads the figure.
        public var value: @Sendable (QualityReport.Headline) -> Double
    }

    /// The headline figures, in the order the page shows them.
    public static let figures: [Figure] = [
        Figure(key: "records", label: "records", higherIsWorse: nil, isShare: false) { Double($0.records) },
        Figure(key: "matched", label: "matched", higherIsWorse: false, isShare: true) { $0.matched },
        Figure(key: "errors", label: "errors", higherIsWorse: true, isShare: false) { Double($0.errors) },
        Figure(key: "warnings", label: "warnings", higherIsWorse: true, isShare: false) { Double($0.warnings) },
        Figure(key: "duplicateBooks", label: "books with a duplicate", higherIsWorse: true, isShare: false) { Double($0.duplicateBooks) },
        Figure(key: "invalidISBN", label: "invalid ISBNs", higherIsWorse: true, isShare: false) { Double($0.invalidISBN) },
        Figure(key: "isbn13Filled", label: "with an ISBN-13", higherIsWorse: false, isShare: true) { $0.isbn13Filled },
        Figure(key: "coverFilled", label: "with a cover", higherIsWorse: false, isShare: true) { $0.coverFilled },
        Figure(key: "reviewWaiting", label: "waiting for review", higherIsWorse: true, isShare: false) { Double($0.reviewWaiting) },
        Figure(key: "failed", label: "failed lookups", higherIsWorse: true, isShare: false) { Double($0.failed) },
        Figure(key: "rejected", label: "rejected rows", higherIsWorse: true, isShare: false) { Double($0.rejected) },
    ]

    /// The headline figures of a report.
    public static func headline(of report: QualityReport) -> QualityReport.Headline {
        var headline = QualityReport.Headline()
        headline.records = report.rows.records
        let bySeverity = Dictionary(grouping: report.findings.byCode, by: \.severity).mapValues { $0.reduce(0) { $0 + $1.count } }
        headline.errors = bySeverity["error"] ?? 0
        headline.warnings = bySeverity["warning"] ?? 0
        headline.duplicateBooks = report.duplicates.books
        headline.invalidISBN = report.validity.invalidISBN
        headline.isbn13Filled = CheckFile.value(of: "isbn13.filled", in: report)
        headline.coverFilled = CheckFile.value(of: "cover.filled", in: report)
        headline.matched = CheckFile.value(of: "matched", in: report)
        headline.reviewWaiting = report.review.waiting
        headline.failed = report.rows.byStatus["failed"] ?? 0
        headline.rejected = report.rows.rejected
        return headline
    }

    /// The headline as the library keeps it (by key).
    public static func dictionary(_ headline: QualityReport.Headline) -> [String: Double] {
        Dictionary(uniqueKeysWithValues: figures.map { ($0.key, $0.value(headline)) })
    }

    /// A headline from the library's keeping (a figure it lacks is 0).
    public static func headline(_ values: [String: Double]) -> QualityReport.Headline {
        var headline = QualityReport.Headline()
        func count(_ key: String) -> Int { Int((values[key] ?? 0).rounded()) }
        headline.records = count("records")
        headline.errors = count("errors")
        headline.warnings = count("warnings")
        headline.duplicateBooks = count("duplicateBooks")
        headline.invalidISBN = count("invalidISBN")
        headline.isbn13Filled = values["isbn13Filled"] ?? 0
        headline.coverFilled = values["coverFilled"] ?? 0
        headline.matched = values["matched"] ?? 0
        headline.reviewWaiting = count("reviewWaiting")
        headline.failed = count("failed")
        headline.rejected = count("rejected")
        return headline
    }

    /// `now` minus `before`, figure by figure (shares in percentage points, rounded to 0.1).
    public static func delta(_ now: QualityReport.Headline, since before: QualityReport.Headline) -> QualityReport.Headline {
        var values: [String: Double] = [:]
        for figure in figures { values[figure.key] = ((figure.value(now) - figure.value(before)) * 10).rounded() / 10 }
        return headline(values)
    }

    /// The figures that changed in a delta: label, signed text, and whether the change is worse.
    public static func changes(_ delta: QualityReport.Headline) -> [(name: String, text: String, isWorse: Bool)] {
        figures.compactMap { figure in
            let change = figure.value(delta)
            guard abs(change) >= 0.05 else { return nil }
            return (figure.label, signed(change, share: figure.isShare), isWorse(figure, change))
        }
    }

    /// Whether a change of this figure is for the worse.
    public static func isWorse(_ figure: Figure, _ change: Double) -> Bool {
        guard let higherIsWorse = figure.higherIsWorse, abs(change) >= 0.05 else { return false }
        return higherIsWorse ? change > 0 : change < 0
    }

    /// `+3`, `−1.5 pt`.
    public static func signed(_ change: Double, share: Bool) -> String {
        let magnitude = share ? String(format: "%.1f", abs(change)) : CheckFile.format(abs(change))
        return (change > 0 ? "+" : change < 0 ? "−" : "±") + magnitude + (share ? " pt" : "")
    }
}

/// Which saved report a report is compared with (`report --compare RUN|DATE`).
public enum ReportComparison: Sendable, Hashable {
    /// The latest saved report of the same scope (the default).
    case previous
    /// The saved report with this number.
    case saved(Int64)
    /// The latest saved report made on or before the end of this day (UTC).
    case onOrBefore(Date)

    /// Reads `--compare`'s value: a saved report's number, or a date `YYYY-MM-DD`.
    /// - Returns: nil when it is neither.
    public static func parse(_ text: String) -> ReportComparison? {
        if let number = Int64(text), number > 0 { return .saved(number) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        if let day = formatter.date(from: text) { return .onOrBefore(day.addingTimeInterval(86_400 - 0.001)) }
        if let time = ISO8601DateFormatter().date(from: text) { return .onOrBefore(time) }
        return nil
    }
}

/// The library's history of reports: what a report is compared with, and keeping each report.
public enum ReportHistory {
    /// How many saved reports the trends show.
    public static let trendLength = 20

    /// Sets the report's ``QualityReport/headline``, its ``QualityReport/history`` (the last saved
    /// reports of its scope) and, when there is one to compare with, ``QualityReport/previous`` and
    /// ``QualityReport/delta``.
    /// - Returns: false when `comparison` names no saved report (then nothing is compared).
    /// - Throws: ``StoreError`` when the history cannot be read.
    @discardableResult
    public static func compare(_ report: inout QualityReport, in store: any Library,
                               with comparison: ReportComparison = .previous) async throws(StoreError) -> Bool {
        report.headline = HeadlineComparison.headline(of: report)
        let scope = scopeName(report)
        let saved = try await store.reportHistory(limit: nil).filter { $0.scope == scope }
        let formatter = ISO8601DateFormatter()
        report.history = saved.suffix(trendLength).map {
            QualityReport.SavedHeadline(id: $0.id, generatedAt: formatter.string(from: $0.generatedAt),
                                        headline: HeadlineComparison.headline($0.figures))
        }
        let chosen: ReportHistoryEntry?
        switch comparison {
        case .previous: chosen = saved.last
        case .saved(let id): chosen = try await store.reportHistory(limit: nil).first { $0.id == id }
        case .onOrBefore(let date): chosen = saved.last { $0.generatedAt <= date }
        }
        guard let chosen else { return comparison == .previous }
        let previous = QualityReport.SavedHeadline(id: chosen.id, generatedAt: formatter.string(from: chosen.generatedAt),
                                                   headline: HeadlineComparison.headline(chosen.figures))
        report.previous = previous
        report.delta = HeadlineComparison.delta(report.headline, since: previous.headline)
        return true
    }

    /// Keeps the report's headline in the library; returns its number.
    /// - Throws: ``StoreError`` when it cannot be written.
    @discardableResult
    public static func save(_ report: QualityReport, in store: any Library, at time: Date) async throws(StoreError) -> Int64 {
        try await store.saveReportHistory(generatedAt: time, scope: scopeName(report),
                                          figures: HeadlineComparison.dictionary(HeadlineComparison.headline(of: report)))
    }

    static func scopeName(_ report: QualityReport) -> String {
        report.scope.kind == "run" ? "run \(report.scope.runID ?? 0)" : "all"
    }
}
