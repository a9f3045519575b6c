import BookpipeCore
import BookpipeLibrary
import BookpipeReview
import Foundation

/// One queued item as the page's list and bulk filter see it.
public struct QueueSummary: Sendable, Hashable, Codable {
    /// The record id.
    public var id: String
    /// `scan` or `match` (`none` once decided).
    public var kind: String
    /// The title as read or edited.
    public var title: String
    /// The authors.
    public var authors: [String]
    /// The detector's confidence, when it gave one.
    public var confidence: Double?
    /// Whether the photo's copy is there for a crop.
    public var photo: Bool
    /// Identical detections share this key (the normalised title and authors); nil for a match item.
    public var sameAs: String?
    /// ``ReviewRules/version(of:)``, sent back with a decision; nil in the queue's list, which is read
    /// without decoding records (an item's own answer and `/api/select` carry it).
    public var version: String?

    /// The summary of an item read in full.
    public init(_ item: ReviewItem, photo: Bool) {
        let record = item.record
        id = record.id
        kind = item.kind?.rawValue ?? "none"
        title = record.title
        authors = record.authors
        confidence = record.scan?.confidence
        self.photo = photo
        sameAs = item.kind == .scan ? Self.sameKey(title: record.title, authors: record.authors) : nil
        version = ReviewRules.version(of: record)
    }

    /// The summary of a line of the queue's list (no version).
    public init(_ entry: ReviewListEntry) {
        id = entry.id
        kind = entry.kind.rawValue
        title = entry.title
        authors = entry.authors
        confidence = entry.confidence
        photo = entry.photo
        sameAs = entry.kind == .scan ? Self.sameKey(title: entry.title, authors: entry.authors) : nil
        version = nil
    }

    /// The key identical detections share: title and authors folded for comparison.
    static func sameKey(title: String, authors: [String]) -> String {
        TitleNormalizer.key(title) + "\u{1F}" + authors.map(AuthorNormalizer.key).sorted().joined(separator: ";")
    }
}

/// A selection for a bulk decision or a group of identical detections: the ids with the versions
/// they have now, sent back with the decision.
public struct SelectionPayload: Sendable, Codable {
    /// How many items match.
    public var count: Int
    /// The items with their versions.
    public var items: [VersionedID]
}

/// What `/api/select` filters by; absent fields do not filter.
struct SelectionFilter: Sendable {
    var kind: ReviewKind?
    var confidenceBelow: Double?
    var scoreBelow: Int?
    var photo: Bool?
    var sameAs: String?

    /// Whether a queued item is selected. A confidence filter leaves out items with no confidence;
    /// an item with no candidates has a best score of 0.
    func selects(_ item: ReviewItem, photo hasPhoto: Bool) -> Bool {
        let record = item.record
        if let kind, item.kind != kind { return false }
        if let confidenceBelow {
            guard let confidence = record.scan?.confidence, confidence < confidenceBelow else { return false }
        }
        if let scoreBelow, (record.enrichment?.candidates.map(\.score).max() ?? 0) >= scoreBelow { return false }
        if let photo, photo != hasPhoto { return false }
        if let sameAs {
            guard item.kind == .scan, QueueSummary.sameKey(title: record.title, authors: record.authors) == sameAs else { return false }
        }
        return true
    }
}

/// The queue for the page: newest first, with counts by kind.
public struct QueuePayload: Sendable, Codable {
    /// The items, newest first (without versions).
    public var items: [QueueSummary]
    /// How many of each kind (`scan`, `match`).
    public var counts: [String: Int]
    /// Whether `/` can search a local catalogue.
    public var canSearch: Bool
}

/// One candidate as the page shows it.
public struct CandidatePayload: Sendable, Codable {
    /// 1-based, as `choose N` takes it.
    public var number: Int
    /// Title.
    public var title: String
    /// Authors.
    public var authors: [String]
    /// First publication year.
    public var year: Int?
    /// The source that found it.
    public var source: String
    /// The work key.
    public var workKey: String
    /// The total score.
    public var score: Int
    /// The per-field score breakdown, sorted by field.
    public var breakdown: [ScorePart]
}

/// One field's part of a candidate's score.
public struct ScorePart: Sendable, Codable {
    /// The field.
    public var field: String
    /// Its points.
    public var points: Int
}

