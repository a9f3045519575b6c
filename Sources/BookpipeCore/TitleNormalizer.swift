/// The forms derived from one title as read.
public struct NormalizedTitle: Sendable, Hashable, Codable {
    /// The title with entities decoded, NFC and whitespace collapsed; the series parenthetical is
    /// kept. Emoji, right-to-left text and combining characters are kept as read.
    public var cleaned: String
    /// The title to search with: ``cleaned`` without the series parenthetical.
    public var searchTitle: String
    /// The part before the subtitle (`"Range: Why Generalists…"` → `"Range"`), or the search
    /// title when it has no subtitle that can safely be split off.
    public var mainTitle: String
    /// The subtitle after the `:`, when the title was split.
    public var subtitle: String?
    /// Comparison key of ``searchTitle`` (see ``TextFolding/key(_:)``).
    public var key: String
    /// Comparison key of ``mainTitle``.
    public var mainKey: String
    /// The series name taken from the parenthetical, when it named one.
    public var series: String?
    /// The number in the series (`"1"`, `"2.5"`, `"1-3"`), when there was one.
    public var seriesNumber: String?

    /// True when the title was split into a main title and a subtitle.
    public var hasSubtitle: Bool { subtitle != nil }
}

/// Derives search titles, main titles, series data and comparison keys from titles as read.
///
/// Rules, in order:
/// 1. HTML entities are decoded, the text is put in Unicode NFC, whitespace is collapsed.
/// 2. A series parenthetical at the end is removed and kept as data, but only when it looks like
///    one: a number introduced by `#`, `Book`, `Vol.`, `Volume`, `Part`, `Tome` or `No.`, with or
///    without a series name before it: `(The Locked Tomb #1)`, `(Pippi Långstrump, #1)`,
///    `(Book 2)`, `(Vol. 3)`, `(Series, #2.5)`. Any other parenthetical (`(Illustrated Edition)`,
///    `(Fiction & Cie)`) is part of the title. A trailing `#2.5` without parentheses is a series
///    number too.
/// 3. The subtitle is split at the first `:` only when the part before it has at least
///    ``minimumMainTitleLetters`` letters, so `"2001: A Space Odyssey"` and `"It: A Novel"`
///    keep their full title as main title; ``MatchScorer`` compares full and main titles.
/// 4. Keys: see ``TextFolding/key(_:)``. Leading articles are **kept** in the key: the key is
///    also used to find duplicates, and "The Road" and "Road" can be different books. The scorer
///    instead treats a title that differs only by a leading "The", "A" or "An" as exact.
public enum TitleNormalizer {
    /// The fewest letters the part before a `:` needs to count as a main title.
    public static let minimumMainTitleLetters = 4

    /// Normalises one title.
    ///
    /// ```swift
    /// let title = TitleNormalizer.normalize("Gideon the Ninth (The Locked Tomb #1)")
    /// title.searchTitle   // "Gideon the Ninth"
    /// title.series        // "The Locked Tomb"
    /// title.seriesNumber  // "1"
    /// ```
    ///
    /// - Parameter raw: The title as read.
    /// - Returns: The derived forms. An empty or blank title gives empty forms.
    public static func normalize(_ raw: String) -> NormalizedTitle {
        let cleaned = TextFolding.clean(raw)
        if let fast = simpleNormalize(cleaned: cleaned) { return fast }
        return generalNormalize(cleaned: cleaned)
    }

    /// ``normalize(_:)`` for any text, Character by Character.
    static func generalNormalize(_ raw: String) -> NormalizedTitle {
        generalNormalize(cleaned: TextFolding.clean(raw))
    }

    private static func generalNormalize(cleaned: String) -> NormalizedTitle {
        var searchTitle = cleaned
        var series: String?
        var seriesNumber: String?
        if let found = splitSeries(cleaned) {
            searchTitle = found.title
            series = found.series
            seriesNumber = found.number
        }
        var mainTitle = searchTitle
        var subtitle: String?
        if let split = splitSubtitle(searchTitle) {
            mainTitle = split.main
            subtitle = split.subtitle
        }
        let key = TextFolding.key(searchTitle)
        return NormalizedTitle(
            cleaned: cleaned, searchTitle: searchTitle, mainTitle: mainTitle, subtitle: subtitle,
            key: key, mainKey: subtitle == nil ? key : TextFolding.key(mainTitle),
            series: series, seriesNumber: seriesNumber)
    }

