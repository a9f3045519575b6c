import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB

/// Where a record came from, as stored once in `record_origins` instead of on every row.
struct OriginKey: Hashable, Sendable {
    var fileHash: String
    var path: String
    var format: String
    var scan: String
}

/// Records turned into column values, ready to bind: the text of all records in one byte
/// buffer, and per record its cells. Encoding happens off the writer thread; binding points
/// SQLite at the buffer (no copies, no per-column allocations).
struct EncodedRecords: Sendable {
    /// One column value.
    enum Cell: Sendable {
        case null
        case integer(Int64)
        /// UTF-8 bytes `start..<start + count` of ``EncodedRecords/bytes``.
        case text(start: Int32, count: Int32)
    }

    /// The encoded columns after `key` and `origin`, in this order.
    static let columns = ["line", "raw", "fields", "normalized", "title_key", "isbn13", "status", "review_status",
                          "findings", "enrichment", "detection", "entry", "digest"]
    static let cellsPerRecord = columns.count
    /// The position of `status` among a record's cells.
    static let statusColumn = columns.firstIndex(of: "status")!

    var bytes = EncodedBytes()
    var cells: [Cell] = []
    /// The data row of each record (the low half of its key).
    var rows: [Int] = []
    /// Index into ``origins`` of each record.
    var originSlots: [Int32] = []
    /// The distinct origins of these records.
    var origins: [OriginKey] = []

    var count: Int { rows.count }
    var isEmpty: Bool { rows.isEmpty }

    mutating func reserve(records: Int) {
        cells.reserveCapacity(records * Self.cellsPerRecord)
        rows.reserveCapacity(records)
        originSlots.reserveCapacity(records)
    }
}

