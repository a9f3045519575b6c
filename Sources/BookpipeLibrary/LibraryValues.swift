import BookpipeCore
import Foundation

/// What the library knows about one input file.
public struct SourceFileInfo: Sendable, Hashable {
    /// Content fingerprint (the first half of every record id).
    public var hash: String
    /// Path as last registered.
    public var path: String
    /// Detected format name.
    public var format: String
    /// Column names.
    public var header: [String]
    /// Detected encoding.
    public var encoding: String
    /// Size in bytes.
    public var size: Int
    /// Data rows in the file, once it was read to the end.
    public var rowsTotal: Int?
    /// When every row was stored or rejected.
    public var completedAt: String?
    /// Which column gave which value when the stored rows were read (`DetectedFormat.reading`); nil
    /// when unknown (a file imported before the library kept it).
    public var reading: String?

    /// Creates a description of a source file.
    public init(hash: String, path: String, format: String, header: [String], encoding: String, size: Int,
                rowsTotal: Int? = nil, completedAt: String? = nil, reading: String? = nil) {
        self.hash = hash
        self.path = path
        self.format = format
        self.header = header
        self.encoding = encoding
        self.size = size
        self.rowsTotal = rowsTotal
        self.completedAt = completedAt
        self.reading = reading
    }

    /// True once every row of the file is in the library (stored or rejected).
    public var isComplete: Bool { completedAt != nil }
}

/// A set of row numbers, as a bitmap (a million rows cost 125 KB).
public struct RowSet: Sendable, Hashable {
    private var words: [UInt64] = []
    /// How many rows are in the set.
    public private(set) var count = 0

    /// Creates an empty set.
    public init() {}

    /// Adds a row number (≥ 0).
    public mutating func insert(_ row: Int) {
        guard row >= 0 else { return }
        let word = row >> 6
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word - words.count + 1)) }
        let bit = UInt64(1) << UInt64(row & 63)
        if words[word] & bit == 0 {
            words[word] |= bit
            count += 1
        }
    }

    /// True when the row is in the set.
    public func contains(_ row: Int) -> Bool {
        guard row >= 0, row >> 6 < words.count else { return false }
        return words[row >> 6] & (UInt64(1) << UInt64(row & 63)) != 0
    }
}

/// How many records the library holds, by status.
public struct LibraryCounts: Sendable, Hashable {
    /// Records by status.
    public var byStatus: [RecordStatus: Int] = [:]
    /// Rejected rows.
    public var rejected = 0
    /// (file, row) pairs stored more than once. Always 0: a record's key, made of its file and
    /// row, is the table's primary key, so SQLite cannot store a pair twice.
    public var duplicateIDs = 0
    /// All records.
    public var records: Int { byStatus.values.reduce(0, +) }

    /// Creates empty counts.
    public init() {}
}

/// What a library holds, counted for `bookpipe stats`: records by input format, processing status
/// and review state; the files imported; the runs.
public struct LibraryStatistics: Sendable, Hashable {
    /// One imported file with its counts.
    public struct File: Sendable, Hashable {
        /// The file as registered.
        public var info: SourceFileInfo
        /// Records stored from it.
        public var records: Int
        /// Rows of it that were rejected.
        public var rejected: Int

        /// Creates a file's line.
        public init(info: SourceFileInfo, records: Int, rejected: Int) {
            self.info = info
            self.records = records
            self.rejected = rejected
        }
    }

    /// Records by detected input format (`goodreads`, `storygraph`, `scan`, …).
    public var byFormat: [String: Int] = [:]
    /// Records by processing status.
    public var byStatus: [RecordStatus: Int] = [:]
    /// Records by review state, under the export contract's names: `verified`, `needsReview`,
    /// `userEdited`, and `notRouted` for records no person or scan routing decided (CSV rows whose
    /// `reviewStatus` the export writes as null).
    public var byReviewState: [String: Int] = [:]
    /// Rejected rows.
    public var rejected = 0
    /// The imported files, in the order they were first seen.
    public var files: [File] = []
    /// Every run, oldest first.
    public var runs: [RunEntry] = []

    /// All records.
    public var records: Int { byStatus.values.reduce(0, +) }

    /// Creates statistics with the runs given and nothing counted yet.
    public init(runs: [RunEntry] = []) {
        self.runs = runs
    }
}

/// Identifies a write submitted to the library's writer (see ``LibraryStore/committed(_:)``).
public struct WriteTicket: Sendable, Hashable, Comparable {
    package let value: Int

    package init(value: Int) { self.value = value }

    /// Orders tickets by submission.
    public static func < (lhs: WriteTicket, rhs: WriteTicket) -> Bool { lhs.value < rhs.value }
}
