internal import CLibCSV
import BookpipeCore
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Collects the fields of the row libcsv is parsing. libcsv's callbacks cannot capture, so they
/// reach this object through the `void *` context. Exclusivity of its state is not checked at run
/// time (`@exclusivity(unchecked)`): only the owning reader touches it, from one thread, and the
/// checks cost several percent of parsing.
final class RowCollector {
    /// Set by the record callback; cleared when the next row starts.
    @exclusivity(unchecked) var rowEnded = false
    /// Fields past ``maximumFields`` that were dropped.
    @exclusivity(unchecked) var droppedFields = 0
    /// 0-based columns whose bytes were not valid UTF-8 and were read as Windows-1252.
    @exclusivity(unchecked) var repairedColumns: [Int] = []
    /// Columns of the current row whose field held NUL bytes, which were removed (a NUL is never
    /// text in an export, and the library cannot keep one: SQLite text ends at it).
    @exclusivity(unchecked) var nulColumns: [Int] = []
    /// The most fields a row may have before the rest are dropped.
    let maximumFields: Int
    /// Expected width (kept for callers; the buffers grow as needed).
    var expectedWidth = 32
    /// The longest field kept; a longer one marks the row as oversized.
    let fieldLimit: Int
    /// Bytes of the field being collected that the reader already threw away.
    @exclusivity(unchecked) var discardedBytes = 0
    /// The first oversized field of the row: 1-based column and its full length.
    @exclusivity(unchecked) var oversized: (column: Int, length: Int)?
    /// True while the bytes the parser was given since the row began are valid UTF-8 and none
    /// needs escaping (the reader checks each line before handing it over, ``checkLine(_:)``): the
    /// row's fields, cut from them at ASCII bytes, then need no check of their own. False after
    /// ``reset()``.
    @exclusivity(unchecked) var inputIsPlain = false

    // The current row: fields encoded the way ``RawFields`` keeps them, and where each ends.
    @exclusivity(unchecked) private var bytes: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var byteCapacity = 4096
    @exclusivity(unchecked) private var length = 0
    @exclusivity(unchecked) private var ends: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var endCapacity = 64
    @exclusivity(unchecked) private var count = 0
    @exclusivity(unchecked) private var hasEscapes = false
    @exclusivity(unchecked) private var isASCII = true

    // ``RawFields``' bytes as local constants: the hot loops then need no call to reach them.
    private static var separator: UInt8 { 0x1F }
    private static var escape: UInt8 { 0x1B }

    init(maximumFields: Int, fieldLimit: Int) {
        self.maximumFields = maximumFields
        self.fieldLimit = fieldLimit
        bytes = .allocate(capacity: byteCapacity)
        ends = .allocate(capacity: endCapacity)
    }

    deinit {
        bytes.deallocate()
        ends.deallocate()
    }

    /// The fields of the current row, valid until the next ``reset()``.
    var row: RowFields {
        RowFields(bytes: UnsafeBufferPointer(start: bytes, count: length), ends: UnsafeBufferPointer(start: ends, count: count),
                  hasEscapes: hasEscapes, isASCII: isASCII)
    }

    /// The fields of the current row as strings (the header row, tests).
    var fields: [String] { row.strings }

    /// Starts a new row.
    @inline(__always)
    func reset() {
        length = 0
        count = 0
        hasEscapes = false
        isASCII = true
        rowEnded = false
        droppedFields = 0
        discardedBytes = 0
        oversized = nil
        inputIsPlain = false
        if !repairedColumns.isEmpty { repairedColumns = [] }
        if !nulColumns.isEmpty { nulColumns = [] }
    }

    /// Appends one field libcsv handed over. The usual case (a checked line, the row within its
    /// limits and buffers) is a copy small enough to inline into libcsv's callback; everything
    /// else goes through ``appendCheckedField(_:_:)``.
    @inline(__always)
    func appendField(_ data: UnsafeMutableRawPointer?, _ length: Int) {
        let start = self.length &+ (count > 0 ? 1 : 0)
        if let data, inputIsPlain && count < endCapacity && count < maximumFields && discardedBytes == 0
            && length <= fieldLimit && start &+ length <= byteCapacity {
            if count > 0 { bytes[start &- 1] = Self.separator }
            if length > 0 { memcpy(bytes + start, data, length) }
            self.length = start &+ length
            ends[count] = start &+ length
            count &+= 1
            return
        }
        appendCheckedField(data, length)
    }

