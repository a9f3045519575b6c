import BookpipeLibrary
import Foundation

/// Every finding of a report, in the report's order (errors, then warnings, then information, by
/// code; row order within a code), composed one at a time from the library's figures: what the CSV
/// lists in full while the report itself (``QualityReport/Findings/items``) lists a few per code.
///
/// A finding is the model's own ``QualityReport/Finding``, made by the same code as the report's
/// listed ones, so the CSV and the JSON cannot disagree; only where each comes from is held (a few
/// bytes per finding), not its text.
///
/// ```swift
/// let composed = try await QualityReportBuilder(store: store).compose()
/// try await composed.findings.forEach { finding in print(finding.code, finding.rows.count) }
/// ```
public struct ReportFindings: Sendable {
    let composition: Composition
    let store: any Library

    /// Findings composed, and their records' titles read, per batch of about this many rows.
    static let batchRows = 4_096

    /// How many findings there are (the sum of ``QualityReport/Findings/byCode``).
    public var count: Int { composition.codeCounts.values.reduce(0) { $0 + $1.count } }

    /// Calls `body` with every finding in the report's order, each row with its record's title
    /// (read from the library a batch at a time; a record removed since the report was made has none).
    /// - Throws: ``StoreError`` when the titles cannot be read, or what `body` throws; cancellation
    ///   is checked between batches (`CancellationError`).
    public func forEach(_ body: (QualityReport.Finding) throws -> Void) async throws {
        var batch: [QualityReport.Finding] = []
        var rows = 0
        func flush() async throws {
            try Task.checkCancellation()
            var ids = Set<String>()
            for finding in batch { for row in finding.rows { if let id = row.id { ids.insert(id) } } }
            Self.fillTitles(&batch, try await store.recordTitles(ids: Array(ids)))
            for finding in batch { try body(finding) }
            batch.removeAll(keepingCapacity: true)
            rows = 0
        }
        for code in composition.codeOrder {
            for source in composition.sources[code] ?? [] {
                let finding = composition.finding(source, code: code)
                rows += finding.rows.count
                batch.append(finding)
                if rows >= Self.batchRows { try await flush() }
            }
        }
        if !batch.isEmpty { try await flush() }
    }

    /// Gives each row its record's title, and each finding its first row's.
    static func fillTitles(_ findings: inout [QualityReport.Finding], _ titles: [String: String]) {
        for index in findings.indices {
            for row in findings[index].rows.indices {
                if let id = findings[index].rows[row].id { findings[index].rows[row].title = titles[id] }
            }
            findings[index].title = findings[index].rows.first?.title
        }
    }
}

/// Where one finding comes from: its place in the library's figures (``QualityFigures``) or in the
/// duplicate groups of books. Eight bytes, where the finding it makes holds its texts.
enum FindingSource: Hashable, Sendable {
    /// A stored finding (``QualityFigures/findings``).
    case stored(Int32)
    /// A stored date the date rule refused (``QualityFigures/refusedDates``): the date read, or added.
    case refusedDate(Int32, isRead: Bool)
    /// A lookup outcome that needs a person or a retry (``QualityFigures/openOutcomes``).
    case open(Int32)
    /// A scan detection waiting for review (``QualityFigures/openOutcomes``).
    case reviewWaiting(Int32)
    /// A duplicate group of books (``DuplicateBooks/Result/groups``).
    case duplicate(Int32)
    /// A value outside the plausible ones (``QualityFigures/outliers``).
    case outlier(Int32)
    /// A record without an author (``QualityFigures/authorless``).
    case authorless(Int32)
    /// A rejected row (``QualityFigures/rejections``).
    case rejection(Int32)

    /// The finding code of an outlier.
    static func code(of kind: Outlier.Kind) -> String {
        switch kind {
        case .year: return "year.outlier"
        case .pages: return "pages.outlier"
        case .rating: return "rating.outlier"
        case .readBeforePublication: return "date.read-before-publication"
        }
    }
}

/// Counts distinct records among ids that come grouped (a record's findings are consecutive).
struct DistinctCount {
    private var last: String?
    private(set) var count = 0

