import BookpipeCore
import Foundation

// What a data-quality report asks of a library: aggregates and rows as plain values, which every
// engine computes its own way, in one snapshot of the library. No engine type, query text or
// storage key appears here; records are named by their ids (`<file hash>:<row>`), times are
// `Date`s. The report (BookpipeReport) turns these figures into its model, findings and wording.

/// Which part of a library a report's figures cover.
public struct QualityScope: Sendable, Hashable {
    /// Only what this run wrote: the records it last wrote, the rows it rejected, its source
    /// requests and its own entry; nil: the whole library.
    public var runID: Int64?

    /// The values outside which a record's value is listed as an outlier (``QualityFigures/outliers``).
    public var plausible: PlausibleValues

    /// The whole library.
    public static let library = QualityScope()

    /// Creates a scope.
    /// - Parameters:
    ///   - runID: A run's id (``RunEntry/id``), or nil for the whole library.
    ///   - plausible: The plausible values (default: ``PlausibleValues/standard(currentYear:)`` of this year).
    public init(runID: Int64? = nil, plausible: PlausibleValues = .standard()) {
        self.runID = runID
        self.plausible = plausible
    }
}

/// Where a record was read, as a report points at it: its id and the file and line it came from.
public struct RecordPlace: Sendable, Hashable {
    /// The record's id, `<file hash>:<row>`.
    public var id: String
    /// The path the row was read from, as given to the import (`?` when the library lost it).
    public var file: String
    /// The 1-based physical line where the row starts.
    public var line: Int

    /// Creates a place.
    public init(id: String, file: String, line: Int) {
        self.id = id
        self.file = file
        self.line = line
    }
}

/// A way two or more records can be the same book.
public enum DuplicateKind: String, Sendable, Hashable, CaseIterable {
    /// The same ISBN-13 (the first valid one of each record).
    case sameISBN13
    /// Matched (status `enriched`) to the same work; a match whose source names no work shares none.
    case sameWork
    /// The same normalised title key and the same first normalised author (none counts as "").
    case sameTitleAndFirstAuthor
}

/// The figures a data-quality report is made of, for one ``QualityScope``, all from one snapshot
/// of the library.
///
/// "In scope" below means the records of the scope (the whole library, or those a run last
/// wrote); the order "library order" is the order records were first stored: by file as first
/// imported, then by row.
public struct QualityFigures: Sendable {
    /// Records in scope.
    public var records: Int
    /// Records in scope by processing status (statuses no record has are absent).
    public var recordsByStatus: [RecordStatus: Int]
    /// Failed records in scope by their failure reason (nil: none recorded).
    public var failureReasons: [String?: Int]
    /// Rejected rows in scope.
    public var rejectedRows: Int
    /// How many records in scope have each value.
    public var completeness: Completeness
    /// The review queue as `bookpipe review list` shows it, and the scan detections.
    public var reviewQueue: ReviewQueue
    /// What review decisions did to the records in scope; nil when the library keeps no log of
    /// review actions.
    public var reviewOutcomes: ReviewOutcomes?
    /// Accepted matches and uncertain ones.
    public var matches: Matches
    /// The findings stored on the records in scope, in library order, each record's in its order.
    public var findings: [RecordFinding]
    /// Records in scope with a stored date (added or read) that the caller's date rule refused,
    /// in library order.
    public var refusedDates: [RecordDates]
    /// Records in scope whose outcome needs a person or a retry: lookups failed, uncertain
    /// matches, not found, scan detections waiting for review; in library order.
    public var openOutcomes: [OpenOutcome]
    /// Groups of two or more records in scope that share a value, by kind: within a kind the
    /// largest groups first, then by value (ascending by UTF-8 bytes); members in library order.
    public var duplicateGroups: [DuplicateGroup]
    /// The rejected rows in scope, by file, line, column, row.
    public var rejections: [RejectedRow]
    /// The runs in scope (the scope's run, or all), oldest first, with the records each last wrote.
    public var runs: [Run]
    /// Every imported file, in the order first imported, with its records and rejected rows in scope.
    public var files: [File]
    /// What each remote source did in the runs in scope, by source name (ascending by UTF-8 bytes).
    public var sourceRequests: [SourceCounters]
    /// Answers held in the lookup cache, by source (the whole library, whatever the scope).
    public var cachedAnswers: [String: Int]
    /// For each value of ``LibraryQuery/MissingValue``, the first records in scope without it, in
    /// library order (at most ``missingSampleLimit``); the counts are in ``completeness``.
    public var missingSamples: [LibraryQuery.MissingValue: [RecordPlace]] = [:]
    /// Records in scope with no author (none read, or none with a letter or digit), in library order.
    public var authorless: [RecordPlace] = []

