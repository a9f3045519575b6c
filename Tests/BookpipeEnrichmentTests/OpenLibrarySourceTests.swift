import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// Open Library's requests and the mapping of its answers, with the shared fixtures served verbatim.
@Suite(.timeLimit(.minutes(1)))
struct OpenLibrarySourceTests {
    func withSource(books: [FakeBook] = TestBooks.all, concurrentRequests: Int = 2,
                    _ body: (OpenLibrarySource<ContinuousClock>, FakeBookServices) async throws -> Void) async throws {
        try await withFakeServices(books) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, rateLimit: unlimitedRate, retryPolicy: quickRetryPolicy)
            try await body(OpenLibrarySource(fetcher: fetcher, baseURL: services.baseURL + "/",
                                             concurrentRequests: concurrentRequests), services)
        }
    }

    @Test("The Books API fixture maps to an edition candidate; the request is exactly the documented one",
          .enabled(if: TestFixtures.sharedAvailable))
    func booksAPIFixture() async throws {
        try await withSource { source, services async throws in
            services.setResponse(try .json(contentsOf: TestFixtures.url("openlibrary-books-api-jscmd-data-bookwyrm.json")),
                                 forPath: "/api/books")
            let answers = try await source.lookUp(isbns: ["9782070427796"])
            #expect(answers == ["9782070427796": .found([Candidate(
                workKey: "/books/OL16262504M", editionKey: "/books/OL16262504M", title: "Les ombres errantes",
                authors: ["Pascal Quignard"], year: 2002, isbn13s: ["9782070427796"], source: "openlibrary")])])
            let request = try #require(services.requestLog.first)
            #expect(request.path == "/api/books")
            #expect(request.query == "bibkeys=ISBN:9782070427796&format=json&jscmd=data")
            let head = try #require(services.server.requests.first?.head)
            #expect(head.header("Accept") == "application/json")
            #expect(head.header("User-Agent")?.hasPrefix("bookpipe/") == true)
        }
    }

    @Test("An ISBN missing from the fixture's answer is not found, while the one present is found",
          .enabled(if: TestFixtures.sharedAvailable))
    func absentBibkeyIsNotFound() async throws {
        try await withSource { source, services async throws in
            services.setResponse(try .json(contentsOf: TestFixtures.url("openlibrary-books-api-jscmd-data-bookwyrm.json")),
                                 forPath: "/api/books")
            let answers = try await source.lookUp(isbns: ["9782070427796", "9780140328721"])
            #expect(answers["9780140328721"] == .notFound)
            guard case .found = answers["9782070427796"] else {
                Issue.record("expected found")
                return
            }
            #expect(services.requestLog.map(\.query) == ["bibkeys=ISBN:9782070427796,ISBN:9780140328721&format=json&jscmd=data"])
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
