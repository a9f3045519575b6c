import BookpipeCore
import Foundation

/// A person's decision about queued records.
public enum ReviewDecision: Sendable, Hashable {
    /// The record is right as it is (`verified`).
    case verify
    /// The title and/or authors were wrong: the person's values replace them (`userEdited`).
    case edit(title: String?, authors: [String]?)
    /// Candidate `n` (1-based, as `review show` lists them) is the book.
    case choose(Int)
    /// None of the candidates is the book.
    case none

    /// The name the action log keeps: `verify`, `edit`, `choose` or `choose-none`.
    public var actionName: String {
        switch self {
        case .verify: return "verify"
        case .edit: return "edit"
        case .choose: return "choose"
        case .none: return "choose-none"
        }
    }
}

/// What the record was before a decision, as an engine reads it cheaply before writing.
public struct ReviewState: Sendable, Hashable {
    /// The record's review status.
    public var reviewStatus: ReviewStatus
    /// The record's processing status.
    public var status: RecordStatus
    /// How many candidates the record keeps.
    public var candidates: Int

    /// Creates a state.
    public init(reviewStatus: ReviewStatus, status: RecordStatus, candidates: Int) {
        self.reviewStatus = reviewStatus
        self.status = status
        self.candidates = candidates
    }
}

/// What a review decision does besides changing the record itself; an engine writes it in the
/// same transaction as the record.
public struct ReviewEffects: Sendable, Hashable {
    /// The fields the person supplied, with the JSON of each value: kept as the person's edits and
    /// locked against enrichment.
    public var suppliedFields: [String: String] = [:]
    /// Fields whose earlier lock the decision releases (a match chosen for a title the person has
    /// since corrected): no longer the person's; enrichment may set them again.
    public var releasedLocks: Set<String> = []
    /// What the change log keeps of the decision (the lookup an edit made stale).
    public var changeLog: [RecordChange] = []

    /// Creates effects.
    public init(suppliedFields: [String: String] = [:], releasedLocks: Set<String> = [], changeLog: [RecordChange] = []) {
        self.suppliedFields = suppliedFields
        self.releasedLocks = releasedLocks
        self.changeLog = changeLog
    }

    /// The locked fields after the decision, from those before.
    public func locks(after before: Set<String>) -> Set<String> {
        before.subtracting(releasedLocks).union(suppliedFields.keys)
    }
}

/// The review rules: what each ``ReviewDecision`` changes, as functions over values. Engines call
/// them inside their transaction (``LibraryReviewStore/applyReview(_:ids:at:versions:)``); they are tested
/// with no database.
public enum ReviewRules {
    /// Refuses a decision before anything is written, for any of the ids: a verify of an uncertain
    /// match that is not also an unsure detection (verifying it "as it is" would accept nothing,
    /// and taking the top candidate would be a match nobody chose); an edit that changes nothing.
    public static func refusal(_ decision: ReviewDecision, id: String, state: ReviewState) -> ReviewError? {
        switch decision {
        case .verify:
            return state.reviewStatus != .needsReview && state.status == .needsCandidateSelection
                ? ReviewError.uncertainMatch(id: id, candidates: state.candidates) : nil
        case .edit(let title, let authors):
            let title = title.map(typedValue)
            return title == nil && authors == nil || title?.isEmpty == true ? ReviewError.emptyEdit(id: id) : nil
        case .choose, .none:
            return nil
        }
    }

