/// A JSON value with the byte range it came from, so a reader can point a person at the exact
/// line and column of a scan or a detection and keep a detection's text exactly as written.
///
/// Why not Foundation: on Linux `JSONSerialization` gives no line or column (a truncated file
/// is "Unexpected end of file during JSON parse."), rejects a whole file for one `NaN`, and
/// has no byte ranges. This parser is strict RFC 8259 JSON with one extension: the literals
/// `NaN`, `Infinity` and `-Infinity` (what Python's `json.dumps` writes for non-finite floats)
/// are read as ``Value/nonFinite(_:)`` values, so the reader can report them by name on the one
/// detection that holds them. The tests compare it with `JSONSerialization` on valid documents.
struct JSONNode: Sendable {
    /// A member of an object, in file order.
    struct Member: Sendable {
        var key: String
        var node: JSONNode
    }

    /// What the value is.
    enum Value: Sendable {
        case object([Member])
        case array([JSONNode])
        case string(String)
        /// A number and its text as written (`0.60`, `1e-3`).
        case number(Double, lexeme: String)
        /// `NaN`, `Infinity` or `-Infinity`, as written.
        case nonFinite(String)
        case bool(Bool)
        case null
    }

    var value: Value
    /// Byte offset of the value's first byte.
    var start: Int
    /// Byte offset just past the value's last byte.
    var end: Int

