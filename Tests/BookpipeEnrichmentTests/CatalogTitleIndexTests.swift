import BookpipeCore
import BookpipeIngest
import Foundation
import GRDB
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

@Suite(.timeLimit(.minutes(1)))
struct CatalogTitleIndexTests {
    @Test("A title is filed under its key without leading articles, and under its main title's when it has a subtitle")
    func entries() {
        #expect(CatalogTitleIndex.entries(forTitle: "The Road") == [.init(core: "road", words: 2, titleWords: 2)])
        #expect(CatalogTitleIndex.entries(forTitle: "A The Lighthouse") == [.init(core: "lighthouse", words: 3, titleWords: 3)])
        #expect(CatalogTitleIndex.entries(forTitle: "The") == [.init(core: "the", words: 1, titleWords: 1)])
        #expect(CatalogTitleIndex.entries(forTitle: "Range: Why Generalists Triumph in a Specialized World") == [
            .init(core: "range why generalists triumph in a specialized world", words: 8, titleWords: 8),
            .init(core: "range", words: 1, titleWords: 8),
        ])
        #expect(CatalogTitleIndex.entries(forTitle: "  ").isEmpty)
    }

    @Test("Author signatures of keys that share a word share a bit; no author has no bits")
    func signatures() {
        let herbert = CatalogTitleIndex.authorSignature(["frank herbert ; f herbert"])
        #expect(herbert & CatalogTitleIndex.authorSignature(["brian herbert"]) != 0)
        #expect(CatalogTitleIndex.authorSignature([String]()) == 0)
        #expect(CatalogTitleIndex.authorSignature(["frank herbert"]) == CatalogTitleIndex.authorSignature(["herbert frank"]))
    }

    /// Every sample row's title and author, as the enricher searches them, plus variants a person
    /// writes: no author, a leading article added or dropped, ": A Novel" added.
    func searches() throws -> [(title: String, author: String?)] {
        var searches: [(String, String?)] = []
        for file in ["goodreads_library_export.csv", "storygraph_export.csv"] {
            let reader = try CSVRecordReader(path: CatalogSamples.path("samples/\(file)"))
            while let batch = try reader.nextBatch(maxRecords: 100) {
                for var record in batch.records {
                    Normalizer.normalize(&record, currentYear: 2026)
                    guard let normalized = record.normalized, !normalized.searchTitle.isEmpty else { continue }
                    let title = normalized.searchTitle
                    let author = normalized.authors.first
                    searches.append((title, author))
                    searches.append((title, nil))
                    searches.append((title.hasPrefix("The ") ? String(title.dropFirst(4)) : "The " + title, author))
                    searches.append((title + ": A Novel", author))
                }
            }
        }
        return searches
    }

    @Test("The title index decides every sample search as the full-text steps do, and answers those with a same-titled work")
    func shortcutMatchesFullText() async throws {
        let catalog = try await CatalogSamples.sampleCatalog()
        let scorer = MatchScorer()
        var shortcuts = 0
        for (title, author) in try searches() {
            let query = MatchQuery(title: title, authors: author.map { [$0] } ?? [])
            let (shortcut, fullText) = try await catalog.pool.read { db in
                (try LocalCatalog.sameTitleCandidates(title: title, author: author, limit: 10, in: db),
                 try LocalCatalog.searchByWords(title: title, author: author, limit: 10, in: db))
            }
            guard let shortcut else { continue }
            shortcuts += 1
            let place = "\"\(title)\" by \(author ?? "nobody")"
            switch (scorer.decide(for: query, candidates: shortcut), scorer.decide(for: query, candidates: fullText)) {
            case (.accept(let fast), .accept(let general)):
                #expect(fast.identity == general.identity, "\(place): \(fast.identity) instead of \(general.identity)")
            case (.accept(let fast), let general):
                Issue.record("\(place): the index accepted \(fast.identity), full text decided \(general)")
            case (let fast, .accept(let general)):
                Issue.record("\(place): full text accepted \(general.identity), the index decided \(fast)")
            default:
                break
            }
            // Every same-titled work the full text found is among the index's candidates.
            let sameTitled = fullText.filter { (scorer.score($0, for: query).breakdown["title"] ?? 0) >= scorer.policy.titleExact }
            for candidate in sameTitled {
                #expect(shortcut.contains { $0.identity == candidate.identity }, "\(place): \(candidate.identity) missing")
            }
        }
        // Most sample titles are in the catalogue: the index must answer them without full text.
        #expect(shortcuts >= 150)
    }

    @Test("A work filed under its main title is a rival of a same-titled one: both are read, as full text finds both")
    func mainTitleRivals() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let lines = [
            try CatalogSamples.line(type: "author", key: "/authors/OL1A", ["name": "Åsa Okafor"]),
            try CatalogSamples.line(type: "author", key: "/authors/OL2A", ["name": "Anna Okafor"]),
            try CatalogSamples.line(type: "work", key: "/works/OL1W", [
                "title": "The Dream", "first_publish_date": "1866", "authors": [["author": ["key": "/authors/OL1A"]]]]),
            try CatalogSamples.line(type: "work", key: "/works/OL2W", [
                "title": "Dream", "subtitle": "The Red Sea Journey", "first_publish_date": "1866",
                "authors": [["author": ["key": "/authors/OL2A"]]]]),
        ]
        _ = try await catalog.import(dumpFile: try CatalogSamples.writeDump(lines, in: directory))
        let (shortcut, fullText) = try await catalog.pool.read { db in
            (try LocalCatalog.sameTitleCandidates(title: "The Dream", author: "Åsa Okafor", limit: 10, in: db),
             try LocalCatalog.searchByWords(title: "The Dream", author: "Åsa Okafor", limit: 10, in: db))
        }
        #expect(Set(fullText.map(\.workKey)) == ["/works/OL1W", "/works/OL2W"])
        #expect(Set((shortcut ?? []).map(\.workKey)) == ["/works/OL1W", "/works/OL2W"])
        // "Dream: The Red Sea Journey" by another Okafor, same year, is within the lead: a person decides.
        let query = MatchQuery(title: "The Dream", authors: ["Åsa Okafor"], year: 1866)
        guard case .needsSelection = MatchScorer().decide(for: query, candidates: shortcut ?? []) else {
            Issue.record("accepted despite a rival within the lead")
            return
        }
    }

    @Test("A title without a same-titled entry is searched with full text: typos still find their work")
    func typosFallBack() async throws {
        let catalog = try await CatalogSamples.sampleCatalog()
        let typo = try await catalog.pool.read { db in
            try LocalCatalog.sameTitleCandidates(title: "Dune Mesiah", author: "Frank Herbert", limit: 10, in: db)
        }
        #expect(typo == nil)
        let found = try catalog.search(title: "Dune Mesiah", author: "Frank Herbert")
        #expect(found.contains { $0.title.hasPrefix("Dune Messiah") })
    }

    @Test("A catalogue built before the title index gets it when opened, and searches use it")
    func migrationFillsIndex() async throws {
        let (catalog, directory) = try CatalogSamples.emptyCatalog()
        _ = try await catalog.import(dumpFile: CatalogSamples.dump)
        let filed = try await catalog.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM search_titles") ?? 0 }
        #expect(filed >= 103)
        // Make it a v1 catalogue: no title index, migration not applied.
        try await catalog.pool.write { db in
            try db.execute(sql: "DROP TABLE search_titles")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v2:%'")
        }
        let reopened = try LocalCatalog(path: directory.appendingPathComponent("catalog.sqlite").path)
        let refiled = try await reopened.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM search_titles") ?? 0 }
        #expect(refiled == filed)
        let shortcut = try await reopened.pool.read { db in
            try LocalCatalog.sameTitleCandidates(title: "Dune", author: "Frank Herbert", limit: 10, in: db)
        }
        #expect(shortcut?.first?.title == "Dune")
    }

    @Test("ISBNs looked up in four batched queries answer exactly as one ISBN at a time does")
    func batchedISBNLookups() async throws {
        let catalog = try await CatalogSamples.sampleCatalog()
        var isbns = try await catalog.pool.read { db in try String.fetchAll(db, sql: "SELECT isbn13 FROM edition_isbns") }
        #expect(isbns.count == 104)
        // ISBN-10 forms, an unknown ISBN, an invalid value and a duplicate are passed as they are.
        isbns += isbns.prefix(5).compactMap { isbn13 in
            guard case .success(let isbn) = ISBN.parse(isbn13) else { return nil }
            return isbn.isbn10
        }
        isbns += ["9780000000002", "not an isbn", isbns[0]]
        let passed = isbns
        let (batched, oneByOne) = try await catalog.pool.read { db in
            (try LocalCatalog.candidates(forISBNs: passed, in: db), try LocalCatalog.candidatesOneByOne(forISBNs: passed, in: db))
        }
        #expect(batched.count >= 104)
        #expect(batched == oneByOne)
    }
}
