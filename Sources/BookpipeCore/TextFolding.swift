internal import Foundation
import Synchronization

/// Text clean-up shared by the title and author normalisers: HTML entities, Unicode NFC,
/// whitespace, and the folding that builds comparison keys.
///
/// Comparison keys are for comparing only; display text always keeps what was read.
public enum TextFolding {
    /// Decodes the HTML entities that book data carries (`&amp;`, `&quot;`, `&#39;`, `&#x27;`,
    /// `&lt;`, `&gt;`, `&nbsp;`, dashes and quotes, and any numeric reference), until none is
    /// left.
    ///
    /// An unknown or malformed entity, or a numeric one that names no Unicode scalar, is kept as
    /// written. Text escaped twice (`&amp;amp;`, `&amp;#39;`: exports that escape what a website
    /// had already escaped) is decoded to its characters (`&`, `'`), so that cleaning the clean
    /// form changes nothing: a clean title never holds an entity that the next reading would
    /// decode. Each pass that decodes shortens the text, so the passes end.
    ///
    /// - Parameter text: The text as read.
    /// - Returns: The text with entities replaced by their characters.
    public static func decodeHTMLEntities(_ text: String) -> String {
        var current = text
        while true {
            let next = decodeHTMLEntitiesOnce(current)
            if next.utf8.count == current.utf8.count && next == current { return current }
            current = next
        }
    }