    /// The comparison key of a title (see ``TextFolding/key(_:)``).
    public static func key(_ title: String) -> String {
        TextFolding.key(title)
    }

    // MARK: - Simple text

    /// ``normalize(_:)`` of cleaned simple text (see ``SimpleText``; `&` allowed), byte by byte;
    /// nil for other text. The same rules as ``splitSeries(_:)`` and ``splitSubtitle(_:)``.
    static func simpleNormalize(cleaned: String) -> NormalizedTitle? {
        let bytes = cleaned.utf8.span
        guard SimpleText.isSimple(bytes, allowAmpersand: true) else { return nil }
        var searchTitle = cleaned
        var search = 0..<bytes.count
        var series: String?
        var number: String?
        if let found = simpleSplitSeries(bytes) {
            search = found.title
            searchTitle = SimpleText.string(bytes, found.title)
            series = found.series
            number = SimpleText.string(bytes, found.number)
        }
        var mainTitle = searchTitle
        var subtitle: String?
        // Subtitle: at the first colon, when the part before it has enough letters.
        if let colon = SimpleText.firstIndex(of: UInt8(ascii: ":"), in: bytes, search) {
            let main = SimpleText.trimmed(bytes, search.lowerBound..<colon)
            let after = SimpleText.trimmed(bytes, (colon + 1)..<search.upperBound)
            if !after.isEmpty, SimpleText.letterCount(bytes, in: main) >= minimumMainTitleLetters {
                let mainText = SimpleText.string(bytes, main)
                if !TextFolding.key(mainText).isEmpty {
                    mainTitle = mainText
                    subtitle = SimpleText.string(bytes, after)
                }
            }
        }
        let key = TextFolding.key(searchTitle)
        return NormalizedTitle(
            cleaned: cleaned, searchTitle: searchTitle, mainTitle: mainTitle, subtitle: subtitle,
            key: key, mainKey: subtitle == nil ? key : TextFolding.key(mainTitle),
            series: series, seriesNumber: number)
    }

    /// ``splitSeries(_:)`` on the bytes of cleaned simple text: the byte ranges of the title and
    /// the number, and the series name.
    private static func simpleSplitSeries(_ text: Span<UInt8>)
        -> (title: Range<Int>, series: String?, number: Range<Int>)? {
        guard !text.isEmpty else { return nil }
        let last = text[text.count - 1]
        if last == UInt8(ascii: ")") || last == UInt8(ascii: "]") {
            let open = last == UInt8(ascii: ")") ? UInt8(ascii: "(") : UInt8(ascii: "[")
            var depth = 0
            var index = text.count
            var openIndex: Int?
            while index > 0 {
                index -= 1
                if text[index] == last { depth += 1 }
                if text[index] == open {
                    depth -= 1
                    if depth == 0 {
                        openIndex = index
                        break
                    }
                }
            }
            if let openIndex {
                let before = SimpleText.trimmed(text, 0..<openIndex)
                guard !before.isEmpty,
                      let parsed = simpleParseSeriesMarker(text, (openIndex + 1)..<(text.count - 1)) else { return nil }
                return (before, parsed.series, parsed.number)
            }
        }
        // A bare trailing "#2.5".
        if let hash = SimpleText.lastIndex(of: UInt8(ascii: "#"), in: text, 0..<text.count) {
            let number = (hash + 1)..<text.count
            let before = SimpleText.trimmed(text, 0..<hash)
            if isSimpleSeriesNumber(text, number), !before.isEmpty, endsWithWhitespace(text, 0..<hash) {
                var titlePart = before
                if text[titlePart.upperBound - 1] == UInt8(ascii: ",") {
                    titlePart = titlePart.lowerBound..<(titlePart.upperBound - 1)
                }
                return (SimpleText.trimmed(text, titlePart), nil, number)
            }
        }
        return nil
    }