/// Turns records into stored columns and back.
///
/// Column formats (all text is UTF-8):
/// - `raw`: the raw fields joined by U+001F (``RawColumn`` has the format). NULL for a record
///   without fields.
/// - `fields`: JSON array `[title, authors, rawISBNs, year, publisher, pageCount, shelf,
///   dateAdded, dateRead, rating, binding, review, tags]`, trailing nulls left out (`tags` is
///   null when empty; rows stored before binding, review and tags were read end at `rating`). Where a text value is exactly a raw
///   field, the field's 0-based number is written instead of the text (`[1,[2],[5,6],2010,9,…]`):
///   the values of a CSV row are copies of its fields, so this stores each text once.
/// - `normalized`: JSON array `[searchTitle, authorKeys, mainTitle, series, seriesNumber,
///   authors, allISBN13s]`, trailing nulls left out; `mainTitle` null means the search title,
///   `authors` null means the record's authors as read, `allISBN13s` null means just `isbn13`.
///   `searchTitle` may be a raw-field number too. `titleKey` and `isbn13` are columns of their own.
/// - `findings`: JSON array of objects with `Finding`'s Codable keys; NULL when none.
/// - `enrichment`, `detection`: `JSONEncoder` output with sorted keys.
enum RecordCoding {
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Hand-written for the import hot path; the keys are `Finding`'s Codable keys.
    static func encodeFindings(_ findings: [Finding]) -> String {
        var output: [UInt8] = []
        appendFindings(findings, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func appendFindings(_ findings: [Finding], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (index, finding) in findings.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONText.appendObject([
                ("code", .string(finding.code)),
                ("severity", .string(finding.severity.rawValue)),
                ("field", finding.field.map { .string($0) }),
                ("message", .string(finding.message)),
            ], to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    // MARK: - Decoding

    /// The columns a decode needs besides `records.*`.
    static let originColumns = "o.path AS origin_path, o.format AS origin_format, o.scan AS origin_scan, f.hash AS file_hash"
    /// `FROM` clause joining a record to its origin and file.
    static let joins = "records r JOIN record_origins o ON o.id = r.origin JOIN source_files f ON f.id = o.file_id"

    static func decode(_ row: Row, path: String) throws -> BookRecord {
        let key: Int64 = row["key"]
        func corrupt(_ column: String) -> StoreError {
            StoreError.corruptValue(path: path, what: "\(column) of record \(row["file_hash"] as String? ?? "?"):\(key & 0xFFFF_FFFF)")
        }
        func json<T: Decodable>(_ column: String, as type: T.Type) throws -> T? {
            guard let text: String = row[column] else { return nil }
            do {
                return try JSONDecoder().decode(T.self, from: Data(text.utf8))
            } catch {
                throw corrupt(column)
            }
        }
        let joined = RawColumn.fields(row["raw"])
        var rawCache: [String]?
        func rawField(_ index: Int) -> String? {
            if rawCache == nil { rawCache = joined.fields }
            guard let raw = rawCache, index >= 0, index < raw.count else { return nil }
            return raw[index]
        }
        let scan: String = row["origin_scan"]
        let origin = RecordOrigin(file: row["origin_path"], fileHash: row["file_hash"], row: Int(key & 0xFFFF_FFFF),
                                  line: row["line"], format: row["origin_format"], rawFields: joined,
                                  scan: scan.isEmpty ? nil : scan)
        guard let fieldsText: String = row["fields"], case .array(let fields)? = JSONText.parse(fieldsText) else {
            throw corrupt("fields")
        }
        func slot(_ index: Int) -> JSONText.Parsed { index < fields.count ? fields[index] : .null }
        func text(_ value: JSONText.Parsed, _ column: String) throws -> String? {
            switch value {
            case .null: return nil
            case .string(let text): return text
            case .integer(let index):
                guard let field = rawField(index) else { throw corrupt(column) }
                return field
            default: throw corrupt(column)
            }
        }
        func texts(_ value: JSONText.Parsed, _ column: String) throws -> [String]? {
            switch value {
            case .null: return nil
            case .array(let items): return try items.map { try text($0, column) ?? "" }
            default: throw corrupt(column)
            }
        }
        func integer(_ value: JSONText.Parsed, _ column: String) throws -> Int? {
            switch value {
            case .null: return nil
            case .integer(let number): return number
            default: throw corrupt(column)
            }
        }
        let authors = try texts(slot(1), "fields") ?? []
        let rating: Double?
        switch slot(9) {
        case .null: rating = nil
        case .integer(let value): rating = Double(value)
        case .number(let value): rating = value
        case .string(let value): rating = Double(value)  // inf and nan are not JSON numbers
        default: throw corrupt("fields")
        }

        var normalized: NormalizedForms?
        if let normalizedText: String = row["normalized"] {
            guard case .array(let items)? = JSONText.parse(normalizedText) else { throw corrupt("normalized") }
            func item(_ index: Int) -> JSONText.Parsed { index < items.count ? items[index] : .null }
            let searchTitle = try text(item(0), "normalized") ?? ""
            let isbn13: String? = row["isbn13"]
            normalized = NormalizedForms(
                searchTitle: searchTitle,
                mainTitle: try text(item(2), "normalized") ?? searchTitle,
                titleKey: row["title_key"] ?? "",
                series: try text(item(3), "normalized"),
                seriesNumber: try text(item(4), "normalized"),
                authors: try texts(item(5), "normalized") ?? authors,
                authorKeys: try texts(item(1), "normalized") ?? [],
                isbn13: isbn13,
                allISBN13s: try texts(item(6), "normalized") ?? (isbn13.map { [$0] } ?? []))
        }
        // Built by one initialiser call (values set one by one made Swift copy the record).
        return BookRecord(
            stored: origin, title: try text(slot(0), "fields") ?? "", authors: authors,
            rawISBNs: try texts(slot(2), "fields") ?? [], year: try integer(slot(3), "fields"),
            publisher: try text(slot(4), "fields"), pageCount: try integer(slot(5), "fields"),
            shelf: try text(slot(6), "fields"), rating: rating, dateAdded: try text(slot(7), "fields"),
            dateRead: try text(slot(8), "fields"), binding: try text(slot(10), "fields"),
            review: try text(slot(11), "fields"), tags: try texts(slot(12), "fields") ?? [],
            scan: try json("detection", as: ScanDetection.self),
            normalized: normalized, enrichment: try json("enrichment", as: EnrichmentResult.self),
            reviewStatus: ReviewStatus(rawValue: row["review_status"]) ?? .verified,
            findings: try json("findings", as: [Finding].self) ?? [], listEntry: row["entry"])
    }
}

/// Encodes records into ``EncodedRecords``. Keeps, per value slot, the raw field where the value
/// was found last time, so finding the raw field a value copies is usually one comparison.
///
/// The import's records are written into a ``ByteWriter`` (bytes stored through a pointer, so a
/// byte costs no uniqueness check of an array); the `[UInt8]` entry points (updates) write through
/// one too and copy its bytes out.
struct RecordEncoder {
    /// When false, text values are always written out (used by updates, whose records may carry
    /// raw fields other than the stored ones).
    var referencesRawFields = true
    private var lastOrigin: OriginKey?
    private var lastOriginSlot: Int32 = 0
    private var originSlots: [OriginKey: Int32] = [:]
    /// Where the raw fields of the record being encoded lie (reused from record to record).
    private let rawIndex = RawIndex()

    init(referencesRawFields: Bool = true) {
        self.referencesRawFields = referencesRawFields
    }

    /// Starts a new output (origin slots are per output).
    mutating func reset() {
        lastOrigin = nil
        originSlots.removeAll(keepingCapacity: true)
    }

    /// The number of the raw field that is exactly `value`, if any.
    @inline(__always)
    private func reference(_ value: String, slot: Int, raw: RawIndex) -> Int? {
        guard referencesRawFields, raw.count > 0, !value.isEmpty else { return nil }
        let hint = raw.hint(slot)
        let found = value.utf8.withContiguousStorageIfAvailable { value -> Int? in
            if hint < raw.count && raw.field(hint, equals: value) { return hint }
            for index in 0..<raw.count where raw.field(index, equals: value) { return index }
            return nil
        } ?? nil
        if let found { raw.setHint(slot, found) }
        return found
    }

    /// ``appendText(_:slot:raw:to:)`` of a string read in place through a pointer to it (a title
    /// read through the record's pointer as a value was retained and released: two atomic
    /// operations per record; optional values and array elements still are).
    @inline(__always)
    private func appendText(at value: UnsafePointer<String>, slot: Int, raw: RawIndex, to output: ByteWriter) {
        if value.pointee.utf8.withContiguousStorageIfAvailable({ appendText(bytes: $0, slot: slot, raw: raw, to: output) })
            == nil {
            appendText(value.pointee, slot: slot, raw: raw, to: output)
        }
    }

    /// A text value's UTF-8: the number of the raw field that holds exactly these bytes, or the
    /// text as a JSON string.
    @inline(__always)
    private func appendText(bytes: UnsafeBufferPointer<UInt8>, slot: Int, raw: RawIndex, to output: ByteWriter) {
        if let index = referenceBytes(bytes, slot: slot, raw: raw) {
            output.appendInteger(index)
        } else {
            output.appendJSONString(bytes: bytes)
        }
    }

    /// ``appendTexts(_:slot:raw:to:)`` of an array read in place, each string through a pointer.
    private func appendTexts(at values: UnsafePointer<[String]>, slot: Int, raw: RawIndex, to output: ByteWriter) {
        output.append(UInt8(ascii: "["))
        values.pointee.withUnsafeBufferPointer { strings in
            guard let base = strings.baseAddress else { return }
            for index in 0..<strings.count {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                appendText(at: base + index, slot: slot, raw: raw, to: output)
            }
        }
        output.append(UInt8(ascii: "]"))
    }

    /// The number of the raw field that holds exactly these bytes, if any.
    @inline(__always)
    private func referenceBytes(_ value: UnsafeBufferPointer<UInt8>, slot: Int, raw: RawIndex) -> Int? {
        guard referencesRawFields, raw.count > 0, !value.isEmpty else { return nil }
        let hint = raw.hint(slot)
        var found: Int?
        if hint < raw.count && raw.field(hint, equals: value) {
            found = hint
        } else {
            for index in 0..<raw.count where raw.field(index, equals: value) {
                found = index
                break
            }
        }
        if let found { raw.setHint(slot, found) }
        return found
    }

    @inline(__always)
    private func appendText(_ value: String, slot: Int, raw: RawIndex, to output: ByteWriter) {
        if let index = reference(value, slot: slot, raw: raw) {
            output.appendInteger(index)
        } else {
            output.appendJSONString(value)
        }
    }

    private func appendTexts(_ values: [String], slot: Int, raw: RawIndex, to output: ByteWriter) {
        output.append(UInt8(ascii: "["))
        for index in values.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendText(values[index], slot: slot, raw: raw, to: output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// The `fields` column of a record; text values that are raw fields of `raw` become numbers.
    func appendFields(_ pointer: UnsafePointer<BookRecord>, raw: RawIndex = .none, to output: inout [UInt8]) {
        let writer = ByteWriter(capacity: 256)
        appendFields(pointer, raw: raw, to: writer)
        writer.copy(to: &output)
    }

    /// The `fields` column of a record, into a writer.
    func appendFields(_ pointer: UnsafePointer<BookRecord>, raw: RawIndex, to output: ByteWriter) {
        output.append(UInt8(ascii: "["))
        // title, authors, rawISBNs: always written.
        // Strings are read through pointers to the record's fields (see `appendText(at:…)`).
        appendText(at: pointer.pointer(to: \.title)!, slot: 0, raw: raw, to: output)
        output.append(UInt8(ascii: ","))
        appendTexts(at: pointer.pointer(to: \.authors)!, slot: 1, raw: raw, to: output)
        output.append(UInt8(ascii: ","))
        appendTexts(at: pointer.pointer(to: \.rawISBNs)!, slot: 2, raw: raw, to: output)
        var lastEnd = output.count  // end of the last non-null item
        // Optional values: write null placeholders, cut trailing ones at the end.
        func optionalText(_ value: UnsafePointer<String?>, slot: Int) {
            output.append(UInt8(ascii: ","))
            switch value.pointee {
            case .none:
                output.appendNull()
            case .some:
                if value.pointee!.utf8.withContiguousStorageIfAvailable({
                    appendText(bytes: $0, slot: slot, raw: raw, to: output)
                }) == nil {
                    appendText(value.pointee!, slot: slot, raw: raw, to: output)
                }
                lastEnd = output.count
            }
        }
        func optionalInteger(_ value: Int?) {
            output.append(UInt8(ascii: ","))
            if let value {
                output.appendInteger(value)
                lastEnd = output.count
            } else {
                output.appendNull()
            }
        }
        optionalInteger(pointer.pointee.year)
        optionalText(pointer.pointer(to: \.publisher)!, slot: 4)
        optionalInteger(pointer.pointee.pageCount)
        optionalText(pointer.pointer(to: \.shelf)!, slot: 6)
        optionalText(pointer.pointer(to: \.dateAdded)!, slot: 7)
        optionalText(pointer.pointer(to: \.dateRead)!, slot: 8)
        output.append(UInt8(ascii: ","))
        if let rating = pointer.pointee.rating {
            if rating.isFinite {
                output.append("\(rating)")
            } else {
                output.appendJSONString("\(rating)")
            }
            lastEnd = output.count
        } else {
            output.appendNull()
        }
        // Slots 11-13 are hint slots of their own (9 and 10 belong to the normalised forms).
        optionalText(pointer.pointer(to: \.binding)!, slot: 11)
        optionalText(pointer.pointer(to: \.review)!, slot: 12)
        output.append(UInt8(ascii: ","))
        if !pointer.pointee.tags.isEmpty {
            appendTexts(at: pointer.pointer(to: \.tags)!, slot: 13, raw: raw, to: output)
            lastEnd = output.count
        }
        output.removeLast(output.count - lastEnd)
        output.append(UInt8(ascii: "]"))
    }

    /// The `normalized` column of a record with normalised forms.
    func appendNormalized(_ pointer: UnsafePointer<BookRecord>, raw: RawIndex = .none, to output: inout [UInt8]) {
        let writer = ByteWriter(capacity: 256)
        appendNormalized(pointer, raw: raw, to: writer)
        writer.copy(to: &output)
    }

    /// The `normalized` column of a record with normalised forms, into a writer.
    func appendNormalized(_ pointer: UnsafePointer<BookRecord>, raw: RawIndex, to output: ByteWriter) {
        output.append(UInt8(ascii: "["))
        appendText(pointer.forms.searchTitle, slot: 9, raw: raw, to: output)
        output.append(UInt8(ascii: ","))
        output.append(UInt8(ascii: "["))
        let authorKeys = pointer.forms.authorKeys
        for index in authorKeys.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.appendJSONString(authorKeys[index])
        }
        output.append(UInt8(ascii: "]"))
        var lastEnd = output.count
        func optional(_ write: Bool, _ body: () -> Void) {
            output.append(UInt8(ascii: ","))
            if write {
                body()
                lastEnd = output.count
            } else {
                output.appendNull()
            }
        }
        optional(pointer.forms.mainTitle != pointer.forms.searchTitle) {
            output.appendJSONString(pointer.forms.mainTitle)
        }
        optional(pointer.forms.series != nil) { output.appendJSONString(pointer.forms.series ?? "") }
        optional(pointer.forms.seriesNumber != nil) { output.appendJSONString(pointer.forms.seriesNumber ?? "") }
        let authorsDiffer = pointer.forms.authors != pointer.pointee.authors
        output.append(UInt8(ascii: ","))
        if authorsDiffer {
            appendTexts(pointer.forms.authors, slot: 10, raw: raw, to: output)
            lastEnd = output.count
        } else {
            output.appendNull()
        }
        let impliedISBNs = pointer.forms.isbn13.map {
            pointer.forms.allISBN13s.count == 1 && pointer.forms.allISBN13s[0] == $0
        } ?? pointer.forms.allISBN13s.isEmpty
        optional(!impliedISBNs) {
            output.append(UInt8(ascii: "["))
            let isbns = pointer.forms.allISBN13s
            for index in isbns.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.appendJSONString(isbns[index])
            }
            output.append(UInt8(ascii: "]"))
        }
        output.removeLast(output.count - lastEnd)
        output.append(UInt8(ascii: "]"))
    }

    /// Appends one record's cells and text to `out` and `bytes` (``EncodedRecords/bytes`` being
    /// written). The record is read through a pointer: a borrowed parameter was still copied (every
    /// field retained and released), 2 % of an import.
    mutating func encode(_ pointer: UnsafePointer<BookRecord>, into out: inout EncodedRecords, bytes: ByteWriter) {
        // Origin slot: records of one batch almost always share theirs.
        if let last = lastOrigin, last.fileHash == pointer.pointee.origin.fileHash,
           last.path == pointer.pointee.origin.file, last.format == pointer.pointee.origin.format,
           last.scan == (pointer.pointee.origin.scan ?? "") {
            out.originSlots.append(lastOriginSlot)
        } else {
            let key = OriginKey(fileHash: pointer.pointee.origin.fileHash, path: pointer.pointee.origin.file,
                                format: pointer.pointee.origin.format, scan: pointer.pointee.origin.scan ?? "")
            let slot: Int32
            if let known = originSlots[key] {
                slot = known
            } else {
                slot = Int32(out.origins.count)
                out.origins.append(key)
                originSlots[key] = slot
            }
            lastOrigin = key
            lastOriginSlot = slot
            out.originSlots.append(slot)
        }
        out.rows.append(pointer.pointee.origin.row)
        out.cells.append(.integer(Int64(pointer.pointee.origin.line)))
        func closeText(from start: Int) {
            out.cells.append(.text(start: Int32(truncatingIfNeeded: start),
                                   count: Int32(truncatingIfNeeded: bytes.count - start)))
        }
        // The raw fields in the `raw` column's format (``RawColumn``: the bytes records keep).
        var joined = RawColumn.text(of: pointer.pointee.origin.compactRawFields)
        let fieldCount = pointer.pointee.origin.compactRawFields.count
        joined.withUTF8 { joinedBytes in
            var start = bytes.count
            if fieldCount == 0 {
                out.cells.append(.null)
            } else {
                bytes.append(joinedBytes)
                closeText(from: start)
            }
            let raw = rawIndex
            raw.reset(joined: joinedBytes, count: fieldCount)
            start = bytes.count
            appendFields(pointer, raw: raw, to: bytes)
            closeText(from: start)
            if pointer.hasForms {
                start = bytes.count
                appendNormalized(pointer, raw: raw, to: bytes)
                closeText(from: start)
            }
        }
        var start = bytes.count
        if pointer.hasForms {
            start = bytes.count
            bytes.append(pointer.forms.titleKey)
            closeText(from: start)
            if let isbn = pointer.forms.isbn13 {
                start = bytes.count
                bytes.append(isbn)
                closeText(from: start)
            } else {
                out.cells.append(.null)
            }
        } else {
            out.cells.append(.null)
            out.cells.append(.null)
            out.cells.append(.null)
        }
        start = bytes.count
        let status = pointer.pointee.status
        if status == .pending {
            bytes.append(Self.pending)
        } else {
            bytes.append(status.rawValue)
        }
        closeText(from: start)
        start = bytes.count
        if pointer.pointee.reviewStatus == .verified {
            bytes.append(Self.verified)
        } else {
            bytes.append(pointer.pointee.reviewStatus.rawValue)
        }
        closeText(from: start)
        if pointer.pointee.findings.isEmpty {
            out.cells.append(.null)
        } else {
            start = bytes.count
            var findings: [UInt8] = []
            RecordCoding.appendFindings(pointer.pointee.findings, to: &findings)
            findings.withUnsafeBufferPointer { bytes.append($0) }
            closeText(from: start)
        }
        if let enrichment = pointer.pointee.enrichment {
            start = bytes.count
            bytes.append(RecordCoding.encode(enrichment))
            closeText(from: start)
        } else {
            out.cells.append(.null)
        }
        if let scan = pointer.pointee.scan {
            start = bytes.count
            bytes.append(RecordCoding.encode(scan))
            closeText(from: start)
        } else {
            out.cells.append(.null)
        }
        // The list entry, and the fingerprint of what the list gave (its next import compares it).
        if let entry = pointer.pointee.listEntry {
            start = bytes.count
            bytes.append(entry)
            closeText(from: start)
            out.cells.append(.integer(ListIdentity.readDigest(of: pointer)))
        } else {
            out.cells.append(.null)
            out.cells.append(.null)
        }
    }

    private static let pending = RecordStatus.pending.rawValue
    private static let verified = ReviewStatus.verified.rawValue

    /// Encodes records in groups of at most 4096 (so byte offsets stay far below 2 GiB).
    static func encode(_ records: [BookRecord]) -> [EncodedRecords] {
        var encoder = RecordEncoder()
        return stride(from: 0, to: records.count, by: 4096).map { start in
            encoder.encode(records[start..<min(records.count, start + 4096)])
        }
    }

    /// Encodes records into a fresh ``EncodedRecords``.
    mutating func encode(_ records: ArraySlice<BookRecord>) -> EncodedRecords {
        reset()
        var out = EncodedRecords()
        out.reserve(records: records.count)
        let bytes = ByteWriter(capacity: records.count * 400)
        // Through a buffer pointer: each record is borrowed, not copied (a copy retains and then
        // releases every field, measured at 2 % of an import's CPU time).
        records.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for index in 0..<buffer.count { encode(base + index, into: &out, bytes: bytes) }
        }
        out.bytes = bytes.take()
        return out
    }
}

/// A batch's encoded text, handed over by ``ByteWriter/take()`` without a copy. Never changed
/// once made, so it may be read from any thread (the writer's, where SQLite binds it).
final class EncodedBytes: @unchecked Sendable {
    private let base: UnsafeMutablePointer<UInt8>
    let count: Int

    /// No bytes.
    convenience init() { self.init(adopting: .allocate(capacity: 1), count: 0) }

    /// Takes over `count` bytes at `base` (allocated with `allocate(capacity:)`), freed with this.
    init(adopting base: UnsafeMutablePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { base.deallocate() }

    func withUnsafeBufferPointer<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeBufferPointer(start: base, count: count))
    }
}

/// The encoder's output: bytes stored through a pointer into a buffer that doubles when full, so
/// appending a byte is a capacity check and a store (an array's `append` also checks that its
/// buffer is not shared, for every byte: 3 % of an import). Owned by one encoder on one thread,
/// so exclusivity of its state is not checked at run time (`@exclusivity(unchecked)`).
final class ByteWriter {
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    /// The number of bytes written.
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Hands the bytes written over without copying them (a batch's text is about 400 KB); the
    /// writer starts again empty.
    func take() -> EncodedBytes {
        let taken = EncodedBytes(adopting: base, count: count)
        capacity = 64
        base = .allocate(capacity: capacity)
        count = 0
        return taken
    }

    /// Appends the bytes written to an array.
    func copy(to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
    }

    @inline(__always)
    private func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    @inline(never)
    private func grow(to needed: Int) {
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: max(needed, 2 * capacity))
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = max(needed, 2 * capacity)
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends a string's UTF-8.
    @inline(__always)
    func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ append($0) }) == nil {
            var copy = text
            copy.withUTF8 { append($0) }
        }
    }

