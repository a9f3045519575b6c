/// One book as it flows through a pipeline: where it came from, what was read, its normalised
/// forms, what enrichment found, its review state, and every data-quality finding raised about it.
///
/// Stages fill a record in; none removes what an earlier stage wrote. A problem with one record
/// is data on that record (a ``Finding``), never an error that stops the run.
///
/// ```swift
/// var record = BookRecord(origin: .init(file: "export.csv", fileHash: "ab12…", row: 1, line: 2))
/// record.title = "Gideon the Ninth (The Locked Tomb #1)"
/// record.authors = ["Tamsyn Muir"]
/// ```
public struct BookRecord: Sendable, Hashable, Codable {
    /// Stable identity: the input file's content hash and the 1-based data row (or scan index).
    public var id: String { origin.recordID }
    /// Where the record was read from.
    public var origin: RecordOrigin
    /// The title exactly as read (kept for display; never rewritten).
    public var title: String
    /// The authors as read, primary author first.
    public var authors: [String]
    /// Every ISBN-like value as read, before cleaning (for example `="0439023483"`).
    public var rawISBNs: [String]
    /// Publication year as read (original publication year where the export has one).
    public var year: Int?
    /// Publisher as read.
    public var publisher: String?
    /// Number of pages as read.
    public var pageCount: Int?
    /// The exclusive shelf or read status (`read`, `to-read`, `currently-reading`, …).
    public var shelf: String?
    /// The user's rating (0 or nil: unrated).
    public var rating: Double?
    /// The date the book was added, as read (`2020/10/21`, ISO 8601, …).
    public var dateAdded: String?
    /// The date the book was last read, as read.
    public var dateRead: String?
    /// The binding or format as read (`Paperback`, `Kindle Edition`, `ebook`, `Book`).
    public var binding: String?
    /// The user's review as read.
    public var review: String?
    /// The user's tags or bookshelves as read, in the file's order (empty: none).
    public var tags: [String] = []
    /// Bookshelf-scan details when the record is an AI detection on a shelf photo.
    public var scan: ScanDetection?
    /// Forms derived by the normalise stages (nil until they run).
    public var normalized: NormalizedForms?
    /// What enrichment and matching found (nil until they run).
    public var enrichment: EnrichmentResult?
    /// Whether a person needs to look at the record.
    public var reviewStatus: ReviewStatus
    /// Data-quality findings raised by any stage.
    public var findings: [Finding]
    /// The record's entry in its list (``ListIdentity/entry(list:key:)``): what makes a row of a
    /// newer export of the same list update this record instead of adding one. Set by the store
    /// step; nil for scan detections and rows without an entry key.
    public var listEntry: String? = nil
    /// What the steps of the current run decided about the record (chosen by the library's
    /// reader, looked up): facts of this run that travel with the record from step to step. They
    /// are never stored, encoded or compared (``ThisRun``).
    public var thisRun = ThisRun()

    /// Adds a finding unless an identical one is already recorded (stages may run twice on resume).
    public mutating func addFinding(_ finding: Finding) {
        if !findings.contains(finding) { findings.append(finding) }
    }

    /// The record's processing status for the export contract (`enriched`, `notFound`, …).
    public var status: RecordStatus { enrichment?.status ?? .pending }

    // Every stored value, in declaration order; ``thisRun`` is left out (never stored).
    private enum CodingKeys: String, CodingKey {
        case origin, title, authors, rawISBNs, year, publisher, pageCount, shelf, rating, dateAdded, dateRead
        case binding, review, tags, scan, normalized, enrichment, reviewStatus, findings, listEntry
    }

