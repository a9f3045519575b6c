import Foundation

/// Reads the members of a dump line's JSON that ``DumpRecord`` uses, in one pass over its bytes.
///
/// The fast path of ``RecordJSON``: it gives the same record as `JSONDecoder` with
/// `RecordJSON.init(from:)` — the readable specification, and the oracle `DumpJSONScannerTests`
/// compares it with — at a fraction of the cost (JSON decoding was a quarter of a catalogue
/// import's CPU time; decision note 0032). It follows the specification on both levels:
///
/// - **Structure**, checked in every member, also those it skips: one object, with quoted member
///   names, colons, commas and closed brackets, `true`/`false`/`null`, numbers starting with `-`
///   or a digit; a line that breaks it is refused with the offset and what was expected. Like
///   `JSONDecoder` on Linux, one trailing comma before `}` or `]` is accepted, and a string's
///   escapes and a number's digits are checked only in values that are read.
/// - **Values** are read leniently: a string member holds a string, or an integer written as a
///   number (`"title": 1984` is `"1984"`); a list member holds a list (anything else is empty)
///   whose elements of other shapes are dropped; a reference is `"/authors/OL1A"`, `{"key": …}`
///   or `{"author": <reference>}`; `number_of_pages` is an integer, a number (truncated) or text
///   holding an integer. A value that does not decode — a bad escape, a lone surrogate, a control
///   character, bytes that are not UTF-8, `01` — reads as absent, as any value of another shape.
///
/// When a member appears twice, the first one counts, as with `JSONDecoder`.
struct DumpJSONScanner {
    /// Why the JSON does not parse, and where (a byte offset in the scanned line).
    struct SyntaxError: Error, Equatable {
        /// Offset of the offending byte (or of the end) in the line's bytes.
        var offset: Int
        /// What is wrong, for people ("the line ends inside a string").
        var reason: String
    }

