/// What makes a row of a newer export the same entry as a record already in the library: the
/// rules of re-importing a list (decision 0022).
///
/// A **list** is what one export is an export of: a person's Goodreads shelves, their StoryGraph
/// library, one hand-made spreadsheet. Its name is the format's (`goodreads`), or for a generic
/// file `generic:` and the file's name without its extension, or what `import --list` says. An
/// **entry** is one book of that list; its key is, in this order:
/// 1. the id the list gives the row (Goodreads' and LibraryThing's `Book Id`, Calibre's `uuid`
///    or `id`, BookWyrm's `remote_id`, the Open Library reading log's `Work Id`, a generic file's
///    `--key` column): `id:12345`;
/// 2. else its ISBN-13: `isbn:9780441013593`;
/// 3. else its normalised title and first author: `title:dune|frank herbert`.
///
/// A row with none of them (no title) has no entry: it is always a record of its own.
///
/// ```swift
/// let list = ListIdentity.listName(format: "goodreads", path: "export.csv", explicit: nil)   // "goodreads"
/// let key = ListIdentity.entryKey(of: record, idColumn: 0)                                     // "id:2767052"
/// ```
public enum ListIdentity {
    /// The separator between a list's name and an entry's key in a stored entry (U+001F).
    public static let separator: Character = "\u{1F}"

    /// The header names of each format's id column, in order of preference (compared ignoring
    /// case and spaces).
    public static let idColumnNames: [String: [String]] = [
        "goodreads": ["Book Id"],
        "librarything": ["Book Id", "BookID", "Book ID"],
        "calibre": ["uuid", "id"],
        "bookwyrm": ["remote_id"],
        "openlibrary-reading-log": ["Work Id"],
    ]