    /// What the steps of one run decided about a record, carried on the record itself rather than
    /// in a shared object beside the records: the library's reader marks the records it chose for
    /// the run's lookups (``chosenForLookup``), the enrich step the records it looked up
    /// (``lookedUp``), and the save step stores exactly those.
    ///
    /// Two records are equal, and hash alike, whatever their marks: the marks say what happened to
    /// the record in this run, not what the record is.
    public struct ThisRun: Sendable, Hashable {
        /// The library's reader chose the record for this run's lookups (`bookpipe enrich`, the
        /// overnight job), whatever its status: a stale answer, an edition key to repair, a failed
        /// lookup whose retry time has come.
        public var chosenForLookup = false
        /// A step looked the record up in this run: its ``BookRecord/enrichment`` is new and is to be saved.
        public var lookedUp = false

        /// No marks.
        public init() {}

        /// Always true: marks do not make two records different.
        public static func == (lhs: ThisRun, rhs: ThisRun) -> Bool { true }

        /// Adds nothing: marks do not change a record's hash.
        public func hash(into hasher: inout Hasher) {}
    }
}

// The initialisers live in extensions and delegate to the memberwise initialiser that Swift
// synthesises when a struct's body declares none: an initialiser that assigns `self.x = x` one by
// one made Swift 6.3 build the value in a temporary and copy it out (every string and array
// retained and released once more, for each of a million records).
extension BookRecord {
    /// Creates a record with only its origin; stages fill in the rest.
    public init(
        origin: RecordOrigin,
        title: String = "",
        authors: [String] = [],
        rawISBNs: [String] = [],
        year: Int? = nil,
        reviewStatus: ReviewStatus = .verified
    ) {
        self.init(origin: origin, title: title, authors: authors, rawISBNs: rawISBNs, year: year,
                  reviewStatus: reviewStatus, findings: [])
    }

    /// Creates a record with every value that is read from an input row (the reader's path).
    package init(
        origin: RecordOrigin, title: String, authors: [String], rawISBNs: [String], year: Int?,
        publisher: String?, pageCount: Int?, shelf: String?, rating: Double?, dateAdded: String?,
        dateRead: String?, binding: String? = nil, review: String? = nil, tags: [String] = [], findings: [Finding],
        listEntry: String? = nil
    ) {
        self.init(origin: origin, title: title, authors: authors, rawISBNs: rawISBNs, year: year,
                  publisher: publisher, pageCount: pageCount, shelf: shelf, rating: rating,
                  dateAdded: dateAdded, dateRead: dateRead, binding: binding, review: review, tags: tags,
                  reviewStatus: .verified, findings: findings, listEntry: listEntry)
    }

    /// Creates a record with every value, as the library stores it.
    package init(
        stored origin: RecordOrigin, title: String, authors: [String], rawISBNs: [String], year: Int?,
        publisher: String?, pageCount: Int?, shelf: String?, rating: Double?, dateAdded: String?,
        dateRead: String?, binding: String? = nil, review: String? = nil, tags: [String] = [],
        scan: ScanDetection?, normalized: NormalizedForms?, enrichment: EnrichmentResult?,
        reviewStatus: ReviewStatus, findings: [Finding], listEntry: String? = nil
    ) {
        self.init(origin: origin, title: title, authors: authors, rawISBNs: rawISBNs, year: year,
                  publisher: publisher, pageCount: pageCount, shelf: shelf, rating: rating,
                  dateAdded: dateAdded, dateRead: dateRead, binding: binding, review: review, tags: tags,
                  scan: scan, normalized: normalized,
                  enrichment: enrichment, reviewStatus: reviewStatus, findings: findings, listEntry: listEntry)
    }
}

/// Where a record was read from: enough to point a person at the exact place in the input.
public struct RecordOrigin: Sendable, Hashable, Codable {
    /// The input file's path as given on the command line.
    public var file: String
    /// The input file's 128-bit content fingerprint (32 hex digits; fast, not cryptographic): the
    /// first half of the stable record id.
    public var fileHash: String
    /// 1-based data row (the header is not a data row). For scans: the 1-based detection index.
    public var row: Int
    /// 1-based physical line where the row starts (rows may span lines).
    public var line: Int
    /// The detected input format's name (`goodreads`, `storygraph`, `scan`, …).
    public var format: String
    /// The raw fields of the row in column order, exactly as parsed (the header is stored once
    /// per source file). For scan detections: the detection's JSON text as the only field.
    ///
    /// Kept compact (``compactRawFields``); reading this property splits it.
    public var rawFields: [String] {
        get { compactRawFields.fields }
        set { compactRawFields = RawFields(newValue) }
    }
    /// The raw fields in one compact value, the way the reader produces them.
    @usableFromInline package var compactRawFields: RawFields
    /// For scan detections: the scan file's name. Nil for CSV rows.
    public var scan: String?

