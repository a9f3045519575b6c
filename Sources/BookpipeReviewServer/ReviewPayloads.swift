import BookpipeCore
import BookpipeLibrary
import Foundation

/// One queued item as the page's list and bulk filter see it.
public struct QueueSummary: Sendable, Hashable, Codable {
    /// The record id.
    public var id: String
    /// `scan` or `match`.
    public var kind: String
    /// The title as read or edited.
    public var title: String
    /// The authors.
    public var authors: [String]
    /// The detector's confidence, when it gave one.
    public var confidence: Double?
    /// The best candidate's score, when there are candidates.
    public var bestScore: Int?
    /// Whether the photo's copy is there for a crop.
    public var photo: Bool
    /// Identical detections share this key (the normalised title and authors); nil for a match item.
    public var sameAs: String?
    /// ``ReviewRules/version(of:)``, sent back with a decision.
    public var version: String

    /// The summary of a queued item.
    public init(_ item: ReviewItem, photo: Bool) {
        let record = item.record
        id = record.id
        kind = item.kind?.rawValue ?? "none"
        title = record.title
        authors = record.authors
        confidence = record.scan?.confidence
        bestScore = record.enrichment?.candidates.map(\.score).max()
        self.photo = photo
        sameAs = item.kind == .scan ? Self.sameKey(record) : nil
        version = ReviewRules.version(of: record)
    }

    /// The key identical detections share: title and authors folded for comparison.
    static func sameKey(_ record: BookRecord) -> String {
        let title = TitleNormalizer.key(record.title)
        let authors = record.authors.map(AuthorNormalizer.key).sorted().joined(separator: ";")
        return title + "\u{1F}" + authors
    }
}

/// The queue for the page: newest first, with counts by kind.
public struct QueuePayload: Sendable, Codable {
    /// The items, newest first.
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
