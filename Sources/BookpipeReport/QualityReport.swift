/// The data-quality report of a library: what a person reads (HTML, terminal) and a program reads
/// (JSON, CSV), computed from the library by ``QualityReportBuilder``.
///
/// The JSON form is this value encoded with sorted keys; its shape is versioned by
/// ``schemaVersion`` and described in `docs/report-schema.md` and `docs/report.schema.json`.
/// Adding a key keeps the version; renaming or removing one, or changing a meaning, raises it.
public struct QualityReport: Sendable, Hashable, Codable {
    /// The version of the JSON shape this type writes.
    public static let currentSchemaVersion = 1

    /// The version of the JSON shape (``currentSchemaVersion``).
    public var schemaVersion: Int
    /// When the report was made (ISO 8601, UTC).
    public var generatedAt: String
    /// The library file's path.
    public var library: String
    /// Which records the report covers.
    public var scope: Scope
    /// Rows in and their terminal states.
    public var rows: Rows
    /// Match outcomes and score distributions.
    public var matching: Matching
    /// The review queue.
    public var review: Review
    /// Share of records that carry each field.
    public var completeness: [Completeness]
    /// Invalid values found.
    public var validity: Validity
    /// Records that are probably the same book.
    public var duplicates: Duplicates
    /// Encoding repairs.
    public var encoding: Encoding
    /// What each metadata source did (summed over the runs in scope).
    public var sources: [Source]
    /// The runs in scope, oldest first.
    public var runs: [Run]
    /// The input files in scope.
    public var files: [File]
    /// Every finding, grouped counts first.
    public var findings: Findings

    /// Which records a report covers.
    public struct Scope: Sendable, Hashable, Codable {
        /// `all` (the whole library) or `run` (records last written by one run).
        public var kind: String
        /// The run, for `run`.
        public var runID: Int64?
    }

    /// A named count.
    public struct Count: Sendable, Hashable, Codable {
        /// What is counted.
        public var name: String
        /// How many.
        public var count: Int
    }

    /// A histogram bucket `[from, to)`.
    public struct Bucket: Sendable, Hashable, Codable {
        /// Lower bound (inclusive).
        public var from: Double
        /// Upper bound (exclusive; the last bucket includes it).
        public var to: Double
        /// Values in the bucket.
        public var count: Int
    }

    /// Rows in and their terminal states.
    public struct Rows: Sendable, Hashable, Codable {
        /// Records in scope.
        public var records: Int
        /// Rows rejected by the reader (unbalanced quote, …), not records.
        public var rejected: Int
        /// Records per status (`enriched`, `notFound`, `failed`, `needsCandidateSelection`, `pending`); every status present.
        public var byStatus: [String: Int]
        /// Why lookups failed, most frequent first.
        public var failureReasons: [Count]
    }

    /// Match outcomes and score distributions.
    public struct Matching: Sendable, Hashable, Codable {
        /// Accepted matches per source.
        public var bySource: [Count]
        /// Scores of accepted matches, in buckets of 20 points.
        public var scoreHistogram: [Bucket]
        /// Best candidates' scores of records waiting for candidate selection, in buckets of 20.
        public var candidateScoreHistogram: [Bucket]
        /// Mean score of accepted matches, when there is one.
        public var meanScore: Double?
    }

    /// The review queue.
    public struct Review: Sendable, Hashable, Codable {
        /// Records waiting for a person: the review queue (`bookpipe review list`), scan detections
        /// to check and uncertain matches.
        public var waiting: Int
        /// Scan detections below the confidence threshold, waiting to be verified or corrected.
        public var waitingScans: Int
        /// Uncertain matches (`needsCandidateSelection`) waiting for a person to choose.
        public var waitingMatches: Int
        /// Age of the oldest waiting record, in days.
        public var oldestWaitingDays: Double?
        /// Median age of the waiting records, in days.
        public var medianWaitingDays: Double?
        /// Records a person corrected (edited).
        public var corrected: Int
        /// Records a person verified as they were, from the review log: records whose review
        /// actions are all `verify`, or a `choose`/`choose-none` that kept the match; null while the
        /// library keeps no review history.
        public var verifiedAsRead: Int?
        /// Records a person corrected in review, from the review log: any `edit`, or a
        /// `choose`/`choose-none` that changed the match; null while the library keeps no review history.
        public var correctedInReview: Int?
        /// Records with at least one review action (`correctedInReview + verifiedAsRead`).
        public var reviewed: Int?
        /// Scan detections in scope.
        public var scanDetections: Int
        /// Scan detections without a confidence.
        public var missingConfidence: Int
        /// Detection confidences, in buckets of 0.1.
        public var confidenceHistogram: [Bucket]
    }

