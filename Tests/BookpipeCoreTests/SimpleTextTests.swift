import BookpipeTesting
import Foundation
import Testing
@testable import BookpipeCore

/// A small seeded generator (SplitMix64, BookpipeTesting's), so failures reproduce.
typealias SeededGenerator = SplitMix64

/// The fast paths (simple text, ASCII ISBNs) must give exactly what the general paths give.
@Suite struct SimpleTextTests {
    /// Characters that exercise every rule: letters of both cases, digits, the punctuation the
    /// normalisers look at, every kind of whitespace and control, Latin letters with special
    /// folds, and a few characters outside simple text (to check the fallbacks).
    static let alphabet: [String] = {
        var characters = Array("aAbBjJrRkKzZ019 .,;:-#()[]'`\"!?/|_+=<>^~$%*@{}").map(String.init)
        characters += ["  ", " ", " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{00}", "\u{1F}", "\u{7F}"]
        characters += ["\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "\u{AD}", "é", "É", "ß", "Ø", "ø", "Æ", "æ", "þ", "Þ", "ı",
                       "ł", "Ł", "İ", "ª", "º", "µ", "¿", "¡", "×", "÷", "·", "«", "»", "©", "ő", "ǅ", "ǈ", "ǋ", "ȷ",
                       "ɐ", "ʼ", "ˆ", "ʰ", "ñ", "Ü", "ç", "ÿ", "Ÿ", "đ", "Đ", "ħ", "ŀ", "ŧ", "ð", "œ", "Œ", "´", "¨"]
        characters += ["&", "&amp;", "&#39;", "\u{301}", "ш", "Ж", "“", "’", "—", "\u{2010}", "我", "📚", "\u{FEFF}", "\u{200B}"]
        return characters
    }()

    static func randomText(_ generator: inout SeededGenerator, length: Int, from alphabet: [String] = alphabet) -> String {
        (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }.joined()
    }

    /// Title-shaped text: words, series parentheticals, bare numbers and subtitles, with odd spacing.
    static func randomTitle(_ generator: inout SeededGenerator) -> String {
        func pick(_ options: [String]) -> String { options[Int(generator.next() % UInt64(options.count))] }
        let words = ["The", "Road", "dune", "Saga", "Ørsted", "Café", "Straße", "x", "It", "Range", "Łódź", "ǅemal",
                     "I", "Book", "vol", "Vol.", "BOOK", "Part", "No.", "tome", "Band", "Sapiens", "İz", "1984"]
        let spaces = [" ", " ", " ", "  ", "\t", "\u{A0}", "\u{85}", " \n "]
        func phrase() -> String {
            (0..<Int(1 + generator.next() % 4)).map { _ in pick(words) }.joined(separator: pick(spaces))
        }
        let numbers = ["1", "2.5", "1-3", "12345", "0.5", "", "1.2.3", "1--2", "-1", "3a", "10-12", "4."]
        var text = phrase()
        switch generator.next() % 9 {
        case 0: text += pick(spaces) + "(" + phrase() + pick([", #", " #", "#", ", # ", ";#"]) + pick(numbers) + ")"
        case 1: text += pick(spaces) + "(" + pick(["Book", "Vol.", "Volume", "Part", "No.", "vol", "Tome", "X"]) + pick(spaces) + pick(numbers) + ")"
        case 2: text += pick(spaces) + "[" + phrase() + " #" + pick(numbers) + "]"
        case 3: text += pick([" #", "#", ", #", " ,#"]) + pick(numbers)
        case 4: text += pick([":", " :", ": ", "\u{FF1A}"]) + pick(["", " ", phrase()])
        case 5: text = pick(["(", "((", ")", "]"]) + text + pick([")", "))", "]", "(#1)"])
        case 6: text += pick(spaces) + "(" + phrase() + pick([", ", ": ", "; ", " "]) + pick(["Book ", "Vol. "]) + pick(numbers) + ")"
        case 7: text = phrase() + pick([": ", ":"]) + phrase() + pick(spaces) + "(" + phrase() + ", #" + pick(numbers) + ")"
        default: break
        }
        if generator.next() % 5 == 0 { text = pick(spaces) + text + pick(spaces) }
        return text
    }

    @Test("Every simple scalar folds to the same key alone and between ASCII letters")
    func everyScalar() {
        for value in UInt32(0)..<SimpleText.limit {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for text in [String(scalar), "a" + String(scalar) + "b", "A " + String(scalar) + String(scalar) + " z"] {
                #expect(TextFolding.key(text) == TextFolding.generalKey(text), "U+\(String(value, radix: 16))")
                #expect(TextFolding.clean(text) == TextFolding.generalClean(text), "U+\(String(value, radix: 16))")
                #expect(TextFolding.collapseWhitespace(text) == TextFolding.generalCollapseWhitespace(text))
                #expect(TextFolding.letterCount(text) == text.unicodeScalars.count(where: { $0.properties.isAlphabetic }))
            }
        }
    }

