import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// Open Library's requests and the mapping of its answers, with the shared fixtures served verbatim.
@Suite(.timeLimit(.minutes(5)))
struct OpenLibrarySourceTests {
    func withSource(books: [FakeBook] = TestBooks.all, concurrentRequests: Int = 2,
                    _ body: (OpenLibrarySource<ContinuousClock>, FakeBookServices) async throws -> Void) async throws {
        try await withFakeServices(books) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, rateLimit: unlimitedRate, retryPolicy: quickRetryPolicy)
            try await body(OpenLibrarySource(fetcher: fetcher, baseURL: services.baseURL + "/",
                                             concurrentRequests: concurrentRequests), services)
        }
    }

    /// A `jscmd=details` answer for `bibkey` whose `details` is the shared edition fixture (Sabriel,
    /// with `works` and authors by key only, as an edition record has them).
    static func detailsResponse(bibkey: String) throws -> ScriptedResponse {
        let edition = try JSONSerialization.jsonObject(with: TestFixtures.data("openlibrary-edition-bookwyrm.json"))
        let body = try JSONSerialization.data(withJSONObject: [bibkey: [
            "bib_key": bibkey, "info_url": "https://openlibrary.org/books/OL22951843M/Sabriel", "preview": "noview",
            "details": edition]])
        return ScriptedResponse(headers: [("Content-Type", "application/json")], body: Array(body))
    }

    @Test("The Books API is asked with jscmd=details and an ISBN candidate names the edition's work, not the edition",
          .enabled(if: TestFixtures.sharedAvailable))
    func booksAPIDetailsGiveTheWork() async throws {
        try await withSource { source, services async throws in
            services.setResponse(try Self.detailsResponse(bibkey: "ISBN:9780060273224"), forPath: "/api/books")
            let answers = try await source.lookUp(isbns: ["9780060273224"])
            #expect(answers == ["9780060273224": .found([Candidate(
                workKey: "/works/OL15832982W", editionKey: "/books/OL22951843M", title: "Sabriel",
                authors: ["Garth Nix"], year: 1996, publisher: "Harper Trophy",
                isbn13s: ["9780060273224", "9780060273231", "9780064471831"], source: "openlibrary")])])
            let request = try #require(services.requestLog.first)
            #expect(request.path == "/api/books")
            #expect(request.query == "bibkeys=ISBN:9780060273224&format=json&jscmd=details")
            let head = try #require(services.server.requests.first?.head)
            #expect(head.header("Accept") == "application/json")
            #expect(head.header("User-Agent")?.hasPrefix("bookpipe/") == true)
        }
    }

    @Test("An ISBN missing from the answer is not found, while the one present is found, in one request",
          .enabled(if: TestFixtures.sharedAvailable))
    func absentBibkeyIsNotFound() async throws {
        try await withSource { source, services async throws in
            services.setResponse(try Self.detailsResponse(bibkey: "ISBN:9780060273224"), forPath: "/api/books")
            let answers = try await source.lookUp(isbns: ["9780060273224", "9780140328721"])
            #expect(answers["9780140328721"] == .notFound)
            guard case .found = answers["9780060273224"] else {
                Issue.record("expected found")
                return
            }
            #expect(services.requestLog.map(\.query) == ["bibkeys=ISBN:9780060273224,ISBN:9780140328721&format=json&jscmd=details"])
        }
    }

    @Test("Every ISBN candidate from the fake services has a /works/ key; 60 ISBNs cost three requests")
    func workKeysWithoutARequestPerRow() async throws {
        let books = FakeBook.generated(count: 60)
        try await withSource(books: books) { source, services async throws in
            let answers = try await source.lookUp(isbns: books.compactMap { $0.isbn13s.first })
            #expect(answers.count == 60)
            for book in books {
                guard case .found(let candidates)? = answers[book.isbn13s[0]] else {
                    Issue.record("\(book.title) not found")
                    continue
                }
                #expect(candidates.map(\.workKey) == [book.workKey])
                #expect(candidates.map(\.editionKey) == [book.editionKey])
            }
            #expect(services.requestLog.count == 3)
        }
    }

    @Test("Stored edition keys are resolved to their works in batches of 25 OLID bibkeys")
    func editionKeysResolveToWorks() async throws {
        let books = FakeBook.generated(count: 30)
        try await withSource(books: books) { source, services async throws in
            let answers = try await source.lookUp(editionKeys: books.map(\.editionKey) + ["/books/OL1M"])
            for book in books {
                guard case .found(let candidates)? = answers[book.editionKey] else {
                    Issue.record("\(book.editionKey) not resolved")
                    continue
                }
                #expect(candidates.first?.workKey == book.workKey)
            }
            #expect(answers["/books/OL1M"] == .notFound)
            #expect(services.requestLog.count == 2)
            #expect(services.requestLog.allSatisfy { $0.parameter("bibkeys")?.hasPrefix("OLID:OL") == true })
        }
    }

    @Test("The search fixture maps to work candidates with edition keys, years and ISBN-13s",
          .enabled(if: TestFixtures.sharedAvailable))
    func searchFixture() async throws {
        try await withSource { source, services async throws in
            services.setResponse(try .json(contentsOf: TestFixtures.url("openlibrary-search-response-bookwyrm.json")),
                                 forPath: "/search.json")
            let answer = try await source.search(title: "This Is How You Lose the Time War", author: "Amal El-Mohtar")
            #expect(answer == .found([
                Candidate(workKey: "/works/OL20639540W", editionKey: "/books/OL27901088M",
                          title: "This Is How You Lose the Time War", authors: ["Amal El-Mohtar", "Max Gladstone"],
                          year: 2019, isbn13s: ["9781534431003"], source: "openlibrary"),
                Candidate(workKey: "/works/OL19859295W", editionKey: nil,
                          title: "This is How You Lose the Time War", authors: ["Amal El-Mohtar", "Max Gladstone"],
                          year: nil, isbn13s: [], source: "openlibrary"),
            ]))
            let request = try #require(services.requestLog.first)
            #expect(request.query == "title=This%20Is%20How%20You%20Lose%20the%20Time%20War&author=Amal%20El-Mohtar"
                    + "&fields=key,title,subtitle,author_name,author_key,first_publish_year,isbn,edition_key&limit=10")
        }
    }

    @Test("Titles and authors with &, +, = and non-ASCII letters reach the server intact")
    func queryEncoding() async throws {
        try await withSource { source, services async throws in
            _ = try await source.search(title: "Pippi Långstrump & Co + 1 = 2?", author: "Astrid Lindgren #1")
            let request = try #require(services.requestLog.first)
            #expect(request.parameter("title") == "Pippi Långstrump & Co + 1 = 2?")
            #expect(request.parameter("author") == "Astrid Lindgren #1")
            #expect(request.parameter("limit") == "10")
        }
    }

    @Test("Twenty-six ISBNs go out as a batch of 25 and a batch of 1")
    func batchBoundary() async throws {
        let books = FakeBook.generated(count: 26, seed: 3)
        try await withSource(books: books) { source, services async throws in
            let answers = try await source.lookUp(isbns: books.compactMap(\.isbn13))
            #expect(answers.values.allSatisfy { if case .found = $0 { true } else { false } })
            let sizes = services.requestLog.map { SourceKind.openLibrary.isbns(in: $0).count }.sorted()
            #expect(sizes == [1, 25])
        }
    }

    @Test("A failed batch fails every ISBN in it; the other batch is still answered")
    func failedBatch() async throws {
        let books = FakeBook.generated(count: 30, seed: 4)
        try await withSource(books: books, concurrentRequests: 1) { source, services async throws in
            services.injectFaults([.status(400)])
            let isbns = books.compactMap(\.isbn13)
            let answers = try await source.lookUp(isbns: isbns)
            for isbn in isbns.prefix(25) {
                guard case .failed(let reason)? = answers[isbn] else {
                    Issue.record("\(isbn): expected failed, got \(String(describing: answers[isbn]))")
                    continue
                }
                #expect(reason.hasPrefix("GET \(services.baseURL)/api/books: HTTP 400 (Bad Request): not retried"))
            }
            for isbn in isbns.dropFirst(25) {
                guard case .found? = answers[isbn] else {
                    Issue.record("\(isbn): expected found, got \(String(describing: answers[isbn]))")
                    continue
                }
            }
        }
    }

    @Test("An empty title is not searched")
    func emptyTitle() async throws {
        try await withSource { source, services async throws in
            #expect(try await source.search(title: "  ", author: "Anyone") == .notFound)
            #expect(services.requestLog.isEmpty)
        }
    }

    @Test("The source's fixed properties")
    func properties() async throws {
        try await withSource { source, services async throws in
            #expect(source.name == "openlibrary")
            #expect(source.maximumISBNsPerRequest == 25)
            #expect(source.isRemote)
            #expect(source.baseURL == services.baseURL)
            #expect(OpenLibrarySource<ContinuousClock>.defaultBaseURL == "https://openlibrary.org")
        }
    }
}