    /// Records in scope with a value outside ``QualityScope/plausible``, in library order (a record
    /// once per value).
    public var outliers: [Outlier] = []

    /// A profile of each field read (``FieldProfile``), in the order year, pages, rating, shelf,
    /// binding, publisher, dateAdded, dateRead.
    public var profiles: [FieldProfile] = []

    /// The most records ``missingSamples`` lists per value.
    public static let missingSampleLimit = 100

    /// Creates figures.
    public init(records: Int, recordsByStatus: [RecordStatus: Int], failureReasons: [String?: Int], rejectedRows: Int,
                completeness: Completeness, reviewQueue: ReviewQueue, reviewOutcomes: ReviewOutcomes?, matches: Matches,
                findings: [RecordFinding], refusedDates: [RecordDates], openOutcomes: [OpenOutcome],
                duplicateGroups: [DuplicateGroup], rejections: [RejectedRow], runs: [Run], files: [File],
                sourceRequests: [SourceCounters], cachedAnswers: [String: Int]) {
        self.records = records
        self.recordsByStatus = recordsByStatus
        self.failureReasons = failureReasons
        self.rejectedRows = rejectedRows
        self.completeness = completeness
        self.reviewQueue = reviewQueue
        self.reviewOutcomes = reviewOutcomes
        self.matches = matches
        self.findings = findings
        self.refusedDates = refusedDates
        self.openOutcomes = openOutcomes
        self.duplicateGroups = duplicateGroups
        self.rejections = rejections
        self.runs = runs
        self.files = files
        self.sourceRequests = sourceRequests
        self.cachedAnswers = cachedAnswers
    }

    /// Records in scope that have each value.
    public struct Completeness: Sendable, Hashable {
        /// A valid ISBN-13.
        public var isbn13: Int
        /// A cover to show: enriched, with an ISBN-13 or an Open Library edition (`…OL<digits>M`).
        public var cover: Int
        /// A year (a number).
        public var year: Int
        /// A page count (a number).
        public var pages: Int
        /// A publisher.
        public var publisher: Int

        /// Creates counts.
        public init(isbn13: Int, cover: Int, year: Int, pages: Int, publisher: Int) {
            self.isbn13 = isbn13
            self.cover = cover
            self.year = year
            self.pages = pages
            self.publisher = publisher
        }
    }

    /// The review queue and the scan detections of the records in scope.
    public struct ReviewQueue: Sendable, Hashable {
        /// Records waiting for a person: scan detections to check or uncertain matches.
        public var waiting: Int
        /// Scan detections waiting (`needsReview`).
        public var waitingScans: Int
        /// Uncertain matches waiting that are not also waiting scan detections.
        public var waitingMatches: Int
        /// Records a person edited (`userEdited`).
        public var userEdited: Int
        /// When each waiting record was queued (last written), oldest first.
        public var queuedAt: [Date]
        /// Records that are scan detections.
        public var scanDetections: Int
        /// Scan detections that came with no confidence.
        public var missingConfidence: Int
        /// The confidence of each scan detection that has one, in no particular order.
        public var confidences: [Double]

        /// Creates the queue's figures.
        public init(waiting: Int, waitingScans: Int, waitingMatches: Int, userEdited: Int, queuedAt: [Date],
                    scanDetections: Int, missingConfidence: Int, confidences: [Double]) {
            self.waiting = waiting
            self.waitingScans = waitingScans
            self.waitingMatches = waitingMatches
            self.userEdited = userEdited
            self.queuedAt = queuedAt
            self.scanDetections = scanDetections
            self.missingConfidence = missingConfidence
            self.confidences = confidences
        }
    }

    /// Reviewed records in scope, each counted once from the log of review actions.
    public struct ReviewOutcomes: Sendable, Hashable {
        /// Records some action changed: an edit, or a choice that changed the match.
        public var corrected: Int
        /// Records every action kept as they were (verified, or a choice that kept the match).
        public var verified: Int

        /// Creates outcomes.
        public init(corrected: Int, verified: Int) {
            self.corrected = corrected
            self.verified = verified
        }
    }

    /// Accepted and uncertain matches of the records in scope.
    public struct Matches: Sendable, Hashable {
        /// Enriched records by the source of their match (nil: the match names none).
        public var bySource: [String?: Int]
        /// The score of each enriched record's match, in no particular order.
        public var scores: [Double]
        /// The mean of ``scores``, as the engine computes it; nil when there is none.
        public var meanScore: Double?
        /// The best candidate's score of each record that needs a candidate chosen, in no particular order.
        public var leadingCandidateScores: [Double]

