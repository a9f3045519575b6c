import BookpipeCore
import BookpipeLibrary
import Foundation
import Synchronization

/// How an import treats a newer export of a list already in the library (resource of
/// ``StoreRecords``; `import --prune`, `--yes`, `--dry-run`; the list's name is a reading option,
/// `ImportOptions.listName`).
public struct ReimportOptions: Sendable, Hashable {
    /// Remove the records a complete newer export no longer holds (`--prune`); without it they
    /// are kept and marked gone.
    public var prune: Bool
    /// Import even when the file looks like another list (`--yes`).
    public var confirmed: Bool
    /// Compare and count only; write nothing (`--dry-run` on an existing library).
    public var dryRun: Bool

    /// Creates options.
    public init(prune: Bool = false, confirmed: Bool = false, dryRun: Bool = false) {
        self.prune = prune
        self.confirmed = confirmed
        self.dryRun = dryRun
    }
}

/// A newer export that looks like another list: most of the entries it shares with the list would
/// change (someone else's export whose ids collide). Nothing of the file was written.
public struct OtherListError: Error, CustomStringConvertible, Sendable {
    /// The file's path.
    public var path: String
    /// The list's name.
    public var list: String
    /// Rows of the sample that matched an entry of the list.
    public var matched: Int
    /// Of those, the rows that would give the entry another title, authors or ISBN.
    public var changed: Int

    /// What happened and what to do.
    public var description: String {
        "\(path): this looks like another list: \(CountText.number(changed)) of the \(CountText.number(matched)) rows that match "
            + "entries of the list \"\(list)\" would give them another title, author or ISBN. Nothing of the file was imported. Import it as a list "
            + "of its own with --list NAME, or pass --yes to update the entries anyway."
    }
}

/// A newer export older than the list in the library: books of the list it lacks were added after
/// every book it holds (the export of an earlier month, imported after a later one). Applied, it
/// would give entries their older values and mark the books added since gone. Nothing of the
/// file was written.
public struct OlderExportError: Error, CustomStringConvertible, Sendable {
    /// The file's path.
    public var path: String
    /// The list's name.
    public var list: String
    /// The newest date added of the file's rows, as the file writes it.
    public var newestAdded: String
    /// Books of the list the file lacks that were added after that date.
    public var laterMissing: Int

    /// What happened and what to do.
    public var description: String {
        "\(path): this export looks older than the list \"\(list)\" in the library: its newest book was added on "
            + "\(newestAdded), and \(CountText.number(laterMissing)) books of the list added after that are not in it. "
            + "Nothing of the file was imported. Import the newest export of the list, or pass --yes to apply this one anyway "
            + "(its values replace the newer ones)."
    }
}

/// The writes of a newer export that wait until the file is read whole (``OlderExportError``).
struct HeldWrites: Sendable {
    /// New entries to insert.
    var fresh: [BookRecord] = []
    /// Entries to update.
    var updates: [ImportedUpdate] = []
    /// Entries marked gone before that the file holds again.
    var present: [String] = []
    /// The records to pass on once written.
    var passOn: [BookRecord] = []
    /// Records held (new and updated).
    var records: Int { fresh.count + updates.count }

    mutating func add(fresh: [BookRecord], updates: [ImportedUpdate], present: [String], passOn: [BookRecord]) {
        self.fresh += fresh
        self.updates += updates
        self.present += present
        self.passOn += passOn
    }
}

/// The newest date added among a file's rows, for dates written year first (`2015/05/10`,
/// `2015-05-10`, a time after it allowed: Goodreads, StoryGraph, LibraryThing). A file with a date
/// added written otherwise (`10/05/2015`: the day or the month first?) has none.
struct AddedDates: Sendable {
    /// The newest date, as a number (`20150510`) and as the file wrote it.
    private(set) var newest: (day: Int, text: String)?
    /// A row's date added could not be read as year first: no date is known for the file.
    private(set) var unreadable = false

    /// Notes the dates added of these rows.
    mutating func note(_ records: [BookRecord]) {
        guard !unreadable else { return }
        for record in records {
            guard let text = record.dateAdded, !text.isEmpty else { continue }
            guard let day = Self.day(text) else {
                unreadable = true
                newest = nil
                return
            }
            if day > newest?.day ?? 0 { newest = (day, text) }
        }
    }

    /// `yyyy/mm/dd` or `yyyy-mm-dd` (and what follows a space or a `T`) as `yyyymmdd`; nil for
    /// anything else.
    static func day(_ text: String?) -> Int? {
        guard let text else { return nil }
        var parts: [Int] = []
        var value = 0
        var digits = 0
        var separator: UInt8?
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                guard digits <= (parts.isEmpty ? 4 : 2) else { return nil }
            case UInt8(ascii: "/"), UInt8(ascii: "-"):
                guard parts.count < 2, digits > 0, separator == nil || separator == byte else { return nil }
                separator = byte
                parts.append(value)
                value = 0
                digits = 0
            case UInt8(ascii: " "), UInt8(ascii: "T"):
                guard parts.count == 2, digits > 0 else { return nil }
                return date(parts[0], parts[1], value)
            default:
                return nil
            }
        }
        guard parts.count == 2, digits > 0 else { return nil }
        return date(parts[0], parts[1], value)
    }

    private static func date(_ year: Int, _ month: Int, _ day: Int) -> Int? {
        guard year >= 1000, (1...12).contains(month), (1...31).contains(day) else { return nil }
        return year * 10_000 + month * 100 + day
    }
}

