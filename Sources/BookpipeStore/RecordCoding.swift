import BookpipeCore
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
                          "findings", "enrichment", "detection"]
    static let cellsPerRecord = columns.count

    var bytes: [UInt8] = []
    var cells: [Cell] = []
    /// The data row of each record (the low half of its key).
    var rows: [Int] = []
    /// Index into ``origins`` of each record.
    var originSlots: [Int32] = []
    /// The distinct origins of these records.
    var origins: [OriginKey] = []

    var count: Int { rows.count }
    var isEmpty: Bool { rows.isEmpty }

    mutating func reserve(records: Int, bytesPerRecord: Int = 400) {
        bytes.reserveCapacity(records * bytesPerRecord)
        cells.reserveCapacity(records * Self.cellsPerRecord)
        rows.reserveCapacity(records)
        originSlots.reserveCapacity(records)
    }
}

/// Turns records into stored columns and back.
///
/// Column formats (all text is UTF-8):
/// - `raw`: the fields joined by U+001F. Inside a field, U+001F is written as ESC `_` and ESC
///   (U+001B) as ESC `[` (the byte XOR 0x40 after an ESC). NULL for a record without fields.
/// - `fields`: JSON array `[title, authors, rawISBNs, year, publisher, pageCount, shelf,
///   dateAdded, dateRead, rating]`, trailing nulls left out. Where a text value is exactly a raw
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

    // MARK: - Raw fields

    static let separator: UInt8 = 0x1F
    static let escape: UInt8 = 0x1B

    static func appendRaw(_ fields: [String], to output: inout [UInt8]) {
        for index in fields.indices {
            if index > 0 { output.append(separator) }
            var field = fields[index]
            field.withUTF8 { bytes in
                var plain = true
                for byte in bytes where byte == separator || byte == escape {
                    plain = false
                    break
                }
                if plain {
                    output.append(contentsOf: bytes)
                } else {
                    for byte in bytes {
                        if byte == separator || byte == escape {
                            output.append(escape)
                            output.append(byte ^ 0x40)
                        } else {
                            output.append(byte)
                        }
                    }
                }
            }
        }
    }

    static func decodeRaw(_ text: String?) -> [String] {
        guard var text else { return [] }
        return text.withUTF8 { bytes in
            var fields: [String] = []
            var start = 0
            var hasEscape = false
            func field(_ end: Int) -> String {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<end])
                guard hasEscape else { return String(decoding: slice, as: UTF8.self) }
                var output: [UInt8] = []
                output.reserveCapacity(slice.count)
                var index = 0
                while index < slice.count {
                    if slice[index] == escape, index + 1 < slice.count {
                        output.append(slice[index + 1] ^ 0x40)
                        index += 2
                    } else {
                        output.append(slice[index])
                        index += 1
                    }
                }
                return String(decoding: output, as: UTF8.self)
            }
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == escape {
                    hasEscape = true
                    index += 2
                    continue
                }
                if byte == separator {
                    fields.append(field(index))
                    start = index + 1
                    hasEscape = false
                }
                index += 1
            }
            fields.append(field(min(index, bytes.count)))
            return fields
        }
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
        let raw = decodeRaw(row["raw"])
        let scan: String = row["origin_scan"]
        let origin = RecordOrigin(file: row["origin_path"], fileHash: row["file_hash"], row: Int(key & 0xFFFF_FFFF),
                                  line: row["line"], format: row["origin_format"], rawFields: raw,
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
                guard index >= 0, index < raw.count else { throw corrupt(column) }
                return raw[index]
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
        var record = BookRecord(origin: origin, title: try text(slot(0), "fields") ?? "",
                                authors: try texts(slot(1), "fields") ?? [], rawISBNs: try texts(slot(2), "fields") ?? [],
                                year: try integer(slot(3), "fields"),
                                reviewStatus: ReviewStatus(rawValue: row["review_status"]) ?? .verified)
        record.publisher = try text(slot(4), "fields")
        record.pageCount = try integer(slot(5), "fields")
        record.shelf = try text(slot(6), "fields")
        record.dateAdded = try text(slot(7), "fields")
        record.dateRead = try text(slot(8), "fields")
        switch slot(9) {
        case .null: record.rating = nil
        case .integer(let value): record.rating = Double(value)
        case .number(let value): record.rating = value
        case .string(let value): record.rating = Double(value)  // inf and nan are not JSON numbers
        default: throw corrupt("fields")
        }

        if let normalizedText: String = row["normalized"] {
            guard case .array(let items)? = JSONText.parse(normalizedText) else { throw corrupt("normalized") }
            func item(_ index: Int) -> JSONText.Parsed { index < items.count ? items[index] : .null }
            let searchTitle = try text(item(0), "normalized") ?? ""
            let isbn13: String? = row["isbn13"]
            record.normalized = NormalizedForms(
                searchTitle: searchTitle,
                mainTitle: try text(item(2), "normalized") ?? searchTitle,
                titleKey: row["title_key"] ?? "",
                series: try text(item(3), "normalized"),
                seriesNumber: try text(item(4), "normalized"),
                authors: try texts(item(5), "normalized") ?? record.authors,
                authorKeys: try texts(item(1), "normalized") ?? [],
                isbn13: isbn13,
                allISBN13s: try texts(item(6), "normalized") ?? (isbn13.map { [$0] } ?? []))
        }
        record.scan = try json("detection", as: ScanDetection.self)
        record.enrichment = try json("enrichment", as: EnrichmentResult.self)
        record.findings = try json("findings", as: [Finding].self) ?? []
        return record
    }
}

