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
}
