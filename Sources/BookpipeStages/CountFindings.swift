import BookpipeCore
import BookpipePipeline

/// Counts the findings of the records that reach it, per input file and code, and drops nothing:
/// the records go on unchanged. It tells the counts as the run's events
/// (``PipelineEvent/findingsCounted(_:)``), which ``FindingTally`` adds up. `bookpipe import
/// --dry-run` ends its pipeline with it to report what an import would find without storing anything.
///
/// ```swift
/// let pipeline = Pipeline("csv-import-dry-run") {
///     ReadCSV(files: ["export.csv"])
///     NormalizeRecords()
///     CountFindings()
/// }
/// let report = try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: pipeline.name))
/// let findings = FindingTally(report: report).entries(file: "export.csv")
/// ```
public struct CountFindings: Stage {
    /// Creates the stage.
    public init() {}

    /// Counting cannot fail.
    public var mayFailForBatch: Bool { false }

    /// Counts the batch's findings, tells them, and passes the batch on.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let records = consume batch
        var counts: [String: [String: FindingCount]] = [:]
        for record in records where !record.findings.isEmpty {
            for finding in record.findings {
                counts[record.origin.file, default: [:]][finding.code, default: FindingCount(
                    file: record.origin.file, code: finding.code, severity: finding.severity, count: 0)].count += 1
            }
        }
        if !counts.isEmpty { context.report(.findingsCounted(counts.values.flatMap(\.values))) }
        return records
    }
}

/// Findings counted per input file and code, added up from a run's events (see ``CountFindings``).
public struct FindingTally: Sendable {
    /// One finding code's count in one file.
    public struct Entry: Sendable, Hashable {
        /// The finding's code (`isbn.invalid-checksum`, …).
        public var code: String
        /// Its severity.
        public var severity: Finding.Severity
        /// How many records of the file carry it.
        public var count: Int
    }

    private var counts: [String: [String: Entry]] = [:]

    /// The tally of `report`'s ``PipelineEvent/findingsCounted(_:)`` events.
    public init(report: RunReport) {
        for event in report.events {
            guard case .findingsCounted(let batch) = event else { continue }
            for counted in batch {
                counts[counted.file, default: [:]][counted.code, default: Entry(
                    code: counted.code, severity: counted.severity, count: 0)].count += counted.count
            }
        }
    }

    /// The counts of the input file `path`, most frequent first (then by code).
    public func entries(file path: String) -> [Entry] {
        (counts[path].map { Array($0.values) } ?? []).sorted { ($0.count, $1.code) > ($1.count, $0.code) }
    }
}
