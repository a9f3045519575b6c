import BookpipeCore
import Foundation

/// A record of a list, as a re-import of the list compares it: which record, its entry key, and
/// the fingerprint of what the list gave it last (``ListIdentity/readDigest(of:)``).
public struct StoredListEntry: Sendable, Hashable {
    /// The record's id.
    public var recordID: String
    /// The entry's key within its list (`id:…`, `isbn:…`, `title:…`).
    public var key: String
    /// The fingerprint of the values the list last gave the record (nil: unknown, compare fields).
    public var digest: Int64?
    /// True when the newest export of the list no longer held the record.
    public var isGone: Bool

    /// Creates a stored entry.
    public init(recordID: String, key: String, digest: Int64?, isGone: Bool) {
        self.recordID = recordID
        self.key = key
        self.digest = digest
        self.isGone = isGone
    }
}

/// What a newer export changes in a record: the record as it is to be stored, the fingerprint of
/// the export's values, and the changes to log.
public struct ImportedUpdate: Sendable, Hashable {
    /// The record with the export's values applied (a person's edits kept).
    public var record: BookRecord
    /// ``ListIdentity/readDigest(of:)`` of the export's row.
    public var digest: Int64
    /// The changes to log: ``RecordChange/Kind/imported`` for each field applied,
    /// ``RecordChange/Kind/editKept`` for each field a person's edit kept.
    public var changes: [RecordChange]

    /// Creates an update.
    public init(record: BookRecord, digest: Int64, changes: [RecordChange]) {
        self.record = record
        self.digest = digest
        self.changes = changes
    }
}

/// The list entries of a library: what importing a newer export of a list reads and writes.
public protocol LibraryListEntryStore: Sendable {
    /// The records of a list that came from files other than `excludingFile`, in library order.
    func listEntries(list: String, excludingFile fileHash: String?) async throws(StoreError) -> [StoredListEntry]
    /// Applies a newer export's values to records (in order after every write submitted before),
    /// logs the changes, and counts the records as present in their list again. One transaction.
    func applyImportedUpdates(_ updates: [ImportedUpdate], runID: Int64?, at time: Date) async throws(StoreError)
    /// Marks records as present in their list again (a newer export holds them, unchanged).
    func markPresent(recordIDs: [String]) async throws(StoreError)
    /// Marks records as no longer in the newest export of their list (`fileHash`).
    func markGone(recordIDs: [String], fileHash: String, at time: Date) async throws(StoreError)
}