/// The entries of one list that a newer export is matched against, and what the export did to
/// them so far (one per input of a run).
final class ListMatcher: Sendable {
    struct State {
        /// Stable hash of an entry key → stored entries with that hash not matched yet, in library order.
        var unmatched: [UInt64: [StoredListEntry]]
        /// Hashes of the entry keys of this file's rows seen so far (a second row with one is a
        /// duplicate id).
        var seenKeys: Set<UInt64> = []
        /// Fields a person edited, by record id.
        var personEdits: [String: Set<String>]
        /// Rows of the first batch compared (the other-list check).
        var checked = false
    }

    let list: String
    /// How many entries the list held from earlier files.
    let size: Int
    /// Bytes of an entry before its key: the list's name and the separator.
    let keyOffset: Int
    private let state: Mutex<State>

    init(list: String, entries: [StoredListEntry], personEdits: [String: Set<String>]) {
        self.list = list
        self.size = entries.count
        self.keyOffset = list.utf8.count + 1
        var unmatched: [UInt64: [StoredListEntry]] = [:]
        unmatched.reserveCapacity(entries.count)
        for entry in entries { unmatched[ListIdentity.stableHash(entry.key), default: []].append(entry) }
        state = Mutex(State(unmatched: unmatched, personEdits: personEdits))
    }

    /// What a row is to its list.
    enum Outcome {
        /// A new entry; `duplicate` when an earlier row of the file has its key.
        case new(duplicate: Bool)
        /// An entry already stored.
        case stored(StoredListEntry)
    }

    /// Matches a row's stored entry (``BookRecord/listEntry``, list and key): the first stored
    /// entry with the key that no row took yet.
    func match(entry: String) -> Outcome {
        let hash = ListIdentity.stableHash(entry, droppingFirst: keyOffset)
        let key = entry.utf8.dropFirst(keyOffset)
        return state.withLock { state in
            let isFirst = state.seenKeys.insert(hash).inserted
            if let candidates = state.unmatched[hash],
               let position = candidates.firstIndex(where: { $0.key.utf8.elementsEqual(key) }) {
                var rest = candidates
                let stored = rest.remove(at: position)
                state.unmatched[hash] = rest.isEmpty ? nil : rest
                return .stored(stored)
            }
            return .new(duplicate: !isFirst)
        }
    }

    /// The fields a person edited in a record.
    func personEdits(_ recordID: String) -> Set<String> { state.withLock { $0.personEdits[recordID] ?? [] } }

    /// True the first time it is asked (the first batch decides the other-list check).
    func takeFirstCheck() -> Bool {
        state.withLock { state in
            defer { state.checked = true }
            return !state.checked
        }
    }

    /// The stored entries no row of the file matched (those marked gone before too).
    var unmatched: [StoredListEntry] {
        state.withLock { $0.unmatched.values.flatMap { $0 } }
    }
}

/// The rules of applying a newer export's row to the record that holds its entry.
enum ImportedChanges {
    /// Findings that enrichment raises (not about the values read).
    static let enrichmentFindingCodes: Set<String> = ["isbn.points-to-other-book"]

    /// The update that brings `stored` to what `incoming` says, keeping a person's edits; nil
    /// when nothing changes.
    /// - Returns: the update, the fields changed and the fields whose person's edit was kept.
    /// - Parameter listValues: for fields a person edited, the value the list gave last (before
    ///   the edit, or in the last re-import): a file that still gives it is no new conflict, so
    ///   nothing is logged or counted for it.
    static func update(stored: BookRecord, incoming: BookRecord, personEdits: Set<String>, file: String,
                       at time: Date, listValues: [String: String?] = [:])
        -> (update: ImportedUpdate, changed: [String], kept: [String]) {
        let digest = ListIdentity.readDigest(of: incoming)
        var record = stored
        record.listEntry = incoming.listEntry ?? stored.listEntry
        var changes: [RecordChange] = []
        var changed: [String] = []
        var kept: [String] = []
        for field in ListIdentity.changedFields(stored: stored, incoming: incoming) {
            let old = ListIdentity.value(of: field, in: stored)
            let new = ListIdentity.value(of: field, in: incoming)
            if personEdits.contains(field) {
                // The list says what it said before: the person's value stands, nothing new to tell.
                if let last = listValues[field], last == new { continue }
                kept.append(field)
                changes.append(RecordChange(recordID: stored.id, field: field, old: old, new: new, kind: .editKept,
                                            source: file, changedAt: time))
            } else {
                changed.append(field)
                ListIdentity.copy(field, from: incoming, to: &record)
                changes.append(RecordChange(recordID: stored.id, field: field, old: old, new: new, kind: .imported,
                                            source: file, changedAt: time))
            }
        }
        if !changed.isEmpty {
            // A match a person chose (or refused) stands whatever the file says (ReenrichmentRules).
            let rematch = changed.contains(where: ListIdentity.matchingFields.contains) && !personEdits.contains("match")
            // The findings about the values read are the new row's (a fixed row loses its
            // finding); enrichment's stay unless the record is looked up again.
            record.findings = incoming.findings
                + (rematch ? [] : stored.findings.filter { enrichmentFindingCodes.contains($0.code) || $0.code.hasPrefix("enrich.") })
            if kept.isEmpty {
                record.normalized = incoming.normalized
            } else {
                Normalizer.normalize(&record)
            }
            if rematch {
                // What matching reads changed: the record is looked up again.
                record.enrichment = nil
            }
        }
        return (ImportedUpdate(record: record, digest: digest, changes: changes), changed, kept)
    }
}
