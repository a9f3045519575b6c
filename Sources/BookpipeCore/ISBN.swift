/// A validated ISBN, stored as its ISBN-13.
///
/// Book exports write ISBNs in many shapes: Goodreads wraps them in an Excel formula
/// (`="0439023483"`), LibraryThing brackets them (`[2070291340]`), people type hyphens and
/// spaces, and spreadsheets drop leading zeros or round them to scientific notation.
/// ``ISBN/parse(_:)`` accepts all of these, checks the check digit, converts an ISBN-10 to
/// its ISBN-13, and says exactly what is wrong when it cannot.
///
/// ```swift
/// let isbn = try ISBN("=\"0439023483\"")
/// isbn.isbn13   // "9780439023481"
/// isbn.isbn10   // "0439023483"
/// ```
public struct ISBN: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The 13 digits of the ISBN-13 (no hyphens).
    public let isbn13: String

    /// Creates an ISBN from a string that is already a valid, clean ISBN-13.
    init(validISBN13: String) {
        self.isbn13 = validISBN13
    }

    /// Parses and validates an ISBN written in any of the shapes ``ISBN/clean(_:)`` accepts.
    ///
    /// - Parameter raw: The value as read, for example `="0439023483"` or `978-0-439-02348-1`.
    /// - Throws: ``ISBNError`` when the value is empty, has the wrong length, contains
    ///   characters an ISBN cannot contain, has a wrong check digit, or was rounded by a spreadsheet.
    public init(_ raw: String) throws(ISBNError) {
        self = try ISBN.read(raw).get().isbn
    }

    /// The ISBN-10 form, or nil when the ISBN-13 starts with 979 (those have no ISBN-10).
    public var isbn10: String? {
        guard isbn13.hasPrefix("978") else { return nil }
        let body = Array(isbn13.utf8.dropFirst(3).prefix(9))
        return String(decoding: body, as: UTF8.self) + String(ISBN.isbn10CheckCharacter(body))
    }

    /// The ISBN-13 digits.
    public var description: String { isbn13 }

    /// Decodes an ISBN from a single string and validates it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        switch ISBN.parse(text) {
        case .success(let isbn): self = isbn
        case .failure(let error):
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the ISBN as its ISBN-13 string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(isbn13)
    }
}

// MARK: - Reading

extension ISBN {
    /// A repair made while reading an ISBN; each one becomes an `info` finding on the record.
    public enum Repair: String, Sendable, Hashable, Codable {
        /// A spreadsheet had dropped the leading zero(s) of an ISBN-10 (`439023483`); they were
        /// put back and the check digit then matched.
        case leadingZeroRestored = "leading-zero-restored"
        /// A spreadsheet had written the ISBN in scientific notation but kept every digit
        /// (`9.780439023481E+12`); the digits were read back and the check digit matched.
        case scientificNotationExpanded = "scientific-notation-expanded"
    }

    /// The result of reading one ISBN value: the ISBN, how it was written, and any repair made.
    public struct Reading: Sendable, Hashable {
        /// The validated ISBN.
        public var isbn: ISBN
        /// The number of digits the value had once repaired: 10 or 13.
        public var sourceLength: Int
        /// The repairs made, in order (empty for a well-formed value).
        public var repairs: [Repair]

        /// Creates a reading.
        public init(isbn: ISBN, sourceLength: Int, repairs: [Repair] = []) {
            self.isbn = isbn
            self.sourceLength = sourceLength
            self.repairs = repairs
        }
    }

    /// Parses and validates one ISBN value.
    ///
    /// ```swift
    /// ISBN.parse("978-0-00-000000-1")
    /// // .failure: "978-0-00-000000-1" is not a valid ISBN-13 (check digit should be 2).
    /// ```
    ///
    /// - Parameter raw: The value as read.
    /// - Returns: The ISBN, or the ``ISBNError`` that says what is wrong.
    public static func parse(_ raw: String) -> Result<ISBN, ISBNError> {
        read(raw).map(\.isbn)
    }

    /// Parses one ISBN value like ``parse(_:)`` and also reports how it was written and which
    /// spreadsheet damage was repaired (a dropped leading zero, full-precision scientific notation).
    ///
    /// - Parameter raw: The value as read.
    /// - Returns: The reading, or the ``ISBNError`` that says what is wrong.
    public static func read(_ raw: String) -> Result<Reading, ISBNError> {
        if let fast = asciiRead(raw) { return fast }
        return generalRead(raw)
    }

