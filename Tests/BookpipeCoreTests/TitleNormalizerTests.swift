import Foundation
import BookpipeTesting
import Testing
@testable import BookpipeCore

/// One title and what normalising it must give.
struct TitleCase: Sendable, CustomTestStringConvertible {
    var raw: String
    var search: String
    var main: String
    var series: String? = nil
    var number: String? = nil
    var testDescription: String { raw }
}

@Suite struct TitleNormalizerTests {
    static let titleCases: [TitleCase] = [
        // Real titles from the fixtures.
        TitleCase(raw: "Gideon the Ninth (The Locked Tomb #1)", search: "Gideon the Ninth", main: "Gideon the Ninth",
                  series: "The Locked Tomb", number: "1"),
        TitleCase(raw: "Pippi Longstocking (Pippi Långstrump, #1)", search: "Pippi Longstocking",
                  main: "Pippi Longstocking", series: "Pippi Långstrump", number: "1"),
        TitleCase(raw: "Dune (Dune, #1)", search: "Dune", main: "Dune", series: "Dune", number: "1"),
        TitleCase(raw: "Range: Why Generalists Triumph in a Specialized World",
                  search: "Range: Why Generalists Triumph in a Specialized World", main: "Range"),
        TitleCase(raw: "The Hobbit, or There and Back Again", search: "The Hobbit, or There and Back Again",
                  main: "The Hobbit, or There and Back Again"),
        TitleCase(raw: "A Reader’s Book With No ISBN", search: "A Reader’s Book With No ISBN",
                  main: "A Reader’s Book With No ISBN"),
        TitleCase(raw: "Le grand incendie de Londres: Récit, avec incises et bifurcations, 1985-1987 (Fiction & Cie)",
                  search: "Le grand incendie de Londres: Récit, avec incises et bifurcations, 1985-1987 (Fiction & Cie)",
                  main: "Le grand incendie de Londres"),
        TitleCase(raw: "我穿我自己", search: "我穿我自己", main: "我穿我自己"),
        // Non-Latin titles (the general path) with series and subtitles.
        TitleCase(raw: "Дозор (Дозоры, #1)", search: "Дозор", main: "Дозор", series: "Дозоры", number: "1"),
        TitleCase(raw: "Мастер и Маргарита #2.5", search: "Мастер и Маргарита", main: "Мастер и Маргарита", number: "2.5"),
        TitleCase(raw: "三体\u{3000}[地球往事 #1]", search: "三体", main: "三体", series: "地球往事", number: "1"),
        TitleCase(raw: "ノルウェイの森 (Том 2)", search: "ノルウェイの森 (Том 2)", main: "ノルウェイの森 (Том 2)"),
        TitleCase(raw: "Преступление: роман", search: "Преступление: роман", main: "Преступление"),
        TitleCase(raw: "Преступление\u{FF1A}роман", search: "Преступление\u{FF1A}роман", main: "Преступление"),
        TitleCase(raw: "Smilla’s Sense of Snow (Book 2)", search: "Smilla’s Sense of Snow", main: "Smilla’s Sense of Snow",
                  number: "2"),
        TitleCase(raw: "That Ain't Witchcraft", search: "That Ain't Witchcraft", main: "That Ain't Witchcraft"),
        // Series forms.
        TitleCase(raw: "Harry Potter (Series, #1)", search: "Harry Potter", main: "Harry Potter",
                  series: "Series", number: "1"),
        TitleCase(raw: "Harrow the Ninth (Book 2)", search: "Harrow the Ninth", main: "Harrow the Ninth", number: "2"),
        TitleCase(raw: "Saga (Vol. 3)", search: "Saga", main: "Saga", number: "3"),
        TitleCase(raw: "Saga (Saga, Volume 3)", search: "Saga", main: "Saga", series: "Saga", number: "3"),
        TitleCase(raw: "The Farthest Shore (Earthsea Cycle Book 3)", search: "The Farthest Shore",
                  main: "The Farthest Shore", series: "Earthsea Cycle", number: "3"),
        TitleCase(raw: "Harry Potter and the Cursed Child (Harry Potter, #8)",
                  search: "Harry Potter and the Cursed Child", main: "Harry Potter and the Cursed Child",
                  series: "Harry Potter", number: "8"),
        TitleCase(raw: "Tales (Discworld, #2.5)", search: "Tales", main: "Tales", series: "Discworld", number: "2.5"),
        TitleCase(raw: "The Complete Trilogy (Foo, #1-3)", search: "The Complete Trilogy", main: "The Complete Trilogy",
                  series: "Foo", number: "1-3"),
        TitleCase(raw: "Midnight Tales #2.5", search: "Midnight Tales", main: "Midnight Tales", number: "2.5"),
        TitleCase(raw: "Midnight Tales [Nightfall #4]", search: "Midnight Tales", main: "Midnight Tales",
                  series: "Nightfall", number: "4"),
        // Parentheticals that are not series stay.
        TitleCase(raw: "Harry Potter and the Philosopher's Stone (Illustrated Edition)",
                  search: "Harry Potter and the Philosopher's Stone (Illustrated Edition)",
                  main: "Harry Potter and the Philosopher's Stone (Illustrated Edition)"),
        TitleCase(raw: "Catch (22)", search: "Catch (22)", main: "Catch (22)"),
        TitleCase(raw: "(Book 2)", search: "(Book 2)", main: "(Book 2)"),
        TitleCase(raw: "The #1 Ladies' Detective Agency", search: "The #1 Ladies' Detective Agency",
                  main: "The #1 Ladies' Detective Agency"),
        // Subtitles.
        TitleCase(raw: "2001: A Space Odyssey", search: "2001: A Space Odyssey", main: "2001: A Space Odyssey"),
        TitleCase(raw: "It: A Novel", search: "It: A Novel", main: "It: A Novel"),
        TitleCase(raw: "Dune: Deluxe Edition", search: "Dune: Deluxe Edition", main: "Dune"),
        TitleCase(raw: "Sapiens: A Brief History of Humankind (Sapiens, #1)",
                  search: "Sapiens: A Brief History of Humankind", main: "Sapiens", series: "Sapiens", number: "1"),
        TitleCase(raw: "Title:", search: "Title:", main: "Title:"),
        // Entities, whitespace, NFC.
        TitleCase(raw: "Pride &amp; Prejudice", search: "Pride & Prejudice", main: "Pride & Prejudice"),
        TitleCase(raw: "&quot;Surely You&#39;re Joking&#x27;&quot;", search: "\"Surely You're Joking'\"",
                  main: "\"Surely You're Joking'\""),
        TitleCase(raw: "A&nbsp;&lt;b&gt;Tale", search: "A <b>Tale", main: "A <b>Tale"),
        TitleCase(raw: "Fish &amp;amp; Chips", search: "Fish & Chips", main: "Fish & Chips"),
        TitleCase(raw: "&amp;#39;Salem&amp;#39;s Lot", search: "'Salem's Lot", main: "'Salem's Lot"),
        // Escaped twice to a control character: decoded and removed, so the clean form is stable.
        TitleCase(raw: "&amp;#1;", search: "", main: ""),
        // An invisible character inside an entity escaped twice: gone, and the entity decoded.
        TitleCase(raw: "&amp;\u{200B}#39;Salem", search: "'Salem", main: "'Salem"),
        TitleCase(raw: "Ben &unknown; Jerry &#xZZ; &#0; &", search: "Ben &unknown; Jerry &#xZZ; &#0; &",
                  main: "Ben &unknown; Jerry &#xZZ; &#0; &"),
        TitleCase(raw: "  The\t Road \n", search: "The Road", main: "The Road"),
        TitleCase(raw: "Cafe\u{301} Society", search: "Caf\u{E9} Society", main: "Caf\u{E9} Society"),
        TitleCase(raw: "", search: "", main: ""),
        TitleCase(raw: "   ", search: "", main: ""),
    ]

