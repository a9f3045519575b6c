import BookpipeCore
import Foundation

/// One record found by ``LibraryStore/search(_:limit:)``.
public struct SearchHit: Sendable, Hashable {
    /// The record's id (`<file hash>:<row>`).
    public var id: String
    /// The title as read.
    public var title: String
    /// The authors as read.
    public var authors: [String]
    /// The first valid ISBN-13, when one.
    public var isbn13: String?
    /// The record's status.
    public var status: RecordStatus
    /// The input file's path as given.
    public var file: String
    /// The 1-based physical line where the row starts.
    public var line: Int
    /// FTS5's bm25 rank: lower is better.
    public var rank: Double

    /// Creates a hit.
    public init(id: String, title: String, authors: [String], isbn13: String?, status: RecordStatus, file: String,
                line: Int, rank: Double) {
        self.id = id
        self.title = title
        self.authors = authors
        self.isbn13 = isbn13
        self.status = status
        self.file = file
        self.line = line
        self.rank = rank
    }
}

/// What ``LibraryStore/search(_:limit:ranking:)`` found: the hits, best first, and whether they
/// were chosen among every matching record or only among the first ones in library order.
///
/// A collection of its hits: `results.map(\.id)`, `results.count`, `results.isEmpty`.
public struct SearchResults: Sendable, Hashable, RandomAccessCollection {
    /// The hits, best first (lowest bm25 rank; equal ranks in library order).
    public var hits: [SearchHit]
    /// How many matching records were ranked to choose the hits.
    public var ranked: Int
    /// True when more records match than were ranked: the hits are then the best of the first
    /// ``ranked`` matches in library order (files in the order they were imported, rows in file
    /// order), not of all of them.
    public var moreMatch: Bool

    /// Creates results.
    public init(hits: [SearchHit], ranked: Int, moreMatch: Bool) {
        self.hits = hits
        self.ranked = ranked
        self.moreMatch = moreMatch
    }

    /// The first hit's position (0).
    public var startIndex: Int { hits.startIndex }
    /// One past the last hit's position.
    public var endIndex: Int { hits.endIndex }
    /// The hit at `position`.
    public subscript(position: Int) -> SearchHit { hits[position] }
}