    /// A value a person typed, as it is stored: control characters and the escape sequences of
    /// keys (``TerminalText/removingControls(_:)``) removed, then trimmed. Whatever screen the edit
    /// came from, a control character is never stored.
    public static func typedValue(_ text: String) -> String {
        TerminalText.removingControls(text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Applies `decision` to `record`, returning what else the engine writes with it.
    ///
    /// - verify: `verified`.
    /// - edit: the person's title and/or authors (``typedValue(_:)``: no control characters, trimmed) replace the read ones; `userEdited`; the
    ///   edited fields are locked; the record is normalised again (findings about the replaced
    ///   values dropped first). An edit that changes the title or the authors makes the lookup
    ///   stale (it was asked with what the person just said is wrong): the enrichment is cleared
    ///   (``clearLookup(of:at:)``) and a match the person chose earlier is released.
    /// - choose: the candidate becomes the match (`enriched`), locked; an unsure detection is verified.
    /// - none: `notFound`, locked; an unsure detection is verified.
    /// - Throws: ``ReviewError`` when the decision cannot be carried out (a candidate number out of range).
    public static func apply(_ decision: ReviewDecision, to record: inout BookRecord, at time: Date,
                             currentYear: Int = Normalizer.currentYear()) throws(ReviewError) -> ReviewEffects {
        switch decision {
        case .verify:
            record.reviewStatus = .verified
            return ReviewEffects()
        case .edit(let title, let authors):
            let title = title.map(typedValue)
            let authors = authors?.map(typedValue).filter { !$0.isEmpty }
            guard title != nil || authors != nil, title?.isEmpty != true else { throw ReviewError.emptyEdit(id: record.id) }
            var effects = ReviewEffects()
            let changesLookup = (title.map { $0 != record.title } ?? false) || (authors.map { $0 != record.authors } ?? false)
            var replaced: Set<String> = []
            if let title {
                record.title = title
                effects.suppliedFields["title"] = json(title)
                replaced.insert("title")
            }
            if let authors {
                record.authors = authors
                effects.suppliedFields["authors"] = json(authors)
                replaced.formUnion(["authors", "author"])
            }
            record.reviewStatus = .userEdited
            if changesLookup {
                replaced.insert("match")
                effects.changeLog = clearLookup(of: &record, at: time)
                effects.releasedLocks = ["match"]
            }
            record.findings.removeAll { $0.field.map(replaced.contains) ?? false }
            Normalizer.normalize(&record, currentYear: currentYear)
            return effects
        case .choose(let number):
            let candidates = record.enrichment?.candidates ?? []
            guard number >= 1, number <= candidates.count else {
                throw ReviewError.noSuchCandidate(id: record.id, number: number, count: candidates.count)
            }
            let chosen = candidates[number - 1]
            var result = record.enrichment ?? EnrichmentResult(status: .enriched)
            result.status = .enriched
            result.failure = nil
            result.match = Match(workKey: chosen.workKey, editionKey: chosen.editionKey, title: chosen.title,
                                 authors: chosen.authors, score: chosen.score, source: chosen.source)
            record.enrichment = result
            if record.reviewStatus == .needsReview { record.reviewStatus = .verified }
            return ReviewEffects(suppliedFields: ["match": json(chosen.workKey)])
        case .none:
            var result = record.enrichment ?? EnrichmentResult(status: .notFound)
            result.status = .notFound
            result.match = nil
            record.enrichment = result
            if record.reviewStatus == .needsReview { record.reviewStatus = .verified }
            return ReviewEffects(suppliedFields: ["match": "null"])
        }
    }

    /// Why choosing `candidate` for `record` needs the person to confirm, or nil when it needs
    /// nothing: the row names an author and the candidate's authors agree with none of them (no
    /// author points). Such a pick is most often a slip of a key; the walk asks, `review choose`
    /// asks on a terminal and otherwise wants `--yes`.
    public static func authorDisagreement(choosing candidate: Candidate, for record: BookRecord) -> String? {
        let rowAuthors = record.authors.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard !rowAuthors.isEmpty else { return nil }
        let by = candidate.authors.isEmpty ? "no author" : candidate.authors.joined(separator: ", ")
        let message = "\"\(candidate.title)\" is by \(by), not by \(rowAuthors.joined(separator: ", ")) as the row says"
        // The candidate's score says it, where it was scored (the match queue's candidates are).
        if let points = candidate.breakdown["author"] { return points == 0 ? message : nil }
        let rowKeys = rowAuthors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        let candidateKeys = candidate.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        guard !rowKeys.isEmpty, AuthorNormalizer.bestAgreement(keys: rowKeys, candidateKeys) == .none else { return nil }
        return message
    }

    /// Clears the enrichment of a record whose title or authors a person corrected (status
    /// `pending`, no match, no candidates) and returns what the change log keeps: the status and
    /// the match as a re-enrichment would log them, the match's change of kind
    /// ``RecordChange/Kind/cleared``, each with `person` as its source. Nothing for a record never
    /// looked up.
    public static func clearLookup(of record: inout BookRecord, at time: Date) -> [RecordChange] {
        guard let old = record.enrichment else { return [] }
        record.enrichment = nil
        return RecordChange.between(old, EnrichmentResult(status: .pending), recordID: record.id, at: time).map { change in
            var change = change
            change.source = "person"
            if change.kind != nil { change.kind = .cleared }
            return change
        }
    }

    /// Who supplied the reviewable fields of a record, given the fields a person supplied:
    /// `title` and `authors` are `person` when edited, else `file`; `match` (when there is one, or
    /// when a person chose none) is `person` when chosen in review, else the name of the source
    /// that found it (`openlibrary`, `googlebooks`, `catalog`, …).
    public static func provenance(of record: BookRecord, editedByPerson: Set<String>) -> [String: String] {
        var result = ["title": editedByPerson.contains("title") ? "person" : "file",
                      "authors": editedByPerson.contains("authors") ? "person" : "file"]
        if editedByPerson.contains("match") {
            result["match"] = "person"
        } else if let match = record.enrichment?.match {
            result["match"] = match.source
        }
        return result
    }

    /// The reviewed fields of a record, as the action log keeps them before and after a decision
    /// (JSON with sorted keys).
    public static func snapshot(_ record: BookRecord) -> String {
        json(ReviewSnapshot(record))
    }

    /// A field of a logged snapshot (``snapshot(_:)``) as ``ListIdentity/value(of:in:)`` writes
    /// it: `title`, or `authors` joined by "; " (nil: not in the snapshot, or none).
    public static func snapshotValue(_ snapshot: String, field: String) -> String? {
        guard let decoded = try? JSONDecoder().decode(ReviewSnapshot.self, from: Data(snapshot.utf8)) else { return nil }
        switch field {
        case "title": return decoded.title.isEmpty ? nil : decoded.title
        case "authors": return decoded.authors.isEmpty ? nil : decoded.authors.joined(separator: "; ")
        default: return nil
        }
    }

    /// A record's version for optimistic concurrency: a digest (FNV-1a, 64 bits, hex) of the whole
    /// record as JSON with sorted keys, so any change to what a person sees or decides on (title,
    /// candidates, review status, the photo) gives another version. A rule over values, so every
    /// engine computes the same version inside its transaction.
    public static func version(of record: BookRecord) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in json(record).utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// How a record stands, in a few words for the person whose decision it refused
    /// (``ReviewError/changedSince(id:now:)``): review status, status, and the match if any.
    public static func standing(of record: BookRecord) -> String {
        var text = "review status \(record.reviewStatus.rawValue), \(record.status.rawValue)"
        if let match = record.enrichment?.match { text += ", match “\(match.title)”" }
        return text + ", title “\(record.title)”"
    }

    /// JSON of a value, keys sorted (the form the library keeps edits and logs in).
    public static func json<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The reviewed fields of a record, as logged before and after a review action.
struct ReviewSnapshot: Codable {
    var title: String
    var authors: [String]
    var reviewStatus: String
    var status: String
    var match: String?

    init(_ record: BookRecord) {
        title = record.title
        authors = record.authors
        reviewStatus = record.reviewStatus.rawValue
        status = record.status.rawValue
        match = record.enrichment?.match?.workKey
    }
}