    /// ``read(_:)`` for ASCII values without a label or scientific notation, byte by byte in a
    /// stack buffer (the import hot path); nil for anything else.
    static func asciiRead(_ raw: String) -> Result<Reading, ISBNError>? {
        let bytes = raw.utf8.span
        if let valid = validDigitsRead(bytes) { return .success(valid) }
        // What `clean` keeps: removable characters and leading "=" dropped, upper-cased.
        var kept = InlineArray<24, UInt8>(repeating: 0)
        var count = 0
        for index in bytes.indices {
            let byte = bytes[index]
            switch byte {
            case 0x80...: return nil
            case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "("),
                 UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 0x09...0x0D, 0x20:
                continue
            case UInt8(ascii: "=") where count == 0: continue
            default:
                guard count < kept.count else { return nil }
                kept[count] = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
                count += 1
            }
        }
        guard count > 0 else { return .failure(.empty) }
        let chars = kept.span.extracting(0..<count)
        if count >= 4 && chars[0] == UInt8(ascii: "I") && chars[1] == UInt8(ascii: "S") && chars[2] == UInt8(ascii: "B")
            && chars[3] == UInt8(ascii: "N") { return nil }  // a label: the general path
        for index in chars.indices where chars[index] == UInt8(ascii: "E") { return nil }  // maybe scientific notation
        for index in chars.indices where chars[index] < UInt8(ascii: "0") || chars[index] > UInt8(ascii: "9") {
            if chars[index] == UInt8(ascii: "X") && index == count - 1 { continue }
            return .failure(.invalidCharacters(value: displayForm(raw)))
        }
        let hasX = chars[count - 1] == UInt8(ascii: "X")
        switch count {
        case 13:
            if hasX { return .failure(.invalidCharacters(value: displayForm(raw))) }
            guard chars[0] == UInt8(ascii: "9"), chars[1] == UInt8(ascii: "7"),
                  chars[2] == UInt8(ascii: "8") || chars[2] == UInt8(ascii: "9") else {
                return .failure(.invalidPrefix(value: displayForm(raw)))
            }
            let expected = isbn13CheckByte(chars.extracting(0..<12))
            guard expected == chars[12] else {
                return .failure(.invalidCheckDigit(value: displayForm(raw), length: 13,
                                                   expected: Character(Unicode.Scalar(expected))))
            }
            return .success(Reading(isbn: ISBN(validISBN13: SimpleText.string(chars, 0..<13)), sourceLength: 13))
        case 10:
            let expected = isbn10CheckByte(chars.extracting(0..<9))
            guard expected == chars[9] else {
                return .failure(.invalidCheckDigit(value: displayForm(raw), length: 10,
                                                   expected: Character(Unicode.Scalar(expected))))
            }
            return .success(Reading(isbn: fromValidISBN10Bytes(chars.extracting(0..<9)), sourceLength: 10))
        case 7...9:
            // Leading zeros a spreadsheet dropped: put them back, accept if the check digit matches.
            var padded = InlineArray<10, UInt8>(repeating: UInt8(ascii: "0"))
            for index in chars.indices { padded[10 - count + index] = chars[index] }
            let digits = padded.span
            if isbn10CheckByte(digits.extracting(0..<9)) == digits[9] {
                return .success(Reading(isbn: fromValidISBN10Bytes(digits.extracting(0..<9)),
                                        sourceLength: 10, repairs: [.leadingZeroRestored]))
            }
            return .failure(.wrongLength(value: displayForm(raw), digits: count))
        default:
            return .failure(.wrongLength(value: displayForm(raw), digits: count))
        }
    }

    /// The commonest values, read in place: 13 or 10 digits (an ISBN-10 may end in `X`), bare or
    /// in Goodreads' formula `="…"`, with a valid check digit (and prefix). Nil for anything
    /// else, which ``asciiRead(_:)`` reads in full (and reports).
    @inline(__always)
    static func validDigitsRead(_ bytes: Span<UInt8>) -> Reading? {
        var start = 0
        var end = bytes.count
        if end >= 3 && bytes[0] == UInt8(ascii: "=") && bytes[1] == UInt8(ascii: "\"") && bytes[end - 1] == UInt8(ascii: "\"") {
            start = 2
            end -= 1
        }
        let count = end - start
        guard count == 13 || count == 10 else { return nil }
        var sum = 0
        for offset in 0..<(count - 1) {
            let digit = Int(bytes[start + offset] &- 0x30)
            guard digit >= 0 && digit < 10 else { return nil }
            sum += count == 13 ? digit * (offset & 1 == 0 ? 1 : 3) : digit * (10 - offset)
        }
        let last = bytes[end - 1]
        if count == 13 {
            guard bytes[start] == UInt8(ascii: "9"), bytes[start + 1] == UInt8(ascii: "7"),
                  bytes[start + 2] == UInt8(ascii: "8") || bytes[start + 2] == UInt8(ascii: "9"),
                  last == UInt8(ascii: "0") + UInt8((10 - sum % 10) % 10) else { return nil }
            return Reading(isbn: ISBN(validISBN13: SimpleText.string(bytes, start..<end)), sourceLength: 13)
        }
        let check = (11 - sum % 11) % 11
        guard last == (check == 10 ? UInt8(ascii: "X") : UInt8(ascii: "0") + UInt8(check)) else { return nil }
        return Reading(isbn: fromValidISBN10Bytes(bytes.extracting(start..<(start + 9))), sourceLength: 10)
    }

    /// ``read(_:)`` for any value.
    static func generalRead(_ raw: String) -> Result<Reading, ISBNError> {
        let shown = displayForm(raw)
        guard let cleaned = clean(raw) else { return .failure(.empty) }

        var repairs: [Repair] = []
        var text = cleaned
        if isScientificNotation(cleaned) {
            guard let expanded = expandScientific(cleaned) else {
                return .failure(.excelScientificNotation(value: shown))
            }
            text = expanded
            repairs.append(.scientificNotationExpanded)
        }

        let chars = Array(text.utf8)
        let isDigit: (UInt8) -> Bool = { $0 >= 0x30 && $0 <= 0x39 }
        let isX: (UInt8) -> Bool = { $0 == 0x58 }
        // Only digits, and an X as the last character.
        for (index, char) in chars.enumerated() where !isDigit(char) {
            if isX(char) && index == chars.count - 1 { continue }
            return .failure(.invalidCharacters(value: shown))
        }
        let hasX = chars.last.map(isX) ?? false

        switch chars.count {
        case 13:
            if hasX { return .failure(.invalidCharacters(value: shown)) }
            guard chars.starts(with: Array("978".utf8)) || chars.starts(with: Array("979".utf8)) else {
                return .failure(.invalidPrefix(value: shown))
            }
            let expected = isbn13CheckCharacter(chars.prefix(12))
            guard UInt8(ascii: expected.asciiScalar) == chars[12] else {
                return .failure(.invalidCheckDigit(value: shown, length: 13, expected: expected))
            }
            return .success(Reading(isbn: ISBN(validISBN13: text), sourceLength: 13, repairs: repairs))
        case 10:
            let expected = isbn10CheckCharacter(chars.prefix(9))
            guard UInt8(ascii: expected.asciiScalar) == chars[9] else {
                return .failure(.invalidCheckDigit(value: shown, length: 10, expected: expected))
            }
            return .success(Reading(isbn: fromValidISBN10(chars), sourceLength: 10, repairs: repairs))
        case 7...9:
            // Excel stores an ISBN-10 as a number and drops its leading zeros (0439023483 → 439023483;
            // HarperCollins UK's 0-00-… ISBNs lose up to three).
            // Put them back, and accept only if the check digit then matches.
            let padded = Array(repeating: UInt8(ascii: "0"), count: 10 - chars.count) + chars
            if UInt8(ascii: isbn10CheckCharacter(padded.prefix(9)).asciiScalar) == padded[9] {
                repairs.append(.leadingZeroRestored)
                return .success(Reading(isbn: fromValidISBN10(padded), sourceLength: 10, repairs: repairs))
            }
            return .failure(.wrongLength(value: shown, digits: chars.count))
        default:
            return .failure(.wrongLength(value: shown, digits: chars.count))
        }
    }

    /// Removes the wrappers, labels and separators exports put around an ISBN.
    ///
    /// Strips Goodreads' Excel formula (`="0439023483"`, also with the doubled quotes of an
    /// unparsed CSV field, `"=""0439023483"""`), brackets and parentheses (`[2070291340]`),
    /// a leading `ISBN`, `ISBN:`, `ISBN-13:` or `ISBN10` label, hyphens, dashes, spaces and
    /// underscores, and upper-cases the result (`x` → `X`). It does not validate.
    ///
    /// ```swift
    /// ISBN.clean("=\"0439023483\"")   // "0439023483"
    /// ISBN.clean("=\"\"")             // nil
    /// ISBN.clean("ISBN: 0-8044-2957-x") // "080442957X"
    /// ```
    ///
    /// - Parameter raw: The value as read.
    /// - Returns: The remaining characters, or nil when nothing is left.
    public static func clean(_ raw: String) -> String? {
        var text: String
        if let ascii = asciiStripped(raw) {
            text = ascii
        } else {
            var scalars = Substring(raw).unicodeScalars.filter { !isRemovable($0) }
            // A leading "=" (Excel formula), possibly after the quotes that were removed.
            while let first = scalars.first, first == "=" { scalars.removeFirst() }
            text = String(String.UnicodeScalarView(scalars)).uppercased()
        }
        // Leading labels: ISBN, ISBN:, ISBN13:, ISBN-10 (the hyphen is already gone), ISBN=, each
        // with the ":" or "=" after it; repeated until none is left, so cleaning a cleaned value
        // changes nothing ("ISBN=\"\"" is nothing, not "=").
        func isSeparator(_ character: Character) -> Bool { character == ":" || character == "=" }
        while text.hasPrefix("ISBN") {
            text.removeFirst(4)
            if text.hasPrefix("13") || text.hasPrefix("10") {
                // "ISBN13" + 13 digits vs. "ISBN" + a 13-digit ISBN starting 13…: only a label when
                // what follows is a full ISBN length.
                let rest = text.dropFirst(2).drop(while: isSeparator)
                if rest.count == 10 || rest.count == 13 || text.dropFirst(2).first.map(isSeparator) == true {
                    text = String(text.dropFirst(2))
                }
            }
            while let first = text.first, isSeparator(first) { text.removeFirst() }
        }
        return text.isEmpty ? nil : text
    }

    /// Splits a field that holds several ISBNs into its values.
    ///
    /// Values are separated by `,`, `;`, `|`, `/` or line breaks (LibraryThing's `ISBNs` column:
    /// `2070291340, 9782070291342`). A piece made of several space-separated words is split
    /// further only when every word is itself 10 or 13 characters long once cleaned, so
    /// `978 0 306 40615 7` stays one ISBN.
    ///
    /// - Parameter raw: The field as read.
    /// - Returns: The raw values, trimmed, without empty ones, in field order.
    public static func splitList(_ raw: String) -> [String] {
        if isSingleASCIIValue(raw) { return clean(raw) != nil ? [raw] : [] }
        return generalSplitList(raw)
    }

    /// True when `splitList` would see one piece equal to the whole value: ASCII without
    /// separators and without whitespace.
    static func isSingleASCIIValue(_ raw: String) -> Bool {
        // The separators and whitespace: the bytes below 0x40 in `separators`.
        let separators: UInt64 = 1 << 0x09 | 1 << 0x0A | 1 << 0x0B | 1 << 0x0C | 1 << 0x0D | 1 << 0x20
            | 1 << UInt64(UInt8(ascii: ",")) | 1 << UInt64(UInt8(ascii: ";")) | 1 << UInt64(UInt8(ascii: "/"))
        let bytes = raw.utf8.span
        for index in bytes.indices {
            let byte = bytes[index]
            if byte >= 0x80 || byte == UInt8(ascii: "|") { return false }
            if byte < 0x40 && separators & (1 << UInt64(byte)) != 0 { return false }
        }
        return true
    }

    /// ``splitList(_:)`` for any value.
    static func generalSplitList(_ raw: String) -> [String] {
        let separators: Set<Character> = [",", ";", "|", "/", "\n", "\r", "\r\n"]
        var result: [String] = []
        for piece in raw.split(whereSeparator: { separators.contains($0) }) {
            let trimmed = piece.trimmingWhitespace()
            guard !trimmed.isEmpty else { continue }
            let words = trimmed.split(whereSeparator: \.isWhitespace)
            let wordsAreISBNs = words.count > 1 && words.allSatisfy { word in
                guard let cleaned = clean(String(word)) else { return false }
                return cleaned.count == 10 || cleaned.count == 13
            }
            if wordsAreISBNs {
                result.append(contentsOf: words.map(String.init))
            } else if clean(trimmed) != nil {
                result.append(trimmed)
            }
        }
        return result
    }

    // MARK: Check digits

    /// The ISBN-13 check character for the first 12 digits (ASCII bytes).
    static func isbn13CheckCharacter(_ digits: some Collection<UInt8>) -> Character {
        var sum = 0
        for (index, byte) in digits.enumerated() {
            sum += Int(byte &- 0x30) * (index.isMultiple(of: 2) ? 1 : 3)
        }
        return Character(String((10 - sum % 10) % 10))
    }

    /// The ISBN-13 check digit (an ASCII byte) for the first 12 digits.
    static func isbn13CheckByte(_ digits: Span<UInt8>) -> UInt8 {
        var sum = 0
        for index in digits.indices {
            sum += Int(digits[index] &- 0x30) * (index & 1 == 0 ? 1 : 3)
        }
        return UInt8(ascii: "0") + UInt8((10 - sum % 10) % 10)
    }

    /// The ISBN-10 check byte (`0`…`9` or `X`) for the first 9 digits.
    static func isbn10CheckByte(_ digits: Span<UInt8>) -> UInt8 {
        var sum = 0
        for index in digits.indices {
            sum += Int(digits[index] &- 0x30) * (10 - index)
        }
        let check = (11 - sum % 11) % 11
        return check == 10 ? UInt8(ascii: "X") : UInt8(ascii: "0") + UInt8(check)
    }

    /// The ISBN of a valid ISBN-10 given its first 9 digits.
    static func fromValidISBN10Bytes(_ body: Span<UInt8>) -> ISBN {
        var isbn13 = InlineArray<13, UInt8>(repeating: UInt8(ascii: "0"))
        isbn13[0] = UInt8(ascii: "9")
        isbn13[1] = UInt8(ascii: "7")
        isbn13[2] = UInt8(ascii: "8")
        for index in 0..<9 { isbn13[3 + index] = body[index] }
        isbn13[12] = isbn13CheckByte(isbn13.span.extracting(0..<12))
        return ISBN(validISBN13: SimpleText.string(isbn13.span, 0..<13))
    }

    /// The ISBN-10 check character (`0`…`9` or `X`) for the first 9 digits (ASCII bytes).
    static func isbn10CheckCharacter(_ digits: some Collection<UInt8>) -> Character {
        var sum = 0
        for (index, byte) in digits.enumerated() {
            sum += Int(byte &- 0x30) * (10 - index)
        }
        let check = (11 - sum % 11) % 11
        return check == 10 ? "X" : Character(String(check))
    }

    private static func fromValidISBN10(_ chars: [UInt8]) -> ISBN {
        let body = Array("978".utf8) + chars.prefix(9)
        let isbn13 = String(decoding: body, as: UTF8.self) + String(isbn13CheckCharacter(body))
        return ISBN(validISBN13: isbn13)
    }

    // MARK: Cleaning helpers

    /// The first step of ``clean(_:)`` for ASCII input, byte by byte (the import hot path):
    /// removable characters dropped, leading `=` dropped, upper-cased. Nil for non-ASCII input.
    private static func asciiStripped(_ raw: String) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(16)
        for byte in raw.utf8 {
            switch byte {
            case 0x80...: return nil
            case UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "("),
                 UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 0x09...0x0D, 0x20:
                continue
            case UInt8(ascii: "=") where output.isEmpty: continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"): output.append(byte - 32)
            default: output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isRemovable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\"", "'", "[", "]", "(", ")", "{", "}", "-", "_",
             "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2212}",
             "\u{201C}", "\u{201D}", "\u{2018}", "\u{2019}", "\u{FEFF}", "\u{200B}":
            return true
        default:
            return scalar.properties.isWhitespace
        }
    }

    /// The value as shown in messages: trimmed, without an Excel formula wrapper.
    static func displayForm(_ raw: String) -> String {
        var text = Substring(raw.trimmingWhitespace())
        if text.hasPrefix("\"=") || text.hasPrefix("=") {
            text = text.drop(while: { $0 == "\"" || $0 == "=" })
            while text.last == "\"" { text.removeLast() }
        }
        return String(text)
    }

    /// `9.78044E+12`, `9,780439023481e12`: a number a spreadsheet wrote in scientific notation.
    private static func isScientificNotation(_ cleaned: String) -> Bool {
        guard let eIndex = cleaned.firstIndex(of: "E") else { return false }
        let mantissa = cleaned[..<eIndex]
        var exponent = cleaned[cleaned.index(after: eIndex)...]
        if exponent.first == "+" { exponent = exponent.dropFirst() }
        guard !exponent.isEmpty, exponent.allSatisfy(\.isASCIIDigit) else { return false }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        return (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }
    }

    /// The integer a scientific-notation value stands for, when the mantissa still holds every
    /// digit; nil when the spreadsheet rounded digits away.
    private static func expandScientific(_ cleaned: String) -> String? {
        guard let eIndex = cleaned.firstIndex(of: "E") else { return nil }
        let mantissa = cleaned[..<eIndex]
        let exponentText = cleaned[cleaned.index(after: eIndex)...].drop(while: { $0 == "+" })
        guard let exponent = Int(exponentText), exponent < 20 else { return nil }
        let parts = mantissa.split(whereSeparator: { $0 == "." || $0 == "," })
        let integerPart = parts.first.map(String.init) ?? ""
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        // Every digit must be present: the fraction may not be longer or shorter than the exponent
        // (shorter means rounded — `9.78044E+12` lost seven digits).
        guard integerPart.count == 1, fraction.count == exponent else { return nil }
        return integerPart + fraction
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }

    /// The character's single ASCII scalar (only called on `0`…`9` and `X`).
    fileprivate var asciiScalar: Unicode.Scalar {
        unicodeScalars.first ?? "0"
    }
}