    /// ``appendField(_:_:)`` for every field: limits, the per-field check of lines not checked
    /// whole, growing the buffers.
    @inline(never)
    func appendCheckedField(_ data: UnsafeMutableRawPointer?, _ length: Int) {
        guard count < maximumFields else {
            droppedFields += 1
            return
        }
        if discardedBytes > 0 || length > fieldLimit {
            if oversized == nil { oversized = (count + 1, length + discardedBytes) }
            discardedBytes = 0
            append(UnsafeBufferPointer(start: nil, count: 0))
            return
        }
        guard let data, length > 0 else {
            append(UnsafeBufferPointer(start: nil, count: 0))
            return
        }
        let field = UnsafeRawBufferPointer(start: data, count: length)
        if inputIsPlain {
            append(field.bindMemory(to: UInt8.self))
            return
        }
        if memchr(data, 0, length) != nil {
            // A line with a NUL is never plain (``isPlain(_:)``), so every such field comes here.
            nulColumns.append(count)
            let kept = field.filter { $0 != 0 }
            kept.withUnsafeBytes { appendText($0) }
            return
        }
        appendText(field)
    }

    /// Appends a field's text: as it is when it is valid UTF-8 (escaped where needed), otherwise
    /// read as Latin-1 (Windows-1252) and noted in ``repairedColumns``.
    private func appendText(_ field: UnsafeRawBufferPointer) {
        guard field.count > 0 else {
            append(UnsafeBufferPointer(start: nil, count: 0))
            return
        }
        // One scan for both questions: any byte above ASCII (then validate), and any byte that
        // needs escaping in the joined text (U+001F, U+001B: `byte | 4 == 0x1F` is true for
        // exactly these two).
        let bytes = field.bindMemory(to: UInt8.self)
        let (isASCII, special) = Self.scan(field)
        if isASCII {
            append(bytes, needsEscaping: special)
        } else if TextDecoding.isValidUTF8(field) {
            self.isASCII = false
            append(bytes, needsEscaping: special)
        } else {
            self.isASCII = false
            repairedColumns.append(count)
            var repaired = TextDecoding.decodeRepairingLatin1(field)
            repaired.withUTF8 { append($0, needsEscaping: special) }
        }
    }