        /// Creates match figures.
        public init(bySource: [String?: Int], scores: [Double], meanScore: Double?, leadingCandidateScores: [Double]) {
            self.bySource = bySource
            self.scores = scores
            self.meanScore = meanScore
            self.leadingCandidateScores = leadingCandidateScores
        }
    }

    /// A finding stored on a record.
    public struct RecordFinding: Sendable, Hashable {
        /// The record.
        public var record: RecordPlace
        /// The finding as stored.
        public var finding: Finding

        /// Creates a record's finding.
        public init(record: RecordPlace, finding: Finding) {
            self.record = record
            self.finding = finding
        }
    }

    /// A record's stored dates, at least one of which the caller's date rule refused.
    public struct RecordDates: Sendable, Hashable {
        /// The record.
        public var record: RecordPlace
        /// The date added as stored (nil: none).
        public var dateAdded: String?
        /// The date read as stored (nil: none).
        public var dateRead: String?

        /// Creates a record's dates.
        public init(record: RecordPlace, dateAdded: String?, dateRead: String?) {
            self.record = record
            self.dateAdded = dateAdded
            self.dateRead = dateRead
        }
    }

    /// A record whose outcome needs a person or a retry.
    public struct OpenOutcome: Sendable, Hashable {
        /// The record.
        public var record: RecordPlace
        /// Its processing status.
        public var status: RecordStatus
        /// Why its lookup failed, when it did and said why.
        public var failure: String?
        /// How many candidates its enrichment kept.
        public var candidates: Int
        /// Whether it is a scan detection waiting for review (`needsReview`).
        public var needsReview: Bool

        /// Creates an open outcome.
        public init(record: RecordPlace, status: RecordStatus, failure: String?, candidates: Int, needsReview: Bool) {
            self.record = record
            self.status = status
            self.failure = failure
            self.candidates = candidates
            self.needsReview = needsReview
        }
    }

    /// Records that share a value.
    public struct DuplicateGroup: Sendable, Hashable {
        /// What they share.
        public var kind: DuplicateKind
        /// The shared value: the ISBN-13, the work key, or `<title key> / <first author key>`.
        public var value: String
        /// The records, in library order (two or more).
        public var members: [RecordPlace]

        /// Creates a group.
        public init(kind: DuplicateKind, value: String, members: [RecordPlace]) {
            self.kind = kind
            self.value = value
            self.members = members
        }
    }

    /// A run as the library recorded it, with the records it last wrote in scope.
    public struct Run: Sendable, Hashable {
        /// The run's id.
        public var id: Int64
        /// The command line as typed.
        public var command: String
        /// The pipeline's name.
        public var pipeline: String
        /// When it started.
        public var startedAt: Date
        /// When it ended, when it did.
        public var finishedAt: Date?
        /// How it ended (`running` when it never said: killed).
        public var status: RunStatus
        /// Records in scope that this run wrote last.
        public var records: Int
        /// Records this run wrote: stored, or changed while another run had written them last
        /// (whatever the scope; 0 for a library that kept no count).
        public var written: Int = 0

        /// Creates a run's figures.
        public init(id: Int64, command: String, pipeline: String, startedAt: Date, finishedAt: Date?, status: RunStatus,
                    records: Int, written: Int = 0) {
            self.written = written
            self.id = id
            self.command = command
            self.pipeline = pipeline
            self.startedAt = startedAt
            self.finishedAt = finishedAt
            self.status = status
            self.records = records
        }
    }

    /// An imported file with its records and rejected rows in scope.
    public struct File: Sendable, Hashable {
        /// Its content fingerprint (the first half of its records' ids).
        public var hash: String
        /// The path it was imported from; nil for a file whose records were stored without registering it.
        public var path: String?
        /// Its detected format, when registered.
        public var format: String?
        /// Its encoding as read (`utf-8`, `latin-1 (repaired)`, …), when registered.
        public var encoding: String?
        /// Its records in scope.
        public var records: Int
        /// Its rejected rows in scope.
        public var rejected: Int

        /// Creates a file's figures.
        public init(hash: String, path: String?, format: String?, encoding: String?, records: Int, rejected: Int) {
            self.hash = hash
            self.path = path
            self.format = format
            self.encoding = encoding
            self.records = records
            self.rejected = rejected
        }
    }
}

/// The records that duplicate one record in one way (what the report's duplicate groups hold,
/// seen from that record).
public struct RecordDuplicates: Sendable, Hashable {
    /// What they share with it.
    public var kind: DuplicateKind
    /// The other records' ids, in library order.
    public var recordIDs: [String]

    /// Creates a record's duplicates of one kind.
    public init(kind: DuplicateKind, recordIDs: [String]) {
        self.kind = kind
        self.recordIDs = recordIDs
    }
}