extension StringProtocol {
    /// The string without leading and trailing whitespace and newlines.
    func trimmingWhitespace() -> String {
        // Nothing to trim when both ends are ASCII and not whitespace (the usual case).
        let scalars = unicodeScalars
        if let first = scalars.first, let last = scalars.last, first.isASCII, last.isASCII,
           !SimpleText.isSpace(UInt8(first.value)), !SimpleText.isSpace(UInt8(last.value)) {
            return String(self)
        }
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace && $0 != "\u{FEFF}" }) else {
            return ""
        }
        guard let end = scalars.lastIndex(where: { !$0.properties.isWhitespace && $0 != "\u{FEFF}" }) else {
            return ""
        }
        return String(String.UnicodeScalarView(scalars[start...end]))
    }
}

/// Why a value is not a usable ISBN.
///
/// The description names the value and what is wrong, for example
/// `"978-0-00-000000-1" is not a valid ISBN-13 (check digit should be 2).` Callers add where
/// (file, row, column) and what happens next.
public enum ISBNError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing was left after removing wrappers and separators (`=""`).
    case empty
    /// The value has a number of digits that is neither 10 nor 13.
    case wrongLength(value: String, digits: Int)
    /// The value contains a character other than digits (and X as an ISBN-10's last character).
    case invalidCharacters(value: String)
    /// A 13-digit value that does not start with 978 or 979, so it is not an ISBN (maybe an EAN).
    case invalidPrefix(value: String)
    /// The check digit does not match the other digits.
    case invalidCheckDigit(value: String, length: Int, expected: Character)
    /// A spreadsheet rounded the number to scientific notation (`9.78044E+12`): digits are lost.
    case excelScientificNotation(value: String)

    /// A stable machine-readable code for the finding this error becomes.
    public var findingCode: String {
        switch self {
        case .empty: "isbn.empty"
        case .wrongLength: "isbn.wrong-length"
        case .invalidCharacters: "isbn.invalid-characters"
        case .invalidPrefix: "isbn.invalid-prefix"
        case .invalidCheckDigit: "isbn.invalid-checksum"
        case .excelScientificNotation: "isbn.excel-scientific"
        }
    }

    /// What is wrong, for people.
    public var description: String {
        switch self {
        case .empty:
            "The ISBN is empty."
        case .wrongLength(let value, let digits):
            "\"\(value)\" has \(digits) \(digits == 1 ? "character" : "characters"); an ISBN has 10 or 13."
        case .invalidCharacters(let value):
            "\"\(value)\" is not an ISBN: only digits are allowed, and X as the last character of an ISBN-10."
        case .invalidPrefix(let value):
            "\"\(value)\" is not a valid ISBN-13 (it must start with 978 or 979)."
        case .invalidCheckDigit(let value, let length, let expected):
            "\"\(value)\" is not a valid ISBN-\(length) (check digit should be \(expected))."
        case .excelScientificNotation(let value):
            "\"\(value)\" is an ISBN that a spreadsheet rounded to scientific notation; its digits are lost "
                + "and the ISBN cannot be recovered. Export the file again without opening it in a spreadsheet, "
                + "or type the ISBN from the book."
        }
    }
}
