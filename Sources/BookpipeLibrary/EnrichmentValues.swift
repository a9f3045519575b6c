import BookpipeCore
import Foundation

/// A cached answer of one source to one question.
public struct CachedAnswer: Sendable, Hashable {
    /// The answer as JSON text (the enrichment module's `LookupAnswer`).
    public var answerJSON: String
    /// When the source gave it.
    public var fetchedAt: Date

    /// Creates a cached answer.
    public init(answerJSON: String, fetchedAt: Date) {
        self.answerJSON = answerJSON
        self.fetchedAt = fetchedAt
    }
}

/// A stored block on a host (a quota that resets later), as kept in the library.
public struct StoredHostQuota: Sendable, Hashable {
    /// `scheme://host:port`.
    public var host: String
    /// When requests may resume.
    public var blockedUntil: Date
    /// Why (for messages).
    public var reason: String

    /// Creates a stored quota.
    public init(host: String, blockedUntil: Date, reason: String) {
        self.host = host
        self.blockedUntil = blockedUntil
        self.reason = reason
    }
}

/// A cached lookup: the question asked of a source and its answer as stored.
public struct CachedLookup: Sendable, Hashable {
    /// The source asked.
    public var source: String
    /// The question (`isbn:978…`, `title:<key>|author:<key>`).
    public var question: String
    /// The answer as stored (JSON).
    public var answerJSON: String
    /// When it was fetched.
    public var fetchedAt: Date

    /// Creates a cached lookup.
    public init(source: String, question: String, answerJSON: String, fetchedAt: Date) {
        self.source = source
        self.question = question
        self.answerJSON = answerJSON
        self.fetchedAt = fetchedAt
    }
}

/// One field of one record that a re-enrichment changed, as the change log keeps it.
public struct RecordChange: Sendable, Hashable {
    /// How a match changed.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The record now matches another work.
        case moved
        /// The record had a match and has none now (not found, or a person must choose).
        case lost
        /// The record had no match and has one now.
        case found
        /// The stored work key was not a work's: an edition's key (`/books/OL…M`), now that
        /// edition's work, or a source's own key (`googlebooks:…`), now empty (the same edition).
        case repaired
        /// A person corrected the title or authors the match was found from (`review edit`): the
        /// match is cleared, with `person` as the change's source, and the record is looked up
        /// again from the corrected values.
        case cleared
        /// A newer export of the record's list gave the field another value (`source` is the
        /// file's path).
        case imported
        /// A newer export gave a field a person had edited another value: the person's value was
        /// kept, and the file's value is the change's `new`, which was not applied.
        case editKept
        /// The record was removed (`bookpipe remove`, `forget`, or `import --prune`); `old` is its
        /// title and `source` says which command.
        case removed
        /// A person linked the record with another as one book (`bookpipe link`); `new` is the
        /// other record's id.
        case linked
        /// A person said the record and another are two books (`bookpipe unlink`); `old` is the
        /// other record's id.
        case unlinked
    }

    /// The record's id (`<file hash>:<row>`).
    public var recordID: String
    /// `status`, `match`, `edition`, `title`, `authors`, `year` or `publisher`.
    public var field: String
    /// The value before (nil: none).
    public var old: String?
    /// The value after (nil: none).
    public var new: String?
    /// For `match`: how it changed.
    public var kind: Kind?
    /// The source of the new value (`openlibrary`, …), when one.
    public var source: String?
    /// When it changed.
    public var changedAt: Date

    /// Creates a change.
    public init(recordID: String, field: String, old: String?, new: String?, kind: Kind? = nil, source: String?,
                changedAt: Date) {
        self.recordID = recordID
        self.field = field
        self.old = old
        self.new = new
        self.kind = kind
        self.source = source
        self.changedAt = changedAt
    }

    /// The fields a re-enrichment compares, in this order.
    public static let fields = ["status", "match", "edition", "title", "authors", "year", "publisher"]

    /// The changes between a stored enrichment and a new one (none when the record had never been
    /// enriched: a first answer is not a change).
    public static func between(_ old: EnrichmentResult?, _ new: EnrichmentResult, recordID: String,
                               at time: Date) -> [RecordChange] {
        guard let old, old.status != .pending else { return [] }
        var changes: [RecordChange] = []
        let source = new.match?.source
        func add(_ field: String, _ before: String?, _ after: String?, kind: Kind? = nil) {
            guard before != after else { return }
            changes.append(RecordChange(recordID: recordID, field: field, old: before, new: after, kind: kind,
                                        source: source, changedAt: time))
        }
        add("status", old.status.rawValue, new.status.rawValue)
        // A match is named by its work key, or by its edition where the source names no work.
        func name(_ match: Match) -> String { match.workKey.isEmpty ? match.identity : match.workKey }
        switch (old.match, new.match) {
        case let (before?, after?) where before.workKey != after.workKey || name(before) != name(after):
            // Not a move: an edition key stored as the work now replaced by that edition's work,
            // or a source's own key (`googlebooks:…`) stored as the work now cleared (same edition).
            if (before.workKey.hasPrefix("/books/") && WorkKey.isWork(after.workKey)
                && (after.editionKey == before.workKey || before.editionKey == after.editionKey))
                || (!WorkKey.isWork(before.workKey) && after.workKey.isEmpty && before.identity == after.identity) {
                add("match", before.workKey, after.workKey, kind: .repaired)
            } else {
                add("match", name(before), name(after), kind: .moved)
            }
        case let (before?, nil):
            add("match", name(before), nil, kind: .lost)
        case let (nil, after?):
            add("match", nil, name(after), kind: .found)
        default:
            break
        }
        if let before = old.match, let after = new.match {
            add("edition", before.editionKey, after.editionKey)
            add("title", before.title, after.title)
            add("authors", before.authors.joined(separator: ", "), after.authors.joined(separator: ", "))
            add("year", old.acceptedCandidate?.year.map(String.init), new.acceptedCandidate?.year.map(String.init))
            add("publisher", old.acceptedCandidate?.publisher, new.acceptedCandidate?.publisher)
        }
        return changes
    }
}