    /// Drops the last `count` bytes.
    @inline(__always)
    func removeLast(_ count: Int) { self.count -= count }

    /// Appends `null`.
    @inline(__always)
    func appendNull() {
        reserve(4)
        base[count] = UInt8(ascii: "n")
        base[count + 1] = UInt8(ascii: "u")
        base[count + 2] = UInt8(ascii: "l")
        base[count + 3] = UInt8(ascii: "l")
        count += 4
    }

    /// Appends an integer as ``JSONText/appendInteger(_:to:)`` writes it (which writes the ones
    /// that are not a raw-field number or a year).
    @inline(__always)
    func appendInteger(_ value: Int) {
        if value >= 0 && value < 10 {
            append(UInt8(ascii: "0") + UInt8(value))
        } else if value >= 10 && value < 100 {
            reserve(2)
            base[count] = UInt8(ascii: "0") + UInt8(value / 10)
            base[count + 1] = UInt8(ascii: "0") + UInt8(value % 10)
            count += 2
        } else if value >= 1000 && value < 10000 {
            reserve(4)
            base[count] = UInt8(ascii: "0") + UInt8(value / 1000)
            base[count + 1] = UInt8(ascii: "0") + UInt8(value / 100 % 10)
            base[count + 2] = UInt8(ascii: "0") + UInt8(value / 10 % 10)
            base[count + 3] = UInt8(ascii: "0") + UInt8(value % 10)
            count += 4
        } else {
            var text: [UInt8] = []
            JSONText.appendInteger(value, to: &text)
            text.withUnsafeBufferPointer { append($0) }
        }
    }

