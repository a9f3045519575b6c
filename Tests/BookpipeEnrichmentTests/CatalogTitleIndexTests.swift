import BookpipeCore
import BookpipeIngest
import Foundation
import GRDB
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

@Suite(.timeLimit(.minutes(5)))
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

    /// The documents ``CatalogTitleIndex/documents(matching:authorKeys:in:)`` must read, computed
    /// the plain way: every entry of the equal cores and of the longer titles' ranges fetched, the
    /// filters applied here. The readable specification of the bounded read.
    func referenceDocumentIDs(title: NormalizedTitle, authorKeys: [String], in db: Database) throws -> Set<Int64> {
        let signature = authorKeys.isEmpty ? 0 : CatalogTitleIndex.authorSignature(authorKeys)
        let keys = title.hasSubtitle ? [title.key, title.mainKey] : [title.key]
        let fewestWords = keys.map { Set($0.split(separator: " ")).count }.min() ?? 0
        var byAuthor = Set<Int64>()
        var others: [(words: Int, id: Int64)] = []
        func collect(_ rows: [Row]) {
            for row in rows {
                let id: Int64 = row[0]
                let titleWords: Int = row[1]
                let entrySignature: Int64 = row[2]
                guard titleWords >= fewestWords else { continue }
                if entrySignature & signature != 0 { byAuthor.insert(id) } else { others.append((titleWords, id)) }
            }
        }
        for key in keys {
            let words = key.split(separator: " ")
            guard !words.isEmpty else { continue }
            let core = CatalogTitleIndex.core(words).joined(separator: " ")
            collect(try Row.fetchAll(db, sql: """
                SELECT document_id, title_words, author_signature FROM search_titles WHERE title_core = ?
                """, arguments: [core]))
            let mostWords = Int((Double(words.count) / MatchPolicy.default.containsMinimumShare + 1e-9).rounded(.down))
            if mostWords > words.count {
                collect(try Row.fetchAll(db, sql: """
                    SELECT document_id, title_words, author_signature FROM search_titles
                    WHERE title_core > ? AND title_core < ? AND words <= ? LIMIT \(CatalogTitleIndex.maximumRangeEntries)
                    """, arguments: [core + " ", core + "!", mostWords]))
            }
        }
        var ids = byAuthor
        for other in others.sorted(by: { ($0.words, $0.id) < ($1.words, $1.id) }) where !ids.contains(other.id) {
            if ids.count >= byAuthor.count + CatalogTitleIndex.maximumOtherEntries { break }
            ids.insert(other.id)
        }
        return ids
    }

    @Test("The title index reads every entry sharing the row's author bits and only the shortest others, as the plain read does")
    func boundedReadMatchesPlainRead() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        var lines = [try CatalogSamples.line(type: "author", key: "/authors/OL1A", ["name": "Frank Okafor"])]
        let fillers = ["red", "sea", "long", "journey", "home", "again", "north", "winter"]
        // 40 rivals by other people: "Rain", "Rain: Red", "Rain: Red Sea", … (ties of length broken by id),
        // "Rain Falls …" for the range of longer titles, and three works by the row's author.
        for index in 0..<40 {
            let author = "/authors/OL\(index + 10)A"
            lines.append(try CatalogSamples.line(type: "author", key: author, ["name": "Person\(index) Writer\(index)"]))
            let extra = fillers.prefix(index % fillers.count).joined(separator: " ")
            let title: [String: Any] = index % 5 == 4 ? ["title": "Rain Falls \(extra)"]
                : extra.isEmpty ? ["title": "Rain"] : ["title": "Rain", "subtitle": extra]
            lines.append(try CatalogSamples.line(type: "work", key: "/works/OL\(index + 10)W", title.merging([
                "authors": [["author": ["key": author]]]]) { first, _ in first }))
        }
        for index in 0..<3 {
            lines.append(try CatalogSamples.line(type: "work", key: "/works/OL\(index + 100)W", [
                "title": "Rain", "subtitle": fillers.prefix(index + 5).joined(separator: " "),
                "authors": [["author": ["key": "/authors/OL1A"]]]]))
        }
        _ = try await catalog.import(dumpFile: try CatalogSamples.writeDump(lines, in: directory))
        let sampleCatalog = try await CatalogSamples.sampleCatalog()
        var compared = 0
        let synthetic: [(title: String, author: String?)] = [
            ("Rain", "Frank Okafor"), ("Rain", nil), ("The Rain: Red", "Person3 Writer3"), ("Rain Falls", "Frank Okafor")]
        for (searched, rows) in [(catalog, synthetic), (sampleCatalog, try searches())] {
            for (title, author) in rows {
                let query = MatchQuery(title: title, authors: author.map { [$0] } ?? [])
                let (bounded, plain) = try await searched.pool.read { db in
                    (Set(try CatalogTitleIndex.documents(matching: query.title, authorKeys: query.authorKeys, in: db).map(\.id)),
                     try referenceDocumentIDs(title: query.title, authorKeys: query.authorKeys, in: db))
                }
                #expect(bounded == plain, "\"\(title)\" by \(author ?? "nobody")")
                compared += 1
            }
        }
        #expect(compared > 100)
        // The synthetic catalogue's "Rain" by Frank Okafor: his three works, those whose authors' bits
        // meet his (shared bits are likely among 40 names), and 20 others — not all 43.
        let rain = MatchQuery(title: "Rain", authors: ["Frank Okafor"])
        let read = try await catalog.pool.read { db in
            try CatalogTitleIndex.documents(matching: rain.title, authorKeys: rain.authorKeys, in: db)
        }
        #expect(read.filter { $0.authorsKey.contains("okafor") }.count == 3)
        #expect(read.count >= 3 + CatalogTitleIndex.maximumOtherEntries && read.count < 43)
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
