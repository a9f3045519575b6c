import Testing
@testable import BookpipeCore

/// ``RawFields``: the compact form gives back exactly the fields it was made of, and long text
/// takes every buffer size of the text-folding fast paths.
@Suite struct RawFieldsTests {
    static let pieces = ["a", "é", "\u{1F}", "\u{1B}", "\u{1B}_", "\u{1B}[", ",", "\"", "\n", "\r\n", " ", "📚", ""]

    @Test("Fields survive the compact form exactly, and equal lists give equal values")
    func roundTrip() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<5_000 {
            let fields = (0..<Int(generator.next() % 6)).map { _ in
                SimpleTextTests.randomText(&generator, length: Int(generator.next() % 5), from: Self.pieces)
            }
            let raw = RawFields(fields)
            #expect(raw.fields == fields, "\(fields)")
            #expect(raw.count == fields.count)
            #expect(RawFields(raw.fields) == raw)
            #expect(RawFields(encoded: raw.encoded, count: raw.count).fields == fields)
        }
        #expect(RawFields([]).fields == [])
        #expect(RawFields([""]).fields == [""])
        #expect(RawFields([]) != RawFields([""]))
    }

    @Test("Long text: fast and general paths agree past the small and large stack buffers")
    func longText() {
        var generator = SeededGenerator(seed: 12)
        for length in [40, 43, 44, 100, 170, 171, 172, 200, 400] {
            for _ in 0..<40 {
                let text = SimpleTextTests.randomText(&generator, length: length,
                                                      from: ["a", "B", " ", "ǅ", "ß", "Æ", "-", ".", "J", "R"])
                #expect(TextFolding.key(text) == TextFolding.generalKey(text))
                #expect(TitleNormalizer.normalize(text) == TitleNormalizer.generalNormalize(text))
                if let tokens = AuthorNormalizer.simpleTokens(ofDisplayName: text) {
                    #expect(tokens == AuthorNormalizer.generalTokens(ofDisplayName: text))
                }
            }
        }
    }
}