    /// Appends UTF-8 text as ``JSONText/appendString(_:to:)`` writes it: a text with nothing to
    /// escape is copied between quotes here; any other goes through `JSONText`.
    func appendJSONString(bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            var text: [UInt8] = []
            JSONText.appendString(bytes, to: &text)
            text.withUnsafeBufferPointer { append($0) }
            return
        }
        reserve(bytes.count + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        append(bytes)
        base[count] = UInt8(ascii: "\"")
        count += 1
    }

    /// Appends a string as ``JSONText/appendString(_:to:)`` writes it: a text with nothing to
    /// escape is copied between quotes here; any other goes through `JSONText`.
    func appendJSONString(_ value: String) {
        if value.utf8.withContiguousStorageIfAvailable({ appendJSONString(bytes: $0) }) != nil { return }
        var text: [UInt8] = []
        JSONText.appendString(value, to: &text)
        text.withUnsafeBufferPointer { append($0) }
    }
}

extension UnsafePointer<BookRecord> {
    /// The record's normalised forms, borrowed in place (the record must have them): binding
    /// `pointee.normalized` to a constant copied all nine values, retains included.
    fileprivate var forms: NormalizedForms {
        _read { yield pointee.normalized! }
    }

    /// True when the record has normalised forms (asked without copying them).
    fileprivate var hasForms: Bool {
        switch pointee.normalized {
        case .none: false
        case .some: true
        }
    }
}