    private enum CodingKeys: String, CodingKey {
        case file, fileHash, row, line, format, rawFields, scan
    }

    /// Encodes an origin (`rawFields` as an array of strings).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(fileHash, forKey: .fileHash)
        try container.encode(row, forKey: .row)
        try container.encode(line, forKey: .line)
        try container.encode(format, forKey: .format)
        try container.encode(rawFields, forKey: .rawFields)
        try container.encodeIfPresent(scan, forKey: .scan)
    }

    /// The stable record id: `<fileHash>:<row>`. The same input file always yields the same ids,
    /// wherever it lives, which is what makes a rerun skip finished rows.
    public var recordID: String { "\(fileHash):\(row)" }
}

extension RecordOrigin {
    /// Creates an origin.
    public init(
        file: String, fileHash: String, row: Int, line: Int, format: String = "",
        rawFields: [String] = [], scan: String? = nil
    ) {
        self.init(file: file, fileHash: fileHash, row: row, line: line, format: format,
                  compactRawFields: RawFields(rawFields), scan: scan)
    }

    /// Creates an origin whose raw fields are already compact.
    package init(file: String, fileHash: String, row: Int, line: Int, format: String, rawFields: RawFields,
                 scan: String? = nil) {
        self.init(file: file, fileHash: fileHash, row: row, line: line, format: format, compactRawFields: rawFields,
                  scan: scan)
    }

    /// Decodes an origin (`rawFields` as an array of strings).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(file: try container.decode(String.self, forKey: .file),
                  fileHash: try container.decode(String.self, forKey: .fileHash),
                  row: try container.decode(Int.self, forKey: .row), line: try container.decode(Int.self, forKey: .line),
                  format: try container.decode(String.self, forKey: .format),
                  rawFields: try container.decode([String].self, forKey: .rawFields),
                  scan: try container.decodeIfPresent(String.self, forKey: .scan))
    }
}

/// An AI-detected book on a bookshelf photo.
public struct ScanDetection: Sendable, Hashable, Codable {
    /// The detector's confidence in 0…1; nil when the detector gave none.
    public var confidence: Double?
    /// The normalised box on the upright photo; nil when missing.
    public var boundingBox: BoundingBox?
    /// Path of the shelf photo (inside the scan folder); nil once the photo is deleted.
    public var photoPath: String?
    /// The 1-based position of the detection in its scan's list (the export's `source.index`).
    /// Equal to ``RecordOrigin/row`` for a file with one scan; nil for detections stored before
    /// the field existed.
    public var index: Int?

    /// Creates a detection.
    public init(confidence: Double?, boundingBox: BoundingBox?, photoPath: String?, index: Int? = nil) {
        self.confidence = confidence
        self.boundingBox = boundingBox
        self.photoPath = photoPath
        self.index = index
    }
}

/// A rectangle in normalised coordinates (0…1 of the upright image's width and height).
public struct BoundingBox: Sendable, Hashable, Codable {
    /// Left edge.
    public var x: Double
    /// Top edge.
    public var y: Double
    /// Width.
    public var width: Double
    /// Height.
    public var height: Double

    /// Creates a box.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// True when the box is finite, has a positive size and overlaps the unit square.
    public var isValid: Bool {
        [x, y, width, height].allSatisfy(\.isFinite) && width > 0 && height > 0
            && x < 1 && y < 1 && x + width > 0 && y + height > 0
    }
}

