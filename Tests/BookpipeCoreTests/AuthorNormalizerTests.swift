import Testing
@testable import BookpipeCore

@Suite struct AuthorNormalizerTests {
    @Test("Display names put 'Last, First' in 'First Last' order and keep suffixes last", arguments: [
        ("Muir, Tamsyn", "Tamsyn Muir"),
        ("Tamsyn Muir", "Tamsyn Muir"),
        ("Tolkien, J.R.R.", "J.R.R. Tolkien"),
        ("Cortazar, Julio", "Julio Cortazar"),
        ("Boulgakov, Mikhaïl", "Mikhaïl Boulgakov"),
        ("Reed, Aaron A.", "Aaron A. Reed"),
        ("King, Martin Luther, Jr.", "Martin Luther King Jr."),
        ("Martin Luther King, Jr.", "Martin Luther King Jr."),
        ("Martin Luther King Jr.", "Martin Luther King Jr."),
        ("Davis, Sammy, Jr.", "Sammy Davis Jr."),
        ("David   Epstein", "David Epstein"),
        ("  Some  Author ", "Some Author"),
        (",", ""),
        ("", ""),
        ("琅俨", "琅俨"),
        ("Dupuis, Me\u{301}lanie", "M\u{E9}lanie Dupuis"),
        ("O&#39;Brien, Tim", "Tim O'Brien"),
    ])
    func displayNames(raw: String, display: String) {
        #expect(AuthorNormalizer.displayName(raw) == display)
    }

    @Test("Keys fold case and diacritics and write initials as letters", arguments: [
        ("J.R.R. Tolkien", "j r r tolkien"),
        ("J. R. R. Tolkien", "j r r tolkien"),
        ("JRR Tolkien", "j r r tolkien"),
        ("Tolkien, J.R.R.", "j r r tolkien"),
        ("Tolkien, J. R. R.", "j r r tolkien"),
        ("J.R.R.Tolkien", "j r r tolkien"),
        ("Julio Cortázar", "julio cortazar"),
        ("Cortazar, Julio", "julio cortazar"),
        ("Mélanie Dupuis", "melanie dupuis"),
        ("David   Epstein", "david epstein"),
        ("Margaret Chodos-Irvine", "margaret chodos irvine"),
        ("Tim O’Brien", "tim obrien"),
        ("Tim O'Brien", "tim obrien"),
        ("King, Martin Luther, Jr.", "martin luther king"),
        ("Martin Luther King, Jr.", "martin luther king"),
        ("John Smith III", "john smith"),
        ("URSULA K. LE GUIN", "ursula k le guin"),
        ("RJ Palacio", "r j palacio"),
        ("AuthorWith NoISBN", "authorwith noisbn"),
        (",", ""),
    ])
    func keys(raw: String, key: String) {
        #expect(AuthorNormalizer.key(raw) == key)
    }

    @Test("Author lists split by style", arguments: [
        ("Ursula K. Le Guin, Todd Barton, Margaret Chodos-Irvine", AuthorListStyle.commaSeparatedNames,
         ["Ursula K. Le Guin", "Todd Barton", "Margaret Chodos-Irvine"]),
        ("Florence Lamborn, Louis S. Glanzman", .commaSeparatedNames, ["Florence Lamborn", "Louis S. Glanzman"]),
        ("Tamsyn Muir, Another Author", .commaSeparatedNames, ["Tamsyn Muir", "Another Author"]),
        ("Neil Gaiman & Terry Pratchett", .commaSeparatedNames, ["Neil Gaiman", "Terry Pratchett"]),
        ("Neil Gaiman and Terry Pratchett", .commaSeparatedNames, ["Neil Gaiman", "Terry Pratchett"]),
        ("Martin Luther King, Jr., Coretta Scott King", .commaSeparatedNames,
         ["Martin Luther King, Jr.", "Coretta Scott King"]),
        ("Tim Hwang", .commaSeparatedNames, ["Tim Hwang"]),
        ("", .commaSeparatedNames, []),
        (" , ", .commaSeparatedNames, []),
        ("Muir, Tamsyn", .lastFirst, ["Muir, Tamsyn"]),
        ("Muir, Tamsyn; Doe, Jane", .lastFirst, ["Muir, Tamsyn", "Doe, Jane"]),
        ("Muir, Tamsyn & Doe, Jane", .lastFirst, ["Muir, Tamsyn", "Doe, Jane"]),
        ("Muir, Tamsyn, Doe, Jane", .lastFirst, ["Muir, Tamsyn", "Doe, Jane"]),
        ("King, Martin Luther, Jr., Doe, Jane", .lastFirst, ["King, Martin Luther, Jr.", "Doe, Jane"]),
        ("Plato", .lastFirst, ["Plato"]),
        (",", .lastFirst, []),
        ("Smith, Mark", .automatic, ["Smith, Mark"]),
        ("Muir, Tamsyn; Doe, Jane", .automatic, ["Muir, Tamsyn", "Doe, Jane"]),
        ("Ursula K. Le Guin, Todd Barton", .automatic, ["Ursula K. Le Guin", "Todd Barton"]),
        ("Tamsyn Muir", .automatic, ["Tamsyn Muir"]),
    ])
    func splits(raw: String, style: AuthorListStyle, names: [String]) {
        #expect(AuthorNormalizer.splitAuthorList(raw, style: style) == names)
    }

    @Test("Author agreement: exact, partial and none", arguments: [
        ("J.R.R. Tolkien", "J. R. R. Tolkien", AuthorAgreement.exact),
        ("JRR Tolkien", "Tolkien, J.R.R.", .exact),
        ("Julio Cortázar", "Cortazar, Julio", .exact),
        ("David   Epstein", "David Epstein", .exact),
        ("J.R.R. Tolkien", "John Ronald Reuel Tolkien", .partial),
        ("Tolkien", "J.R.R. Tolkien", .partial),
        ("Ursula Le Guin", "Ursula K. Le Guin", .partial),
        ("Muir Tamsyn", "Tamsyn Muir", .partial),
        ("Christopher Tolkien", "J.R.R. Tolkien", .none),
        ("Stephen King", "Owen King", .none),
        ("Stephen King", "Tamsyn Muir", .none),
        ("Jane Austen", "Emma Tennant", .none),
        ("", "Tamsyn Muir", .none),
        (",", ",", .none),
    ])
    func agreement(lhs: String, rhs: String, expected: AuthorAgreement) {
        #expect(AuthorNormalizer.agreement(lhs, rhs) == expected)
        #expect(AuthorNormalizer.agreement(rhs, lhs) == expected)
    }

    @Test("The best agreement over author lists takes the strongest pair")
    func bestAgreement() {
        let row = ["tamsyn muir"]
        #expect(AuthorNormalizer.bestAgreement(keys: row, ["jane doe", "tamsyn muir"]) == .exact)
        #expect(AuthorNormalizer.bestAgreement(keys: row, ["jane doe", "t muir"]) == .partial)
        #expect(AuthorNormalizer.bestAgreement(keys: row, []) == AuthorAgreement.none)
    }

    @Test("Odd author text never crashes", arguments: [
        ",,,,", "Jr.", ", Jr.", "Jr., Jr.", "....", "- -", "😀 Emoji", "עמוס עוז", "\u{0301}", "A", "X.",
    ])
    func noCrash(raw: String) {
        _ = AuthorNormalizer.displayName(raw)
        _ = AuthorNormalizer.key(raw)
        for style in AuthorListStyle.allCases { _ = AuthorNormalizer.splitAuthorList(raw, style: style) }
        _ = AuthorNormalizer.agreement(raw, raw)
    }
}