/// Where each raw field of one record lies in its joined text, for finding text values that are
/// copies of a raw field, and per value slot of the encoder where the value was found last time.
/// Holds no field (no references) when the text has escaped bytes.
///
/// One instance is reset for each record (``reset(joined:count:)``); the joined bytes must stay
/// valid until the next reset. Only its encoder uses it, on one thread, so exclusivity of its state
/// is not checked at run time (`@exclusivity(unchecked)`; the checks cost 5 % of an import).
final class RawIndex {
    @exclusivity(unchecked) private var joined = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// The ends (exclusive) of the fields found so far, in order: `found` of them. A buffer of its
    /// own rather than an array, so recording one costs no uniqueness check (2 % of an import's
    /// encoding went to the array's).
    @exclusivity(unchecked) private var ends: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var endCapacity = 64
    @exclusivity(unchecked) private var found = 0
    /// The number of fields that can be referred to.
    @exclusivity(unchecked) private(set) var count = 0
    /// Per value slot of the encoder, the raw field its value was found in last time.
    @exclusivity(unchecked) private var hints: UnsafeMutablePointer<Int>
    /// The number of value slots with a hint.
    static let slots = 14

    init() {
        ends = .allocate(capacity: endCapacity)
        hints = .allocate(capacity: Self.slots)
        hints.initialize(repeating: 0, count: Self.slots)
    }