/// Forms derived from what was read, for searching and comparing. Display keeps the originals.
public struct NormalizedForms: Sendable, Hashable, Codable {
    // `titleKey` is declared first so that the synthesised memberwise initialiser, which the public
    // one delegates to (see the note on `extension BookRecord`), has other labels than the public one.
    /// Comparison key of the search title: NFC, case-folded, diacritics folded, punctuation removed.
    public var titleKey: String
    /// The title to search with: series parenthetical removed, entities decoded, whitespace collapsed.
    public var searchTitle: String
    /// The main title before a subtitle (`"Dune: Messiah"` → `"Dune"`), or the search title.
    public var mainTitle: String
    /// Series name taken from the title, when there was one.
    public var series: String?
    /// Series number taken from the title (`"1"`, `"2.5"`), when there was one.
    public var seriesNumber: String?
    /// Authors in "First Last" display order.
    public var authors: [String]
    /// Comparison keys of the authors.
    public var authorKeys: [String]
    /// The first valid ISBN, as ISBN-13.
    public var isbn13: String?
    /// Every valid ISBN found on the row, as ISBN-13, without duplicates.
    public var allISBN13s: [String]

    private enum CodingKeys: String, CodingKey {
        case searchTitle, mainTitle, titleKey, series, seriesNumber, authors, authorKeys, isbn13, allISBN13s
    }
}

extension NormalizedForms {
    /// Creates normalised forms.
    public init(
        searchTitle: String, mainTitle: String, titleKey: String, series: String? = nil,
        seriesNumber: String? = nil, authors: [String] = [], authorKeys: [String] = [],
        isbn13: String? = nil, allISBN13s: [String] = []
    ) {
        self.init(titleKey: titleKey, searchTitle: searchTitle, mainTitle: mainTitle, series: series,
                  seriesNumber: seriesNumber, authors: authors, authorKeys: authorKeys, isbn13: isbn13,
                  allISBN13s: allISBN13s)
    }
}

/// The processing status of a record, as in the export contract.
public enum RecordStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Matched to a work.
    case enriched
    /// Every source answered and none had it.
    case notFound
    /// A lookup failed for good (see ``EnrichmentResult/failure``).
    case failed
    /// Candidates were found but none could be accepted safely; a person chooses.
    case needsCandidateSelection
    /// Not enriched yet (or imported with `--no-enrich`).
    case pending
}

/// Whether a person needs to look at a record.
public enum ReviewStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nothing to review (or a person confirmed it).
    case verified
    /// Waiting for a person.
    case needsReview
    /// A person edited it; edited fields are locked against re-enrichment.
    case userEdited
}

/// What enrichment and matching found for a record.
public struct EnrichmentResult: Sendable, Hashable, Codable {
    /// The outcome.
    public var status: RecordStatus
    /// Why a lookup failed for good (status code, timeout, quota), when `status == .failed`.
    public var failure: String?
    /// The accepted match, when `status == .enriched`.
    public var match: Match?
    /// The top candidates with their score breakdown, best first.
    public var candidates: [Candidate]

    /// Creates a result.
    public init(status: RecordStatus, failure: String? = nil, match: Match? = nil, candidates: [Candidate] = []) {
        self.status = status
        self.failure = failure
        self.match = match
        self.candidates = candidates
    }

    /// The candidate the match was made from (its year, publisher and ISBNs), when there is a match.
    public var acceptedCandidate: Candidate? {
        guard let match else { return nil }
        let identity = match.identity
        return candidates.first { $0.identity == identity }
    }
}

/// An accepted match between a record and a work.
public struct Match: Sendable, Hashable, Codable {
    /// The work's Open Library key (`/works/OL…W`), or empty when no work is known (a Google
    /// Books volume whose ISBNs name no one work, a catalogue edition without a work): never an
    /// invented key, so every program that groups by work sees works only (``WorkKey``). Stored
    /// and exported as `null` when empty, never `""`.
    public var workKey: String
    /// The edition's key, when known: Open Library's `/books/OL…M`, or the source's own
    /// (`googlebooks:<volume id>`).
    public var editionKey: String?
    /// The work's title.
    public var title: String
    /// The work's authors.
    public var authors: [String]
    /// The score that accepted it.
    public var score: Int
    /// The source that gave it (`openlibrary`, `googlebooks`, `catalog`).
    public var source: String

