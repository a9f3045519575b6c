/// The data-quality report of a library: what a person reads (HTML, terminal) and a program reads
/// (JSON, CSV), computed from the library by ``QualityReportBuilder``.
///
/// The JSON form is this value encoded with sorted keys; its shape is versioned by
/// ``schemaVersion`` and described in `docs/report-schema.md` and `docs/report.schema.json`.
/// Adding a key keeps the version; renaming or removing one, or changing a meaning, raises it.
public struct QualityReport: Sendable, Hashable, Codable {
    /// The version of the JSON shape this type writes.
    public static let currentSchemaVersion = 2

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
    /// A profile of every field read (beyond title, authors and ISBN).
    public var profiles: [Profile] = []
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
    /// The checks of an expectations file (`report --check FILE`), in the file's order; empty without one.
    public var checks: [CheckResult] = []
    /// The headline figures of this report, as history keeps them.
    public var headline: Headline = Headline()
    /// The saved report this one is compared with (the previous one, or `--compare`'s); nil when none.
    public var previous: SavedHeadline?
    /// This report's headline figures minus ``previous``'s; nil without a previous report.
    public var delta: Headline?
    /// The headline figures of the last saved reports, oldest first (at most 20), for the trends.
    public var history: [SavedHeadline] = []

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
        /// `isbn`, `cover`, `year`, `pages`, `publisher`, `author`.
        public var field: String
        /// Records that have it.
        public var present: Int
        /// Records in scope.
        public var total: Int
        /// The command that lists every record in scope without it (`bookpipe list missing:isbn`).
        public var query: String
        /// The first records without it, in library order (at most ``QualityFigures/missingSampleLimit``).
        public var missingSample: [RowReference]
    }

    /// What one field holds across the records in scope.
    public struct Profile: Sendable, Hashable, Codable {
        /// `year`, `pages`, `rating`, `shelf`, `binding`, `publisher`, `dateAdded`, `dateRead`.
        public var field: String
        /// Records that have a value.
        public var filled: Int
        /// Records in scope.
        public var total: Int
        /// Distinct values.
        public var distinct: Int
        /// The smallest value (numbers as numbers, text by its bytes), when any.
        public var minimum: String?
        /// The largest value, when any.
        public var maximum: String?
        /// The most frequent values, most first (at most 10).
        public var top: [Count]
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

    /// Books that are probably one book held twice: records are first grouped into books (entries
    /// of different lists with one ISBN-13 or one matched edition, or linked by a person, are one
    /// book: issue 22), then books that share an ISBN-13, a matched work, or a normalised title and
    /// first author are a duplicate group (one finding `duplicate.book` each, naming its reasons).
    public struct Duplicates: Sendable, Hashable, Codable {
        /// Books that have a duplicate (in some group): the headline.
        public var books: Int
        /// Duplicate groups.
        public var groups: Int
        /// Records of the books in the groups.
        public var records: Int
        /// Groups per reason (`sameISBN13`, `sameWork`, `sameTitleAndFirstAuthor`); a group may have several.
        public var byReason: [Count]
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
        /// Records it wrote last (a later run may have written them since).
        public var records: Int
        /// Records it wrote: stored, updated or enriched (each write of a record counts once per run).
        public var written: Int
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
        /// The record's title as read, when the report read it.
        public var title: String?

        /// Creates a reference.
        public init(id: String?, file: String, line: Int, title: String? = nil) {
            self.id = id
            self.file = file
            self.line = line
            self.title = title
        }
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
        /// Why the records are one book held twice (`duplicate.book`): `sameISBN13 <isbn>`,
        /// `sameWork <key>`, `sameTitleAndFirstAuthor <title> / <author>`.
        public var reasons: [String]?

        /// Creates a finding.
        public init(code: String, severity: String, field: String?, title: String?, message: String, rows: [RowReference],
                    reasons: [String]? = nil) {
            self.code = code
            self.severity = severity
            self.field = field
            self.title = title
            self.message = message
            self.rows = rows
            self.reasons = reasons
        }
    }

    /// Findings: counts per code, then every finding.
    public struct Findings: Sendable, Hashable, Codable {
        /// Findings per code, most frequent first.
        public var byCode: [CodeCount]
        /// Every finding (``QualityReportBuilder/Options/findingLimit`` at most; see ``truncated``).
        public var items: [Finding]
        /// Findings not listed in ``items`` because of the limits (``listedPerCode``, `--finding-limit`).
        public var truncated: Int
        /// The most findings of one code ``items`` lists (``QualityReportBuilder/Options/listedPerCode``);
        /// ``CodeCount/count`` is complete, ``CodeCount/query`` lists them all where one does, and the
        /// CSV has every one.
        public var listedPerCode: Int?
    }

    /// How many findings of one code, and what to do about them.
    public struct CodeCount: Sendable, Hashable, Codable {
        /// The code.
        public var code: String
        /// Its severity.
        public var severity: String
        /// How many findings.
        public var count: Int
        /// What fixes or reviews them (a command, or what to change in the file).
        public var action: String
        /// The `bookpipe list …` command that lists every record of this code, when one does
        /// exactly; else the findings' record ids (in ``Findings/items``) are the drill-down.
        public var query: String?
        /// The HTML page's section for this code (`#code-<code>`).
        public var section: String
        /// How many of its findings ``Findings/items`` lists (the rest are counted in ``count``, listed
        /// by ``query`` where there is one, and in the CSV).
        public var listed: Int?
    }

    /// One check of an expectations file and its result.
    public struct CheckResult: Sendable, Hashable, Codable {
        /// The check as written (`isbn13.filled >= 90%`).
        public var check: String
        /// `warn` or `error`.
        public var level: String
        /// The figure's value in this report.
        public var actual: Double
        /// Whether it holds.
        public var passed: Bool
        /// Where it is written (`checks.yaml:3`).
        public var location: String
    }

    /// The figures a report's history keeps and compares (all counts or shares of records in scope).
    public struct Headline: Sendable, Hashable, Codable {
        /// Records in scope.
        public var records: Int = 0
        /// Error-level findings.
        public var errors: Int = 0
        /// Warning-level findings.
        public var warnings: Int = 0
        /// Books that have a duplicate.
        public var duplicateBooks: Int = 0
        /// Records with an invalid ISBN.
        public var invalidISBN: Int = 0
        /// Share of records with a valid ISBN-13, in per cent.
        public var isbn13Filled: Double = 0
        /// Share of records with a cover, in per cent.
        public var coverFilled: Double = 0
        /// Share of records matched (enriched), in per cent.
        public var matched: Double = 0
        /// Records waiting for review.
        public var reviewWaiting: Int = 0
        /// Records whose lookup failed.
        public var failed: Int = 0
        /// Rows rejected.
        public var rejected: Int = 0

        /// Creates zero figures.
        public init() {}
    }

    /// A saved report's headline, as history holds it.
    public struct SavedHeadline: Sendable, Hashable, Codable {
        /// Its number in the library's history.
        public var id: Int64
        /// When it was made (ISO 8601).
        public var generatedAt: String
        /// Its figures.
        public var headline: Headline
    }
}
