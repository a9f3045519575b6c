/// The raw fields of a row kept as one text: the fields joined by U+001F (unit separator). Inside
/// a field, U+001F is written as ESC `_` and ESC (U+001B) as ESC `[` (the byte XOR 0x40 after an
/// ESC), so joining is reversible and canonical: equal field lists give equal texts.
///
/// This is how the CSV reader hands a row over and how the library stores it, so a million rows
/// cost a million strings instead of thirty million, and storing a row's fields is one copy.
/// ``RecordOrigin/rawFields`` turns it into an array on demand.
@usableFromInline
package struct JoinedFields: Sendable, Hashable {
    /// The joined text (empty for no fields and for one empty field; ``count`` tells them apart).
    package let text: String
    /// The number of fields.
    package let count: Int

    /// U+001F, between fields. (Computed and inlinable, so hot loops in other modules see a
    /// constant instead of calling a global's accessor.)
    @inlinable package static var separator: UInt8 { 0x1F }
    /// U+001B, before an escaped byte inside a field.
    @inlinable package static var escape: UInt8 { 0x1B }

    /// Joins fields.
    package init(_ fields: [String]) {
        var bytes: [UInt8] = []
        for index in fields.indices {
            if index > 0 { bytes.append(Self.separator) }
            Self.appendEscaped(fields[index], to: &bytes)
        }
        self.text = String(decoding: bytes, as: UTF8.self)
        self.count = fields.count
    }

    /// Wraps an already joined text of `count` fields.
    package init(text: String, count: Int) {
        self.text = text
        self.count = count
    }

    /// Wraps a joined text as stored: nil means no fields.
    package init(storedText: String?) {
        guard let storedText else {
            self.init(text: "", count: 0)
            return
        }
        var separators = 0
        var previousWasEscape = false
        for byte in storedText.utf8 {
            if previousWasEscape {
                previousWasEscape = false
            } else if byte == Self.escape {
                previousWasEscape = true
            } else if byte == Self.separator {
                separators += 1
            }
        }
        self.init(text: storedText, count: separators + 1)
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

    /// The fields.
    package var fields: [String] {
        guard count > 0 else { return [] }
        let bytes = text.utf8.span
        var fields: [String] = []
        fields.reserveCapacity(count)
        var start = 0
        var hasEscape = false
        var index = 0
        while index <= bytes.count {
            if index < bytes.count && bytes[index] == Self.escape {
                hasEscape = true
                index += 2
                continue
            }
            if index == bytes.count || bytes[index] == Self.separator {
                let end = min(index, bytes.count)
                fields.append(Self.unescaped(bytes, start..<end, hasEscape: hasEscape))
                start = index + 1
                hasEscape = false
            }
            index += 1
        }
        return fields
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