    /// One pass of ``decodeHTMLEntities(_:)``: `&amp;amp;` becomes `&amp;`.
    private static func decodeHTMLEntitiesOnce(_ text: String) -> String {
        guard text.containsUTF8Byte(UInt8(ascii: "&")) else { return text }
        var output = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "&",
                  let end = scalars[(index + 1)...].prefix(12).firstIndex(of: ";"),
                  end > index + 1
            else {
                output.append(scalar)
                index += 1
                continue
            }
            let name = String(String.UnicodeScalarView(scalars[(index + 1)..<end]))
            if let decoded = decodeEntity(name) {
                output.append(contentsOf: decoded.unicodeScalars)
                index = end + 1
            } else {
                output.append(scalar)
                index += 1
            }
        }
        return String(output)
    }

    private static let namedEntities: [String: String] = [
        "amp": "&", "quot": "\"", "apos": "'", "lt": "<", "gt": ">", "nbsp": "\u{00A0}",
        "ndash": "\u{2013}", "mdash": "\u{2014}", "hellip": "\u{2026}",
        "lsquo": "\u{2018}", "rsquo": "\u{2019}", "ldquo": "\u{201C}", "rdquo": "\u{201D}",
        "laquo": "\u{00AB}", "raquo": "\u{00BB}", "copy": "\u{00A9}", "reg": "\u{00AE}",
        "trade": "\u{2122}", "shy": "\u{00AD}", "middot": "\u{00B7}",
    ]

    private static func decodeEntity(_ name: String) -> String? {
        if name.hasPrefix("#") {
            let body = name.dropFirst()
            let value: UInt32?
            if body.first == "x" || body.first == "X" {
                value = UInt32(body.dropFirst(), radix: 16)
            } else {
                value = UInt32(body, radix: 10)
            }
            guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
            return String(Character(scalar))
        }
        return namedEntities[name] ?? namedEntities[name.lowercased()]
    }

    /// The text in Unicode Normalization Form C (composed: `e` + U+0301 becomes `é`).
    public static func nfc(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) || isKnownNFC(text) { return text }
        return text.precomposedStringWithCanonicalMapping
    }

    /// True when Unicode's NFC quick check says the text is in NFC (false: it may not be).
    static func isKnownNFC(_ text: String) -> Bool {
        var span = text.utf8Span
        return span.checkForNFC(quickCheck: true)
    }

    /// The text with every run of whitespace (including no-break spaces and line breaks) made one
    /// space, control and invisible format characters removed, and the ends trimmed.
    ///
    /// Joiners inside emoji sequences and bidirectional marks are kept so emoji and right-to-left
    /// text display as read.
    public static func collapseWhitespace(_ text: String) -> String {
        if let fast = SimpleText.collapseWhitespace(text, allowAmpersand: true) { return fast }
        return generalCollapseWhitespace(text)
    }

    /// ``collapseWhitespace(_:)`` for any text, scalar by scalar on its UTF-8 bytes. Most text
    /// needs no change, which one pass finds out without building a new string.
    static func generalCollapseWhitespace(_ text: String) -> String {
        let bytes = text.utf8.span
        guard Self.needsCollapsing(bytes) else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pendingSpace = false
        Self.forEachScalar(bytes) { scalar, range in
            switch Self.spaceClass(scalar) {
            case .space:
                pendingSpace = !output.isEmpty
            case .removed:
                break
            case .kept:
                if pendingSpace {
                    output.append(UInt8(ascii: " "))
                    pendingSpace = false
                }
                for index in range { output.append(bytes[index]) }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// What ``collapseWhitespace(_:)`` does with a scalar.
    private enum SpaceClass { case space, removed, kept }

    @inline(__always)
    private static func spaceClass(_ scalar: Unicode.Scalar) -> SpaceClass {
        let value = scalar.value
        if value < 0x80 {
            if value == 0x20 || (value >= 0x09 && value <= 0x0D) { return .space }
            return value < 0x20 || value == 0x7F ? .removed : .kept
        }
        if scalar.properties.isWhitespace { return .space }
        if (value >= 0x80 && value <= 0x9F) || value == 0xFEFF || value == 0x200B { return .removed }
        return .kept
    }

    /// True when collapsing changes the text: whitespace other than single spaces between kept
    /// scalars, or a scalar that is removed.
    private static func needsCollapsing(_ bytes: Span<UInt8>) -> Bool {
        var previousWasSpace = true  // a space at the start is removed
        var changes = false
        forEachScalar(bytes) { scalar, _ in
            if changes { return }
            switch spaceClass(scalar) {
            case .space:
                if scalar != " " || previousWasSpace { changes = true }
                previousWasSpace = true
            case .removed:
                changes = true
            case .kept:
                previousWasSpace = false
            }
        }
        return changes || (previousWasSpace && !bytes.isEmpty)
    }

    /// Calls `body` with each scalar of valid UTF-8 and the byte range it takes.
    @inline(__always)
    private static func forEachScalar(_ bytes: Span<UInt8>,
                                      _ body: (Unicode.Scalar, Range<Int>) -> Void) {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = UInt32(bytes[index])
            var value = lead
            var length = 1
            if lead >= 0xF0, index + 3 < count {
                length = 4
                value = (lead & 0x07) << 18 | UInt32(bytes[index + 1] & 0x3F) << 12
                    | UInt32(bytes[index + 2] & 0x3F) << 6 | UInt32(bytes[index + 3] & 0x3F)
            } else if lead >= 0xE0, index + 2 < count {
                length = 3
                value = (lead & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
            } else if lead >= 0xC0, index + 1 < count {
                length = 2
                value = (lead & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
            }
            body(Unicode.Scalar(value) ?? "\u{FFFD}", index..<(index + length))
            index += length
        }
    }

    /// Decodes entities, normalises to NFC and collapses whitespace: the clean display form.
    public static func clean(_ text: String) -> String {
        if let fast = SimpleText.collapseWhitespace(text, allowAmpersand: false) { return fast }
        return generalClean(text)
    }

    /// ``clean(_:)`` for any text.
    ///
    /// Repeated until nothing changes: removing an invisible character can join the parts of an
    /// entity (`&amp;` U+200B `#39;` becomes `&#39;` only once the U+200B is gone), and the clean
    /// form must be clean (cleaning it again changes nothing). Each round that changes the text
    /// shortens it, so the rounds end.
    static func generalClean(_ text: String) -> String {
        var current = collapseWhitespace(nfc(decodeHTMLEntities(text)))
        while current.containsUTF8Byte(UInt8(ascii: "&")) {
            let next = collapseWhitespace(nfc(decodeHTMLEntities(current)))
            if next == current { break }
            current = next
        }
        return current
    }

    /// Letters that Unicode does not decompose into a base letter and a mark, folded by hand so
    /// that `Łódź` and `Lodz`, `Ørsted` and `Orsted` compare equal.
    private static let extraFolds: [Unicode.Scalar: String] = [
        "ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i", "ħ": "h",
        "ŀ": "l", "ŧ": "t", "ß": "ss",
    ]

    /// The comparison form of a text: entities decoded, NFC, case-folded, diacritics folded,
    /// apostrophes dropped (`Reader’s` → `readers`), `&` read as `and`, every other
    /// punctuation character made a space, invisible format characters removed, whitespace
    /// collapsed.
    ///
    /// Leading articles are kept (see ``TitleNormalizer`` for why). Letters, digits and symbols
    /// such as emoji stay, so a title made only of emoji still has a key.
    ///
    /// ```swift
    /// TextFolding.key("Pippi Långstrump")   // "pippi langstrump"
    /// TextFolding.key("A Reader’s Book")    // "a readers book"
    /// ```
    public static func key(_ text: String) -> String {
        if let fast = SimpleText.key(text) { return fast }
        return generalKey(text)
    }

    /// `text.split(separator: separator)`: the same substrings, found by comparing bytes instead of
    /// walking `Character`s when the text is simple (every scalar below U+0300) and holds no
    /// carriage return — then every `Character` is one scalar, so a byte equal to the ASCII
    /// separator is exactly a `Character` equal to it. Keys and catalogue columns are such text.
    ///
    /// ```swift
    /// TextFolding.split("the  road", separator: " ")   // ["the", "road"]
    /// ```
    public static func split(_ text: String, separator: Unicode.Scalar) -> [Substring] {
        let separatorByte = UInt8(truncatingIfNeeded: separator.value)
        let bytes = text.utf8.span
        guard separator.isASCII, SimpleText.isSimple(bytes, allowAmpersand: true),
              SimpleText.firstIndex(of: 0x0D, in: bytes, 0..<bytes.count) == nil else {
            return text.split(separator: Character(separator))
        }
        var pieces: [Substring] = []
        let utf8 = text.utf8
        var pieceStart = utf8.startIndex
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let next = utf8.index(after: index)
            if utf8[index] == separatorByte {
                if pieceStart != index { pieces.append(text[pieceStart..<index]) }
                pieceStart = next
            }
            index = next
        }
        if pieceStart != utf8.endIndex { pieces.append(text[pieceStart..<utf8.endIndex]) }
        return pieces
    }

    /// ``key(_:)`` for any text.
    static func generalKey(_ text: String) -> String {
        scalarByScalarKey(text) ?? wholeTextKey(text)
    }

    /// The key operations of single scalars, each computed once by ``wholeTextKey(_:)``'s steps
    /// (at most ``scalarCacheLimit`` scalars; a text with a scalar past that takes the slow path).
    private static let scalarOperations = Mutex<[UInt32: [[UInt8]?]]>([:])
    static let scalarCacheLimit = 65_536

    /// ``generalKey(_:)`` of text in NFC without `&` (no entities), scalar by scalar: case and
    /// diacritic folding and the key rules act on each scalar alone, so each scalar's share of
    /// the key is computed once per process instead of folding the whole text with Foundation
    /// (the cost of every non-Latin title). Nil for other text. `SimpleTextTests` compares it
    /// with ``wholeTextKey(_:)`` on random text of many scripts.
    static func scalarByScalarKey(_ text: String) -> String? {
        guard !text.containsUTF8Byte(UInt8(ascii: "&")), isKnownNFC(text) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        let complete = scalarOperations.withLock { cache -> Bool in
            for scalar in text.unicodeScalars {
                let operations: [[UInt8]?]
                if let known = cache[scalar.value] {
                    operations = known
                } else {
                    guard cache.count < scalarCacheLimit else { return false }
                    operations = keyOperations(folded: fold(String(scalar)))
                    cache[scalar.value] = operations
                }
                apply(operations, to: &output, pendingSpace: &pendingSpace)
            }
            return true
        }
        return complete ? String(decoding: output, as: UTF8.self) : nil
    }

    /// ``key(_:)`` by its definition: the whole text decoded, normalised and folded at once.
    static func wholeTextKey(_ text: String) -> String {
        var output: [UInt8] = []
        var pendingSpace = false
        apply(keyOperations(folded: fold(nfc(decodeHTMLEntities(text)))), to: &output, pendingSpace: &pendingSpace)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends key operations to a key: bytes are written, `nil` separates words (one space
    /// between words, none at the ends).
    private static func apply(_ operations: [[UInt8]?], to output: inout [UInt8], pendingSpace: inout Bool) {
        for operation in operations {
            if let bytes = operation {
                if pendingSpace && !output.isEmpty { output.append(0x20) }
                pendingSpace = false
                output.append(contentsOf: bytes)
            } else {
                pendingSpace = true
            }
        }
    }

    /// Case and diacritic folding (Foundation's).
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// What the scalars of folded text contribute to a key: `nil` separates words, other entries
    /// are UTF-8 bytes to emit.
    static func keyOperations(folded: String) -> [[UInt8]?] {
        var operations: [[UInt8]?] = []
        for scalar in folded.unicodeScalars {
            if let replacement = extraFolds[scalar] {
                operations.append(Array(replacement.utf8))
                continue
            }
            if isApostrophe(scalar) { continue }
            if scalar == "&" {
                operations += [nil, Array("and".utf8), nil]
                continue
            }
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format, .control:
                continue
            case .spaceSeparator, .lineSeparator, .paragraphSeparator,
                 .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                 .initialPunctuation, .finalPunctuation, .otherPunctuation:
                operations.append(nil)
            default:
                if scalar.properties.isWhitespace {
                    operations.append(nil)
                } else {
                    operations.append(Array(String(scalar).utf8))
                }
            }
        }
        return operations
    }

    static func isApostrophe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "'", "\u{2019}", "\u{2018}", "\u{02BC}", "\u{00B4}", "`", "\u{FF07}": true
        default: false
        }
    }

    /// The number of letters in a text.
    static func letterCount(_ text: String) -> Int {
        let bytes = text.utf8.span
        if SimpleText.isSimple(bytes, allowAmpersand: true) { return SimpleText.letterCount(bytes) }
        return text.unicodeScalars.count(where: { $0.properties.isAlphabetic })
    }
}