    /// Nesting deeper than this is refused, so no line can exhaust the stack.
    static let maximumDepth = 512

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    private init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    /// The members of a record's JSON object.
    ///
    /// - Parameter json: The JSON field of a dump line (a slice of the line, so offsets are the line's).
    /// - Throws: ``SyntaxError`` when the field is not one JSON object (and nothing else) in strict JSON syntax.
    static func record(from json: ArraySlice<UInt8>) throws(SyntaxError) -> RecordJSON {
        var scanner = DumpJSONScanner(json)
        var record = RecordJSON()
        scanner.skipWhitespace()
        guard scanner.peek() == Byte.openBrace else {
            throw scanner.error(scanner.isAtEnd ? "the JSON field is empty" : "expected a JSON object")
        }
        scanner.index += 1
        var seen = Set<Member>()
        var undecodableName: Int?
        if try !scanner.isClosing(Byte.closeBrace) {
            repeat {
                var member = try scanner.memberName(undecodableName: &undecodableName)
                if let known = member, !seen.insert(known).inserted { member = nil }  // The first one counts.
                switch member {
                case .key: record.key = try scanner.lenientString(depth: 1)
                case .title: record.title = try scanner.lenientString(depth: 1)
                case .subtitle: record.subtitle = try scanner.lenientString(depth: 1)
                case .name: record.name = try scanner.lenientString(depth: 1)
                case .personalName: record.personalName = try scanner.lenientString(depth: 1)
                case .alternateNames: record.alternateNames = try scanner.lenientStrings(depth: 1)
                case .works: record.works = try scanner.references(depth: 1)
                case .authors: record.authors = try scanner.references(depth: 1)
                case .isbn10s: record.isbn10s = try scanner.lenientStrings(depth: 1)
                case .isbn13s: record.isbn13s = try scanner.lenientStrings(depth: 1)
                case .publishDate: record.publishDate = try scanner.lenientString(depth: 1)
                case .firstPublishDate: record.firstPublishDate = try scanner.lenientString(depth: 1)
                case .numberOfPages: record.numberOfPages = try scanner.lenientInteger(depth: 1)
                case .publishers: record.publishers = try scanner.lenientStrings(depth: 1)
                case .author, nil: try scanner.skipValue(depth: 1)
                }
            } while try scanner.hasNextItem(closing: Byte.closeBrace)
        }
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw scanner.error("unexpected text after the JSON object") }
        // JSONDecoder reads the record's member names first: one that does not decode refuses the line.
        if let offset = undecodableName {
            throw SyntaxError(offset: offset, reason: "a member name is not valid text (an escape, a control character or bytes that are not UTF-8)")
        }
        return record
    }

    // MARK: - Members kept

    /// The members ``RecordJSON`` reads, by their JSON names (and a reference's `author`).
    private enum Member: CaseIterable {
        case key, title, subtitle, name, personalName, alternateNames, works, authors, isbn10s, isbn13s
        case publishDate, firstPublishDate, numberOfPages, publishers, author

        var jsonName: String {
            switch self {
            case .key: "key"
            case .title: "title"
            case .subtitle: "subtitle"
            case .name: "name"
            case .personalName: "personal_name"
            case .alternateNames: "alternate_names"
            case .works: "works"
            case .authors: "authors"
            case .isbn10s: "isbn_10"
            case .isbn13s: "isbn_13"
            case .publishDate: "publish_date"
            case .firstPublishDate: "first_publish_date"
            case .numberOfPages: "number_of_pages"
            case .publishers: "publishers"
            case .author: "author"
            }
        }

        static let names: [(member: Member, bytes: [UInt8])] = allCases.map { ($0, Array($0.jsonName.utf8)) }

        init?(_ name: some Collection<UInt8>) {
            guard let found = Self.names.first(where: { $0.bytes.count == name.count && $0.bytes.elementsEqual(name) }) else {
                return nil
            }
            self = found.member
        }
    }

    /// Reads a member's name and the colon after it: the member, or nil for one that is not kept.
    /// A name that does not decode (a bad escape, a control character, bytes that are not UTF-8)
    /// sets `undecodableName` to its offset.
    private mutating func memberName(undecodableName: inout Int?) throws(SyntaxError) -> Member? {
        skipWhitespace()
        guard peek() == Byte.quote else { throw error("expected a member name in quotes") }
        let start = index
        let raw = try rawString()
        var member: Member?
        if raw.isPlain {
            member = Member(raw.contents)
        } else if let name = Self.decoded(raw.contents) {
            member = Member(Array(name.utf8))
        } else if undecodableName == nil {
            undecodableName = start
        }
        skipWhitespace()
        guard peek() == Byte.colon else { throw error("expected ':' after a member name") }
        index += 1
        return member
    }

    /// A string, or an integer written as a number, as text; nil for any other value.
    private mutating func lenientString(depth: Int) throws(SyntaxError) -> String? {
        skipWhitespace()
        switch peek() ?? 0 {
        case Byte.quote:
            return try string()
        case Byte.minus, Byte.zero...Byte.nine:
            return number().integer.map(String.init)
        default:
            try skipValue(depth: depth)
            return nil
        }
    }

    /// An integer written as a number (a fraction is truncated, up to a billion) or as text; nil otherwise.
    private mutating func lenientInteger(depth: Int) throws(SyntaxError) -> Int? {
        skipWhitespace()
        switch peek() ?? 0 {
        case Byte.quote:
            return try string().flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        case Byte.minus, Byte.zero...Byte.nine:
            let number = number()
            if let integer = number.integer { return integer }
            guard let value = number.value, value.isFinite, abs(value) < 1e9 else { return nil }
            return Int(value)
        default:
            try skipValue(depth: depth)
            return nil
        }
    }

    /// A list's strings (see ``lenientString(depth:)``); empty for any other value.
    private mutating func lenientStrings(depth: Int) throws(SyntaxError) -> [String] {
        try list(depth: depth) { scanner, depth throws(SyntaxError) in try scanner.lenientString(depth: depth) }
    }

    /// A list's references (see ``reference(depth:)``); empty for any other value.
    private mutating func references(depth: Int) throws(SyntaxError) -> [String] {
        try list(depth: depth) { scanner, depth throws(SyntaxError) in try scanner.reference(depth: depth) }
    }

    private mutating func list(
        depth: Int, element: (inout DumpJSONScanner, Int) throws(SyntaxError) -> String?
    ) throws(SyntaxError) -> [String] {
        skipWhitespace()
        guard peek() == Byte.openBracket else {
            try skipValue(depth: depth)
            return []
        }
        guard depth < Self.maximumDepth else { throw error("the JSON is nested too deeply") }
        index += 1
        var values: [String] = []
        if try isClosing(Byte.closeBracket) { return values }
        repeat {
            if let value = try element(&self, depth + 1) { values.append(value) }
        } while try hasNextItem(closing: Byte.closeBracket)
        return values
    }

    /// A reference to another record: `"/works/OL1W"`, `{"key": "/works/OL1W"}`, or
    /// `{"author": <reference>}` (a `key` that is a string wins over `author`); nil for any other
    /// value and for an empty key.
    private mutating func reference(depth: Int) throws(SyntaxError) -> String? {
        skipWhitespace()
        var key: String?
        switch peek() {
        case Byte.quote:
            key = try string()
        case Byte.openBrace:
            guard depth < Self.maximumDepth else { throw error("the JSON is nested too deeply") }
            index += 1
            var direct: String?
            var viaAuthor: String?
            var seen = Set<Member>()
            var undecodableName: Int?
            if try !isClosing(Byte.closeBrace) {
                repeat {
                    var member = try memberName(undecodableName: &undecodableName)
                    if let known = member, !seen.insert(known).inserted { member = nil }  // The first one counts.
                    switch member {
                    case .key:
                        skipWhitespace()
                        if peek() == Byte.quote {
                            direct = try string()
                        } else {
                            try skipValue(depth: depth + 1)
                        }
                    case .author:
                        viaAuthor = try reference(depth: depth + 1)
                    default:
                        try skipValue(depth: depth + 1)
                    }
                } while try hasNextItem(closing: Byte.closeBrace)
            }
            // A reference object with a name that does not decode is not a reference (JSONDecoder fails
            // to open it as an object, and `KeyReference` reads that as absent).
            key = undecodableName == nil ? direct ?? viaAuthor : nil
        default:
            try skipValue(depth: depth)
        }
        return key?.isEmpty == true ? nil : key
    }

    // MARK: - Syntax

    /// Steps over one value of any kind, checking its syntax.
    private mutating func skipValue(depth: Int) throws(SyntaxError) {
        skipWhitespace()
        guard let byte = peek() else { throw error("the line ends where a value should be") }
        switch byte {
        case Byte.quote:
            _ = try rawString()
        case Byte.openBrace, Byte.openBracket:
            guard depth < Self.maximumDepth else { throw error("the JSON is nested too deeply") }
            let closing = byte == Byte.openBrace ? Byte.closeBrace : Byte.closeBracket
            index += 1
            if try isClosing(closing) { return }
            repeat {
                if closing == Byte.closeBrace {
                    skipWhitespace()
                    guard peek() == Byte.quote else { throw error("expected a member name in quotes") }
                    _ = try rawString()
                    skipWhitespace()
                    guard peek() == Byte.colon else { throw error("expected ':' after a member name") }
                    index += 1
                }
                try skipValue(depth: depth + 1)
            } while try hasNextItem(closing: closing)
        case Byte.minus, Byte.zero...Byte.nine:
            _ = number()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default:
            throw error("expected a value")
        }
    }

    /// After an item of an object or list: true after a comma (another item follows), false after
    /// the closing bracket.
    private mutating func hasNextItem(closing: UInt8) throws(SyntaxError) -> Bool {
        skipWhitespace()
        switch peek() {
        case Byte.comma:
            index += 1
            skipWhitespace()
            if peek() == closing {  // One trailing comma, which JSONDecoder accepts too.
                index += 1
                return false
            }
            return true
        case closing:
            index += 1
            return false
        case nil:
            throw error(closing == Byte.closeBrace ? "the line ends inside an object" : "the line ends inside a list")
        default:
            throw error(closing == Byte.closeBrace ? "expected ',' or '}' after a member" : "expected ',' or ']' after an element")
        }
    }

    /// Right after an opening bracket: true (and steps over it) when the closing one follows.
    private mutating func isClosing(_ closing: UInt8) throws(SyntaxError) -> Bool {
        skipWhitespace()
        if peek() == closing {
            index += 1
            return true
        }
        if isAtEnd { throw error(closing == Byte.closeBrace ? "the line ends inside an object" : "the line ends inside a list") }
        return false
    }

    private mutating func literal(_ word: StaticString) throws(SyntaxError) {
        let count = word.utf8CodeUnitCount
        guard bytes.endIndex - index >= count,
              word.withUTF8Buffer({ bytes[index..<(index + count)].elementsEqual($0) }) else {
            throw error("expected a value")
        }
        index += count
    }

    /// A number token (`-` or a digit, then digits, `.`, `e`, `E`, `+`, `-`, as `JSONDecoder` reads
    /// structure), and its value when it is a number in JSON's grammar: as an `Int` when it is one
    /// exactly (`12`, `12.0`, `1.2e1`; not `12.5`, `01`, nor one beyond `Int`'s range).
    private mutating func number() -> (integer: Int?, value: Double?) {
        let start = index
        index += 1
        while let byte = peek(), Self.isNumberByte(byte) { index += 1 }
        let token = bytes[start..<index]
        guard Self.isJSONNumber(token) else { return (nil, nil) }
        let text = String(decoding: token, as: UTF8.self)
        let value = Double(text)
        if !token.contains(where: { $0 == Byte.dot || $0 | 0x20 == UInt8(ascii: "e") }) { return (Int(text), value) }
        return (value.flatMap { Int(exactly: $0) }, value)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (Byte.zero...Byte.nine).contains(byte) || byte == Byte.dot || byte == Byte.minus || byte == Byte.plus
            || byte | 0x20 == UInt8(ascii: "e")
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private static func isJSONNumber(_ token: ArraySlice<UInt8>) -> Bool {
        var position = token.startIndex
        func digits() -> Int {
            let start = position
            while position < token.endIndex, (Byte.zero...Byte.nine).contains(token[position]) { position += 1 }
            return position - start
        }
        if position < token.endIndex, token[position] == Byte.minus { position += 1 }
        guard position < token.endIndex else { return false }
        if token[position] == Byte.zero { position += 1 } else if digits() == 0 { return false }
        if position < token.endIndex, token[position] == Byte.dot {
            position += 1
            guard digits() > 0 else { return false }
        }
        if position < token.endIndex, token[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < token.endIndex, token[position] == Byte.plus || token[position] == Byte.minus { position += 1 }
            guard digits() > 0 else { return false }
        }
        return position == token.endIndex
    }

    /// A string value (the index is on its opening quote); nil when its contents do not decode.
    private mutating func string() throws(SyntaxError) -> String? {
        let raw = try rawString()
        return raw.isPlain ? String(decoding: raw.contents, as: UTF8.self) : Self.decoded(raw.contents)
    }

    /// Steps over a string (the index is on its opening quote), as `JSONDecoder` reads structure:
    /// a backslash takes the next byte with it (`\u` the next five). Returns the bytes between the
    /// quotes, and whether they are plain ASCII text without escapes (the common case, which
    /// needs no decoding).
    private mutating func rawString() throws(SyntaxError) -> (contents: ArraySlice<UInt8>, isPlain: Bool) {
        let opening = index
        index += 1
        var isPlain = true
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == Byte.quote {
                index += 1
                return (bytes[(opening + 1)..<(index - 1)], isPlain)
            }
            if byte == Byte.backslash {
                isPlain = false
                index += index + 1 < bytes.endIndex && bytes[index + 1] == UInt8(ascii: "u") ? 6 : 2
                continue
            }
            if byte < 0x20 || byte >= 0x80 { isPlain = false }
            index += 1
        }
        throw SyntaxError(offset: opening, reason: "the line ends inside a string")
    }

    /// The text of a string's contents with escapes, control characters or non-ASCII bytes; nil
    /// when they do not decode (an unknown escape, a lone surrogate, a raw control character,
    /// bytes that are not UTF-8).
    private static func decoded(_ contents: ArraySlice<UInt8>) -> String? {
        var result: [UInt8] = []
        result.reserveCapacity(contents.count)
        var position = contents.startIndex
        func hex(at start: Int) -> UInt32? {
            guard contents.endIndex - start >= 4 else { return nil }
            var value: UInt32 = 0
            for byte in contents[start..<(start + 4)] {
                guard let digit = hexDigit(byte) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while position < contents.endIndex {
            let byte = contents[position]
            guard byte == Byte.backslash else {
                guard byte >= 0x20 else { return nil }
                result.append(byte)
                position += 1
                continue
            }
            guard position + 1 < contents.endIndex else { return nil }
            let escape = contents[position + 1]
            position += 2
            switch escape {
            case Byte.quote, Byte.backslash, UInt8(ascii: "/"): result.append(escape)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hex(at: position) else { return nil }
                position += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard contents.endIndex - position >= 6, contents[position] == Byte.backslash,
                          contents[position + 1] == UInt8(ascii: "u"), let low = hex(at: position + 2),
                          (0xDC00...0xDFFF).contains(low) else { return nil }
                    position += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }  // A lone low surrogate.
                result.append(contentsOf: unicode.utf8)
            default:
                return nil
            }
        }
        return String(validating: result, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case Byte.zero...Byte.nine: byte - Byte.zero
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: - Bytes

    private var isAtEnd: Bool { index >= bytes.endIndex }

    private func peek() -> UInt8? {
        index < bytes.endIndex ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.endIndex {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func error(_ reason: String) -> SyntaxError {
        SyntaxError(offset: min(index, bytes.endIndex), reason: reason)
    }

    private enum Byte {
        static let quote = UInt8(ascii: "\"")
        static let backslash = UInt8(ascii: "\\")
        static let openBrace = UInt8(ascii: "{")
        static let closeBrace = UInt8(ascii: "}")
        static let openBracket = UInt8(ascii: "[")
        static let closeBracket = UInt8(ascii: "]")
        static let colon = UInt8(ascii: ":")
        static let comma = UInt8(ascii: ",")
        static let minus = UInt8(ascii: "-")
        static let plus = UInt8(ascii: "+")
        static let dot = UInt8(ascii: ".")
        static let zero = UInt8(ascii: "0")
        static let nine = UInt8(ascii: "9")
    }
}
