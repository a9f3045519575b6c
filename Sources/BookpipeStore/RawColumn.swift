import BookpipeCore
import BookpipeLibrary

/// The `raw` column of `records`: a record's raw fields in one text, NULL for a record without
/// fields.
///
/// Format: the fields joined by U+001F (unit separator); inside a field, U+001F is written as
/// ESC `_` and ESC (U+001B) as ESC `[` (the byte XOR 0x40 after an ESC). Equal field lists give
/// equal texts, and one empty field is the empty text (NULL is no field at all).
///
/// These are, by choice, the bytes of ``RawFields/encoded`` (how records keep their fields), so
/// storing a row's fields is one copy and reading them back splits nothing. The format is the
/// store's: `RawColumnTests` pins it, so a change to how Core encodes ``RawFields`` fails there
/// instead of silently changing library files (this mapping then has to translate).
enum RawColumn {
    /// U+001F, between fields. (Computed, so hot loops see a constant.)
    @inline(__always) static var separator: UInt8 { 0x1F }
    /// U+001B, before an escaped byte inside a field.
    @inline(__always) static var escape: UInt8 { 0x1B }

    /// The column text of raw fields (empty for none: write NULL when `fields.count` is 0).
    @inline(__always)
    static func text(of fields: RawFields) -> String { fields.encoded }

    /// The raw fields of a column value; NULL means no fields.
    static func fields(_ text: String?) -> RawFields {
        guard let text else { return RawFields(encoded: "", count: 0) }
        var separators = 0
        var previousWasEscape = false
        for byte in text.utf8 {
            if previousWasEscape {
                previousWasEscape = false
            } else if byte == escape {
                previousWasEscape = true
            } else if byte == separator {
                separators += 1
            }
        }
        return RawFields(encoded: text, count: separators + 1)
    }
}