    /// True when the last scalar of `range` of simple text is whitespace.
    private static func endsWithWhitespace(_ text: Span<UInt8>, _ range: Range<Int>) -> Bool {
        guard !range.isEmpty else { return false }
        let last = text[range.upperBound - 1]
        if last < 0x80 { return SimpleText.isSpace(last) }
        return range.count >= 2 && text[range.upperBound - 2] == 0xC2 && (last == 0x85 || last == 0xA0)
    }

    /// ``parseSeriesMarker(_:)`` on `range` of simple bytes: the series name and the number's range.
    private static func simpleParseSeriesMarker(_ bytes: Span<UInt8>, _ inner: Range<Int>)
        -> (series: String?, number: Range<Int>)? {
        let text = SimpleText.trimmed(bytes, inner)
        if let hash = SimpleText.lastIndex(of: UInt8(ascii: "#"), in: bytes, text) {
            let number = SimpleText.trimmed(bytes, (hash + 1)..<text.upperBound)
            guard isSimpleSeriesNumber(bytes, number) else { return nil }
            let name = simpleSeriesName(bytes, text.lowerBound..<hash)
            return (name.map { SimpleText.string(bytes, $0) }, number)
        }
        // Words separated by whitespace.
        var words: [Range<Int>] = []
        var wordStart = text.lowerBound
        _ = SimpleText.forEachScalar(bytes, in: text, allowAmpersand: true) { scalar, start, end in
            if SimpleText.properties[Int(scalar)].contains(.whitespace) {
                if start > wordStart { words.append(wordStart..<start) }
                wordStart = end
            }
        }
        if text.upperBound > wordStart { words.append(wordStart..<text.upperBound) }
        guard words.count >= 2, let last = words.last, isSimpleSeriesNumber(bytes, last) else {
            return nil
        }
        // The marker word, lower-cased, without periods and commas.
        var marker: [UInt8] = []
        for index in words[words.count - 2] {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") || byte == UInt8(ascii: ",") { continue }
            guard byte < 0x80 else { return nil }  // a non-ASCII word is no number word
            marker.append(byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte)
        }
        guard numberWords.contains(String(decoding: marker, as: UTF8.self)) else { return nil }
        // The series name: the words before the marker joined by single spaces.
        var name: [UInt8] = []
        for word in words.dropLast(2) {
            if !name.isEmpty { name.append(0x20) }
            for index in word { name.append(bytes[index]) }
        }
        let nameBytes = name.span
        let series = simpleSeriesName(nameBytes, 0..<nameBytes.count).map { SimpleText.string(nameBytes, $0) }
        return (series, last)
    }

    /// ``seriesName(_:)`` on `range` of simple bytes.
    private static func simpleSeriesName(_ text: Span<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        var name = SimpleText.trimmed(text, range)
        while !name.isEmpty {
            let last = text[name.upperBound - 1]
            guard last == UInt8(ascii: ",") || last == UInt8(ascii: ";") || last == UInt8(ascii: ":") else { break }
            name = SimpleText.trimmed(text, name.lowerBound..<(name.upperBound - 1))
        }
        return name.isEmpty ? nil : name
    }

    /// ``isSeriesNumber(_:)`` on `range` of simple bytes.
    private static func isSimpleSeriesNumber(_ text: Span<UInt8>, _ range: Range<Int>) -> Bool {
        var parts = 1
        var pieces = 1
        var pieceLength = 0
        for index in range {
            switch text[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                pieceLength += 1
                if pieceLength > 4 { return false }
            case UInt8(ascii: "."):
                guard pieceLength > 0 else { return false }
                pieces += 1
                if pieces > 2 { return false }
                pieceLength = 0
            case UInt8(ascii: "-"):
                guard pieceLength > 0 else { return false }
                parts += 1
                if parts > 2 { return false }
                pieces = 1
                pieceLength = 0
            default:
                return false
            }
        }
        return pieceLength > 0
    }

    // MARK: - Series

    private static let numberWords: [String] = ["book", "vol", "volume", "part", "tome", "no", "nr", "band"]

