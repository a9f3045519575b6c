import BookpipeCore
import Foundation

/// The two kinds of review-queue items.
public enum ReviewKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A bookshelf-scan detection the detector was unsure of (`reviewStatus == needsReview`).
    case scan
    /// An uncertain match: candidates were found, none accepted (`status == needsCandidateSelection`).
    case match

    /// The queue a record is in: `scan` while its detection waits for review (first), else `match`
    /// while it waits for a candidate to be chosen; nil when it is not queued.
    public static func of(_ record: BookRecord) -> ReviewKind? {
        if record.reviewStatus == .needsReview { return .scan }
        if record.status == .needsCandidateSelection { return .match }
        return nil
    }
}

/// One record as the review queue shows it.
public struct ReviewItem: Sendable, Hashable {
    /// The record as stored.
    public var record: BookRecord
    /// The queue it is in, or nil when it is not queued (already reviewed).
    public var kind: ReviewKind?
    /// When the record's file was first imported (ISO 8601, UTC).
    public var createdAt: String

    /// The record's id.
    public var id: String { record.id }

    /// Creates an item.
    public init(record: BookRecord, kind: ReviewKind?, createdAt: String) {
        self.record = record
        self.kind = kind
        self.createdAt = createdAt
    }
}

/// One queued item as `review list` shows it, read from the few columns the list needs (the
/// record itself is not decoded: no findings, enrichment or normalised forms).
public struct ReviewQueueEntry: Sendable, Hashable {
    /// The record's id (`<hash>:<row>`).
    public var id: String
    /// The queue it is in.
    public var kind: ReviewKind
    /// The title as read (or edited).
    public var title: String
    /// The authors as read (or edited).
    public var authors: [String]
    /// The detector's confidence, when it gave one.
    public var confidence: Double?
    /// The detection's normalised box, when it had one.
    public var boundingBox: BoundingBox?
    /// The stored path of the detection's managed photo copy; nil when there is none (never
    /// given, refused, or deleted after review). The copy itself may be gone.
    public var photoPath: String?
    /// When the record's file was first imported (ISO 8601, UTC).
    public var createdAt: String

    /// Creates an entry.
    public init(id: String, kind: ReviewKind, title: String, authors: [String], confidence: Double?,
                boundingBox: BoundingBox?, photoPath: String?, createdAt: String) {
        self.id = id
        self.kind = kind
        self.title = title
        self.authors = authors
        self.confidence = confidence
        self.boundingBox = boundingBox
        self.photoPath = photoPath
        self.createdAt = createdAt
    }
}

/// A decision as the library logged it, one per record: the action's number (what
/// ``LibraryReviewStore/undoReview(actionIDs:at:)`` takes) and the record as stored after.
public struct ReviewReceipt: Sendable, Hashable {
    /// The logged action's number.
    public var actionID: Int64
    /// The record as stored after the decision.
    public var record: BookRecord

    /// Creates a receipt.
    public init(actionID: Int64, record: BookRecord) {
        self.actionID = actionID
        self.record = record
    }
}

/// One logged review decision.
public struct ReviewAction: Sendable, Hashable {
    /// The record's id.
    public var recordID: String
    /// `verify`, `edit`, `choose` or `choose-none`.
    public var action: String
    /// JSON of the reviewed fields before.
    public var before: String
    /// JSON of the reviewed fields after.
    public var after: String
    /// When it was taken.
    public var at: Date

    /// Creates a logged decision.
    public init(recordID: String, action: String, before: String, after: String, at: Date) {
        self.recordID = recordID
        self.action = action
        self.before = before
        self.after = after
        self.at = at
    }
}

/// A field a person supplied; locked fields are never overwritten by enrichment.
public struct RecordEdit: Sendable, Hashable {
    /// `title`, `authors` or `match`.
    public var field: String
    /// JSON of the value the person gave.
    public var value: String?
    /// Whether enrichment must leave the field alone.
    public var locked: Bool
    /// Who supplied it (`person`).
    public var editedBy: String
    /// When.
    public var at: Date

    /// Creates an edit.
    public init(field: String, value: String?, locked: Bool, editedBy: String, at: Date) {
        self.field = field
        self.value = value
        self.locked = locked
        self.editedBy = editedBy
        self.at = at
    }
}

/// A review action that cannot be carried out.
public enum ReviewError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No record has this id.
    case unknownID(String)
    /// The candidate number is not one of the record's candidates.
    case noSuchCandidate(id: String, number: Int, count: Int)
    /// An edit that changes nothing (no title and no author given, or an empty title).
    case emptyEdit(id: String)
    /// A verify of an uncertain match: nothing to verify as it is (no match was accepted); the
    /// person chooses a candidate, or none.
    case uncertainMatch(id: String, candidates: Int)
    /// The record changed since the decider read it (another tab or person decided it, or a run
    /// updated it): `now` says how it stands. Nothing was written.
    case changedSince(id: String, now: String)
    /// The action cannot be undone: no such action, already undone, or logged before undo existed.
    case notUndoable(actionID: Int64)

    /// The message for people.
    public var description: String {
        switch self {
        case .unknownID(let id):
            return "No record has the id \(id). `bookpipe review list` shows the queued ids."
        case .noSuchCandidate(let id, _, let count):
            return count == 0
                ? "\(id) has no candidates to choose from: it has not been looked up since it was imported or edited "
                    + "(`bookpipe enrich` looks it up; then choose), or no source knew it (correct it with "
                    + "`bookpipe review edit \(id) --title … --author …`)."
                : "\(id) has \(count) candidate\(count == 1 ? "" : "s"); choose a number from 1 to \(count), or --none."
        case .emptyEdit(let id):
            return "Nothing to change for \(id): give a non-empty --title and/or --author."
        case .uncertainMatch(let id, let count):
            return "\(id) is an uncertain match: no candidate was accepted, so there is nothing to verify as it is. "
                + "Choose one of its \(count) candidate\(count == 1 ? "" : "s") with `bookpipe review choose \(id) N` "
                + "(`bookpipe review show \(id)` lists them), or `bookpipe review choose \(id) --none`. Nothing was changed."
        case .changedSince(let id, let now):
            return "\(id) changed since you read it: \(now). Nothing was changed; look at it again and decide."
        case .notUndoable(let actionID):
            return "Review action \(actionID) cannot be undone: it is unknown, already undone, or was logged before undo existed."
        }
    }
}

/// What a photo cleanup did.
public struct PhotoCleanup: Sendable, Hashable {
    /// Managed copies deleted (or found already gone).
    public var deleted: [String] = []
    /// Copies whose delete failed, with the reason; they are retried at the next run.
    public var failures: [String] = []
    /// Creates an empty result.
    public init() {}
}