/// One item in full: fields, candidates, the crop's address, its version.
public struct ItemPayload: Sendable, Codable {
    /// The summary (id, kind, title, authors, confidence, version…).
    public var summary: QueueSummary
    /// The best candidate's score, when there are candidates.
    public var bestScore: Int?
    /// The record's review status.
    public var reviewStatus: String
    /// The record's status.
    public var status: String
    /// The match, when one was accepted or chosen.
    public var match: String?
    /// Where each field came from (`file`, `person`, a source).
    public var provenance: [String: String]
    /// The candidates, in `choose` order.
    public var candidates: [CandidatePayload]
    /// Findings, as lines.
    public var findings: [String]
    /// The crop's address, or nil with `noPhoto` saying why.
    public var crop: String?
    /// Why there is no crop.
    public var noPhoto: String?

    /// An item's payload.
    init(_ item: ReviewItem, provenance: [String: String], photo: Bool, noPhoto: String?) {
        let record = item.record
        summary = QueueSummary(item, photo: photo)
        bestScore = record.enrichment?.candidates.map(\.score).max()
        reviewStatus = record.reviewStatus.rawValue
        status = record.status.rawValue
        match = record.enrichment?.match.map { "\($0.title) — \($0.authors.joined(separator: ", "))" }
        self.provenance = provenance
        candidates = (record.enrichment?.candidates ?? []).enumerated().map { index, candidate in
            CandidatePayload(number: index + 1, title: candidate.title, authors: candidate.authors, year: candidate.year,
                             source: candidate.source, workKey: candidate.workKey, score: candidate.score,
                             breakdown: candidate.breakdown.sorted { $0.key < $1.key }.map { ScorePart(field: $0.key, points: $0.value) })
        }
        findings = record.findings.map { "\($0.severity.rawValue): \($0.message)" }
        crop = photo ? "/crop?id=\(record.id)" : nil
        self.noPhoto = noPhoto
    }
}

/// A decision the page posts to `/api/decide`.
public struct DecisionRequest: Sendable, Codable {
    /// `verify`, `edit`, `choose` or `none`.
    public var action: String
    /// The items, each with the version the page saw.
    public var items: [VersionedID]
    /// For `choose`: the candidate number.
    public var candidate: Int?
    /// For `edit`: the new title.
    public var title: String?
    /// For `edit`: the new authors.
    public var authors: [String]?

    /// The decision it asks for, or nil when the fields do not make one.
    var decision: ReviewDecision? {
        switch action {
        case "verify": return .verify
        case "none": return ReviewDecision.none
        case "choose": return candidate.map(ReviewDecision.choose)
        case "edit": return title == nil && authors == nil ? nil : .edit(title: title, authors: authors)
        default: return nil
        }
    }
}

/// An item id and the version the page saw.
public struct VersionedID: Sendable, Codable, Hashable {
    /// The record id.
    public var id: String
    /// ``ReviewRules/version(of:)`` as the page read it.
    public var version: String
}

/// What a decision did: the action numbers (for undo) and the items as they are now.
public struct DecisionPayload: Sendable, Codable {
    /// The logged actions, for `/api/undo`.
    public var actions: [Int64]
    /// The decided items now (a decided item usually leaves the queue: its kind is `none`).
    public var items: [QueueSummary]
    /// Notes for the person (photo cleanup warnings, an item that stays queued).
    public var notes: [String]
}

/// An undo the page posts to `/api/undo`.
public struct UndoRequest: Sendable, Codable {
    /// The action numbers a decision returned.
    public var actions: [Int64]
}

/// A refusal: what was wrong, and for a 409 how the item stands now.
public struct ProblemPayload: Sendable, Codable {
    /// The message for people.
    public var error: String
    /// For a conflict: the item as it is now (nil when it is no longer queued or unknown).
    public var current: QueueSummary?
}

/// A book found in the local catalogue.
public struct CatalogueHit: Sendable, Codable, Hashable {
    /// Title.
    public var title: String
    /// Authors.
    public var authors: [String]
    /// First publication year.
    public var year: Int?
    /// Its work key in the catalogue.
    public var workKey: String

    /// Creates a hit.
    public init(title: String, authors: [String], year: Int?, workKey: String) {
        self.title = title
        self.authors = authors
        self.year = year
        self.workKey = workKey
    }
}