/// Encodes records into ``EncodedRecords``. Keeps, per value slot, the raw field where the value
/// was found last time, so finding the raw field a value copies is usually one comparison.
struct RecordEncoder {
    /// When false, text values are always written out (used by updates, whose records may carry
    /// raw fields other than the stored ones).
    var referencesRawFields = true
    private var hints = [Int](repeating: 0, count: 12)
    private var lastOrigin: OriginKey?
    private var lastOriginSlot: Int32 = 0
    private var originSlots: [OriginKey: Int32] = [:]
    private var scratch: [UInt8] = []

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
    private mutating func reference(_ value: String, slot: Int, raw: [String]) -> Int? {
        guard referencesRawFields, !value.isEmpty else { return nil }
        let hint = hints[slot]
        if hint < raw.count && raw[hint] == value { return hint }
        for index in raw.indices where raw[index] == value {
            hints[slot] = index
            return index
        }
        return nil
    }

    @inline(__always)
    private mutating func appendText(_ value: String, slot: Int, raw: [String], to output: inout [UInt8]) {
        if let index = reference(value, slot: slot, raw: raw) {
            JSONText.appendInteger(index, to: &output)
        } else {
            JSONText.appendString(value, to: &output)
        }
    }

    private mutating func appendTexts(_ values: [String], slot: Int, raw: [String], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for index in values.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendText(values[index], slot: slot, raw: raw, to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    private static let null: [UInt8] = Array("null".utf8)

    /// The `fields` column of a record.
    mutating func appendFields(_ record: BookRecord, to output: inout [UInt8]) {
        let raw = record.origin.rawFields
        output.append(UInt8(ascii: "["))
        var lastEnd = output.count  // end of the last non-null item
        var index = 0
        func separate(_ output: inout [UInt8]) {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            index += 1
        }
        // title, authors, rawISBNs: always written.
        separate(&output)
        appendText(record.title, slot: 0, raw: raw, to: &output)
        separate(&output)
        appendTexts(record.authors, slot: 1, raw: raw, to: &output)
        separate(&output)
        appendTexts(record.rawISBNs, slot: 2, raw: raw, to: &output)
        lastEnd = output.count
        // Optional values: write null placeholders, cut trailing ones at the end.
        func optionalText(_ value: String?, slot: Int, _ output: inout [UInt8], _ encoder: inout RecordEncoder) {
            separate(&output)
            if let value {
                encoder.appendText(value, slot: slot, raw: raw, to: &output)
                lastEnd = output.count
            } else {
                output.append(contentsOf: Self.null)
            }
        }
        func optionalInteger(_ value: Int?, _ output: inout [UInt8]) {
            separate(&output)
            if let value {
                JSONText.appendInteger(value, to: &output)
                lastEnd = output.count
            } else {
                output.append(contentsOf: Self.null)
            }
        }
        optionalInteger(record.year, &output)
        optionalText(record.publisher, slot: 4, &output, &self)
        optionalInteger(record.pageCount, &output)
        optionalText(record.shelf, slot: 6, &output, &self)
        optionalText(record.dateAdded, slot: 7, &output, &self)
        optionalText(record.dateRead, slot: 8, &output, &self)
        separate(&output)
        if let rating = record.rating {
            if rating.isFinite {
                output.append(contentsOf: "\(rating)".utf8)
            } else {
                JSONText.appendString("\(rating)", to: &output)
            }
            lastEnd = output.count
        }
        output.removeLast(output.count - lastEnd)
        output.append(UInt8(ascii: "]"))
    }

    /// The `normalized` column of a record with normalised forms.
    mutating func appendNormalized(_ record: BookRecord, _ forms: NormalizedForms, to output: inout [UInt8]) {
        let raw = record.origin.rawFields
        output.append(UInt8(ascii: "["))
        appendText(forms.searchTitle, slot: 9, raw: raw, to: &output)
        output.append(UInt8(ascii: ","))
        output.append(UInt8(ascii: "["))
        for (index, key) in forms.authorKeys.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONText.appendString(key, to: &output)
        }
        output.append(UInt8(ascii: "]"))
        var lastEnd = output.count
        func optional(_ write: Bool, _ output: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
            output.append(UInt8(ascii: ","))
            if write {
                body(&output)
                lastEnd = output.count
            } else {
                output.append(contentsOf: Self.null)
            }
        }
        optional(forms.mainTitle != forms.searchTitle, &output) { JSONText.appendString(forms.mainTitle, to: &$0) }
        optional(forms.series != nil, &output) { JSONText.appendString(forms.series ?? "", to: &$0) }
        optional(forms.seriesNumber != nil, &output) { JSONText.appendString(forms.seriesNumber ?? "", to: &$0) }
        let authorsDiffer = forms.authors != record.authors
        output.append(UInt8(ascii: ","))
        if authorsDiffer {
            appendTexts(forms.authors, slot: 10, raw: raw, to: &output)
            lastEnd = output.count
        } else {
            output.append(contentsOf: Self.null)
        }
        let impliedISBNs = forms.isbn13.map { forms.allISBN13s.count == 1 && forms.allISBN13s[0] == $0 }
            ?? forms.allISBN13s.isEmpty
        optional(!impliedISBNs, &output) { output in
            output.append(UInt8(ascii: "["))
            for (index, isbn) in forms.allISBN13s.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.appendString(isbn, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.removeLast(output.count - lastEnd)
        output.append(UInt8(ascii: "]"))
    }

    private static let pendingBytes: [UInt8] = Array("pending".utf8)
    private static let verifiedBytes: [UInt8] = Array("verified".utf8)

    /// Appends one record's cells and text to `out`.
    mutating func encode(_ record: BookRecord, into out: inout EncodedRecords) {
        // Origin slot: records of one batch almost always share theirs.
        let origin = record.origin
        if let last = lastOrigin, last.fileHash == origin.fileHash, last.path == origin.file,
           last.format == origin.format, last.scan == (origin.scan ?? "") {
            out.originSlots.append(lastOriginSlot)
        } else {
            let key = OriginKey(fileHash: origin.fileHash, path: origin.file, format: origin.format, scan: origin.scan ?? "")
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
        out.rows.append(origin.row)

        func text(_ out: inout EncodedRecords, _ write: (inout [UInt8]) -> Void) {
            let start = out.bytes.count
            write(&out.bytes)
            out.cells.append(.text(start: Int32(truncatingIfNeeded: start), count: Int32(out.bytes.count - start)))
        }
        out.cells.append(.integer(Int64(origin.line)))
        if origin.rawFields.isEmpty {
            out.cells.append(.null)
        } else {
            text(&out) { RecordCoding.appendRaw(origin.rawFields, to: &$0) }
        }
        text(&out) { appendFields(record, to: &$0) }
        if let forms = record.normalized {
            text(&out) { appendNormalized(record, forms, to: &$0) }
            text(&out) { $0.append(contentsOf: forms.titleKey.utf8) }
            if let isbn = forms.isbn13 {
                text(&out) { $0.append(contentsOf: isbn.utf8) }
            } else {
                out.cells.append(.null)
            }
        } else {
            out.cells.append(contentsOf: [.null, .null, .null])
        }
        let status = record.status
        text(&out) { status == .pending ? $0.append(contentsOf: Self.pendingBytes) : $0.append(contentsOf: status.rawValue.utf8) }
        let review = record.reviewStatus
        text(&out) {
            review == .verified ? $0.append(contentsOf: Self.verifiedBytes) : $0.append(contentsOf: review.rawValue.utf8)
        }
        if record.findings.isEmpty {
            out.cells.append(.null)
        } else {
            text(&out) { RecordCoding.appendFindings(record.findings, to: &$0) }
        }
        if let enrichment = record.enrichment {
            text(&out) { $0.append(contentsOf: RecordCoding.encode(enrichment).utf8) }
        } else {
            out.cells.append(.null)
        }
        if let scan = record.scan {
            text(&out) { $0.append(contentsOf: RecordCoding.encode(scan).utf8) }
        } else {
            out.cells.append(.null)
        }
    }

    /// Encodes records into a fresh ``EncodedRecords``.
    mutating func encode(_ records: [BookRecord]) -> EncodedRecords {
        reset()
        var out = EncodedRecords()
        out.reserve(records: records.count)
        for record in records { encode(record, into: &out) }
        return out
    }
}
