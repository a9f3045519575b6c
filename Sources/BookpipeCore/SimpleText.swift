/// Byte-level fast paths for *simple* text: every scalar below U+0300 (ASCII, Latin-1, Latin
/// Extended-A and -B, IPA, spacing modifiers) and no `&`. That covers nearly every title and
/// author of a western library, and such text needs none of the expensive steps of the general
/// paths:
/// - without `&` there are no HTML entities to decode;
/// - it is already in NFC (no scalar below U+0300 is a combining mark, decomposes, or composes
///   with another one below U+0300), and each `Character` is one scalar (CR LF aside);
/// - each scalar folds to a comparison key on its own, so keys come from a table built once from
///   the general algorithm (``TextFolding/generalKey(_:)`` applied to every scalar).
///
/// Every fast path returns exactly what the general path returns (the differential tests in
/// `SimpleTextTests` compare them on random text), or nil when the text is not simple.
///
/// This is an implementation detail of ``TextFolding`` (whose `clean`, `collapseWhitespace` and
/// `key` are the one API); the title and author normalisers' byte-level paths use its scanning
/// helpers. It reads the string's own UTF-8 through `Span` (bounds-checked, no pointers), passes
/// byte ranges instead of sub-buffers, and writes keys into a stack buffer (``withScratch``).
enum SimpleText {
    /// Scalars below this are simple.
    static let limit: UInt32 = 0x300

    struct Properties: OptionSet, Sendable {
        let rawValue: UInt8
        static let letter = Properties(rawValue: 1)
        static let uppercase = Properties(rawValue: 2)
        static let lowercase = Properties(rawValue: 4)
        static let alphabetic = Properties(rawValue: 8)
        static let whitespace = Properties(rawValue: 16)
        static let control = Properties(rawValue: 32)
    }

    /// `Character` and scalar properties of every simple scalar.
    static let properties: [Properties] = (0..<limit).map { value in
        guard let scalar = Unicode.Scalar(value) else { return [] }
        let character = Character(scalar)
        var properties: Properties = []
        if character.isLetter { properties.insert(.letter) }
        if character.isUppercase { properties.insert(.uppercase) }
        if character.isLowercase { properties.insert(.lowercase) }
        if scalar.properties.isAlphabetic { properties.insert(.alphabetic) }
        if scalar.properties.isWhitespace { properties.insert(.whitespace) }
        if scalar.properties.generalCategory == .control { properties.insert(.control) }
        return properties
    }

    /// What one scalar contributes to a comparison key: `nil` entries separate words, others are
    /// UTF-8 bytes to emit. Built from the general algorithm, scalar by scalar.
    static let keyOperations: [[[UInt8]?]] = (0..<limit).map { value in
        guard let scalar = Unicode.Scalar(value), value != UInt32(UInt8(ascii: "&")) else { return [] }
        return TextFolding.keyOperations(folded: TextFolding.fold(String(Character(scalar))))
    }

    // MARK: - Scanning

