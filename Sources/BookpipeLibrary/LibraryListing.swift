import BookpipeCore
import Foundation

/// Listing, naming and removing records: `bookpipe list`, `show`, `remove` and `forget`.
///
/// Each record listed gets a small **number**, once and for good: numbers are given in library
/// order (files in the order they were imported, rows in file order) to the records that have
/// none when a listing is brought up to date, and a number is never given again, even after its
/// record was removed. A person names a record by its number or by its id (`<file hash>:<row>`,
/// the hash shortened to any unique prefix; see ``RecordReference``).
///
/// A removal is logged (``RemovalRules``) and changes nothing else: every trace of the records
/// kept by their key goes with them (counts, indexes, queue, claims, edits), in one transaction.
public protocol LibraryListingStore: Sendable {
    /// Calls `body` with each record `query` matches, in `order` (then library order), at most
    /// `limit` of them. The listing (and for word queries the search index) is brought up to date
    /// first (``refreshListing()``), so every record gets its number.
    /// - Throws: ``StoreError`` when the listing cannot be updated or read; `body`'s error.
    func listRecords(_ query: LibraryQuery, order: [ListingOrder], limit: Int?,
                     _ body: (ListedRecord) throws -> Void) async throws
    /// Whether the listing holds every record as it is: then a listing without words only reads
    /// (a query with words, ``LibraryQuery/hasWords``, also needs
    /// ``LibrarySearchStore/searchIndexIsCurrent()``).
    func listingIsCurrent() async throws(StoreError) -> Bool
    /// Brings the listing up to date (numbers for new records, changed fields); returns how many
    /// records it (re)listed.
    func refreshListing() async throws(StoreError) -> Int
    /// The ids of the records `reference` names, in library order, at most `limit` (ask for 2 to
    /// tell a unique reference from an ambiguous one).
    func recordIDs(for reference: RecordReference, limit: Int) async throws(StoreError) -> [String]
    /// Removes these records (unknown ids are skipped) and logs each removal
    /// (``RemovalRules/changes(removing:command:at:)``), in one transaction; their rows stay
    /// finished, so importing their file again does not bring them back.
    /// - Returns: the logged removals, in the order of `ids`.
    func removeRecords(ids: [String], command: String, at time: Date) async throws(StoreError) -> [RecordChange]
    /// Removes every record an import of the file with this content fingerprint brought (each
    /// removal logged), its rejected rows, and the file's registration, in one transaction:
    /// importing the file again reads it as new.
    /// - Returns: what was removed; nil when the library knows no such file.
    func forgetSourceFile(hash: String, command: String, at time: Date) async throws(StoreError) -> ForgottenFile?
}

/// A record as a listing shows it.
public struct ListedRecord: Sendable, Hashable {
    /// Its number in this library (see ``LibraryListingStore``).
    public var number: Int
    /// The record.
    public var record: BookRecord
    /// True when the newest export of its list no longer holds it.
    public var isGone: Bool
    /// The book it is (``BookGrouping``): the id of the book's first record; nil where the listing
    /// did not group (engines list records; `bookpipe list` fills this in).
    public var book: String?

    /// Creates a listed record.
    public init(number: Int, record: BookRecord, isGone: Bool, book: String? = nil) {
        self.number = number
        self.record = record
        self.isGone = isGone
        self.book = book
    }
}

/// What a listing is sorted by: `--sort year-,title`.
public struct ListingOrder: Sendable, Hashable {
    /// A field a listing sorts by.
    public enum Field: String, Sendable, Hashable, CaseIterable {
        /// The record's number (library order).
        case number
        /// The title's folded key.
        case title
        /// The first author's folded name.
        case author
        /// The year read from the row (records without one last).
        case year
        /// The rating (unrated last).
        case rating
        /// The shelf's folded key.
        case shelf
        /// The enrichment status.
        case status
        /// The ISBN-13.
        case isbn
    }

