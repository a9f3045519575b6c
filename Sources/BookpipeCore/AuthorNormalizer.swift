/// How an export writes several authors in one field.
public enum AuthorListStyle: String, Sendable, Hashable, Codable, CaseIterable {
    /// Names in "First Last" order separated by commas, `;`, ` & ` or ` and `
    /// (StoryGraph's `Authors`: `Ursula K. Le Guin, Todd Barton`; Goodreads' `Additional Authors`).
    case commaSeparatedNames
    /// Names in "Last, First" order; several are separated by `;` or ` & `, or follow each other
    /// as `Last, First, Last, First` (LibraryThing, Calibre `author_sort`, Goodreads `Author l-f`).
    case lastFirst
    /// Guess per field: a field with `;` is a `lastFirst` list; a field with exactly one comma
    /// whose first part is a single word (`Smith, Mark`) is one "Last, First" name; anything
    /// else is `commaSeparatedNames`.
    case automatic
}

/// How well two authors agree.
public enum AuthorAgreement: Int, Sendable, Hashable, Codable, Comparable {
    /// Different people (or nothing to compare).
    case none = 0
    /// Probably the same person written differently: see ``AuthorNormalizer/agreement(_:_:)``.
    case partial = 1
    /// The same comparison key.
    case exact = 2

    /// Orders by strength: `none` < `partial` < `exact`.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Turns author names as read into display names ("First Last") and comparison keys.
///
/// - "Last, First" becomes "First Last"; a suffix stays at the end and is not taken for a first
///   name: `King, Martin Luther, Jr.` and `Martin Luther King, Jr.` both display as
///   `Martin Luther King Jr.`
/// - Keys fold case and diacritics (`Cortázar` = `Cortazar`), drop suffixes, apostrophes and
///   periods, and write initials as separate letters, so `J.R.R. Tolkien`, `J. R. R. Tolkien`
///   and `JRR Tolkien` share the key `j r r tolkien`. Diacritics are folded for comparison only.
public enum AuthorNormalizer {
    /// Name suffixes that follow a comma without being a first name (compared lower-cased,
    /// without periods).
    static let suffixes: Set<String> = ["jr", "sr", "ii", "iii", "iv", "v", "phd", "md", "esq", "obe", "cbe"]

    /// The author in "First Last" order, entities decoded, NFC, whitespace collapsed.
    ///
    /// ```swift
    /// AuthorNormalizer.displayName("Muir, Tamsyn")                // "Tamsyn Muir"
    /// AuthorNormalizer.displayName("King, Martin Luther, Jr.")    // "Martin Luther King Jr."
    /// AuthorNormalizer.displayName("David   Epstein")             // "David Epstein"
    /// ```
    ///
    /// - Parameter raw: One author as read.
    /// - Returns: The display name; empty when nothing but punctuation was read (Goodreads writes
    ///   `","` in `Author l-f` for a book without author).
    public static func displayName(_ raw: String) -> String {
        let cleaned = TextFolding.clean(raw)
        // Without a comma there is one part: the cleaned text (already trimmed).
        guard cleaned.containsUTF8Byte(UInt8(ascii: ",")) else { return cleaned }
        return displayName(cleaned: cleaned)
    }

    /// ``displayName(_:)`` for any text, step by step.
    static func generalDisplayName(_ raw: String) -> String {
        displayName(cleaned: TextFolding.clean(raw))
    }

    private static func displayName(cleaned: String) -> String {
        let parts = cleaned.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        guard parts.count > 1 else { return parts.first ?? "" }
        var names = parts.filter { !isSuffix($0) }
        let suffixParts = parts.filter(isSuffix)
        guard !names.isEmpty else { return parts.joined(separator: " ") }
        if names.count >= 2 {
            // "Last, First[, Jr.]": the first part is the family name.
            let last = names.removeFirst()
            names.append(last)
        }
        return (names + suffixParts).joined(separator: " ")
    }

    /// The comparison key of one author: display order, case and diacritics folded, initials
    /// as separate letters, suffixes, periods and apostrophes removed, hyphens as spaces.
    ///
    /// ```swift
    /// AuthorNormalizer.key("J.R.R. Tolkien")   // "j r r tolkien"
    /// AuthorNormalizer.key("JRR Tolkien")      // "j r r tolkien"
    /// AuthorNormalizer.key("Cortázar, Julio")  // "julio cortazar"
    /// ```
    public static func key(_ raw: String) -> String {
        tokens(ofDisplayName: displayName(raw)).joined(separator: " ")
    }