/// Which stored records an enrichment run asks about, and in which order (issue 14): failed
/// lookups whose retry time has come, then records never enriched, then the stalest; failed lookups
/// still blocked by a host quota come last.
public struct EnrichmentSelection: Sendable, Hashable {
    /// The statuses asked for (`pending` always; `--failed`, `--unmatched`, `--all` add others).
    public var statuses: [RecordStatus]
    /// With `--stale`: records in any status but `pending` whose answers were saved before this
    /// are asked again too.
    public var staleBefore: Date?
    /// Matches stored with an edition key where the work belongs are asked again (and fixed).
    public var repairsWorkKeys: Bool
    /// Failed lookups whose retry time has come (their stored retry time, or the end of the host
    /// quota that failed them, is past) are asked too, first, though `failed` is not among
    /// ``statuses``; those still waiting for theirs are not. The overnight job (`--stale`,
    /// `--until`, `--max-duration`) asks them so.
    public var retriesDueFailures: Bool
    /// Now, for retry times.
    public var now: Date

    /// Creates a selection.
    public init(statuses: [RecordStatus], staleBefore: Date? = nil, repairsWorkKeys: Bool = true,
                retriesDueFailures: Bool = false, now: Date = Date()) {
        self.statuses = statuses
        self.staleBefore = staleBefore
        self.repairsWorkKeys = repairsWorkKeys
        self.retriesDueFailures = retriesDueFailures
        self.now = now
    }
}

extension EnrichmentSelection {
    /// The share of looked-up records that reached each source of `chain` (in chain order): a
    /// source is asked for a row only when no source before it matched it, so its share is 1 minus
    /// the shares the earlier sources matched. Engines count; this rule decides.
    /// - Parameters:
    ///   - chain: The sources, in order.
    ///   - matchedBySource: How many looked-up records each source matched.
    ///   - lookedUp: How many records were looked up (enriched, notFound, needsCandidateSelection).
    ///   - minimum: Fewer looked up than this: no history to go by (nil).
    public static func reach(chain: [String], matchedBySource: [String: Int], lookedUp: Int,
                             minimum: Int) -> [String: Double]? {
        guard lookedUp >= minimum, lookedUp > 0 else { return nil }
        var reach: [String: Double] = [:]
        var answeredBefore = 0
        for source in chain {
            reach[source] = Double(lookedUp - answeredBefore) / Double(lookedUp)
            answeredBefore += matchedBySource[source] ?? 0
        }
        return reach
    }
}