    /// The value of the first member named `key`, when this is an object that has one.
    subscript(key: String) -> JSONNode? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.node
    }

    /// The kind of value, for messages: `an object`, `a number`, …
    var kindDescription: String {
        switch value {
        case .object: "an object"
        case .array: "a list"
        case .string: "a string"
        case .number: "a number"
        case .nonFinite(let literal): "the literal \(literal)"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

/// A syntax error: where (a byte offset) and what.
struct JSONSyntaxError: Error, Sendable, Hashable {
    /// Byte offset the problem was found at.
    var offset: Int
    /// What is wrong, for people (without the location).
    var message: String
}

/// Line and column of byte offsets in a UTF-8 text (both 1-based; columns count characters).
struct LineIndex: Sendable {
    /// Characters are counted from checkpoints this many bytes apart, so a location costs at most
    /// this many byte reads however long its line is (a minified file is one line).
    static let stride = 1024

    private let lineStarts: [Int]
    private let bytes: [UInt8]
    private let firstLineStart: Int
    /// Characters (UTF-8 lead bytes) before each multiple of ``stride``.
    private let charactersBefore: [Int]

    init(_ bytes: [UInt8], skippingBOM bomLength: Int = 0) {
        var starts = [0]
        var checkpoints = [0]
        var characters = 0
        for (offset, byte) in bytes.enumerated() {
            if offset > 0 && offset % Self.stride == 0 { checkpoints.append(characters) }
            if byte & 0xC0 != 0x80 { characters += 1 }
            if byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
        }
        self.lineStarts = starts
        self.bytes = bytes
        self.firstLineStart = bomLength
        self.charactersBefore = checkpoints
    }

    /// Characters before byte `offset`.
    private func characters(before offset: Int) -> Int {
        let checkpoint = offset / Self.stride
        var count = charactersBefore[min(checkpoint, charactersBefore.count - 1)]
        var position = min(checkpoint, charactersBefore.count - 1) * Self.stride
        while position < offset {
            if bytes[position] & 0xC0 != 0x80 { count += 1 }
            position += 1
        }
        return count
    }

    /// The 1-based line and column of a byte offset.
    func location(of offset: Int) -> (line: Int, column: Int) {
        let offset = min(max(offset, 0), bytes.count)
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        let lineStart = low == 0 ? min(firstLineStart, offset) : lineStarts[low]
        return (low + 1, characters(before: offset) - characters(before: lineStart) + 1)
    }
}

/// Parses one JSON document from UTF-8 bytes (already validated as UTF-8).
struct PositionedJSONParser {
    /// Deeper nesting is refused (a scan result is four levels deep); this also keeps the
    /// recursive parser far from the end of the stack.
    static let maxDepth = 200

    private let bytes: [UInt8]
    private var index: Int
    private var depth = 0
    /// Where each open object, list or string started, for "the file ends inside …" messages.
    private var openContainers: [(kind: String, offset: Int)] = []
    private let describe: (Int) -> String

    /// - Parameters:
    ///   - bytes: The whole document.
    ///   - start: Where to start (after a byte-order mark).
    ///   - describe: Turns a byte offset into `line L, column C` for messages.
    init(bytes: [UInt8], start: Int, describe: @escaping (Int) -> String) {
        self.bytes = bytes
        self.index = start
        self.describe = describe
    }

    /// Parses the document: one value and nothing after it but whitespace.
    mutating func parseDocument() throws(JSONSyntaxError) -> JSONNode {
        skipWhitespace()
        if index >= bytes.count { throw JSONSyntaxError(offset: index, message: "the file holds no JSON value") }
        let node = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw JSONSyntaxError(offset: index, message: "unexpected \(found()) after the end of the JSON value")
        }
        return node
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    /// A person's name for the byte at `index`.
    private func found() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte >= 0x80 {
            var end = index + 1
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            return "'\(String(decoding: bytes[index..<end], as: UTF8.self))'"
        }
        return "the control character 0x" + String(byte, radix: 16, uppercase: true)
    }

    /// The error for running out of bytes: names the innermost open value and where it started.
    private func endOfFile() -> JSONSyntaxError {
        guard let open = openContainers.last else {
            return JSONSyntaxError(offset: bytes.count, message: "the file ends before the JSON value is complete; it looks cut off")
        }
        return JSONSyntaxError(offset: bytes.count,
                               message: "the file ends inside the \(open.kind) that starts at \(describe(open.offset)); it looks cut off")
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        if index >= bytes.count { throw endOfFile() }
        guard bytes[index] == byte else { throw JSONSyntaxError(offset: index, message: "expected \(what), found \(found())") }
        index += 1
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONNode {
        if index >= bytes.count { throw endOfFile() }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""):
            let text = try parseString()
            return JSONNode(value: .string(text), start: start, end: index)
        case UInt8(ascii: "-"):
            if matches("-Infinity") { return literal("-Infinity", .nonFinite("-Infinity")) }
            return try parseNumber()
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "t") where matches("true"): return literal("true", .bool(true))
        case UInt8(ascii: "f") where matches("false"): return literal("false", .bool(false))
        case UInt8(ascii: "n") where matches("null"): return literal("null", .null)
        case UInt8(ascii: "N") where matches("NaN"): return literal("NaN", .nonFinite("NaN"))
        case UInt8(ascii: "I") where matches("Infinity"): return literal("Infinity", .nonFinite("Infinity"))
        default:
            var end = index
            while end < bytes.count, end - index < 24, Self.isWordByte(bytes[end]) { end += 1 }
            let word = end > index ? "'\(String(decoding: bytes[index..<end], as: UTF8.self))'" : found()
            let isCutOff = end == bytes.count && end > index
            if isCutOff { throw endOfFile() }
            throw JSONSyntaxError(offset: index, message: "unexpected \(word): a JSON value is an object, a list, "
                + "a string in double quotes, a number, true, false or null")
        }
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "'") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }

    private func matches(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return word.withUTF8Buffer { expected in
            for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
    }

    private mutating func literal(_ text: StaticString, _ value: JSONNode.Value) -> JSONNode {
        let start = index
        index += text.utf8CodeUnitCount
        return JSONNode(value: value, start: start, end: index)
    }

    private mutating func enter(_ kind: String) throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maxDepth {
            throw JSONSyntaxError(offset: index, message: "values are nested more than \(Self.maxDepth) levels deep")
        }
        openContainers.append((kind, index))
        index += 1
    }

    private mutating func leave() {
        depth -= 1
        openContainers.removeLast()
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONNode {
        let start = index
        try enter("object")
        var members: [JSONNode.Member] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            leave()
            return JSONNode(value: .object(members), start: start, end: index)
        }
        while true {
            skipWhitespace()
            if index >= bytes.count { throw endOfFile() }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw JSONSyntaxError(offset: index, message: "expected a member name in double quotes, found \(found())")
            }
            let key = try parseString()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after the member name \"\(key)\"")
            skipWhitespace()
            let node = try parseValue()
            members.append(JSONNode.Member(key: key, node: node))
            skipWhitespace()
            if index >= bytes.count { throw endOfFile() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                leave()
                return JSONNode(value: .object(members), start: start, end: index)
            }
            throw JSONSyntaxError(offset: index, message: "expected ',' or '}' after the value of \"\(key)\", found \(found())")
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONNode {
        let start = index
        try enter("list")
        var elements: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            leave()
            return JSONNode(value: .array(elements), start: start, end: index)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            if index >= bytes.count { throw endOfFile() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                leave()
                return JSONNode(value: .array(elements), start: start, end: index)
            }
            throw JSONSyntaxError(offset: index, message: "expected ',' or ']' after a list element, found \(found())")
        }
    }

    /// Parses a string starting at the opening quote; leaves `index` after the closing quote.
    private mutating func parseString() throws(JSONSyntaxError) -> String {
        openContainers.append(("string", index))
        defer { openContainers.removeLast() }
        index += 1
        let contentStart = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: bytes[contentStart..<index], as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw controlCharacter() }
            index += 1
        }
        if index >= bytes.count { throw endOfFile() }
        var utf8 = Array(bytes[contentStart..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw controlCharacter()
            default:
                utf8.append(byte)
                index += 1
            }
        }
        throw endOfFile()
    }

    private func controlCharacter() -> JSONSyntaxError {
        let byte = bytes[index]
        let name = byte == UInt8(ascii: "\n") ? "a line break" : "the control character 0x" + String(byte, radix: 16, uppercase: true)
        return JSONSyntaxError(offset: index, message: "\(name) inside a string (write it as an escape such as \\n, "
            + "or close the string's quote)")
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONSyntaxError) {
        let escapeStart = index
        index += 1
        if index >= bytes.count { throw endOfFile() }
        let simple: UInt8?
        switch bytes[index] {
        case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default:
            throw JSONSyntaxError(offset: escapeStart, message: "invalid escape '\\\(found().trimmingQuotes)' in a string")
        }
        if let simple {
            utf8.append(simple)
            index += 1
            return
        }
        index += 1
        var scalar = try hexQuad(escapeStart: escapeStart)
        if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count,
           bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
            let saved = index
            index += 2
            let low = try hexQuad(escapeStart: saved)
            if (0xDC00..<0xE000).contains(low) {
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else {
                index = saved
            }
        }
        // A lone surrogate becomes U+FFFD, as Foundation's parser does.
        let value = Unicode.Scalar(scalar) ?? "\u{FFFD}"
        utf8.append(contentsOf: Array(String(Character(value)).utf8))
    }

    private mutating func hexQuad(escapeStart: Int) throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            if index >= bytes.count { throw endOfFile() }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONSyntaxError(offset: escapeStart, message: "invalid \\u escape: \\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONNode {
        let start = index
        guard let end = Self.numberEnd(bytes, from: index) else {
            var stop = index + 1
            while stop < bytes.count, Self.isWordByte(bytes[stop]) || bytes[stop] == UInt8(ascii: "+") { stop += 1 }
            if stop >= bytes.count { throw endOfFile() }
            let text = String(decoding: bytes[index..<min(stop, index + 24)], as: UTF8.self)
            throw JSONSyntaxError(offset: index, message: "invalid number '\(text)'")
        }
        let lexeme = String(decoding: bytes[start..<end], as: UTF8.self)
        index = end
        if index < bytes.count, Self.isWordByte(bytes[index]) {
            throw JSONSyntaxError(offset: start, message: "invalid number '\(lexeme)\(found().trimmingQuotes)…'")
        }
        // The grammar was checked, so this parses; it is ±infinity when the exponent is too large.
        return JSONNode(value: .number(Double(lexeme) ?? .nan, lexeme: lexeme), start: start, end: end)
    }

    /// The end of a JSON number (RFC 8259 grammar) starting at `start`, or nil when there is none.
    static func numberEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        func isDigit(_ offset: Int) -> Bool {
            offset < bytes.count && bytes[offset] >= UInt8(ascii: "0") && bytes[offset] <= UInt8(ascii: "9")
        }
        func byte(_ offset: Int) -> UInt8? { offset < bytes.count ? bytes[offset] : nil }
        if byte(index) == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return nil }
        if byte(index) == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { return nil }
        } else {
            while isDigit(index) { index += 1 }
        }
        if byte(index) == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return nil }
            while isDigit(index) { index += 1 }
        }
        if byte(index) == UInt8(ascii: "e") || byte(index) == UInt8(ascii: "E") {
            index += 1
            if byte(index) == UInt8(ascii: "+") || byte(index) == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { return nil }
            while isDigit(index) { index += 1 }
        }
        return index
    }

    /// The number a text holds when the whole text (spaces around it aside) is a JSON number.
    static func number(inText text: String) -> Double? {
        let trimmed = Array(text.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed())
        guard !trimmed.isEmpty, numberEnd(trimmed, from: 0) == trimmed.count else { return nil }
        return Double(String(decoding: trimmed, as: UTF8.self))
    }
}

private extension String {
    /// `'x'` → `x` (for messages built from ``PositionedJSONParser/found()``).
    var trimmingQuotes: String {
        hasPrefix("'") && hasSuffix("'") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