    /// The name of the list an input belongs to (see the type's discussion).
    /// - Parameters:
    ///   - format: the detected format's name.
    ///   - path: the input's path as given.
    ///   - explicit: the name given with `import --list`, if any.
    public static func listName(format: String, path: String, explicit: String?) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        guard format == "generic" else { return format }
        var name = Substring(path.split(separator: "/").last ?? Substring(path))
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = name[..<dot] }
        return "generic:" + name
    }

    /// The column of `header` that holds the list's ids for `format` (nil: none).
    public static func idColumn(format: String, header: [String]) -> Int? {
        guard let names = idColumnNames[format] else { return nil }
        let folded = header.map(fold)
        for name in names {
            if let index = folded.firstIndex(of: fold(name)) { return index }
        }
        return nil
    }

    /// A header name for comparing: lower-cased, without spaces.
    private static func fold(_ name: String) -> String {
        String(name.lowercased().filter { $0 != " " && $0 != "\t" && $0 != "\u{A0}" })
    }

    /// The entry key of a record (see the type's discussion); nil when it has none.
    /// - Parameters:
    ///   - record: a read and normalised record.
    ///   - idColumn: the raw field that holds the list's id, if the list has ids.
    public static func entryKey(of record: BookRecord, idColumn: Int?) -> String? {
        entry(of: record, list: nil, idColumn: idColumn)?.entry
    }

    /// The stored entry of a record (``entry(list:key:)`` of its ``entryKey(of:idColumn:)``), built
    /// in one string (this runs for every row of an import), and whether its key is the list's id.
    /// - Parameter list: the list's name; nil gives the key alone.
    public static func entry(of record: BookRecord, list: String?, idColumn: Int?) -> (entry: String, isID: Bool)? {
        func joined(_ kind: String, _ parts: Substring...) -> String {
            var text = ""
            text.reserveCapacity((list?.utf8.count ?? 0) + 1 + kind.utf8.count + parts.reduce(0) { $0 + $1.utf8.count + 1 })
            if let list {
                text += list
                text.append(separator)
            }
            text += kind
            for (index, part) in parts.enumerated() {
                if index > 0 { text += "|" }
                text += part
            }
            return text
        }
        if let idColumn, let cell = record.origin.compactRawFields.field(at: idColumn) {
            let id = trimmed(cell)
            if !id.isEmpty { return (joined("id:", id), true) }
        }
        if let isbn13 = record.normalized?.isbn13 { return (joined("isbn:", Substring(isbn13)), false) }
        guard let normalized = record.normalized, !normalized.titleKey.isEmpty else { return nil }
        return (joined("title:", Substring(normalized.titleKey), Substring(normalized.authorKeys.first ?? "")), false)
    }

    /// The text without leading and trailing ASCII spaces, tabs and line breaks (as the reader
    /// trims cells).
    private static func trimmed(_ text: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return text[first...last]
    }

    /// The stored form of an entry: the list's name, ``separator``, the entry's key.
    public static func entry(list: String, key: String) -> String { list + String(separator) + key }

    /// The list part of a stored entry.
    public static func list(ofEntry entry: String) -> Substring {
        entry.firstIndex(of: separator).map { entry[..<$0] } ?? Substring(entry)
    }

    /// The fields an export gives a record, compared by a re-import, in the order summaries list
    /// them. `title`, `authors`, `isbn` and `year` are what matching reads.
    public static let fields = ["title", "authors", "isbn", "year", "publisher", "pages", "shelf", "rating",
                                "added", "read", "binding", "review", "tags"]

    /// The fields matching reads: a change to one of them makes the record be looked up again.
    public static let matchingFields: Set<String> = ["title", "authors", "isbn", "year"]

    /// The fields a person can edit in review (they win over a newer export).
    public static let personEditableFields: Set<String> = ["title", "authors"]

    /// One field's value as an export gave it, as text (nil: no value).
    public static func value(of field: String, in record: BookRecord) -> String? {
        func text(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        func list(_ values: [String]) -> String? { values.isEmpty ? nil : values.joined(separator: "; ") }
        switch field {
        case "title": return text(record.title)
        case "authors": return list(record.authors)
        case "isbn": return list(record.rawISBNs)
        case "year": return record.year.map(String.init)
        case "publisher": return text(record.publisher)
        case "pages": return record.pageCount.map(String.init)
        case "shelf": return text(record.shelf)
        case "rating": return record.rating.map { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int($0)) : String($0) }
        case "added": return text(record.dateAdded)
        case "read": return text(record.dateRead)
        case "binding": return text(record.binding)
        case "review": return text(record.review)
        case "tags": return list(record.tags)
        default: return nil
        }
    }

    /// Gives `field` of `record` the value that `source` has.
    public static func copy(_ field: String, from source: BookRecord, to record: inout BookRecord) {
        switch field {
        case "title": record.title = source.title
        case "authors": record.authors = source.authors
        case "isbn": record.rawISBNs = source.rawISBNs
        case "year": record.year = source.year
        case "publisher": record.publisher = source.publisher
        case "pages": record.pageCount = source.pageCount
        case "shelf": record.shelf = source.shelf
        case "rating": record.rating = source.rating
        case "added": record.dateAdded = source.dateAdded
        case "read": record.dateRead = source.dateRead
        case "binding": record.binding = source.binding
        case "review": record.review = source.review
        case "tags": record.tags = source.tags
        default: break
        }
    }

    /// The fields whose values differ between what the library holds and what a newer export
    /// gives, in ``fields`` order.
    public static func changedFields(stored: BookRecord, incoming: BookRecord) -> [String] {
        fields.filter { value(of: $0, in: stored) != value(of: $0, in: incoming) }
    }

    /// A fingerprint of the values an export gave a record (every field of ``fields``): equal
    /// fingerprints mean the row is unchanged, so a re-import of a million unchanged rows reads
    /// no stored record. Stable across processes and machines (``DigestHasher``).
    public static func readDigest(of record: BookRecord) -> Int64 {
        withUnsafePointer(to: record) { readDigest(of: $0) }
    }

    /// ``readDigest(of:)`` of a record read through a pointer (the store's encoder reads records
    /// that way: a record passed by value was copied, every field retained and released).
    package static func readDigest(of record: UnsafePointer<BookRecord>) -> Int64 {
        // Each field in ``fields`` order: a text's bytes (a list's items with "; " between
        // them), or a number's value, then an end mark; a missing value has its own mark.
        var hasher = DigestHasher()
        func text(_ value: String?) {
            if let value, !value.isEmpty { hasher.add(value); hasher.endValue() } else { hasher.missing() }
        }
        func list(_ values: [String]) {
            guard !values.isEmpty else { return hasher.missing() }
            for index in values.indices {
                if index > 0 { hasher.add("; ") }
                hasher.add(values[index])
            }
            hasher.endValue()
        }
        func number(_ value: Int?) {
            if let value { hasher.add(UInt64(bitPattern: Int64(value))); hasher.endValue() } else { hasher.missing() }
        }
        text(record.pointee.title)
        list(record.pointee.authors)
        list(record.pointee.rawISBNs)
        number(record.pointee.year)
        text(record.pointee.publisher)
        number(record.pointee.pageCount)
        text(record.pointee.shelf)
        if let rating = record.pointee.rating {
            hasher.add(rating.bitPattern)
            hasher.endValue()
        } else {
            hasher.missing()
        }
        text(record.pointee.dateAdded)
        text(record.pointee.dateRead)
        text(record.pointee.binding)
        text(record.pointee.review)
        list(record.pointee.tags)
        return Int64(bitPattern: hasher.hash)
    }
}