    @Test("Clean-up and keys: fast and general paths agree on random text")
    func textFolding() {
        var generator = SeededGenerator(seed: 1)
        for _ in 0..<20_000 {
            let text = Self.randomText(&generator, length: Int(generator.next() % 24))
            #expect(TextFolding.clean(text) == TextFolding.generalClean(text), "\(text.debugDescription)")
            #expect(TextFolding.collapseWhitespace(text) == TextFolding.generalCollapseWhitespace(text),
                    "\(text.debugDescription)")
            #expect(TextFolding.key(text) == TextFolding.generalKey(text), "\(text.debugDescription)")
        }
    }

    /// Scalars of many scripts, and the cases where folding or composition could reach across
    /// scalars: final sigma, dotted/dotless i, ß, ligatures, fullwidth forms, Hangul syllables
    /// and jamo, kana with combining marks, marks without a precomposed letter, emoji sequences,
    /// Hebrew and Arabic points, Devanagari vowel signs, a decomposing singleton (Ångström sign).
    static let scripts: [String] = {
        var characters = Array("aZ09 .,:-#()'").map(String.init)
        characters += ["Преступление", "наказ", "Ё", "ё", "й", "ΣΊΣΥΦΟΣ", "σοφός", "ς", "Σ", "İ", "ı", "ß", "ẞ", "ﬁ", "ﬀ",
                       "Ａ", "ｂ", "１", "ノルウェイ", "の", "森", "が", "か\u{3099}", "ﾊﾟ", "ヴ", "ー", "我穿我自己", "𠀋",
                       "가", "\u{1100}\u{1161}", "\u{1161}", "한국어", "שלום", "עוֹלָם", "\u{5B8}", "كِتَاب", "\u{64E}",
                       "हिन्दी", "\u{93F}", "ภาษาไทย", "q\u{303}", "\u{303}", "e\u{301}", "\u{338}", "=", "≠",
                       "📚", "👩\u{200D}💻", "👍🏽", "❤\u{FE0F}", "🇫🇷", "’", "‘", "“", "”", "—", "–", "…", "\u{2009}",
                       "\u{3000}", "、", "。", "「", "」", "\u{212B}", "Å", "\u{2126}", "µ", "½", "²", "№", "ǅ", "\u{200E}",
                       "\u{FEFF}", "\u{00A0}", "é", "ø", "Ł", "æ", "þ", "ŉ", "ǰ", "ΐ", "ﬆ", "Ꭰ", "ꭰ", "Ⓐ", "ⓐ"]
        return characters
    }()

    @Test("Splitting by bytes gives the substrings splitting by Characters gives, on random text")
    func splitAgreesWithCharacterSplit() {
        var generator = SeededGenerator(seed: 20261128)
        var fast = 0
        for index in 0..<4_000 {
            let text = index % 2 == 0 ? Self.randomText(&generator, length: Int(generator.next() % 24))
                : Self.randomTitle(&generator)
            for separator: Unicode.Scalar in [" ", "\n", "\r", ";"] {
                let split = TextFolding.split(text, separator: separator)
                let expected = text.split(separator: Character(separator))
                #expect(split.map(String.init) == expected.map(String.init), "\(text.debugDescription) on \(separator.escaped(asASCII: true))")
                #expect(split.map(\.startIndex) == expected.map(\.startIndex) && split.map(\.endIndex) == expected.map(\.endIndex))
            }
            if SimpleText.isSimple(text.utf8.span, allowAmpersand: true), !text.utf8.contains(0x0D) { fast += 1 }
        }
        #expect(fast > 1_000)
    }

    @Test("Keys scalar by scalar equal keys of the whole text, in many scripts")
    func scalarByScalarKeys() {
        var generator = SeededGenerator(seed: 4)
        var fastCount = 0
        for _ in 0..<20_000 {
            let text = Self.randomText(&generator, length: Int(generator.next() % 8), from: Self.scripts)
            if let fast = TextFolding.scalarByScalarKey(text) {
                fastCount += 1
                #expect(fast == TextFolding.wholeTextKey(text), "\(text.debugDescription)")
            }
            #expect(TextFolding.key(text) == TextFolding.wholeTextKey(text), "\(text.debugDescription)")
        }
        #expect(fastCount > 10_000)
        for scalar in Self.scripts.flatMap(\.unicodeScalars) {
            let text = String(scalar)
            #expect(TextFolding.scalarByScalarKey(text).map { $0 == TextFolding.wholeTextKey(text) } ?? true,
                    "U+\(String(scalar.value, radix: 16))")
        }
        // The titles of a non-Latin library take the fast path.
        for title in ["ノルウェイの森", "Преступление и наказание", "שלום עולם", "我穿我自己", "Smilla’s Sense of Snow", "한국어"] {
            #expect(TextFolding.scalarByScalarKey(title) != nil, "\(title)")
        }
        // Text that is not in NFC, or has entities, is folded whole.
        #expect(TextFolding.scalarByScalarKey("e\u{301}") == nil)
        #expect(TextFolding.scalarByScalarKey("\u{1100}\u{1161}") == nil)
        #expect(TextFolding.scalarByScalarKey("A &amp; B") == nil)
    }

    @Test("A single ASCII ISBN value: no byte is a separator, whitespace or above ASCII")
    func singleASCIIValue() {
        func expected(_ text: String) -> Bool {
            text.utf8.allSatisfy { byte in
                byte < 0x80 && !(0x09...0x0D).contains(byte) && !" ,;|/".utf8.contains(byte)
            }
        }
        for value in 0..<0x100 {
            let text = "978" + String(Character(Unicode.Scalar(UInt8(value)))) + "0441013593"
            #expect(ISBN.isSingleASCIIValue(text) == expected(text), "byte \(value)")
        }
        for text in ["=\"9780441013593\"", "=\"\"", "", "0441013593, 9780441013593", "ISBN 0441013593", "0-441-01359-7",
                     "9780441013593|123", "a/b", "x;y", "9.78044E+12", "97804410135931234567890123"] {
            #expect(ISBN.isSingleASCIIValue(text) == expected(text), "\(text)")
        }
    }

    @Test("NFC: text the quick check accepts is returned as it is; other text is composed")
    func nfcQuickCheck() {
        #expect(TextFolding.nfc("ノルウェイの森") == "ノルウェイの森")
        #expect(Array(TextFolding.nfc("e\u{301}").unicodeScalars) == ["\u{E9}"])
        #expect(Array(TextFolding.nfc("\u{1100}\u{1161}").unicodeScalars) == ["\u{AC00}"])
        #expect(Array(TextFolding.nfc("\u{212B}").unicodeScalars) == ["\u{C5}"])
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<5_000 {
            let text = Self.randomText(&generator, length: Int(generator.next() % 8), from: Self.scripts)
            #expect(Array(TextFolding.nfc(text).unicodeScalars)
                == Array(text.precomposedStringWithCanonicalMapping.unicodeScalars), "\(text.debugDescription)")
        }
    }

    @Test("Authors: fast and general paths agree on random names")
    func authors() {
        var generator = SeededGenerator(seed: 2)
        let nameParts = ["J.", "R.R.", "Tolkien", "JRR", "RJ", "Le Guin", "Jr.", "jr", "III", "Sr", "PhD", "K.", "Ørsted",
                         "ÉMILE", "Zoë", "Chodos-Irvine", "O'Brien", "St.John", "V", "Iv", "iii", "Æ", "ǅ", ",", ", ",
                         " ", "  ", "-", ".", "..", "MD", "Esq.", "ıI", "İA", "Dž", "NN"]
        for _ in 0..<20_000 {
            let raw = generator.next() % 3 == 0
                ? Self.randomText(&generator, length: Int(generator.next() % 20))
                : Self.randomText(&generator, length: Int(1 + generator.next() % 7), from: nameParts)
            let display = AuthorNormalizer.displayName(raw)
            #expect(display == AuthorNormalizer.generalDisplayName(raw), "\(raw.debugDescription)")
            for name in [display, raw] {
                #expect(AuthorNormalizer.tokens(ofDisplayName: name) == AuthorNormalizer.generalTokens(ofDisplayName: name),
                        "\(name.debugDescription)")
                if let key = AuthorNormalizer.simpleKey(ofDisplayName: name) {
                    #expect(key == AuthorNormalizer.generalTokens(ofDisplayName: name).joined(separator: " "),
                            "\(name.debugDescription)")
                }
            }
            let both = AuthorNormalizer.displayNameAndKey(raw)
            let general = AuthorNormalizer.generalDisplayName(raw)
            #expect(both.displayName == general, "\(raw.debugDescription)")
            #expect(both.key == AuthorNormalizer.generalTokens(ofDisplayName: AuthorNormalizer.generalDisplayName(general))
                .joined(separator: " "), "\(raw.debugDescription)")
        }
    }

    /// The definition of ``TextFolding/collapseWhitespace(_:)``, scalar by scalar on the string's
    /// scalar view (the general path works on the UTF-8 bytes and must give the same).
    static func referenceCollapseWhitespace(_ text: String) -> String {
        var output = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !output.isEmpty
                continue
            }
            if scalar.properties.generalCategory == .control || scalar == "\u{FEFF}" || scalar == "\u{200B}" {
                continue
            }
            if pendingSpace {
                output.append(" ")
                pendingSpace = false
            }
            output.append(scalar)
        }
        return String(output)
    }

    @Test("Whitespace collapsing on UTF-8 bytes equals the scalar-by-scalar definition")
    func collapseWhitespaceOnBytes() {
        var generator = SeededGenerator(seed: 5)
        let mixed = Self.alphabet + Self.scripts + ["\u{1680}", "\u{2000}", "\u{200A}", "\u{2028}", "\u{2029}", "\u{202F}",
                                                    "\u{205F}", "\u{180E}", "\u{200C}", "\u{200D}", "\u{2060}"]
        for _ in 0..<20_000 {
            let text = Self.randomText(&generator, length: Int(generator.next() % 12), from: mixed)
            #expect(TextFolding.generalCollapseWhitespace(text) == Self.referenceCollapseWhitespace(text),
                    "\(text.debugDescription)")
        }
        // Every scalar of the first planes alone, between letters, and doubled between spaces.
        for value in UInt32(0)..<0x3100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for text in [String(scalar), "a" + String(scalar) + "b", " " + String(scalar) + String(scalar) + " "] {
                #expect(TextFolding.generalCollapseWhitespace(text) == Self.referenceCollapseWhitespace(text),
                        "U+\(String(value, radix: 16))")
            }
        }
        for value: UInt32 in [0xFEFF, 0xFF1A, 0x1F4DA, 0x10FFFF, 0xE0001] {
            let text = " x" + String(Unicode.Scalar(value)!) + "\u{3000}y "
            #expect(TextFolding.generalCollapseWhitespace(text) == Self.referenceCollapseWhitespace(text))
        }
    }

    @Test("Titles: fast and general paths agree on random titles")
    func titles() {
        var generator = SeededGenerator(seed: 3)
        for index in 0..<30_000 {
            let raw = index % 4 == 0 ? Self.randomText(&generator, length: Int(generator.next() % 30))
                                     : Self.randomTitle(&generator)
            #expect(TitleNormalizer.normalize(raw) == TitleNormalizer.generalNormalize(raw), "\(raw.debugDescription)")
        }
    }

    @Test("ISBNs: fast and general reading agree on random values")
    func isbns() {
        var generator = SeededGenerator(seed: 4)
        let pieces = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "978", "979", "X", "x", "=", "\"", "-", " ", "E",
                      "e", "+", ".", ",", "ISBN", "ISBN:", "13", "10", ":", "[", "]", "(", ")", "_", "'", "a", "é",
                      "\u{2013}", ";", "/", "|", "\n", "0439023483", "9780439023481", "=\"", "\"\"", "9.78044E+12"]
        for _ in 0..<30_000 {
            let raw = Self.randomText(&generator, length: Int(generator.next() % 16), from: pieces)
            #expect(ISBN.read(raw) == ISBN.generalRead(raw), "\(raw.debugDescription)")
            #expect(ISBN.splitList(raw) == ISBN.generalSplitList(raw), "\(raw.debugDescription)")
        }
        // Random digits with and without a valid check digit, bare and in the formula wrapper.
        for index in 0..<20_000 {
            let length = index % 2 == 0 ? 13 : 10
            var digits = (0..<length).map { _ in Character(String(generator.next() % 10)) }
            if index % 5 != 0 && length == 13 { digits[0] = "9"; digits[1] = "7"; digits[2] = index % 3 == 0 ? "9" : "8" }
            if index % 7 == 0 && length == 10 { digits[9] = "X" }
            let value = String(digits)
            for raw in [value, "=\"\(value)\""] {
                #expect(ISBN.read(raw) == ISBN.generalRead(raw), "\(raw.debugDescription)")
            }
        }
        // Every valid ISBN-10 and ISBN-13 shape, with and without Goodreads' formula wrapper.
        for isbn in ["0439023483", "043902348X", "080442957X", "9780439023481", "9790000000001", "439023483",
                     "2070291340", "1", "123456789012345678901234"] {
            for raw in [isbn, "=\"\(isbn)\"", "\"=\"\"\(isbn)\"\"\"", " \(isbn) ", isbn.lowercased()] {
                #expect(ISBN.read(raw) == ISBN.generalRead(raw), "\(raw.debugDescription)")
            }
        }
    }
}

extension SimpleTextTests {
    @Test("A simple scalar's key takes at most three bytes per byte of the scalar")
    func keyCapacity() {
        for value in UInt32(0)..<SimpleText.limit {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let operations = SimpleText.keyOperations[Int(value)]
            // Each emitted piece may be preceded by one space.
            let written = operations.reduce(0) { $0 + ($1.map { $0.count + 1 } ?? 0) }
            #expect(written <= 3 * String(scalar).utf8.count, "U+\(String(value, radix: 16))")
        }
    }
}