    @Test("Titles give the expected search title, main title and series", arguments: titleCases)
    func normalizes(_ testCase: TitleCase) {
        let title = TitleNormalizer.normalize(testCase.raw)
        #expect(title.searchTitle == testCase.search)
        #expect(title.mainTitle == testCase.main)
        #expect(title.series == testCase.series)
        #expect(title.seriesNumber == testCase.number)
        #expect(title.key == TextFolding.key(testCase.search))
    }

    @Test("NFC output is composed, byte for byte")
    func nfcBytes() {
        let title = TitleNormalizer.normalize("Cafe\u{301}")
        #expect(Array(title.searchTitle.unicodeScalars) == Array("Caf\u{E9}".unicodeScalars))
    }

    @Test("Comparison keys fold case, diacritics, apostrophes and punctuation", arguments: [
        ("Pippi Långstrump", "pippi langstrump"),
        ("A Reader’s Book", "a readers book"),
        ("A Reader's Book", "a readers book"),
        ("Le Maître et Marguerite", "le maitre et marguerite"),
        ("Pride & Prejudice", "pride and prejudice"),
        ("Pride and Prejudice", "pride and prejudice"),
        ("The Hobbit, or There and Back Again", "the hobbit or there and back again"),
        ("Range: Why Generalists Triumph", "range why generalists triumph"),
        ("STRASSE Straße", "strasse strasse"),
        ("Łódź Ørsted Æsop", "lodz orsted aesop"),
        ("Cafe\u{301}", "cafe"),
        ("Café", "cafe"),
        ("2001: A Space Odyssey", "2001 a space odyssey"),
        ("Dr. Jekyll—and—Mr. Hyde", "dr jekyll and mr hyde"),
        ("我穿我自己", "我穿我自己"),
        ("  Many   spaces\u{00A0}here ", "many spaces here"),
        ("Title (The Series #1)", "title the series 1"),
        ("Pride &amp; Prejudice", "pride and prejudice"),
        ("Surrogate &#xD800; and &#1114112; stay", "surrogate and xd800 and and 1114112 stay"),
        ("&#x1F4DA; Books", "📚 books"),
        ("!!!", ""),
        ("", ""),
    ])
    func keys(raw: String, key: String) {
        #expect(TextFolding.key(raw) == key)
    }