/// The hash of ``ListIdentity/readDigest(of:)``: FNV-1a's 64-bit prime applied to 8 bytes at a
/// time (little-endian words; the last word of a value padded with zeros and its length mixed
/// in), so a 300-byte row costs about 40 multiplications instead of 300. Deterministic: stored
/// digests are compared across processes and machines.
struct DigestHasher {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    private static let prime: UInt64 = 0x0000_0100_0000_01B3

    mutating func add(_ text: String, from offset: Int = 0) {
        func tail(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[min(offset, bytes.count)...])
        }
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ add(bytes: tail($0)) }) { return done }
        var copy = text
        copy.withUTF8 { add(bytes: tail($0)) }
    }

    private mutating func add(bytes: UnsafeBufferPointer<UInt8>) {
        var index = 0
        let count = bytes.count
        let raw = UnsafeRawBufferPointer(bytes)
        while index + 8 <= count {
            mix(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index += 8
        }
        if index < count {
            // The last 1–7 bytes as the low bytes of a zeroed little-endian word (one copy, not a
            // shift per byte: every value of a record ends in one).
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[index..<count])) }
            mix(UInt64(littleEndian: word) ^ (UInt64(count - index) << 59))
        }
    }

    /// A number's 8 bytes.
    mutating func add(_ word: UInt64) { mix(word ^ 0x9E37_79B9_7F4A_7C15) }

    private mutating func mix(_ word: UInt64) {
        hash ^= word
        hash &*= Self.prime
        hash ^= hash >> 29
    }

    mutating func endValue() { mix(0x1E) }

    mutating func missing() { mix(0x1D) }
}

extension ListIdentity {
    /// A 64-bit hash of a text, the same in every process (``DigestHasher``).
    public static func stableHash(_ text: String) -> UInt64 {
        var hasher = DigestHasher()
        hasher.add(text)
        return hasher.hash
    }

    /// ``stableHash(_:)`` of the text after its first `offset` bytes (an entry's key, after its
    /// list's name and the separator), without making that text.
    public static func stableHash(_ text: String, droppingFirst offset: Int) -> UInt64 {
        var hasher = DigestHasher()
        hasher.add(text, from: offset)
        return hasher.hash
    }
}