    /// Whether the bytes are all ASCII, and whether any is U+001F or U+001B (which need escaping
    /// in the joined text), eight bytes at a time. `byte | 4 == 0x1F` holds for exactly those two
    /// bytes; a word has such a byte when `word | 0x04… ^ 0x1F…` has a zero byte.
    @inline(__always)
    static func scan(_ field: UnsafeRawBufferPointer) -> (isASCII: Bool, needsEscaping: Bool) {
        guard let base = field.baseAddress else { return (true, false) }
        let count = field.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var union: UInt64 = 0
        var zeroBytes: UInt64 = 0
        var index = 0
        while index + 8 <= count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            union |= word
            let folded = (word | (4 &* ones)) ^ (0x1F &* ones)
            zeroBytes |= (folded &- ones) & ~folded & highs
            index += 8
        }
        var special = zeroBytes != 0
        while index < count {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            union |= UInt64(byte)
            special = special || (byte | 4) == 0x1F
            index += 1
        }
        return (union & highs == 0, special)
    }

    /// What ``checkLine(_:)`` found in a line.
    enum LineCheck {
        /// ASCII, nothing to escape.
        case ascii
        /// Valid UTF-8 with bytes above ASCII, nothing to escape.
        case utf8
        /// Something to escape or to repair (NUL bytes included): each field is checked on its own.
        case fieldByField
    }

    /// Checks a line before it is handed to libcsv. Every field libcsv makes of a line is cut at
    /// ASCII bytes (delimiters, quotes, line ends), so a valid UTF-8 line without U+001F/U+001B
    /// gives fields that are valid UTF-8 with nothing to escape.
    static func checkLine(_ bytes: UnsafeRawBufferPointer) -> LineCheck {
        if isPlain(bytes) { return .ascii }
        guard let base = bytes.baseAddress else { return .ascii }
        if memchr(base, 0x1F, bytes.count) != nil || memchr(base, 0x1B, bytes.count) != nil
            || memchr(base, 0, bytes.count) != nil { return .fieldByField }
        return TextDecoding.isValidUTF8(bytes) ? .utf8 : .fieldByField
    }

    /// Starts the row's text as not all ASCII (for a line ``checkLine(_:)`` found valid UTF-8).
    func noteNonASCIIInput() { isASCII = false }

    /// True when every byte is ASCII and none is U+001F, U+001B or NUL (``scan(_:)``'s two answers
    /// at once, and the NULs ``appendCheckedField(_:_:)`` removes, for a whole line: three `memchr`s
    /// and an OR of 32 bytes at a time).
    static func isPlain(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        if memchr(base, 0x1F, count) != nil || memchr(base, 0x1B, count) != nil || memchr(base, 0, count) != nil {
            return false
        }
        var union: UInt64 = 0
        var index = 0
        while index + 32 <= count {
            union |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                | base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                | base.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                | base.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
            index += 32
        }
        while index + 8 <= count {
            union |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            union |= UInt64(base.load(fromByteOffset: index, as: UInt8.self))
            index += 1
        }
        return union & 0x8080_8080_8080_8080 == 0
    }

    /// Appends one field (valid UTF-8) to the row; `needsEscaping` when it may hold U+001F or
    /// U+001B.
    @inline(__always)
    private func append(_ field: UnsafeBufferPointer<UInt8>, needsEscaping: Bool = false) {
        // Room for a separator and, at worst, every byte escaped.
        let needed = self.length + 1 + 2 * field.count
        if needed > byteCapacity {
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: max(needed, 2 * byteCapacity))
            grown.update(from: bytes, count: self.length)
            bytes.deallocate()
            bytes = grown
            byteCapacity = max(needed, 2 * byteCapacity)
        }
        if count == endCapacity {
            let grown = UnsafeMutablePointer<Int>.allocate(capacity: 2 * endCapacity)
            grown.update(from: ends, count: count)
            ends.deallocate()
            ends = grown
            endCapacity *= 2
        }
        var length = self.length
        if count > 0 {
            bytes[length] = Self.separator
            length += 1
        }
        if let base = field.baseAddress, field.count > 0 {
            if !needsEscaping {
                (bytes + length).update(from: base, count: field.count)
                length += field.count
            } else {
                hasEscapes = true
                for byte in field {
                    if byte == Self.separator || byte == Self.escape {
                        bytes[length] = Self.escape
                        bytes[length + 1] = byte ^ 0x40
                        length += 2
                    } else {
                        bytes[length] = byte
                        length += 1
                    }
                }
            }
        }
        self.length = length
        ends[count] = length
        count += 1
    }
}

/// The fields of one row, decoded to valid UTF-8 and encoded the way ``RawFields`` keeps them
/// (U+001F between fields, ESC-escaped inside them), with where each field ends: a view of the
/// ``RowCollector``'s buffers, valid until it starts the next row. The reader hands records one
/// text per row instead of a string per field. The collector validated every field (or read it as
/// Latin-1), so strings are made from these bytes without checking them again.
struct RowFields {
    /// The joined, escaped bytes.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The end offset (exclusive) of each field in ``bytes``.
    let ends: UnsafeBufferPointer<Int>
    /// True when a field needed escaping (then its bytes in ``bytes`` are not the field's).
    let hasEscapes: Bool
    /// True when every byte is ASCII.
    let isASCII: Bool

    var count: Int { ends.count }

    /// Byte range of field `index` in ``bytes`` (empty past the last field).
    @inline(__always)
    func range(_ index: Int) -> Range<Int> {
        guard index < ends.count else { return 0..<0 }
        return (index == 0 ? 0 : ends[index - 1] + 1)..<ends[index]
    }

    @inline(__always)
    func isEmpty(_ index: Int) -> Bool { range(index).isEmpty }

    /// Field `index` as a string ("" past the last field).
    func string(_ index: Int) -> String {
        let range = range(index)
        if range.isEmpty { return "" }
        let text = Self.string(validUTF8: UnsafeBufferPointer(rebasing: bytes[range]), isASCII: isASCII)
        if hasEscapes { return RawFields(encoded: text, count: 1).fields.first ?? "" }
        return text
    }