    deinit {
        ends.deallocate()
        hints.deallocate()
    }

    /// An index of no fields.
    static var none: RawIndex { RawIndex() }

    /// The raw field where slot `slot`'s value was found last time (0 at first).
    @inline(__always)
    func hint(_ slot: Int) -> Int { hints[slot] }

    /// Notes where slot `slot`'s value was found.
    @inline(__always)
    func setHint(_ slot: Int, _ field: Int) { hints[slot] = field }

    /// Indexes the joined fields of one record (`count` of them): one `memchr` rules out escapes
    /// (a row with one refers to no field), then one pass over the text, eight bytes at a time,
    /// notes where every field ends. Locating fields one `memchr` at a time as comparisons needed
    /// them cost twice as much: a row's values reach its 20th field.
    func reset(joined: UnsafeBufferPointer<UInt8>, count: Int) {
        self.joined = joined
        found = 0
        self.count = 0
        guard count > 0 else { return }
        let length = joined.count
        guard let base = joined.baseAddress else {
            appendEnd(0)
            self.count = count
            return
        }
        if memchr(base, Int32(RawColumn.escape), length) != nil { return }
        if endCapacity < count {
            ends.deallocate()
            endCapacity = max(count, 2 * endCapacity)
            ends = .allocate(capacity: endCapacity)
        }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let separators = UInt64(RawColumn.separator) &* ones
        // The ends are kept in locals; the buffer has room for a word's eight before each word.
        var found = 0
        var ends = self.ends
        var index = 0
        while index &+ 8 <= length {
            if found &+ 8 > endCapacity {
                self.found = found
                growEnds()
                ends = self.ends
            }
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) ^ separators
            // 0x80 in exactly the bytes of `word` that are zero: the separators.
            var hits = ~(((word & lows) &+ lows) | word | lows)
            while hits != 0 {
                ends[found] = index &+ hits.trailingZeroBitCount &>> 3
                found &+= 1
                hits &= hits &- 1
            }
            index &+= 8
        }
        self.found = found
        while index < length {
            if base[index] == RawColumn.separator { appendEnd(index) }
            index += 1
        }
        appendEnd(length)
        self.count = count
    }

    @inline(__always)
    private func appendEnd(_ end: Int) {
        if found == endCapacity { growEnds() }
        ends[found] = end
        found += 1
    }

    @inline(never)
    private func growEnds() {
        let grown = UnsafeMutablePointer<Int>.allocate(capacity: 2 * endCapacity)
        grown.update(from: ends, count: found)
        ends.deallocate()
        ends = grown
        endCapacity *= 2
    }

    /// True when field `index` has exactly these bytes.
    @inline(__always)
    func field(_ index: Int, equals value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard index < count, let range = range(index) else { return false }
        guard range.count == value.count else { return false }
        guard let base = joined.baseAddress, let other = value.baseAddress, value.count > 0 else { return value.isEmpty }
        return memcmp(base + range.lowerBound, other, value.count) == 0
    }

    /// The bytes of field `index`; nil when the text has fewer fields.
    @inline(__always)
    private func range(_ index: Int) -> Range<Int>? {
        guard index < found else { return nil }
        return (index == 0 ? 0 : ends[index - 1] + 1)..<ends[index]
    }
}