    /// The key's words: see ``key(_:)``.
    static func tokens(ofDisplayName name: String) -> [String] {
        if let fast = simpleTokens(ofDisplayName: name) { return fast }
        return generalTokens(ofDisplayName: name)
    }

    /// ``tokens(ofDisplayName:)`` for any text, Character by Character.
    static func generalTokens(ofDisplayName name: String) -> [String] {
        let isAllCaps = name.contains(where: \.isLetter) && !name.contains(where: \.isLowercase)
        var words: [String] = []
        for word in name.split(whereSeparator: { $0.isWhitespace || $0 == "-" || $0 == "\u{2010}" }) {
            // "J.R.R." → J, R, R. Periods split initials; "St.John" → St, John.
            let pieces = word.split(separator: ".").map(String.init).filter { !$0.isEmpty }
            for piece in pieces {
                let letters = piece.filter(\.isLetter)
                // "JRR", "RJ": two or three capitals in a mixed-case name are initials.
                if !isAllCaps, !isSuffix(piece), (2...3).contains(letters.count), letters.count == piece.count,
                   letters.allSatisfy(\.isUppercase) {
                    words.append(contentsOf: letters.map { String($0) })
                } else {
                    words.append(piece)
                }
            }
        }
        let keys = words.flatMap { TextFolding.key($0).split(separator: " ").map(String.init) }
        return withoutSuffixes(keys)
    }