    /// Field `index`'s bytes when they are all ASCII and the row has no escapes (so they are the
    /// field's own bytes); nil otherwise.
    func asciiBytes(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        guard !hasEscapes else { return nil }
        let field = UnsafeBufferPointer(rebasing: bytes[range(index)])
        if isASCII { return field }
        for byte in field where byte >= 0x80 { return nil }
        return field
    }

    /// Field `index` split at `separator`, each part trimmed of ASCII spaces, tabs and line breaks,
    /// empty parts dropped: `string(index).splitTrimmed(by: separator)`, which stays the
    /// specification and the path for escaped rows. The separator is found in the row's bytes, so
    /// only the parts become strings; valid UTF-8 cut at a whole separator (itself valid UTF-8,
    /// which can only start at a character's first byte) stays valid UTF-8.
    func splitTrimmed(_ index: Int, by separator: String) -> [String] {
        let range = range(index)
        if range.isEmpty { return [] }
        let utf8 = separator.utf8
        guard !hasEscapes, let first = utf8.first else { return string(index).splitTrimmed(by: separator) }
        let width = utf8.count
        var parts: [String] = []
        var partStart = range.lowerBound
        var offset = range.lowerBound
        while offset + width <= range.upperBound {
            if bytes[offset] == first && (width == 1 || Self.matches(utf8, bytes, at: offset)) {
                appendTrimmed(partStart..<offset, to: &parts)
                offset += width
                partStart = offset
            } else {
                offset += 1
            }
        }
        appendTrimmed(partStart..<range.upperBound, to: &parts)
        return parts
    }

    /// True when `bytes` hold `separator` at `offset` (the caller checked that it fits).
    private static func matches(_ separator: String.UTF8View, _ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        var position = offset
        for byte in separator {
            if bytes[position] != byte { return false }
            position += 1
        }
        return true
    }

    /// Appends the bytes in `range` as a string, trimmed of ASCII spaces, tabs and line breaks,
    /// unless nothing is left.
    @inline(__always)
    private func appendTrimmed(_ range: Range<Int>, to parts: inout [String]) {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end && isSpaceByte(bytes[start]) { start += 1 }
        while end > start && isSpaceByte(bytes[end - 1]) { end -= 1 }
        if start == end { return }
        parts.append(Self.string(validUTF8: UnsafeBufferPointer(rebasing: bytes[start..<end]), isASCII: isASCII))
    }

    /// Whether `RecordBuilder.appendISBNs` keeps field `index` as a single ISBN cell: not empty
    /// once trimmed of ASCII spaces, tabs and line breaks, and not Goodreads' empty formula `=""`.
    /// Decided in the row's bytes (nil when the row has escapes: then the string decides).
    func isKeptISBNCell(_ index: Int) -> Bool? {
        guard !hasEscapes else { return nil }
        var start = range(index).lowerBound
        var end = range(index).upperBound
        while start < end && isSpaceByte(bytes[start]) { start += 1 }
        while end > start && isSpaceByte(bytes[end - 1]) { end -= 1 }
        if start == end { return false }
        return !(end - start == 3 && bytes[start] == UInt8(ascii: "=") && bytes[start + 1] == UInt8(ascii: "\"")
            && bytes[start + 2] == UInt8(ascii: "\""))
    }