/// The values a report takes as plausible; outside them a value is an outlier (a finding).
public struct PlausibleValues: Sendable, Hashable {
    /// Years, in any column whose name says year (``isYearColumn(_:)``): printing with movable type
    /// (1450) to next year.
    public var years: ClosedRange<Int>
    /// Page counts.
    public var pages: ClosedRange<Int>
    /// Ratings, for every format but those in ``ratingScales``.
    public var ratings: ClosedRange<Double>
    /// Formats whose ratings have another scale (`calibre`: 0–10, as its database keeps them).
    public var ratingScales: [String: ClosedRange<Double>]

    /// Creates plausible values.
    public init(years: ClosedRange<Int>, pages: ClosedRange<Int>, ratings: ClosedRange<Double>,
                ratingScales: [String: ClosedRange<Double>]) {
        self.years = years
        self.pages = pages
        self.ratings = ratings
        self.ratingScales = ratingScales
    }

    /// 1450 … next year, 1 … 20,000 pages, ratings 0 … 5 (Calibre 0 … 10).
    public static func standard(currentYear: Int = Calendar(identifier: .gregorian).component(.year, from: Date())) -> PlausibleValues {
        PlausibleValues(years: 1450...(currentYear + 1), pages: 1...20_000, ratings: 0...5, ratingScales: ["calibre": 0...10])
    }

    /// The rating scale of a format.
    public func ratingScale(format: String) -> ClosedRange<Double> { ratingScales[format] ?? ratings }

    /// Whether a column holds a year: its name says "year" (`Year Published`, `Original Publication
    /// Year`, `publication_year`), in any case.
    public static func isYearColumn(_ name: String) -> Bool { name.lowercased().contains("year") }
}

/// The values one field holds across the records in scope: how many have it, and how often each value occurs.
public struct FieldProfile: Sendable, Hashable {
    /// The field (`year`, `pages`, `rating`, `shelf`, `binding`, `publisher`, `dateAdded`, `dateRead`).
    public var field: String
    /// Whether its values are numbers (then ``values`` keys are numbers as text, ordered as numbers).
    public var isNumeric: Bool
    /// Each value (as stored, as text) and how many records have it.
    public var values: [String: Int]

    /// Creates a profile.
    public init(field: String, isNumeric: Bool, values: [String: Int]) {
        self.field = field
        self.isNumeric = isNumeric
        self.values = values
    }
}

/// A value outside ``PlausibleValues``.
public struct Outlier: Sendable, Hashable {
    /// Which value.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A year column's value outside ``PlausibleValues/years``.
        case year
        /// A page count outside ``PlausibleValues/pages``.
        case pages
        /// A rating outside its format's scale.
        case rating
        /// A date read before the record's publication year.
        case readBeforePublication
    }

    /// The record.
    public var record: RecordPlace
    /// Which value.
    public var kind: Kind
    /// The column it was read from (for a year: the column's name; else the record's field name).
    public var field: String
    /// The value as read.
    public var value: String
    /// The record's own year (the year it was read with), when it has one.
    public var recordYear: Int?

    /// Creates an outlier.
    public init(record: RecordPlace, kind: Kind, field: String, value: String, recordYear: Int?) {
        self.record = record
        self.kind = kind
        self.field = field
        self.value = value
        self.recordYear = recordYear
    }
}

/// Rules about finding codes that the report and the listing queries share.
public enum QualityCodes {
    /// `isbn.` codes that record a repair that worked, not an invalid ISBN.
    public static let isbnRepairs: Set<String> = [
        "isbn.leading-zero-restored", "isbn.scientific-notation-expanded", "isbn.points-to-other-book",
    ]

    /// Whether a stored finding's code means the record's ISBN is invalid: every `isbn.` code but
    /// the repairs (``isbnRepairs``) and the ISBN-10/13 disagreement (counted on its own).
    public static func isInvalidISBN(_ code: String) -> Bool {
        code.hasPrefix("isbn.") && code != "isbn.10-13-disagree" && !isbnRepairs.contains(code)
    }
}

/// A data-quality report's headline figures as a library keeps them (`report` saves one per run of
/// the command; the next report compares with it).
public struct ReportHistoryEntry: Sendable, Hashable {
    /// Its number, increasing in the order saved.
    public var id: Int64
    /// When the report was made.
    public var generatedAt: Date
    /// Which records it covered: `all`, or `run <id>`.
    public var scope: String
    /// Its figures by name (the report decides the names; the library keeps them as given).
    public var figures: [String: Double]

    /// Creates an entry.
    public init(id: Int64, generatedAt: Date, scope: String, figures: [String: Double]) {
        self.id = id
        self.generatedAt = generatedAt
        self.scope = scope
        self.figures = figures
    }
}