    @Test("Curly and straight apostrophes give the same key")
    func apostrophes() {
        #expect(TitleNormalizer.key("Ender’s Game") == TitleNormalizer.key("Ender's Game"))
        #expect(TitleNormalizer.key("Ender‘s Game") == TitleNormalizer.key("Enders Game"))
    }

    @Test("Emoji, right-to-left text and combining characters survive in the search title and do not crash",
          arguments: [
              "📚 Books & 🐉 Dragons",
              "👨‍👩‍👧 Family",
              "ספר הדקדוק",
              "كتاب الرمل (Series, #1)",
              "\u{200F}עברית\u{200E} mixed",
              "Z\u{0351}\u{0364}a\u{036B}\u{0343}l\u{0368}g\u{0310}o\u{036D}",
              "नमस्ते दुनिया",
              "🏳️‍🌈",
              "\u{0301}leading combining mark",
              "(#1)",
              "#",
              ":",
              "((((#1)",
              "Title (#)",
              "))))",
          ])
    func exoticText(raw: String) {
        let title = TitleNormalizer.normalize(raw)
        let clean = TextFolding.clean(raw)
        // Every non-space scalar of the search title comes from the cleaned input, in order.
        #expect(clean.hasPrefix(title.searchTitle) || title.series != nil || title.seriesNumber != nil)
        _ = TextFolding.key(raw)
    }

    @Test("Emoji and RTL text round-trip unchanged in the search title", arguments: [
        "📚 Books & 🐉 Dragons", "👨‍👩‍👧 Family", "ספר הדקדוק", "\u{200F}עברית\u{200E} mixed", "🏳️‍🌈",
    ])
    func roundTrip(raw: String) {
        #expect(TitleNormalizer.normalize(raw).searchTitle == raw)
        #expect(!TitleNormalizer.key(raw).isEmpty)
    }

    @Test("Series parentheticals with non-series contents keep the title whole", arguments: [
        "Collected Stories (Everyman's Library)", "Le grand incendie de Londres (Fiction & Cie)",
        "Nineteen Eighty-Four (Penguin Modern Classics)", "Poems (1950)",
    ])
    func keepsNonSeries(raw: String) {
        let title = TitleNormalizer.normalize(raw)
        #expect(title.searchTitle == raw)
        #expect(title.series == nil)
        #expect(title.seriesNumber == nil)
    }

    @Test("Normalising the search title again changes nothing")
    func idempotent() {
        for testCase in Self.titleCases where !testCase.raw.contains("&") {
            let once = TitleNormalizer.normalize(testCase.raw)
            let twice = TitleNormalizer.normalize(once.searchTitle)
            #expect(twice.searchTitle == once.searchTitle, "\(testCase.raw)")
            #expect(twice.key == once.key, "\(testCase.raw)")
        }
    }

    @Test("The fixture titles used here are really in the fixture files", .enabled(if: TestFixtures.sharedAvailable))
    func fixtureTitlesExist() throws {
        let fixtures = TestFixtures.directory
        let files = try FileManager.default.contentsOfDirectory(atPath: fixtures.path)
            .filter { $0.hasSuffix(".csv") || $0.hasSuffix(".tsv") }
        let text = try files.map { file in
            let data = try Data(contentsOf: fixtures.appendingPathComponent(file))
            return String(decoding: data, as: UTF8.self)
        }.joined(separator: "\n")
        for title in [
            "Gideon the Ninth (The Locked Tomb #1)", "Pippi Longstocking (Pippi Långstrump, #1)", "Dune (Dune, #1)",
            "Range: Why Generalists Triumph in a Specialized World", "The Hobbit, or There and Back Again",
            "A Reader’s Book With No ISBN", "我穿我自己", "That Ain't Witchcraft", "David   Epstein",
            "Ursula K. Le Guin, Todd Barton, Margaret Chodos-Irvine", "Cortazar, Julio", "Le Maître et Marguerite",
            "Mélanie Dupuis", "Florence Lamborn, Louis S. Glanzman", "J.R.R. Tolkien",
        ] {
            #expect(text.contains(title), "\(title) is not in \(fixtures.path)")
        }
    }
}