    /// Calls `body` with each scalar of simple UTF-8 text and the byte range it occupies; false
    /// when the text is not simple (a scalar at or above U+0300, or `&` unless allowed).
    @inline(__always)
    static func forEachScalar(_ bytes: Span<UInt8>, in range: Range<Int>? = nil, allowAmpersand: Bool = false,
                              _ body: (_ scalar: UInt32, _ start: Int, _ end: Int) -> Void) -> Bool {
        var index = range?.lowerBound ?? 0
        let count = range?.upperBound ?? bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == UInt8(ascii: "&") && !allowAmpersand { return false }
                body(UInt32(byte), index, index + 1)
                index += 1
            } else if byte >= 0xC2 && byte <= 0xCB && index + 1 < count {
                body(UInt32(byte & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F), index, index + 2)
                index += 2
            } else {
                return false
            }
        }
        return true
    }

    /// True when the text is simple.
    @inline(__always)
    static func isSimple(_ bytes: Span<UInt8>, allowAmpersand: Bool = false) -> Bool {
        for index in bytes.indices {
            let byte = bytes[index]
            if byte >= 0xCC || (byte == UInt8(ascii: "&") && !allowAmpersand) { return false }
        }
        return true
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// The scalar of simple text that starts at `index` (one byte, or a lead byte and one more).
    @inline(__always)
    static func scalar(_ bytes: Span<UInt8>, at index: Int) -> Int {
        let byte = bytes[index]
        return byte < 0x80 ? Int(byte) : Int(byte & 0x1F) << 6 | Int(bytes[index + 1] & 0x3F)
    }

    // MARK: - Clean-up

    /// ``TextFolding/collapseWhitespace(_:)`` of simple text; the text itself when nothing
    /// changes. With `allowAmpersand` false this is also ``TextFolding/clean(_:)``.
    static func collapseWhitespace(_ text: String, allowAmpersand: Bool) -> String? {
        let bytes = text.utf8.span
        let properties = Self.properties
        // One pass: is it simple, and does anything change? (Only single spaces between other
        // characters stay.)
        var index = 0
        let count = bytes.count
        var previousWasSpace = true  // a space at the start is removed
        var changed = false
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == 0x20 {
                    if previousWasSpace { changed = true }
                    previousWasSpace = true
                } else if byte < 0x20 || byte == 0x7F {
                    changed = true  // other whitespace or a control character
                } else {
                    if byte == UInt8(ascii: "&") && !allowAmpersand { return nil }
                    previousWasSpace = false
                }
                index += 1
            } else {
                guard byte < 0xCC, index + 1 < count else { return nil }
                let scalar = Int(byte & 0x1F) << 6 | Int(bytes[index + 1] & 0x3F)
                if !properties[scalar].isDisjoint(with: [.whitespace, .control]) { changed = true }
                previousWasSpace = false
                index += 2
            }
        }
        guard changed || (previousWasSpace && count > 0) else { return text }
        return String(decoding: collapse(bytes), as: UTF8.self)
    }

    /// Whitespace runs made one space, controls dropped, ends trimmed (simple text).
    private static func collapse(_ bytes: Span<UInt8>) -> [UInt8] {
        let properties = Self.properties
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pending = false
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            let width = byte < 0x80 ? 1 : 2
            let property = properties[scalar(bytes, at: index)]
            if property.contains(.whitespace) {
                pending = !output.isEmpty
            } else if !property.contains(.control) {
                if pending {
                    output.append(0x20)
                    pending = false
                }
                output.append(byte)
                if width == 2 { output.append(bytes[index + 1]) }
            }
            index += width
        }
        return output
    }

    /// ``TextFolding/key(_:)`` of simple text.
    static func key(_ text: String) -> String? {
        let bytes = text.utf8.span
        guard isSimple(bytes) else { return nil }
        return withScratch(capacity: keyCapacity(bytes.count)) { buffer in
            var count = 0
            appendKey(bytes, to: &buffer, count: &count)
            return string(buffer.span, 0..<count)
        }
    }

    /// Room for the key of `count` bytes of simple text: a scalar adds at most three bytes per
    /// byte of its own (a fold such as ǆ → dž, and a space before it; `SimpleTextTests` checks).
    static func keyCapacity(_ count: Int) -> Int { count * 3 + 1 }

    /// Calls `body` with a scratch buffer of at least `capacity` bytes: on the stack when that
    /// is small (the usual title or name), else on the heap.
    @inline(__always)
    static func withScratch<Result>(capacity: Int, _ body: (inout MutableSpan<UInt8>) -> Result) -> Result {
        // Two stack sizes: zeroing the buffer is the price of safety, so short text (most
        // names and titles) takes the small one.
        if capacity <= 128 {
            var storage = InlineArray<128, UInt8>(repeating: 0)
            var buffer = storage.mutableSpan
            return body(&buffer)
        }
        if capacity <= 512 {
            var storage = InlineArray<512, UInt8>(repeating: 0)
            var buffer = storage.mutableSpan
            return body(&buffer)
        }
        var storage = [UInt8](repeating: 0, count: capacity)
        var buffer = storage.mutableSpan
        return body(&buffer)
    }

    /// Writes the key of simple bytes (checked by the caller) at `buffer[count...]`: words
    /// separated by single spaces, no space at either end.
    @inline(__always)
    static func appendKey(_ bytes: Span<UInt8>, in range: Range<Int>? = nil, to buffer: inout MutableSpan<UInt8>,
                          count: inout Int) {
        let start = count
        var pending = false
        var index = range?.lowerBound ?? 0
        let length = range?.upperBound ?? bytes.count
        while index < length {
            let byte = bytes[index]
            if byte < 0x80 {
                index += 1
                switch byte {
                case 0x00...0x1F, 0x7F, UInt8(ascii: "'"), UInt8(ascii: "`"): continue
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    if pending && count > start {
                        buffer[count] = 0x20
                        count += 1
                    }
                    pending = false
                    buffer[count] = byte + 32
                    count += 1
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: ">"),
                     UInt8(ascii: "^"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                    if pending && count > start {
                        buffer[count] = 0x20
                        count += 1
                    }
                    pending = false
                    buffer[count] = byte
                    count += 1
                default:
                    pending = true
                }
            } else {
                let scalar = Int(byte & 0x1F) << 6 | Int(bytes[index + 1] & 0x3F)
                index += 2
                for operation in keyOperations[scalar] {
                    if let emitted = operation {
                        if pending && count > start {
                            buffer[count] = 0x20
                            count += 1
                        }
                        pending = false
                        for byte in emitted {
                            buffer[count] = byte
                            count += 1
                        }
                    } else {
                        pending = true
                    }
                }
            }
        }
    }

    /// The number of alphabetic scalars of simple text (``TextFolding/letterCount(_:)``) in
    /// `range` of the bytes.
    static func letterCount(_ bytes: Span<UInt8>, in range: Range<Int>? = nil) -> Int {
        var count = 0
        _ = forEachScalar(bytes, in: range, allowAmpersand: true) { scalar, _, _ in
            if properties[Int(scalar)].contains(.alphabetic) { count += 1 }
        }
        return count
    }

    /// `range` of simple text without leading and trailing whitespace.
    static func trimmed(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end {
            if isSpace(bytes[start]) {
                start += 1
            } else if bytes[start] == 0xC2, start + 1 < end, bytes[start + 1] == 0x85 || bytes[start + 1] == 0xA0 {
                start += 2
            } else {
                break
            }
        }
        while end > start {
            if isSpace(bytes[end - 1]) {
                end -= 1
            } else if end - 2 >= start, bytes[end - 2] == 0xC2, bytes[end - 1] == 0x85 || bytes[end - 1] == 0xA0 {
                end -= 2
            } else {
                break
            }
        }
        return start..<end
    }

    /// The text of `range` of UTF-8 bytes (cut at scalar boundaries; invalid UTF-8 is repaired
    /// as `String(decoding:as:)` does).
    static func string(_ bytes: Span<UInt8>, _ range: Range<Int>) -> String {
        let part = bytes.extracting(range)
        if let valid = try? UTF8Span(validating: part) { return String(copying: valid) }
        var copy: [UInt8] = []
        copy.reserveCapacity(part.count)
        for index in part.indices { copy.append(part[index]) }
        return String(decoding: copy, as: UTF8.self)
    }

    /// The first index of `byte` in `range` of the bytes.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: Span<UInt8>, _ range: Range<Int>) -> Int? {
        for index in range where bytes[index] == byte { return index }
        return nil
    }

    /// The last index of `byte` in `range` of the bytes.
    @inline(__always)
    static func lastIndex(of byte: UInt8, in bytes: Span<UInt8>, _ range: Range<Int>) -> Int? {
        for index in range.reversed() where bytes[index] == byte { return index }
        return nil
    }
}

extension String {
    /// True when the text's UTF-8 has this byte: one pass over the string's storage (the generic
    /// `utf8.contains` walks the view index by index).
    @inline(__always)
    func containsUTF8Byte(_ byte: UInt8) -> Bool {
        let bytes = utf8.span
        for index in bytes.indices where bytes[index] == byte { return true }
        return false
    }
}