    /// How many records carry one field.
    public struct Completeness: Sendable, Hashable, Codable {
        /// `isbn`, `cover`, `year`, `pages`, `publisher`.
        public var field: String
        /// Records that have it.
        public var present: Int
        /// Records in scope.
        public var total: Int
    }

    /// Invalid values found (records concerned).
    public struct Validity: Sendable, Hashable, Codable {
        /// ISBNs that failed validation (check digit, length, characters, prefix, spreadsheet damage).
        public var invalidISBN: Int
        /// Rows whose ISBN-10 and ISBN-13 name different books.
        public var isbn10And13Disagree: Int
        /// Years outside the plausible range.
        public var impossibleYear: Int
        /// Dates (added, read) that could not be read as a date.
        public var unparseableDate: Int
    }

    /// Records that are probably the same book: groups and records in them.
    public struct Duplicates: Sendable, Hashable, Codable {
        /// Groups of records with the same ISBN-13.
        public var sameISBN: Int
        /// Groups of records matched to the same work.
        public var sameWork: Int
        /// Groups of records with the same normalised title and first author.
        public var sameTitleAndAuthor: Int
        /// Records in any group.
        public var records: Int
    }

    /// Encoding repairs.
    public struct Encoding: Sendable, Hashable, Codable {
        /// Records with a repaired field.
        public var repairedRecords: Int
        /// The encoding of each file in scope.
        public var files: [Count]
    }

    /// What one source did.
    public struct Source: Sendable, Hashable, Codable {
        /// Its name.
        public var name: String
        /// HTTP requests sent, retries included.
        public var requests: Int
        /// Questions answered from the cache.
        public var cacheHits: Int
        /// Attempts repeated.
        public var retries: Int
        /// 429 responses.
        public var rateLimited: Int
        /// Lookups that failed for good.
        public var failures: Int
        /// Mean request latency in milliseconds (weighted by requests), when a request was made.
        public var meanLatencyMilliseconds: Double?
        /// Answers this source has in the library's cache.
        public var cachedAnswers: Int
    }

    /// One run.
    public struct Run: Sendable, Hashable, Codable {
        /// Its id.
        public var id: Int64
        /// The command line as typed.
        public var command: String
        /// The pipeline's name.
        public var pipeline: String
        /// When it started (ISO 8601).
        public var startedAt: String
        /// When it ended, when it did.
        public var finishedAt: String?
        /// `running`, `finished`, `interrupted`, `failed`.
        public var status: String
        /// Seconds from start to end, when it ended.
        public var durationSeconds: Double?
        /// Records it wrote last.
        public var records: Int
    }

    /// One input file.
    public struct File: Sendable, Hashable, Codable {
        /// The path as given.
        public var path: String
        /// The detected format.
        public var format: String?
        /// The encoding read.
        public var encoding: String?
        /// Records stored from it (in scope).
        public var records: Int
        /// Rows rejected.
        public var rejected: Int
    }

    /// A location a finding concerns.
    public struct RowReference: Sendable, Hashable, Codable {
        /// The record's id; null for a rejected row (it is not a record).
        public var id: String?
        /// The input file.
        public var file: String
        /// The 1-based physical line.
        public var line: Int
    }

    /// One finding about one or more rows.
    public struct Finding: Sendable, Hashable, Codable {
        /// A stable code (`isbn.invalid-checksum`, `duplicate.same-isbn`, `row.rejected`, …).
        public var code: String
        /// `info`, `warning` or `error`.
        public var severity: String
        /// The field concerned, when one.
        public var field: String?
        /// The title of the (first) record concerned, as read, when one.
        public var title: String?
        /// What is wrong, for people.
        public var message: String
        /// The rows concerned.
        public var rows: [RowReference]
    }

    /// Findings: counts per code, then every finding.
    public struct Findings: Sendable, Hashable, Codable {
        /// Findings per code, most frequent first.
        public var byCode: [CodeCount]
        /// Every finding (``QualityReportBuilder/Options/findingLimit`` at most; see ``truncated``).
        public var items: [Finding]
        /// Findings not listed in ``items`` because of the limit.
        public var truncated: Int
    }

    /// How many findings of one code.
    public struct CodeCount: Sendable, Hashable, Codable {
        /// The code.
        public var code: String
        /// Its severity.
        public var severity: String
        /// How many findings.
        public var count: Int
    }
}
