import BookpipeCore
import Foundation

/// What a record brings to deciding which records are one book: its list, ISBN-13 and matched
/// edition.
public struct BookMember: Sendable, Hashable {
    /// The record's id.
    public var recordID: String
    /// The list it is an entry of (``ListIdentity``); nil for scan detections.
    public var list: String?
    /// Its first valid ISBN-13.
    public var isbn13: String?
    /// The work and edition it matched (both set), when it matched one.
    public var workKey: String?
    /// The matched edition's key.
    public var editionKey: String?

    /// Creates a member.
    public init(recordID: String, list: String?, isbn13: String?, workKey: String?, editionKey: String?) {
        self.recordID = recordID
        self.list = list
        self.isbn13 = isbn13
        self.workKey = workKey
        self.editionKey = editionKey
    }
}

/// A person's decision about two records: one book (`link`) or two (`unlink`).
public struct LinkDecision: Sendable, Hashable {
    /// The two records, in id order.
    public var first: String
    /// The other record.
    public var second: String
    /// True: one book; false: two books, whatever their ISBNs or matches say.
    public var linked: Bool

    /// Creates a decision (the ids are put in order).
    public init(_ one: String, _ other: String, linked: Bool) {
        first = min(one, other)
        second = max(one, other)
        self.linked = linked
    }
}

/// Why two records are one book.
public enum BookLinkReason: Sendable, Hashable, CustomStringConvertible {
    /// Both carry this ISBN-13.
    case sameISBN13(String)
    /// Both matched this work's edition.
    case sameEdition(work: String, edition: String)
    /// A person linked them (`bookpipe link`).
    case linkedByPerson

    /// The reason for people.
    public var description: String {
        switch self {
        case .sameISBN13(let isbn): "same ISBN-13 \(isbn)"
        case .sameEdition(let work, let edition): "same matched edition \(edition) of \(work)"
        case .linkedByPerson: "linked by a person"
        }
    }
}

/// Which records are one book (issue 22): entries of different lists with the same ISBN-13, or
/// that matched the same edition of the same work, are one book with all its sources; a person's
/// `link` joins two records and `unlink` keeps two apart whatever they share. Entries of one list
/// are never joined by what they share (a list holding a book twice holds two copies), only by a
/// person's link.
public enum BookGrouping {
    /// The links of each pair of records that are one book directly, with why.
    public static func links(_ members: [BookMember], decisions: [LinkDecision])
        -> [LinkDecision: BookLinkReason] {
        var links: [LinkDecision: BookLinkReason] = [:]
        func join(_ group: [BookMember], reason: (BookMember) -> BookLinkReason) {
            guard group.count > 1 else { return }
            for (index, one) in group.enumerated() {
                for other in group[(index + 1)...] where one.list != other.list {
                    let pair = LinkDecision(one.recordID, other.recordID, linked: true)
                    if links[pair] == nil { links[pair] = reason(one) }
                }
            }
        }
        for group in Dictionary(grouping: members.filter { $0.isbn13 != nil }, by: { $0.isbn13! }).values {
            join(group) { .sameISBN13($0.isbn13!) }
        }
        let matched = members.filter { $0.workKey != nil && $0.editionKey != nil }
        for group in Dictionary(grouping: matched, by: { "\($0.workKey!) \($0.editionKey!)" }).values {
            join(group) { .sameEdition(work: $0.workKey!, edition: $0.editionKey!) }
        }
        let present = Set(members.map(\.recordID))
        // A decision about a record no longer in the library (removed) links nothing.
        for decision in decisions where present.contains(decision.first) && present.contains(decision.second) {
            let pair = LinkDecision(decision.first, decision.second, linked: true)
            if decision.linked { links[pair] = .linkedByPerson } else { links[pair] = nil }
        }
        return links
    }

    /// The books: groups of record ids that are one book, each group in id order, groups in the
    /// order of their first id; a record linked to none is a book of its own.
    public static func books(_ members: [BookMember], decisions: [LinkDecision]) -> [[String]] {
        var books = IDGroups()
        for member in members { books.add(member.recordID) }
        for pair in links(members, decisions: decisions).keys { books.join(pair.first, pair.second) }
        var groups: [String: [String]] = [:]
        for id in Array(books.ids) { groups[books.root(of: id), default: []].append(id) }
        return groups.values.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }
}

/// The books of a library: what deciding which records are one book reads and writes.
public protocol LibraryBookStore: Sendable {
    /// The members of the records that may be one book with another (they share an ISBN-13 or a
    /// matched edition with a record of another list), and of every record a person's decision
    /// names, in library order. A record left out is a book of its own.
    func bookMembers() async throws(StoreError) -> [BookMember]
    /// Every person's link decision, the latest for each pair.
    func linkDecisions() async throws(StoreError) -> [LinkDecision]
    /// Records a person's decision about two records (replacing an earlier one about the same
    /// pair) and logs it on both (``RecordChange/Kind/linked``, ``RecordChange/Kind/unlinked``).
    /// - Returns: false when either record is not in the library (nothing is written).
    func recordLinkDecision(_ decision: LinkDecision, at time: Date) async throws(StoreError) -> Bool
}