    mutating func add(_ id: String) {
        guard id != last else { return }
        last = id
        count += 1
    }
}

extension Composition {
    /// The finding `source` makes, without titles (``ReportFindings/fillTitles(_:_:)`` adds them).
    func finding(_ source: FindingSource, code: String) -> QualityReport.Finding {
        func reference(_ place: RecordPlace) -> [QualityReport.RowReference] { [Self.reference(place)] }
        switch source {
        case .stored(let index):
            let stored = figures.findings[Int(index)]
            return .init(code: code, severity: stored.finding.severity.rawValue, field: stored.finding.field, title: nil,
                         message: stored.finding.message, rows: reference(stored.record))
        case .refusedDate(let index, let isRead):
            let dates = figures.refusedDates[Int(index)]
            let field = isRead ? "dateRead" : "dateAdded"
            let value = (isRead ? dates.dateRead : dates.dateAdded) ?? ""
            return .init(code: code, severity: "warning", field: field, title: nil,
                         message: "\"\(value)\" in \(field) is not a date bookpipe can read (expected e.g. 2021/03/14 or 2021-03-14).",
                         rows: reference(dates.record))
        case .open(let index):
            let outcome = figures.openOutcomes[Int(index)]
            let (severity, message): (String, String)
            switch outcome.status {
            case .failed:
                (severity, message) = ("error", "The lookup failed: \(outcome.failure ?? "unknown reason"). Retry with `bookpipe enrich --failed`.")
            case .needsCandidateSelection:
                (severity, message) = ("warning", "\(outcome.candidates) candidates, none safe to accept; a person chooses.")
            case .notFound, .pending, .enriched: (severity, message) = ("info", "No source has this book.")
            }
            return .init(code: code, severity: severity, field: nil, title: nil, message: message, rows: reference(outcome.record))
        case .reviewWaiting(let index):
            return .init(code: code, severity: "warning", field: nil, title: nil, message: "Waiting for a person to verify or correct it.",
                         rows: reference(figures.openOutcomes[Int(index)].record))
        case .duplicate(let index):
            let group = duplicates.groups[Int(index)]
            let wording = group.reasons.map { reason -> String in
                switch reason.kind {
                case .sameISBN13: return "the same ISBN-13 \(reason.value)"
                case .sameWork: return "the same work \(reason.value)"
                case .sameTitleAndFirstAuthor: return "the same title and first author (\(reason.value))"
                }
            }
            return .init(code: code, severity: "warning", field: nil, title: nil,
                         message: (group.books == 1 ? "1 book held twice by one list" : "\(group.books) books")
                            + " (\(group.members.count) records): " + wording.joined(separator: "; "),
                         rows: group.members.map(Self.reference), reasons: group.reasons.map { "\($0.kind.rawValue) \($0.value)" })
        case .outlier(let index):
            let outlier = figures.outliers[Int(index)]
            let message: String
            switch outlier.kind {
            case .year:
                message = "\(outlier.field) \(outlier.value) is outside \(plausible.years.lowerBound)…\(plausible.years.upperBound)."
            case .pages:
                message = "\(outlier.value) pages is outside \(plausible.pages.lowerBound)…\(plausible.pages.upperBound)."
            case .rating:
                message = "The rating \(outlier.value) is outside the export's scale."
            case .readBeforePublication:
                message = "Read on \(outlier.value), before its publication year \(outlier.recordYear.map(String.init) ?? "?")."
            }
            return .init(code: code, severity: "warning", field: outlier.field, title: nil, message: message, rows: reference(outlier.record))
        case .authorless(let index):
            return .init(code: code, severity: "warning", field: "author", title: nil,
                         message: "The record has no author; it can only be matched by its ISBN or title.",
                         rows: reference(figures.authorless[Int(index)]))
        case .rejection(let index):
            let rejection = figures.rejections[Int(index)]
            return .init(code: code, severity: "error", field: nil, title: nil, message: rejection.reason,
                         rows: [.init(id: nil, file: rejection.file, line: rejection.line)])
        }
    }
}