    /// The field.
    public var field: Field
    /// True for largest first (`year-`).
    public var isDescending: Bool

    /// Creates an order.
    public init(_ field: Field, descending: Bool = false) {
        self.field = field
        self.isDescending = descending
    }

    /// Parses `year-,title+` (a field, `-` for descending, `+` or nothing for ascending; several
    /// separated by commas).
    /// - Throws: ``LibraryQueryError`` naming the part that is no field.
    public static func parse(_ text: String) throws(LibraryQueryError) -> [ListingOrder] {
        var orders: [ListingOrder] = []
        for part in text.split(separator: ",") {
            var name = part.trimmingCharacters(in: .whitespaces).lowercased()
            var descending = false
            if name.hasSuffix("-") { descending = true; name.removeLast() } else if name.hasSuffix("+") { name.removeLast() }
            if name == "authors" { name = "author" }
            guard let field = Field(rawValue: name) else {
                throw LibraryQueryError(token: String(part), problem: .badChoice(
                    Field.allCases.map(\.rawValue) + ["(a final - sorts descending)"]))
            }
            orders.append(ListingOrder(field, descending: descending))
        }
        return orders
    }
}

/// How a person names a record: its listing number (`12`), or its id with the file hash
/// shortened to any unique prefix (`1bd89140:3`; the row is always whole), or a prefix of the
/// hash alone (unique only for a file of one record).
public enum RecordReference: Sendable, Hashable, CustomStringConvertible {
    /// The record's listing number.
    case number(Int)
    /// A file hash prefix (lower case hex), and the row when given.
    case id(hashPrefix: String, row: Int?)

    /// Reads a reference: digits alone are a number; `HEX:ROW` or `HEX` an id. Nil for anything else.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Int(trimmed.hasPrefix("#") ? String(trimmed.dropFirst()) : trimmed), number > 0,
           !trimmed.contains("+"), !trimmed.contains("-") {
            self = .number(number)
            return
        }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let hash = parts.first, !hash.isEmpty, hash.allSatisfy(\.isHexDigit) else { return nil }
        if parts.count == 2 {
            guard let row = Int(parts[1]), row >= 0 else { return nil }
            self = .id(hashPrefix: hash.lowercased(), row: row)
        } else {
            self = .id(hashPrefix: hash.lowercased(), row: nil)
        }
    }

    /// The reference as a person writes it.
    public var description: String {
        switch self {
        case .number(let number): return "\(number)"
        case .id(let hash, let row): return row.map { "\(hash):\($0)" } ?? hash
        }
    }

    /// The id as listings show it: the hash cut to its first 8 characters (`1bd89140:3`).
    public static func shortID(_ id: String) -> String {
        guard let colon = id.lastIndex(of: ":") else { return id }
        return String(id[..<colon].prefix(8)) + String(id[colon...])
    }
}

/// What a removal logs: one ``RecordChange`` per record, of kind ``RecordChange/Kind/removed``
/// on the field `record`, its old value the title, its source the command that removed it.
public enum RemovalRules {
    /// The change log entries of removing `records` with `command` (`remove`, `forget`, `import --prune`).
    public static func changes(removing records: [BookRecord], command: String, at time: Date) -> [RecordChange] {
        records.map {
            RecordChange(recordID: $0.id, field: "record", old: $0.title, new: nil, kind: .removed, source: command,
                         changedAt: time)
        }
    }
}

/// What ``LibraryListingStore/forgetSourceFile(hash:command:at:)`` removed.
public struct ForgottenFile: Sendable, Hashable {
    /// The path the file was imported from.
    public var path: String
    /// The records removed.
    public var records: Int
    /// The rejected rows removed.
    public var rejectedRows: Int

    /// Creates the figures of a forgotten file.
    public init(path: String, records: Int, rejectedRows: Int) {
        self.path = path
        self.records = records
        self.rejectedRows = rejectedRows
    }
}