    /// Removes a trailing series marker: `"Title (Series, #1)"`, `"Title (Book 2)"`, `"Title #2.5"`.
    static func splitSeries(_ title: String) -> (title: String, series: String?, number: String)? {
        // A title whose last byte is not `)` or `]` cannot end in that character, and one without
        // a `#` byte has no `#`: most titles are ruled out here, without grapheme breaking.
        let lastByte = title.utf8.last
        let closes = lastByte == UInt8(ascii: ")") || lastByte == UInt8(ascii: "]")
        if !closes && !title.containsUTF8Byte(UInt8(ascii: "#")) { return nil }
        let trimmed = Substring(title)
        if trimmed.last == ")" || trimmed.last == "]",
           let open = matchingOpen(trimmed) {
            let inner = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
            let before = trimmed[..<open].trimmingWhitespace()
            guard !before.isEmpty, let parsed = parseSeriesMarker(inner) else { return nil }
            return (before, parsed.series, parsed.number)
        }
        // A bare trailing "#2.5" (Goodreads sometimes drops the parentheses).
        if let hash = trimmed.lastIndex(of: "#") {
            let number = trimmed[trimmed.index(after: hash)...]
            let before = trimmed[..<hash].trimmingWhitespace()
            if isSeriesNumber(number), !before.isEmpty, trimmed[..<hash].last?.isWhitespace == true {
                var titlePart = Substring(before)
                if titlePart.last == "," { titlePart = titlePart.dropLast() }
                return (titlePart.trimmingWhitespace(), nil, String(number))
            }
        }
        return nil
    }

    /// The index of the bracket that opens the final bracketed group.
    private static func matchingOpen(_ text: Substring) -> Substring.Index? {
        guard let close = text.last else { return nil }
        let open: Character = close == ")" ? "(" : "["
        var depth = 0
        var index = text.endIndex
        while index > text.startIndex {
            index = text.index(before: index)
            if text[index] == close { depth += 1 }
            if text[index] == open {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }

    /// Reads `Series Name, #1`, `Series Name #1`, `#1`, `Book 2`, `Series, Vol. 3`, `Series Book 2`.
    private static func parseSeriesMarker(_ inner: Substring) -> (series: String?, number: String)? {
        let text = inner.trimmingWhitespace()
        // "#n" form.
        if let hash = text.lastIndex(of: "#") {
            let number = text[text.index(after: hash)...].trimmingWhitespace()
            guard isSeriesNumber(Substring(number)) else { return nil }
            return (seriesName(text[..<hash]), number)
        }
        // "Book n" / "Vol. n" form: the last word is the number, the word before it a number word.
        let words = text.split(whereSeparator: \.isWhitespace)
        guard words.count >= 2, let last = words.last, isSeriesNumber(last) else { return nil }
        let marker = words[words.count - 2].lowercased().filter { $0 != "." && $0 != "," }
        guard numberWords.contains(marker) else { return nil }
        let nameWords = words.dropLast(2)
        return (seriesName(Substring(nameWords.joined(separator: " "))), String(last))
    }

    private static func seriesName(_ text: Substring) -> String? {
        var name = Substring(text.trimmingWhitespace())
        while let last = name.last, last == "," || last == ";" || last == ":" {
            name = Substring(name.dropLast().trimmingWhitespace())
        }
        return name.isEmpty ? nil : String(name)
    }

    /// `1`, `2.5`, `1-3`, `0.5`: digits, optionally a decimal part, optionally a range.
    private static func isSeriesNumber(_ text: Substring) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { part in
            let pieces = part.split(separator: ".", omittingEmptySubsequences: false)
            return (1...2).contains(pieces.count)
                && pieces.allSatisfy { !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isASCIIDigit) }
        }
    }

    // MARK: - Subtitle

    /// Splits `"Main: Subtitle"` when the main part has enough letters to stand alone.
    static func splitSubtitle(_ title: String) -> (main: String, subtitle: String)? {
        // Neither colon (`:`, or U+FF1A, whose UTF-8 ends in 0x9A): nothing to split.
        guard title.utf8.contains(where: { $0 == UInt8(ascii: ":") || $0 == 0x9A }) else { return nil }
        guard let colon = title.firstIndex(where: { $0 == ":" || $0 == "\u{FF1A}" }) else { return nil }
        let main = title[..<colon].trimmingWhitespace()
        let subtitle = title[title.index(after: colon)...].trimmingWhitespace()
        guard !subtitle.isEmpty,
              TextFolding.letterCount(main) >= minimumMainTitleLetters,
              !TextFolding.key(main).isEmpty
        else { return nil }
        return (main, subtitle)
    }
}
