import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

@Suite struct CatalogSearchQueryTests {
    /// Removes every double-quoted FTS5 string from an expression; what is left must be syntax
    /// this type writes, never user text.
    func syntaxOutsideStrings(_ expression: String) -> [Substring] {
        var outside = ""
        var inString = false
        var characters = Array(expression)[...]
        while let character = characters.popFirst() {
            if character == "\"" {
                if inString, characters.first == "\"" {
                    characters.removeFirst()
                    continue
                }
                inString.toggle()
                outside.append(" ")
                continue
            }
            if !inString { outside.append(character) }
        }
        #expect(!inString, "every string is closed in \(expression)")
        return outside.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ")" })
    }

    @Test("User text is only ever inside double-quoted strings", arguments: [
        "Dune", "\"Dune\"", "Dune AND Messiah", "NEAR(dune messiah, 2)", "title_key : x", "a OR b NOT c", "Dun*",
        "-Dune", "^Dune", "{authors_key}: king", "It's", "\u{201C}Quoted\u{201D}", "Catch-22", "2001: A Space Odyssey",
    ])
    func userTextIsQuoted(title: String) {
        let query = CatalogSearchQuery(title: title, author: "O'Brien, \"Flann\" NEAR(*)")
        #expect(!query.steps.isEmpty)
        for step in query.steps {
            let syntax = Set(syntaxOutsideStrings(step.expression))
            #expect(syntax.isSubset(of: ["title_key", "authors_key", ":", "AND", "OR"]), "\(step.expression)")
        }
    }

    @Test("The steps: all title words with the author, without, main title, then any significant word")
    func steps() {
        let query = CatalogSearchQuery(title: "Sapiens: A Brief History of Humankind", author: "Harari, Yuval Noah")
        #expect(query.steps.map(\.expression) == [
            #"title_key : ("sapiens" AND "a" AND "brief" AND "history" AND "of" AND "humankind") AND authors_key : ("yuval" OR "noah" OR "harari")"#,
            #"title_key : ("sapiens" AND "a" AND "brief" AND "history" AND "of" AND "humankind")"#,
            #"title_key : ("sapiens") AND authors_key : ("yuval" OR "noah" OR "harari")"#,
            #"title_key : ("sapiens")"#,
            #"title_key : ("sapiens" OR "brief" OR "history" OR "humankind") AND authors_key : ("yuval" OR "noah" OR "harari")"#,
            #"title_key : ("sapiens" OR "brief" OR "history" OR "humankind")"#,
        ])
        #expect(query.steps.map(\.onlyIfNothingFound) == [false, false, false, false, true, true])
    }

    @Test("A title with nothing to search for has no steps; a one-word title has no fallback")
    func degenerateTitles() {
        #expect(CatalogSearchQuery(title: "", author: "Anyone").steps.isEmpty)
        #expect(CatalogSearchQuery(title: "\"*\" - : ()", author: nil).steps.isEmpty)
        #expect(CatalogSearchQuery(title: "🐋", author: nil).steps.isEmpty)
        #expect(CatalogSearchQuery(title: "It", author: nil).steps.map(\.expression) == [#"title_key : ("it")"#])
        #expect(CatalogSearchQuery(title: "The The", author: nil).steps.map(\.expression) == [#"title_key : ("the")"#])
    }

    @Test("Series suffixes are not searched, diacritics and apostrophes fold like the index")
    func folding() {
        let query = CatalogSearchQuery(title: "Pippi Långstrump’s Adventures (Pippi, #2)", author: "J.R.R. Tölkien")
        #expect(query.steps.first?.expression
                == #"title_key : ("pippi" AND "langstrumps" AND "adventures") AND authors_key : ("tolkien")"#)
    }
}