    /// Creates a match.
    public init(workKey: String, editionKey: String?, title: String, authors: [String], score: Int, source: String) {
        self.workKey = workKey
        self.editionKey = editionKey
        self.title = title
        self.authors = authors
        self.score = score
        self.source = source
    }

    /// What tells this match apart from another (see ``WorkKey/identity(workKey:editionKey:source:title:)``).
    public var identity: String { WorkKey.identity(workKey: workKey, editionKey: editionKey, source: source, title: title) }

    private enum CodingKeys: String, CodingKey { case workKey, editionKey, title, authors, score, source }

    /// Reads a match; a `null`, missing or empty `workKey` is no work.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(workKey: try container.decodeIfPresent(String.self, forKey: .workKey) ?? "",
                  editionKey: try container.decodeIfPresent(String.self, forKey: .editionKey),
                  title: try container.decode(String.self, forKey: .title),
                  authors: try container.decode([String].self, forKey: .authors),
                  score: try container.decode(Int.self, forKey: .score),
                  source: try container.decode(String.self, forKey: .source))
    }

    /// Writes a match; no work is `"workKey": null`, never `""`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(workKey.isEmpty ? nil : workKey, forKey: .workKey)
        try container.encodeIfPresent(editionKey, forKey: .editionKey)
        try container.encode(title, forKey: .title)
        try container.encode(authors, forKey: .authors)
        try container.encode(score, forKey: .score)
        try container.encode(source, forKey: .source)
    }
}

/// Open Library work keys, and what stands for a work when a source names none.
public enum WorkKey {
    /// True for an Open Library work key: `/works/OL…W`.
    ///
    /// ```swift
    /// WorkKey.isWork("/works/OL45804W")         // true
    /// WorkKey.isWork("/books/OL7353617M")       // false: an edition
    /// WorkKey.isWork("googlebooks:zyTCAlFPjgYC") // false
    /// ```
    public static func isWork(_ key: String) -> Bool {
        key.hasPrefix("/works/OL") && key.hasSuffix("W") && key.utf8.count > 10
    }

    /// `key` when it is a work key, else empty: what may be stored as a work key.
    public static func sanitized(_ key: String?) -> String {
        guard let key, isWork(key) else { return "" }
        return key
    }

    /// What tells one candidate (or match) apart from another when comparing, merging and
    /// ranking: the work key, or, when the source names no work, the edition key, or the source
    /// and title. Never stored as a work key.
    public static func identity(workKey: String, editionKey: String?, source: String, title: String) -> String {
        if !workKey.isEmpty { return workKey }
        if let editionKey, !editionKey.isEmpty { return editionKey }
        return "\(source):\(title)"
    }
}

/// A candidate work with its score and per-field breakdown.
public struct Candidate: Sendable, Hashable, Codable {
    /// The work's Open Library key (`/works/OL…W`), or empty when no work is known (see
    /// ``Match/workKey``; stored as `null`).
    public var workKey: String
    /// The edition's key, when known (see ``Match/editionKey``).
    public var editionKey: String?
    /// The candidate's title.
    public var title: String
    /// The candidate's authors.
    public var authors: [String]
    /// First publication year.
    public var year: Int?
    /// The edition's publisher, when the source names one (Open Library's `publishers`, Google
    /// Books' `volumeInfo.publisher`, the catalogue edition's first publisher); nil for a work
    /// found by a title search, which names no one edition.
    public var publisher: String?
    /// ISBN-13s of the candidate's editions that the source returned.
    public var isbn13s: [String]
    /// The source that gave it.
    public var source: String
    /// Total score.
    public var score: Int
    /// Points per field (`title`, `author`, `year`, `isbn`).
    public var breakdown: [String: Int]
    /// The other editions of this candidate's work that the sources returned (their edition
    /// keys: `/books/OL…M`, `googlebooks:<id>`): editions of one work are one candidate, the best
    /// edition kept (this one) and the others listed here (``MatchScorer``).
    public var otherEditions: [String] = []

