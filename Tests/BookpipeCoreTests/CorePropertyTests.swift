import BookpipeCore
import PropertyBased
import Testing

/// Properties of the cell parsers and normalisers, over generated values (issue 24): what a
/// table of examples cannot promise for every input.
@Suite struct CorePropertyTests {
    /// The ISBN-10 check character of nine digits.
    static func isbn10Check(_ body: String) -> Character {
        let sum = body.compactMap(\.wholeNumberValue).enumerated().reduce(0) { $0 + (10 - $1.offset) * $1.element }
        let check = (11 - sum % 11) % 11
        return check == 10 ? "X" : Character(String(check))
    }

    /// The ISBN-13 check digit of twelve digits.
    static func isbn13Check(_ body: some StringProtocol) -> Character {
        let sum = body.compactMap(\.wholeNumberValue).enumerated().reduce(0) { $0 + ($1.offset % 2 == 0 ? 1 : 3) * $1.element }
        return Character(String((10 - sum % 10) % 10))
    }

    /// Pieces titles are made of: words, spaces of every kind, series and subtitle marks,
    /// entities, combining marks, quotes, non-Latin scripts.
    static let titlePieces = [
        "The", "Dune", "a", "An", "Road", " ", "  ", "\t", "\n", "\u{00A0}", ":", ": ", " (", ")", "(", "#1", "#2.5",
        "Series", "Vol. 2", "&amp;", "&", "é", "e\u{301}", "ß", "—", "-", ",", ".", "'", "\"", "[", "]", "ÄÖÜ", "日本",
        "📚", "0", "42", "/", ";", "Book", "One", "The Locked Tomb", "\u{200B}", "ﬁ",
    ]

    /// Pieces author names are made of: names, initials, commas, suffixes, particles, entities.
    static let authorPieces = [
        "Tolkien", "J.R.R.", "JRR", "J.", "R", ",", ", ", " ", "  ", "Jr.", "jr", "Sr", "III", "Cortázar", "Julio",
        "de", "la", "O'Brien", "Smith-Jones", "&", "and", ";", ".", "Ph.D.", "\u{00A0}", "&amp;", "Ünïcödé", "McDonald",
        "ST.JOHN", "(Editor)", "KING", "martin", "Le Guin", "Ursula K.", "\t", "-", "é", "e\u{301}",
    ]

    /// Pieces ISBN cells are made of: digits, X, hyphens, spaces, Excel's formula, labels, separators.
    static let isbnPieces = [
        "978", "979", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "X", "x", "-", " ", "=\"", "\"", "ISBN", "ISBN:",
        "ISBN-13", ",", ";", "|", "/", "\n", "0439023483", "9780140328721", "080442957X", "1E+12", "·",
    ]

    static let titles = Gen<String?>.element(of: titlePieces).map { $0 ?? "" }.array(of: 0...10).map { $0.joined() }
    static let authors = Gen<String?>.element(of: authorPieces).map { $0 ?? "" }.array(of: 0...8).map { $0.joined() }
    static let isbnCells = Gen<String?>.element(of: isbnPieces).map { $0 ?? "" }.array(of: 0...12).map { $0.joined() }

    @Test("Every ISBN-10 converts to an ISBN-13 with a valid check digit, and back to the same ISBN-10")
    func isbn10RoundTrip() async {
        await propertyCheck(count: 500, input: Gen<Character>.number.string(of: 9)) { body in
            let isbn10 = body + String(Self.isbn10Check(body))
            guard let isbn = try? ISBN(isbn10) else {
                Issue.record("\(isbn10) is a valid ISBN-10 and was refused")
                return
            }
            #expect(isbn.isbn13.hasPrefix("978"))
            #expect(isbn.isbn13.last == Self.isbn13Check(isbn.isbn13.prefix(12)), "\(isbn.isbn13)")
            #expect(isbn.isbn10 == isbn10)
            #expect((try? ISBN(isbn.isbn13))?.isbn10 == isbn10)
        }
    }

    @Test("Every ISBN-13 keeps its check digit through ISBN-10 and back; a 979 one has no ISBN-10")
    func isbn13RoundTrip() async {
        await propertyCheck(count: 500, input: Gen<String?>.element(of: ["978", "979"]).map { $0 ?? "978" },
                            Gen<Character>.number.string(of: 9)) { prefix, body in
            let isbn13 = prefix + body + String(Self.isbn13Check(prefix + body))
            guard let isbn = try? ISBN(isbn13) else {
                Issue.record("\(isbn13) is a valid ISBN-13 and was refused")
                return
            }
            #expect(isbn.isbn13 == isbn13)
            if prefix == "979" {
                #expect(isbn.isbn10 == nil)
            } else {
                let isbn10 = try #require(isbn.isbn10)
                #expect(isbn10.last == Self.isbn10Check(String(isbn10.prefix(9))))
                #expect((try? ISBN(isbn10))?.isbn13 == isbn13)
            }
        }
    }

    @Test("A wrong check digit is never accepted, whatever the digits")
    func wrongCheckDigitRefused() async {
        await propertyCheck(count: 500, input: Gen<Character>.number.string(of: 12), Gen.int(in: 1...9)) { body, shift in
            let right = Self.isbn13Check("978" + body.prefix(9))
            let wrong = Character(String(((right.wholeNumberValue ?? 0) + shift) % 10))
            #expect((try? ISBN("978" + body.prefix(9) + String(wrong))) == nil)
        }
    }

    @Test("Normalising a title twice gives what normalising it once gives")
    func titleNormalisingIsIdempotent() async {
        await propertyCheck(count: 1000, input: Self.titles) { raw in
            let once = TitleNormalizer.normalize(raw)
            #expect(TitleNormalizer.normalize(once.cleaned) == once, "\(raw.debugDescription)")
            #expect(TitleNormalizer.key(once.key) == once.key, "\(raw.debugDescription)")
        }
    }

    @Test("Normalising an author twice gives what normalising once gives; the display name has the author's key")
    func authorNormalisingIsIdempotent() async {
        await propertyCheck(count: 1000, input: Self.authors) { raw in
            let name = AuthorNormalizer.displayName(raw)
            #expect(AuthorNormalizer.displayName(name) == name, "\(raw.debugDescription)")
            #expect(AuthorNormalizer.key(name) == AuthorNormalizer.key(raw), "\(raw.debugDescription)")
        }
    }

    @Test("Reading the ISBNs read from a cell again gives the same ISBNs")
    func isbnReadingIsIdempotent() async {
        await propertyCheck(count: 1000, input: Self.isbnCells) { raw in
            let once = Normalizer.readISBNs([raw]).all
            #expect(Normalizer.readISBNs(once).all == once, "\(raw.debugDescription)")
            if let cleaned = ISBN.clean(raw) {
                #expect(ISBN.clean(cleaned) == cleaned, "\(raw.debugDescription)")
            }
        }
    }
}