    /// `prefix` followed by field `index` trimmed of ASCII spaces, tabs and line breaks: `prefix +
    /// string(index).trimmingSpaces`, which stays the specification and the path for escaped rows.
    /// Made in the row's bytes as one string (a list entry per row: the field's string, its trimmed
    /// copy and the joined one were three).
    func trimmedString(_ index: Int, prefixedBy prefix: String) -> String {
        guard !hasEscapes else { return prefix + string(index).trimmingSpaces }
        var start = range(index).lowerBound
        var end = range(index).upperBound
        while start < end && isSpaceByte(bytes[start]) { start += 1 }
        while end > start && isSpaceByte(bytes[end - 1]) { end -= 1 }
        var prefix = prefix
        return prefix.withUTF8 { head in
            // Both parts are valid UTF-8 and the field is cut at ASCII bytes, so the whole is too.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: head.count + end - start) { buffer in
                _ = buffer.initialize(fromContentsOf: head)
                _ = buffer[head.count...].initialize(fromContentsOf: bytes[start..<end])
                return Self.string(validUTF8: UnsafeBufferPointer(buffer), isASCII: isASCII && head.allSatisfy { $0 < 0x80 })
            }
        }
    }

    /// Field `index` as a string, or nil when it is empty or missing.
    func optionalString(_ index: Int?) -> String? {
        guard let index, !isEmpty(index) else { return nil }
        return string(index)
    }

    /// True when field `index` has a character other than ASCII spaces, tabs and line breaks.
    func hasNonSpace(_ index: Int) -> Bool {
        for offset in range(index) where !isSpaceByte(bytes[offset]) { return true }
        return false
    }

    /// True when any field has a character other than spaces, tabs and line breaks.
    var anyNonSpace: Bool {
        for byte in bytes where !isSpaceByte(byte) && byte != RawFields.separator { return true }
        return false
    }

    /// The first field holding a line feed or a carriage return as a character of its own (a CR LF
    /// pair is one character, which is neither; this is what `String.contains("\n")` sees).
    func firstFieldWithLineBreak() -> Int? {
        for index in 0..<count {
            let range = range(index)
            for offset in range {
                let byte = bytes[offset]
                if byte == 0x0A && (offset == range.lowerBound || bytes[offset - 1] != 0x0D) { return index }
                if byte == 0x0D && (offset + 1 == range.upperBound || bytes[offset + 1] != 0x0A) { return index }
            }
        }
        return nil
    }

    /// The fields as strings.
    var strings: [String] { (0..<count).map(string) }

    /// The fields, for a record.
    var rawFields: RawFields { RawFields(encoded: Self.string(validUTF8: bytes, isASCII: isASCII), count: count) }

    /// A string of bytes that are valid UTF-8, made without validating them again (a third of the
    /// cost of `String(decoding:as:)` for non-ASCII text, a fifth less for ASCII).
    @inline(__always)
    static func string(validUTF8 bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> String {
        String(copying: UTF8Span(unchecked: bytes.span, isKnownASCII: isASCII))
    }
}

/// The C callbacks handed to libcsv (static, so they capture nothing).
enum LibCSVCallbacks {
    static let field: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Void = {
        data, length, context in
        guard let context else { return }
        Unmanaged<RowCollector>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.appendField(data, length) }
    }
    static let record: @convention(c) (Int32, UnsafeMutableRawPointer?) -> Void = { _, context in
        guard let context else { return }
        Unmanaged<RowCollector>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.rowEnded = true }
    }
    /// libcsv trims spaces and tabs around unquoted fields unless told that nothing is a space.
    static let noSpace: @convention(c) (UInt8) -> Int32 = { _ in 0 }
    /// For editor-aligned files: spaces around a field are padding (tabs are not).
    static let spaceOnly: @convention(c) (UInt8) -> Int32 = { $0 == 0x20 ? 1 : 0 }
}

/// How a file's fields are delimited beyond the delimiter byte, decided per file.
enum CSVQuoting: Sendable, Hashable {
    /// RFC 4180 quoting; spaces are part of the fields.
    case standard
    /// RFC 4180 quoting in a file whose cells an editor padded with spaces to align the columns
    /// (`Book Id  , "Jr., Ross"   ,`): the spaces around a field are dropped, and a quote after
    /// them still opens a quoted field, the way Python's `skipinitialspace=True` reads it.
    case paddedWithSpaces
    /// No quoting at all (LibraryThing's TSV, Python's `csv.QUOTE_NONE`): a field ends at the
    /// delimiter or the line end, and a quote is an ordinary character.
    case none
}

/// One libcsv parser (non-strict, so Goodreads' bare `="…"` parses) feeding a ``RowCollector``;
/// for files without quoting (``CSVQuoting/none``) a plain splitter takes libcsv's place.
final class LibCSVParser {
    private let parser: UnsafeMutablePointer<csv_parser>
    private let delimiter: UInt8
    let collector: RowCollector
    private var isInitialised = false
    /// How the file quotes; set between rows (``setQuoting(_:)``).
    private(set) var quoting = CSVQuoting.standard
    // The splitter's state for ``CSVQuoting/none``: the bytes of a field cut by the end of a
    // piece, and whether a row has begun (line ends outside a row are blank lines).
    private var unquotedField: [UInt8] = []
    private var unquotedRowBegun = false

    init(delimiter: UInt8, collector: RowCollector) {
        self.parser = .allocate(capacity: 1)
        self.delimiter = delimiter
        self.collector = collector
        reset()
    }

