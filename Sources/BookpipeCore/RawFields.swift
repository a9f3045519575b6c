/// The raw fields of a row, kept compactly: one text instead of a string per field, so a
/// million rows cost a million strings instead of thirty million. ``RecordOrigin/rawFields``
/// turns it into an array on demand.
///
/// How the fields are encoded in ``encoded`` is this type's business, stated here for the
/// readers that build it without making a string per field (the CSV reader):
/// the fields joined by U+001F (unit separator); inside a field, U+001F is written as ESC `_`
/// and ESC (U+001B) as ESC `[` (the byte XOR 0x40 after an ESC), so the encoding is reversible
/// and canonical: equal field lists give equal texts. Where a store keeps raw fields and in
/// what format is the store's business (it may choose these bytes to store them with one copy).
@usableFromInline
package struct RawFields: Sendable, Hashable {
    /// The encoded fields (empty for no fields and for one empty field; ``count`` tells them
    /// apart): a byte view for copying the fields without splitting them.
    package let encoded: String
    /// The number of fields.
    package let count: Int

    /// U+001F, between fields in ``encoded``. (Computed and inlinable, so hot loops in other
    /// modules see a constant instead of calling a global's accessor.)
    @inlinable package static var separator: UInt8 { 0x1F }
    /// U+001B, before an escaped byte inside a field in ``encoded``.
    @inlinable package static var escape: UInt8 { 0x1B }

    /// Joins fields.
    package init(_ fields: [String]) {
        var bytes: [UInt8] = []
        for index in fields.indices {
            if index > 0 { bytes.append(Self.separator) }
            Self.appendEscaped(fields[index], to: &bytes)
        }
        self.encoded = String(decoding: bytes, as: UTF8.self)
        self.count = fields.count
    }

    /// Wraps `count` fields already encoded as ``encoded`` describes.
    package init(encoded: String, count: Int) {
        self.encoded = encoded
        self.count = count
    }

    /// Appends a field's bytes, escaping separators and escapes.
    private static func appendEscaped(_ field: String, to output: inout [UInt8]) {
        let bytes = field.utf8.span
        var plain = true
        for index in bytes.indices where bytes[index] == separator || bytes[index] == escape {
            plain = false
            break
        }
        if plain {
            output.append(contentsOf: field.utf8)
            return
        }
        for index in bytes.indices {
            let byte = bytes[index]
            if byte == separator || byte == escape {
                output.append(escape)
                output.append(byte ^ 0x40)
            } else {
                output.append(byte)
            }
        }
    }

    /// The field at `position` (0-based), without splitting the others; nil past the last.
    package func field(at position: Int) -> String? {
        guard position >= 0, position < count else { return nil }
        var found: String?
        forEachField { column, bytes, range, hasEscape in
            guard column == position else { return true }
            found = Self.unescaped(bytes, range, hasEscape: hasEscape)
            return false
        }
        return found
    }

    /// The fields.
    package var fields: [String] {
        guard count > 0 else { return [] }
        var fields: [String] = []
        fields.reserveCapacity(count)
        forEachField { _, bytes, range, hasEscape in
            fields.append(Self.unescaped(bytes, range, hasEscape: hasEscape))
            return true
        }
        return fields
    }

    /// Calls `body` with each field's number, the encoded bytes, the field's byte range and whether
    /// it holds escapes, in order, until `body` returns false.
    private func forEachField(_ body: (Int, Span<UInt8>, Range<Int>, Bool) -> Bool) {
        let bytes = encoded.utf8.span
        var start = 0
        var hasEscape = false
        var column = 0
        var index = 0
        while index <= bytes.count {
            if index < bytes.count && bytes[index] == Self.escape {
                hasEscape = true
                index += 2
                continue
            }
            if index == bytes.count || bytes[index] == Self.separator {
                guard body(column, bytes, start..<min(index, bytes.count), hasEscape) else { return }
                column += 1
                start = index + 1
                hasEscape = false
            }
            index += 1
        }
    }

    private static func unescaped(_ bytes: Span<UInt8>, _ range: Range<Int>, hasEscape: Bool) -> String {
        guard hasEscape else { return SimpleText.string(bytes, range) }
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == escape, index + 1 < range.upperBound {
                output.append(bytes[index + 1] ^ 0x40)
                index += 2
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