    /// Creates a candidate.
    public init(
        workKey: String, editionKey: String? = nil, title: String, authors: [String], year: Int? = nil,
        publisher: String? = nil, isbn13s: [String] = [], source: String, score: Int = 0, breakdown: [String: Int] = [:]
    ) {
        self.workKey = workKey
        self.editionKey = editionKey
        self.title = title
        self.authors = authors
        self.year = year
        self.publisher = publisher
        self.isbn13s = isbn13s
        self.source = source
        self.score = score
        self.breakdown = breakdown
    }

    /// What tells this candidate apart from another (see ``WorkKey/identity(workKey:editionKey:source:title:)``).
    public var identity: String { WorkKey.identity(workKey: workKey, editionKey: editionKey, source: source, title: title) }

    private enum CodingKeys: String, CodingKey {
        case workKey, editionKey, title, authors, year, publisher, isbn13s, source, score, breakdown, otherEditions
    }

    /// Reads a candidate; a `null`, missing or empty `workKey` is no work.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(workKey: try container.decodeIfPresent(String.self, forKey: .workKey) ?? "",
                  editionKey: try container.decodeIfPresent(String.self, forKey: .editionKey),
                  title: try container.decode(String.self, forKey: .title),
                  authors: try container.decode([String].self, forKey: .authors),
                  year: try container.decodeIfPresent(Int.self, forKey: .year),
                  publisher: try container.decodeIfPresent(String.self, forKey: .publisher),
                  isbn13s: try container.decodeIfPresent([String].self, forKey: .isbn13s) ?? [],
                  source: try container.decode(String.self, forKey: .source),
                  score: try container.decodeIfPresent(Int.self, forKey: .score) ?? 0,
                  breakdown: try container.decodeIfPresent([String: Int].self, forKey: .breakdown) ?? [:])
        otherEditions = try container.decodeIfPresent([String].self, forKey: .otherEditions) ?? []
    }

    /// Writes a candidate; no work is `"workKey": null`, never `""`; `otherEditions` only when
    /// there are some.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(workKey.isEmpty ? nil : workKey, forKey: .workKey)
        try container.encodeIfPresent(editionKey, forKey: .editionKey)
        try container.encode(title, forKey: .title)
        try container.encode(authors, forKey: .authors)
        try container.encodeIfPresent(year, forKey: .year)
        try container.encodeIfPresent(publisher, forKey: .publisher)
        try container.encode(isbn13s, forKey: .isbn13s)
        try container.encode(source, forKey: .source)
        try container.encode(score, forKey: .score)
        try container.encode(breakdown, forKey: .breakdown)
        if !otherEditions.isEmpty { try container.encode(otherEditions, forKey: .otherEditions) }
    }
}

/// A data-quality finding about one record: data, not an exception.
public struct Finding: Sendable, Hashable, Codable {
    /// How bad it is.
    public enum Severity: String, Sendable, Hashable, Codable {
        /// Informational (a repair that was made).
        case info
        /// Something is probably wrong with the data.
        case warning
        /// The row could not be used as intended.
        case error
    }

    /// A stable machine-readable code (`isbn.invalid-checksum`, `encoding.latin1-repaired`, …).
    public var code: String
    /// How bad it is.
    public var severity: Severity
    /// The field it concerns (a column name or record field), when one.
    public var field: String?
    /// A sentence for people: what is wrong and, where possible, what to do.
    public var message: String

    /// Creates a finding.
    public init(code: String, severity: Severity, field: String? = nil, message: String) {
        self.code = code
        self.severity = severity
        self.field = field
        self.message = message
    }
}