    /// Changes how fields are quoted, from the next row on (call it between rows).
    func setQuoting(_ quoting: CSVQuoting) {
        self.quoting = quoting
        reset()
    }

    deinit {
        if isInitialised { csv_free(parser) }
        parser.deallocate()
    }

    /// Throws away any partial row and starts afresh.
    func reset() {
        if isInitialised { csv_free(parser) }
        parser.initialize(to: csv_parser())
        _ = csv_init(parser, UInt8(CSV_APPEND_NULL))
        csv_set_space_func(
            parser, quoting == .paddedWithSpaces ? LibCSVCallbacks.spaceOnly : LibCSVCallbacks.noSpace)
        csv_set_delim(parser, delimiter)
        isInitialised = true
        unquotedField.removeAll(keepingCapacity: true)
        unquotedRowBegun = false
    }

    /// Parses bytes; false when libcsv ran out of memory.
    @inline(__always)
    func parse(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        if quoting == .none {
            splitUnquoted(bytes.assumingMemoryBound(to: UInt8.self), count: count)
            return true
        }
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let parsed = csv_parse(parser, bytes, count, LibCSVCallbacks.field, LibCSVCallbacks.record, context)
        return parsed == count
    }

    /// Ends the input: libcsv hands over the last field and row if one is open.
    func finish() {
        if quoting == .none {
            if unquotedRowBegun { endUnquotedRow() }
            return
        }
        let context = Unmanaged.passUnretained(collector).toOpaque()
        _ = csv_fini(parser, LibCSVCallbacks.field, LibCSVCallbacks.record, context)
    }

    /// Bytes of the field being collected.
    var pendingFieldLength: Int { quoting == .none ? unquotedField.count : parser.pointee.entry_pos }

    /// Drops the bytes of the field being collected (used to cap a runaway field's memory; the
    /// row is rejected afterwards, so the lost bytes do not matter). libcsv 3's `csv_parser` is a
    /// public struct, and `entry_pos` is the fill level of its field buffer.
    func discardPendingFieldBytes() {
        if quoting == .none {
            unquotedField.removeAll(keepingCapacity: true)
        } else {
            parser.pointee.entry_pos = 0
        }
    }

    /// True while libcsv is inside a quoted field (state FIELD_BEGUN with `quoted` set).
    var isInsideQuotedField: Bool {
        quoting != .none && parser.pointee.pstate == 2 && parser.pointee.quoted != 0
    }

    // MARK: - Files without quoting

    /// Splits bytes at the delimiter and line ends (CR, LF, CR LF), as libcsv does for unquoted
    /// fields: line ends outside a row are skipped, and a field cut by the end of the bytes is
    /// kept for the next call.
    private func splitUnquoted(_ bytes: UnsafePointer<UInt8>, count: Int) {
        var fieldStart = 0
        var index = 0
        while index < count {
            let byte = bytes[index]
            if byte == delimiter {
                unquotedRowBegun = true
                submitUnquoted(bytes + fieldStart, count: index - fieldStart)
                fieldStart = index + 1
            } else if byte == 0x0A || byte == 0x0D {
                if unquotedRowBegun {
                    submitUnquoted(bytes + fieldStart, count: index - fieldStart)
                    endUnquotedRow(fieldSubmitted: true)
                }
                fieldStart = index + 1
            } else {
                unquotedRowBegun = true
            }
            index += 1
        }
        if fieldStart < count {
            unquotedField.append(contentsOf: UnsafeBufferPointer(start: bytes + fieldStart, count: count - fieldStart))
        }
    }

    /// Hands one field to the collector: the bytes given, after any kept from earlier calls.
    private func submitUnquoted(_ bytes: UnsafePointer<UInt8>, count: Int) {
        if unquotedField.isEmpty {
            collector.appendField(UnsafeMutableRawPointer(mutating: bytes), count)
        } else {
            unquotedField.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
            unquotedField.withUnsafeMutableBytes { collector.appendField($0.baseAddress, $0.count) }
            unquotedField.removeAll(keepingCapacity: true)
        }
    }

    private func endUnquotedRow(fieldSubmitted: Bool = false) {
        if !fieldSubmitted {
            unquotedField.withUnsafeMutableBytes { collector.appendField($0.baseAddress, $0.count) }
            unquotedField.removeAll(keepingCapacity: true)
        }
        collector.rowEnded = true
        unquotedRowBegun = false
    }
}
