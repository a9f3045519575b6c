import BookpipeCore
import BookpipeStore
import Foundation
import Testing

@Suite struct SearchTests {
    @Test("Finds records by title words, by author without case or accents, and by ISBN-13 or ISBN-10 with hyphens")
    func finds() async throws {
        let (store, records) = try await ReportFixture.makeLibrary()
        #expect(try await store.search("earthsea wizard").map(\.id).sorted() == [records[0].id, records[1].id])
        #expect(try await store.search("JOSE saramago").map(\.id) == [records[4].id])
        #expect(try await store.search("cafe").map(\.id) == [records[10].id])
        #expect(try await store.search("wiz").count == 2)
        #expect(try await store.search("978-0-547-77374-2").map(\.id).sorted() == [records[0].id, records[1].id])
        let ten = try #require(ISBN.parse("9780547773742").get().isbn10)
        #expect(try await store.search(ten).count == 2)
        #expect(try await store.search("nothing like this").isEmpty)
        #expect(try await store.search("  ...  ").isEmpty)
    }

    @Test("A title match ranks above an author match")
    func ranking() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        try store.insert([ReportFixture.record(1, title: "Some Novel", authors: ["Anne Dune"]),
                          ReportFixture.record(2, title: "Dune", authors: ["Frank Herbert"])])
        #expect(try await store.search("dune").map(\.title) == ["Dune", "Some Novel"])
    }

    @Test("Rows stored and titles changed after the first search are found by the next one")
    func staysCurrent() async throws {
        let (store, records) = try await ReportFixture.makeLibrary()
        #expect(try await store.search("earthsea").count == 2)
        try store.insert([ReportFixture.record(13, title: "Tehanu")])
        #expect(try await store.search("tehanu").count == 1)
        var edited = records[2]
        edited.title = "The Lathe of Heaven"
        Normalizer.normalize(&edited)
        try await store.update([edited])
        #expect(try await store.search("lathe heaven").map(\.id) == [records[2].id])
        #expect(try await store.search("darkness").isEmpty)
        #expect(try await store.refreshSearchIndex() == 0)
    }

    @Test("When more records match than are ranked, the hits are the best of the first ones in library order, and say so")
    func boundedRanking() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        // Every record matches "dune"; the best (shortest) titles are rows 4 and 5.
        try store.insert([ReportFixture.record(1, title: "Dune Messiah and the Long Road Home Again"),
                          ReportFixture.record(2, title: "God Emperor of Dune, Volume Two"),
                          ReportFixture.record(3, title: "Children of Dune"),
                          ReportFixture.record(4, title: "Dune"),
                          ReportFixture.record(5, title: "Dune")])
        let all = try await store.search("dune", limit: 2)
        #expect(all.map(\.title) == ["Dune", "Dune"])
        #expect(all.map(\.line) == [5, 6], "equal ranks in library order")
        #expect(all.ranked == 5 && !all.moreMatch)

        let firstThree = try await store.search("dune", limit: 2, ranking: 3)
        #expect(firstThree.ranked == 3 && firstThree.moreMatch)
        #expect(firstThree.map(\.line) == [4, 3], "the best two of rows 1-3 (lines 2-4), best first")

        let exactly = try await store.search("dune", limit: 2, ranking: 5)
        #expect(exactly.ranked == 5 && !exactly.moreMatch)
        #expect(try await store.search("dune", limit: 3, ranking: 1).count == 3, "never fewer ranked than asked for")
    }

    @Test("Every word must occur, folded as the index holds them; the last may start a word unless it is a single character; an ISBN is one term")
    func queries() {
        #expect(SearchQuery("Le Guin")?.match == #""le" "guin" *"#)
        #expect(SearchQuery("harry potter a")?.match == #""harry" "potter" "a""#)
        #expect(SearchQuery("a")?.match == #""a""#)
        #expect(SearchQuery("García-Márquez!")?.match == #""garcia" "marquez" *"#)
        #expect(SearchQuery("Straße")?.match == #""strasse" *"#)
        #expect(SearchQuery("0-547-77374-9")?.match == #"isbn : "9780547773742""#)
        #expect(SearchQuery(" -- ") == nil)
    }
}