    fileprivate static func withoutSuffixes(_ keys: [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(keys.count)
        for (index, word) in keys.enumerated()
        where !(index > 0 && index == keys.count - 1 && suffixes.contains(word) && keys.count > 2)
            && !(index > 0 && (word == "jr" || word == "sr")) {
            result.append(word)
        }
        return result
    }

    /// The display name of one author as read and its comparison key: `displayName(raw)` and
    /// `key(displayName(raw))`, computed together (the import hot path).
    public static func displayNameAndKey(_ raw: String) -> (displayName: String, key: String) {
        let cleaned = TextFolding.clean(raw)
        guard !cleaned.containsUTF8Byte(UInt8(ascii: ",")) else {
            let display = displayName(cleaned: cleaned)
            return (display, key(display))
        }
        // Without a comma the display name is the cleaned text; when that is simple, cleaning it
        // again changes nothing, so it is its own display name and its key is its tokens.
        if let key = simpleKey(ofDisplayName: cleaned) { return (cleaned, key) }
        return (cleaned, key(cleaned))
    }

    /// ``tokens(ofDisplayName:)`` of simple text (see ``SimpleText``), byte by byte; nil for
    /// other text.
    static func simpleTokens(ofDisplayName name: String) -> [String]? {
        let bytes = name.utf8.span
        guard SimpleText.isSimple(bytes) else { return nil }
        return SimpleText.withScratch(capacity: SimpleText.keyCapacity(bytes.count) + bytes.count) { buffer in
            var writer = KeyWriter()
            writer.write(bytes, to: &buffer)
            return writer.tokens(buffer.span)
        }
    }

    /// `tokens(ofDisplayName: name).joined(separator: " ")` for simple text; nil for other text.
    static func simpleKey(ofDisplayName name: String) -> String? {
        let bytes = name.utf8.span
        guard SimpleText.isSimple(bytes) else { return nil }
        return SimpleText.withScratch(capacity: SimpleText.keyCapacity(bytes.count) + bytes.count) { buffer in
            var writer = KeyWriter()
            writer.write(bytes, to: &buffer)
            if writer.needsSuffixFilter { return writer.tokens(buffer.span).joined(separator: " ") }
            return SimpleText.string(buffer.span, 0..<writer.count)
        }
    }

    /// Writes the key words of a simple display name into a buffer, separated by single spaces,
    /// noting whether the suffix rules of ``tokens(ofDisplayName:)`` drop any of them.
    private struct KeyWriter {
        /// Bytes written.
        var count = 0
        var tokenCount = 0
        var lastTokenStart = 0
        var needsSuffixFilter = false

        mutating func write(_ bytes: Span<UInt8>, to buffer: inout MutableSpan<UInt8>) {
            let properties = SimpleText.properties
            var hasLetter = false
            var hasLowercase = false
            var index = 0
            while index < bytes.count {
                let property = properties[SimpleText.scalar(bytes, at: index)]
                if property.contains(.letter) { hasLetter = true }
                if property.contains(.lowercase) { hasLowercase = true }
                index += bytes[index] < 0x80 ? 1 : 2
            }
            let isAllCaps = hasLetter && !hasLowercase
            // Pieces end at whitespace, hyphens and periods.
            var pieceStart = 0
            index = 0
            while index <= bytes.count {
                var width = 1
                var separates = index == bytes.count
                if !separates {
                    let byte = bytes[index]
                    if byte < 0x80 {
                        separates = byte == 0x2D || byte == 0x2E || SimpleText.isSpace(byte)
                    } else {
                        width = 2
                        separates = properties[SimpleText.scalar(bytes, at: index)].contains(.whitespace)
                    }
                }
                if separates {
                    if index > pieceStart {
                        piece(bytes, pieceStart..<index, isAllCaps: isAllCaps, to: &buffer)
                    }
                    pieceStart = index + width
                }
                index += width
            }
            if tokenCount > 2 && count - lastTokenStart <= 3 {  // suffixes have at most three letters
                let last = SimpleText.string(buffer.span, lastTokenStart..<count)
                if AuthorNormalizer.suffixes.contains(last) { needsSuffixFilter = true }
            }
        }

        private mutating func piece(_ bytes: Span<UInt8>, _ range: Range<Int>, isAllCaps: Bool,
                                    to buffer: inout MutableSpan<UInt8>) {
            let properties = SimpleText.properties
            var letters = 0
            var scalars = 0
            var allUppercase = true
            var index = range.lowerBound
            while index < range.upperBound {
                let property = properties[SimpleText.scalar(bytes, at: index)]
                scalars += 1
                if property.contains(.letter) {
                    letters += 1
                    if !property.contains(.uppercase) { allUppercase = false }
                }
                index += bytes[index] < 0x80 ? 1 : 2
            }
            // "JRR", "RJ": two or three capitals in a mixed-case name are initials.
            if !isAllCaps, (2...3).contains(letters), letters == scalars, allUppercase,
               !AuthorNormalizer.isSimpleSuffix(bytes, range) {
                index = range.lowerBound
                while index < range.upperBound {
                    let width = bytes[index] < 0x80 ? 1 : 2
                    appendKey(bytes, index..<(index + width), to: &buffer)
                    index += width
                }
            } else {
                appendKey(bytes, range, to: &buffer)
            }
        }

        /// Appends the key of one word (a piece or an initial): its words become tokens.
        private mutating func appendKey(_ bytes: Span<UInt8>, _ range: Range<Int>,
                                        to buffer: inout MutableSpan<UInt8>) {
            let before = count
            if count > 0 {
                buffer[count] = 0x20
                count += 1
            }
            let keyStart = count
            SimpleText.appendKey(bytes, in: range, to: &buffer, count: &count)
            if count == keyStart {
                count = before
                return
            }
            var tokenStart = keyStart
            for index in keyStart...count where index == count || buffer[index] == 0x20 {
                tokenCount += 1
                lastTokenStart = tokenStart
                if tokenCount > 1 && index - tokenStart == 2 && buffer[tokenStart + 1] == UInt8(ascii: "r")
                    && (buffer[tokenStart] == UInt8(ascii: "j") || buffer[tokenStart] == UInt8(ascii: "s")) {
                    needsSuffixFilter = true
                }
                tokenStart = index + 1
            }
        }

        /// The tokens written to `buffer`, after the suffix rules.
        func tokens(_ buffer: Span<UInt8>) -> [String] {
            var keys: [String] = []
            var start = 0
            for index in 0...count where index == count || buffer[index] == 0x20 {
                if index > start { keys.append(SimpleText.string(buffer, start..<index)) }
                start = index + 1
            }
            return AuthorNormalizer.withoutSuffixes(keys)
        }
    }

    /// ``isSuffix(_:)`` of a piece without periods and whitespace (`range` of simple text).
    fileprivate static func isSimpleSuffix(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Bool {
        guard range.count <= 3 else { return false }
        var lowered: [UInt8] = []
        for index in range {
            let byte = bytes[index]
            guard byte < 0x80 else { return false }
            lowered.append(byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte)
        }
        return suffixes.contains(String(decoding: lowered, as: UTF8.self))
    }

    /// Splits a field that names several authors.
    ///
    /// ```swift
    /// AuthorNormalizer.splitAuthorList("Ursula K. Le Guin, Todd Barton", style: .commaSeparatedNames)
    /// // ["Ursula K. Le Guin", "Todd Barton"]
    /// AuthorNormalizer.splitAuthorList("Muir, Tamsyn", style: .lastFirst)
    /// // ["Muir, Tamsyn"]
    /// ```
    ///
    /// - Parameters:
    ///   - raw: The field as read.
    ///   - style: How the export writes its lists.
    /// - Returns: One entry per author, as written (pass each to ``displayName(_:)``), without
    ///   empty entries. A suffix (`Jr.`) stays with the name before it.
    public static func splitAuthorList(_ raw: String, style: AuthorListStyle) -> [String] {
        let text = TextFolding.clean(raw)
        switch style {
        case .commaSeparatedNames:
            let pieces = splitOn(text, separators: [",", ";"], words: ["&", "and", "with"])
            return attachSuffixes(pieces)
        case .lastFirst:
            var result: [String] = []
            for group in splitOn(text, separators: [";"], words: ["&"]) {
                let parts = group.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
                var index = 0
                while index < parts.count {
                    var name = [parts[index]]
                    index += 1
                    if index < parts.count, !isSuffix(parts[index]) {
                        name.append(parts[index])
                        index += 1
                    }
                    while index < parts.count, isSuffix(parts[index]) {
                        name.append(parts[index])
                        index += 1
                    }
                    result.append(name.joined(separator: ", "))
                }
            }
            return result
        case .automatic:
            if text.contains(";") { return splitAuthorList(text, style: .lastFirst) }
            let parts = text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            if parts.count == 2, !isSuffix(parts[1]),
               parts[0].split(whereSeparator: \.isWhitespace).count == 1,
               parts[1].split(whereSeparator: \.isWhitespace).count <= 3 {
                return [text.trimmingWhitespace()]
            }
            return splitAuthorList(text, style: .commaSeparatedNames)
        }
    }

    /// How well two authors agree.
    ///
    /// - `exact`: the same key (`J.R.R. Tolkien` and `Tolkien, J. R. R.`).
    /// - `partial`: the same family name (last word of the key) with first names that do not
    ///   conflict — the same first initial, or one side has no first name (`Tolkien` vs
    ///   `J.R.R. Tolkien`, `Ursula Le Guin` vs `Ursula K. Le Guin`); or every word of one key
    ///   appears in the other (`Muir Tamsyn` vs `Tamsyn Muir`). `Stephen King` and `Owen King`
    ///   do **not** agree: same family name, different first initial.
    /// - `none`: otherwise, or when either side is empty.
    public static func agreement(_ lhs: String, _ rhs: String) -> AuthorAgreement {
        agreement(keys: key(lhs), key(rhs))
    }

    /// ``agreement(_:_:)`` on two keys made by ``key(_:)``.
    public static func agreement(keys lhs: String, _ rhs: String) -> AuthorAgreement {
        guard !lhs.isEmpty, !rhs.isEmpty else { return .none }
        if lhs == rhs { return .exact }
        let left = TextFolding.split(lhs, separator: " ")
        let right = TextFolding.split(rhs, separator: " ")
        if let leftLast = left.last, let rightLast = right.last, leftLast == rightLast {
            let leftGiven = left.dropLast()
            let rightGiven = right.dropLast()
            if leftGiven.isEmpty || rightGiven.isEmpty { return .partial }
            if leftGiven.first?.first == rightGiven.first?.first { return .partial }
        }
        let (shorter, longer) = left.count <= right.count ? (left, right) : (right, left)
        if shorter.contains(where: { $0.count >= 2 }),
           shorter.allSatisfy({ word in longer.contains(word) }) {
            return .partial
        }
        return .none
    }

    /// The best agreement between any author of one list and any author of the other, on keys.
    public static func bestAgreement(keys lhs: [String], _ rhs: [String]) -> AuthorAgreement {
        var best = AuthorAgreement.none
        for left in lhs {
            for right in rhs {
                best = max(best, agreement(keys: left, right))
                if best == .exact { return best }
            }
        }
        return best
    }

    // MARK: - Helpers

    static func isSuffix(_ part: some StringProtocol) -> Bool {
        suffixes.contains(part.lowercased().filter { $0 != "." && !$0.isWhitespace })
    }

    private static func splitOn(_ text: String, separators: Set<Character>, words: Set<String>) -> [String] {
        var pieces: [String] = []
        for chunk in text.split(whereSeparator: { separators.contains($0) }) {
            var current: [Substring] = []
            for word in chunk.split(whereSeparator: \.isWhitespace) {
                if words.contains(word.lowercased()) {
                    if !current.isEmpty { pieces.append(current.joined(separator: " ")) }
                    current = []
                } else {
                    current.append(word)
                }
            }
            if !current.isEmpty { pieces.append(current.joined(separator: " ")) }
        }
        return pieces.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    private static func attachSuffixes(_ pieces: [String]) -> [String] {
        var result: [String] = []
        for piece in pieces {
            if isSuffix(piece), let last = result.popLast() {
                result.append(last + ", " + piece)
            } else {
                result.append(piece)
            }
        }
        return result
    }
}
