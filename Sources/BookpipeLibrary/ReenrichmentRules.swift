import BookpipeCore
import Foundation

/// A stored record as a re-enrichment sees it: what the rules need to decide what may change.
public struct StoredEnrichmentState: Sendable, Hashable {
    /// The stored processing status.
    public var status: RecordStatus
    /// The stored review status.
    public var reviewStatus: ReviewStatus
    /// The fields a person locked (`title`, `authors`, `match`).
    public var lockedFields: Set<String>
    /// The stored enrichment, when the record has one.
    public var enrichment: EnrichmentResult?
    /// The stored title and authors, for a record a person edited (the values the lookup must
    /// have asked with); nil otherwise (an engine need not read them).
    public var editedTitleAndAuthors: (title: String, authors: [String])?

    /// Creates a state.
    public init(status: RecordStatus, reviewStatus: ReviewStatus, lockedFields: Set<String>,
                enrichment: EnrichmentResult?, editedTitleAndAuthors: (title: String, authors: [String])? = nil) {
        self.status = status
        self.reviewStatus = reviewStatus
        self.lockedFields = lockedFields
        self.enrichment = enrichment
        self.editedTitleAndAuthors = editedTitleAndAuthors
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.status == rhs.status && lhs.reviewStatus == rhs.reviewStatus && lhs.lockedFields == rhs.lockedFields
            && lhs.enrichment == rhs.enrichment && lhs.editedTitleAndAuthors?.title == rhs.editedTitleAndAuthors?.title
            && lhs.editedTitleAndAuthors?.authors == rhs.editedTitleAndAuthors?.authors
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(reviewStatus)
        hasher.combine(lockedFields)
    }
}

/// What saving one enrichment result does.
public enum ReenrichmentOutcome: Sendable, Hashable {
    /// Nothing is written: a person chose the match, or corrected the title or authors after
    /// the lookup was asked (the record stays as the edit left it, for the next run).
    case keep
    /// A failed lookup keeps the earlier answer; only its retry time is set.
    case retryLater(at: Date)
    /// The record (its status, findings and enrichment) is written, with the change log entries;
    /// a failed lookup gets a retry time.
    case write(BookRecord, changes: [RecordChange], retryAt: Date?)
}

/// What a (re-)enrichment may change, as a function over values; engines apply it in their
/// transaction (``LibraryEnrichmentStore/saveEnrichment(_:runID:at:owner:)``).
public enum ReenrichmentRules {
    /// Decides what saving `incoming` (a record with its new enrichment) does to the stored record.
    ///
    /// - Fields a person supplied are never overwritten: only status, findings and enrichment are
    ///   written (never title or authors); a record whose match a person chose (the `match` lock)
    ///   is kept as it is.
    /// - An answer to a question the person has since corrected is dropped: a `userEdited` record
    ///   whose stored title or authors are not those the lookup asked with is kept.
    /// - A failed lookup never replaces an earlier answer: it only gets a retry time (when a host
    ///   quota blocks, the quota's end).
    /// - A match that moves to another work or disappears adds a finding naming `bookpipe show ID`.
    /// - Each changed field goes into the change log with its old and new value.
    /// - Parameters:
    ///   - incoming: The record as enrichment left it (its `enrichment` is the new result).
    ///   - stored: What the library holds.
    ///   - quotaEnd: The latest end of a stored host quota still running, when there is one.
    ///   - time: When.
    public static func decide(_ incoming: BookRecord, stored: StoredEnrichmentState, quotaEnd: Date?,
                              at time: Date) -> ReenrichmentOutcome {
        guard let new = incoming.enrichment else { return .keep }
        if stored.lockedFields.contains("match") { return .keep }
        if stored.reviewStatus == .userEdited {
            guard let edited = stored.editedTitleAndAuthors, edited.title == incoming.title,
                  edited.authors == incoming.authors else { return .keep }
        }
        let old = stored.enrichment
        let retryAt = new.status == .failed && (new.failure ?? "").contains("quota") ? quotaEnd : nil
        if new.status == .failed, let old, old.status != .pending, old.status != .failed {
            return .retryLater(at: retryAt ?? time)
        }
        var record = incoming
        let changes = RecordChange.between(old, new, recordID: record.id, at: time)
        for change in changes where change.field == "match" {
            if change.kind == .moved {
                record.addFinding(Finding(
                    code: "enrich.match-moved", severity: .warning, field: "match",
                    message: "Re-enrichment moved the match from \(old?.match?.title ?? "?") (\(change.old ?? "?")) "
                        + "to \(new.match?.title ?? "?") (\(change.new ?? "?")); check it with bookpipe show \(record.id)."))
            } else if change.kind == .lost {
                record.addFinding(Finding(
                    code: "enrich.match-lost", severity: .warning, field: "match",
                    message: "Re-enrichment no longer accepts the earlier match \(old?.match?.title ?? "?") "
                        + "(\(change.old ?? "?")): now \(new.status.rawValue); check it with bookpipe show \(record.id)."))
            }
        }
        return .write(record, changes: changes, retryAt: new.status == .failed ? (retryAt ?? time) : nil)
    }
}

/// What a save of enrichment results did.
public struct EnrichmentSave: Sendable, Hashable {
    /// The changes to records enriched before (for the run's summary).
    public var changes: [RecordChange]
    /// Ids of records not written because the saving run no longer held their claim (another run
    /// took them after this run's lease expired): that run's result stands.
    public var fencedOut: [String]

    /// Creates a save's result.
    public init(changes: [RecordChange] = [], fencedOut: [String] = []) {
        self.changes = changes
        self.fencedOut = fencedOut
    }
}
