internal import CLibCSV

/// Collects the fields of the row libcsv is parsing. libcsv's callbacks cannot capture, so they
/// reach this object through the `void *` context.
final class RowCollector {
    /// The fields of the current row, decoded. (Exclusivity is not checked at run time: only the
    /// owning reader touches the collector, from one thread, and the check cost 5 % of parsing.)
    @exclusivity(unchecked) var fields: [String] = []
    /// Set by the record callback; cleared when the next row starts.
    var rowEnded = false
    /// Fields past ``maximumFields`` that were dropped.
    var droppedFields = 0
    /// 0-based columns whose bytes were not valid UTF-8 and were read as Windows-1252.
    var repairedColumns: [Int] = []
    /// The most fields a row may have before the rest are dropped.
    let maximumFields: Int
    /// Expected width, used to reserve capacity.
    var expectedWidth = 32
    /// The longest field kept; a longer one marks the row as oversized.
    let fieldLimit: Int
    /// Bytes of the field being collected that the reader already threw away.
    var discardedBytes = 0
    /// The first oversized field of the row: 1-based column and its full length.
    var oversized: (column: Int, length: Int)?

    init(maximumFields: Int, fieldLimit: Int) {
        self.maximumFields = maximumFields
        self.fieldLimit = fieldLimit
    }

    /// Starts a new row.
    @inline(__always)
    func reset() {
        fields = []
        fields.reserveCapacity(expectedWidth)
        rowEnded = false
        droppedFields = 0
        discardedBytes = 0
        oversized = nil
        if !repairedColumns.isEmpty { repairedColumns = [] }
    }

    @inline(__always)
    func appendField(_ data: UnsafeMutableRawPointer?, _ length: Int) {
        guard fields.count < maximumFields else {
            droppedFields += 1
            return
        }
        if discardedBytes > 0 || length > fieldLimit {
            if oversized == nil { oversized = (fields.count + 1, length + discardedBytes) }
            discardedBytes = 0
            fields.append("")
            return
        }
        guard let data, length > 0 else {
            fields.append("")
            return
        }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        if TextDecoding.isValidUTF8(bytes) {
            fields.append(String(decoding: bytes, as: UTF8.self))
        } else {
            repairedColumns.append(fields.count)
            fields.append(TextDecoding.decodeRepairingLatin1(bytes))
        }
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
}

/// One libcsv parser (non-strict, so Goodreads' bare `="…"` parses) feeding a ``RowCollector``.
final class LibCSVParser {
    private let parser: UnsafeMutablePointer<csv_parser>
    private let delimiter: UInt8
    let collector: RowCollector
    private var isInitialised = false

    init(delimiter: UInt8, collector: RowCollector) {
        self.parser = .allocate(capacity: 1)
        self.delimiter = delimiter
        self.collector = collector
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
        csv_set_space_func(parser, LibCSVCallbacks.noSpace)
        csv_set_delim(parser, delimiter)
        isInitialised = true
    }

    /// Parses bytes; false when libcsv ran out of memory.
    @inline(__always)
    func parse(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let parsed = csv_parse(parser, bytes, count, LibCSVCallbacks.field, LibCSVCallbacks.record, context)
        return parsed == count
    }

    /// Ends the input: libcsv hands over the last field and row if one is open.
    func finish() {
        let context = Unmanaged.passUnretained(collector).toOpaque()
        _ = csv_fini(parser, LibCSVCallbacks.field, LibCSVCallbacks.record, context)
    }

    /// Bytes of the field being collected.
    var pendingFieldLength: Int { parser.pointee.entry_pos }

    /// Drops the bytes of the field being collected (used to cap a runaway field's memory; the
    /// row is rejected afterwards, so the lost bytes do not matter). libcsv 3's `csv_parser` is a
    /// public struct, and `entry_pos` is the fill level of its field buffer.
    func discardPendingFieldBytes() { parser.pointee.entry_pos = 0 }

    /// True while libcsv is inside a quoted field (state FIELD_BEGUN with `quoted` set).
    var isInsideQuotedField: Bool { parser.pointee.pstate == 2 && parser.pointee.quoted != 0 }
}
