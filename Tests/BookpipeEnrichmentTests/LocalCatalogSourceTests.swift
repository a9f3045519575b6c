import BookpipeCore
import BookpipeIngest
import Foundation
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

@Suite(.timeLimit(.minutes(5)))
struct LocalCatalogSourceTests {
    func source(maximumISBNsPerRequest: Int = 500) async throws -> LocalCatalogSource {
        LocalCatalogSource(catalog: try await CatalogSamples.sampleCatalog(), maximumISBNsPerRequest: maximumISBNsPerRequest)
    }

    func candidates(_ answer: LookupAnswer?) -> [Candidate] {
        if case .found(let candidates) = answer { return candidates }
        return []
    }

    @Test("The source names itself catalog and is local")
    func identity() async throws {
        let source = try await source()
        #expect(source.name == "catalog")
        #expect(!source.isRemote)
        #expect(source.maximumISBNsPerRequest == 500)
    }

    @Test("An ISBN maps to its edition's work: work title with subtitle, work authors, first publication year, edition ISBNs")
    func isbnLookup() async throws {
        let answers = try await source().lookUp(isbns: ["9780439554930", "9780547928227", "9780441104024"])
        let potter = try #require(candidates(answers["9780439554930"]).first)
        #expect(potter == Candidate(
            workKey: "/works/OL900005W", editionKey: "/books/OL900011M", title: "Harry Potter and the Philosopher's Stone",
            authors: ["J. K. Rowling"], year: 1997, publisher: "Scholastic", isbn13s: ["9780439554930"], source: "catalog"))
        let hobbit = try #require(candidates(answers["9780547928227"]).first)
        #expect(hobbit.workKey == "/works/OL900003W")
        #expect(hobbit.title == "The Hobbit: or There and Back Again")
        #expect(hobbit.year == 1937)
        // Children of Dune is deliberately absent.
        #expect(answers["9780441104024"] == .notFound)
        #expect(answers.count == 3)
    }

    @Test("ISBN-10s in the dump are stored as ISBN-13s, X check digits included; invalid ones are skipped")
    func isbn10Conversion() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let path = try CatalogSamples.makeDump(in: directory, [
            CatalogSamples.line(type: "edition", key: "/books/OL1M", [
                "title": "The Kite Runner", "isbn_10": ["159463193X", "0-441-01359-7", "1234567890"]]),
        ])
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let summary = try await catalog.import(dumpFile: path)
        #expect(summary.invalidISBNs == 1)
        let source = LocalCatalogSource(catalog: catalog)
        let answers = try await source.lookUp(isbns: ["9781594631931", "9780441013593", "159463193X", "9781234567897"])
        #expect(candidates(answers["9781594631931"]).map(\.editionKey) == ["/books/OL1M"])
        #expect(candidates(answers["9780441013593"]).map(\.editionKey) == ["/books/OL1M"])
        #expect(candidates(answers["159463193X"]).map(\.editionKey) == ["/books/OL1M"], "an ISBN-10 passed is converted too")
        #expect(candidates(answers["9780441013593"]).first?.isbn13s == ["9780441013593", "9781594631931"])
        #expect(answers["9781234567897"] == .notFound)
    }

    @Test("Lookups are split into requests of maximumISBNsPerRequest, and searches count one request each")
    func statistics() async throws {
        let source = try await source(maximumISBNsPerRequest: 2)
        let answers = try await source.lookUp(isbns: ["9780439554930", "9780547928227", "9780441104024"])
        #expect(answers.count == 3)
        _ = try await source.search(title: "Dune", author: nil)
        let counters = source.statistics.snapshot
        #expect(counters.requests == 3)
        #expect(counters.failures == 0)
        #expect(counters.totalLatency > .zero)
    }

    @Test("Searching a title finds its work first, with or without its author", arguments: [
        ("Harry Potter and the Philosopher's Stone", nil, "/works/OL900005W"),
        ("Harry Potter and the Philosopher's Stone", "J.K. Rowling", "/works/OL900005W"),
        ("Harry Potter and the Sorcerer's Stone (Harry Potter, #1)", "J.K. Rowling", "/works/OL900005W"),
        ("HARRY POTTER AND THE PHILOSOPHERS STONE", nil, "/works/OL900005W"),
        ("Dune (Dune, #1)", "Frank Herbert", "/works/OL900004W"),
        ("It", "Stephen King", "/works/OL900014W"),
        ("It", "Alexa Chung", "/works/OL900066W"),
        ("Home", "Marilynne Robinson", "/works/OL900103W"),
        ("The Stand", "Harriet Vale", "/works/OL900084W"),
        ("Emma", "Jane Austen", "/works/OL900015W"),
        ("The Hobbit", "J. R. R. Tolkien", "/works/OL900003W"),
        ("1984", "George Orwell", "/works/OL900008W"),
        ("Eats, Shoots &amp; Leaves: The Zero Tolerance Approach to Punctuation", "Lynne Truss", "/works/OL900055W"),
    ] as [(String, String?, String)])
    func searchFindsWork(title: String, author: String?, workKey: String) async throws {
        let found = candidates(try await source().search(title: title, author: author))
        #expect(found.first?.workKey == workKey, "\(found.map { "\($0.title) by \($0.authors)" })")
        #expect(Set(found.map(\.workKey)).count == found.count, "one candidate per work")
        #expect(found.count <= 10)
        #expect(found.allSatisfy { $0.source == "catalog" && $0.score == 0 })
    }

    @Test("\"Last, First\" authors rank like \"First Last\"", arguments: [
        ("Les Misérables", "Hugo, Victor", "/works/OL900054W"),
        ("One Hundred Years of Solitude", "Márquez, Gabriel García", "/works/OL900016W"),
        ("The Little Prince", "Saint-Exupéry, Antoine de", "/works/OL900053W"),
        ("It", "King, Stephen", "/works/OL900014W"),
        ("Emma", "Mori, Kaoru", "/works/OL900069W"),
    ])
    func lastFirstAuthors(title: String, author: String, workKey: String) async throws {
        let found = candidates(try await source().search(title: title, author: author))
        #expect(found.first?.workKey == workKey, "\(found.map { "\($0.title) by \($0.authors)" })")
    }

    @Test("Diacritics fold both ways: Långstrump finds Langstrump and the other way round")
    func diacritics() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let path = try CatalogSamples.makeDump(in: directory, [
            CatalogSamples.line(type: "author", key: "/authors/OL1A", ["name": "Astrid Lindgren"]),
            CatalogSamples.line(type: "author", key: "/authors/OL2A", ["name": "Stanisław Lem"]),
            CatalogSamples.line(type: "work", key: "/works/OL1W", [
                "title": "Pippi Långstrump", "authors": [["author": ["key": "/authors/OL1A"]]]]),
            CatalogSamples.line(type: "work", key: "/works/OL2W", [
                "title": "Pippi Langstrump går ombord", "authors": [["author": ["key": "/authors/OL1A"]]]]),
            CatalogSamples.line(type: "work", key: "/works/OL3W", [
                "title": "Solaris", "authors": [["author": ["key": "/authors/OL2A"]]]]),
        ])
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        _ = try await catalog.import(dumpFile: path)
        let source = LocalCatalogSource(catalog: catalog)
        for title in ["Pippi Långstrump", "Pippi Langstrump", "PIPPI LÅNGSTRUMP", "Pippi La\u{030A}ngstrump"] {
            let found = candidates(try await source.search(title: title, author: "Astrid Lindgren"))
            #expect(found.first?.workKey == "/works/OL1W", "\(title)")
            #expect(found.first?.title == "Pippi Långstrump", "display keeps the diacritics")
        }
        let goesAboard = candidates(try await source.search(title: "Pippi Långstrump går ombord", author: nil))
        #expect(goesAboard.first?.workKey == "/works/OL2W")
        let lem = candidates(try await source.search(title: "Solaris", author: "Stanislaw Lem"))
        #expect(lem.first?.authors == ["Stanisław Lem"])
        let hugo = candidates(try await self.source().search(title: "Les Miserables", author: "Victor Hugo"))
        #expect(hugo.first?.title == "Les Misérables")
    }

    @Test("Titles full of FTS5 syntax and punctuation are only words: no query error, ever", arguments: [
        "\"", "\"\"", "*", "-", ":", "(", ")", "^", "+", "AND", "OR", "NOT", "NEAR", "NEAR(", "NEAR(dune messiah, 2)",
        "Dune AND Messiah", "Dune OR It", "Dune NOT Messiah", "\"Dune\" Messiah", "Dun*", "-Dune", "title_key : dune",
        "{authors_key} : herbert", "Dune\"); DROP TABLE works; --", "Catch-22", "Slaughterhouse-Five", "2001: A Space Odyssey",
        "It's Kind of a Funny Story", "Harry Potter and the Philosopher\u{2019}s Stone", "🐋📚", "", "   ", "\u{0}",
        String(repeating: "dune ", count: 200),
    ])
    func syntaxInTitles(title: String) async throws {
        let source = try await source()
        for author in [nil, "Frank \"Herbert", "NEAR(*)", "-"] as [String?] {
            let answer = try await source.search(title: title, author: author)
            if case .failed(let reason) = answer { Issue.record("\(title) by \(author ?? "nil"): \(reason)") }
        }
        #expect(source.statistics.snapshot.failures == 0)
    }

    @Test("Operator words and syntax characters in a title are searched as words", arguments: [
        "NEAR(Dune Messiah)", "\"Dune Messiah\"", "Dune Messiah*", "Dune -Messiah", "Dune Messiah:", "(Dune) {Messiah}",
    ])
    func operatorWordsAreWords(title: String) async throws {
        let found = candidates(try await source().search(title: title, author: "Frank Herbert"))
        #expect(found.first?.workKey == "/works/OL900073W", "\(found.map(\.title))")
    }

    // MARK: - End to end

    struct RowOutcome {
        var file: String
        var row: Int
        var title: String
        var expected: String?
        var decision: MatchDecision
        var searchOnly: MatchDecision
    }

    /// Reads an export with the real reader and normaliser, asks the catalogue (ISBNs, then title
    /// and author), and decides with the default scorer.
    func outcomes(of file: String) async throws -> [RowOutcome] {
        let source = try await source()
        let expected = try #require(try CatalogSamples.expectedMatches()[file])
        let reader = try CSVRecordReader(path: CatalogSamples.path("samples/\(file)"))
        var records: [BookRecord] = []
        while let batch = try reader.nextBatch(maxRecords: 100) {
            #expect(batch.rejected.isEmpty)
            records += batch.records
        }
        var outcomes: [RowOutcome] = []
        let scorer = MatchScorer()
        for var record in records {
            Normalizer.normalize(&record, currentYear: 2026)
            let normalized = try #require(record.normalized)
            var found: [Candidate] = []
            if !normalized.allISBN13s.isEmpty {
                for answer in try await source.lookUp(isbns: normalized.allISBN13s).values {
                    found += candidates(answer)
                }
            }
            let searched = candidates(try await source.search(title: normalized.searchTitle, author: normalized.authors.first))
            outcomes.append(RowOutcome(
                file: file, row: record.origin.row, title: record.title, expected: expected[record.origin.row] ?? nil,
                decision: scorer.decide(for: record, candidates: found + searched),
                searchOnly: scorer.decide(for: record, candidates: searched)))
        }
        #expect(outcomes.count == expected.count)
        return outcomes
    }

    @Test("Every sample row in the catalogue is accepted as its right work; the three absent books never are",
          arguments: ["goodreads_library_export.csv", "storygraph_export.csv"])
    func endToEnd(file: String) async throws {
        let outcomes = try await outcomes(of: file)
        for outcome in outcomes {
            let place = "\(file) row \(outcome.row) \"\(outcome.title)\""
            switch (outcome.expected, outcome.decision) {
            case (let expected?, .accept(let match)):
                #expect(match.workKey == expected, "\(place): accepted \(match.workKey) \"\(match.title)\"")
            case (_?, let decision):
                Issue.record("\(place): not accepted: \(decision)")
            case (nil, .accept(let match)):
                Issue.record("\(place) is absent from the catalogue but was accepted as \(match.workKey) \"\(match.title)\"")
            case (nil, _):
                break
            }
        }
        if file == "goodreads_library_export.csv" {
            let absent = outcomes.filter { $0.expected == nil }.map(\.row)
            #expect(absent == [13, 25, 30])
        }
    }

    @Test("Title and author search alone never accepts a wrong work for any sample row",
          arguments: ["goodreads_library_export.csv", "storygraph_export.csv"])
    func searchAloneIsSafe(file: String) async throws {
        for outcome in try await outcomes(of: file) {
            guard case .accept(let match) = outcome.searchOnly else { continue }
            #expect(match.workKey == outcome.expected,
                    "\(file) row \(outcome.row) \"\(outcome.title)\": search accepted \(match.workKey) \"\(match.title)\"")
        }
    }
}
