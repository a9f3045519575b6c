import BookpipeCore
import BookpipePipeline
import Synchronization

/// Counts the findings of the records that reach it, per input file and code, and drops nothing:
/// the records go on unchanged. `bookpipe import --dry-run` ends its pipeline with it to report
/// what an import would find without storing anything.
///
/// ```swift
/// let tally = FindingTally()
/// let pipeline = Pipeline("csv-import-dry-run") {
///     ReadCSV(files: ["export.csv"])
///     NormalizeRecords()
///     CountFindings(into: tally)
/// }
/// ```
public struct CountFindings: Stage {
    /// Where the counts go.
    public let tally: FindingTally

    /// Creates the stage.
    /// - Parameter tally: Where the counts go; read it once the run has ended.
    public init(into tally: FindingTally) {
        self.tally = tally
    }

    /// Counting cannot fail.
    public var mayFailForBatch: Bool { false }

    /// Counts the batch's findings and passes the batch on.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let records = consume batch
        tally.add(records)
        return records
    }
}

/// Findings counted per input file and code (see ``CountFindings``). Safe to share between tasks:
/// the counts are behind a `Mutex`.
public final class FindingTally: Sendable {
    /// One finding code's count in one file.
    public struct Entry: Sendable, Hashable {
        /// The finding's code (`isbn.invalid-checksum`, …).
        public var code: String
        /// Its severity.
        public var severity: Finding.Severity
        /// How many records of the file carry it.
        public var count: Int
    }

    private let counts = Mutex<[String: [String: Entry]]>([:])

    /// Creates an empty tally.
    public init() {}

    /// Counts the findings of `records`.
    public func add(_ records: [BookRecord]) {
        counts.withLock { counts in
            for record in records where !record.findings.isEmpty {
                for finding in record.findings {
                    counts[record.origin.file, default: [:]][finding.code, default: Entry(
                        code: finding.code, severity: finding.severity, count: 0)].count += 1
                }
            }
        }
    }

    /// The counts of the input file `path`, most frequent first (then by code).
    public func entries(file path: String) -> [Entry] {
        counts.withLock { $0[path].map { Array($0.values) } ?? [] }
            .sorted { ($0.count, $1.code) > ($1.count, $0.code) }
    }
}
