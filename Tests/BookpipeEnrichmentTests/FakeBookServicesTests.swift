import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// The fake services answer in the real services' shapes (compared with the shared fixtures),
/// and their faults, rate limit and log work as documented.
@Suite(.timeLimit(.minutes(5)))
struct FakeBookServicesTests {
    /// The JSON kind of a decoded value.
    static func kind(_ value: Any) -> String {
        switch value {
        case is String: return "string"
        case is [Any]: return "array"
        case is [String: Any]: return "object"
        case is NSNull: return "null"
        default: return "number"
        }
    }

    /// Checks that `fake` has only keys from `fixture` (or `extra`) and that shared keys hold
    /// the same kind of value.
    static func expectShape(_ fake: [String: Any], like fixture: [String: Any], extra: Set<String> = [],
                            _ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let unknown = Set(fake.keys).subtracting(fixture.keys).subtracting(extra)
        #expect(unknown.isEmpty, "\(what): keys the real service does not send: \(unknown.sorted())",
                sourceLocation: sourceLocation)
        for (key, value) in fake {
            guard let real = fixture[key] else { continue }
            #expect(kind(value) == kind(real), "\(what).\(key): \(kind(value)) instead of \(kind(real))",
                    sourceLocation: sourceLocation)
        }
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func fixture(_ name: String) throws -> [String: Any] { try object(TestFixtures.data(name)) }

    static let foxWithDetails = FakeBook(title: "Fantastic Mr Fox", subtitle: "A Story", authors: ["Roald Dahl"],
                                         year: 1970, isbn13: "9780140328721", isbn10: "0140328726",
                                         workKey: "/works/OL45883W", editionKey: "/books/OL7353617M",
                                         googleVolumeID: "foxVolume01", publishDate: "October 1, 1988",
                                         publishedDate: "1988-10-01", publisher: "Puffin", pageCount: 96)

    @Test("The Books API answer has the fixture's shape, keyed by the bibkey as sent",
          .enabled(if: TestFixtures.sharedAvailable))
    func booksAPIShape() async throws {
        try await withFakeServices([Self.foxWithDetails]) { services, client async throws in
            let response = try await client.get(services.baseURL + "/api/books?bibkeys=ISBN:978-0140328721,isbn:0140328726,"
                                                + "ISBN:9780000000002&format=json&jscmd=data")
            let answer = try Self.object(response.body)
            #expect(Set(answer.keys) == ["ISBN:978-0140328721", "isbn:0140328726"])
            let fake = try #require(answer["ISBN:978-0140328721"] as? [String: Any])
            let real = try #require(try Self.fixture("openlibrary-books-api-jscmd-data-bookwyrm.json")["ISBN:9782070427796"]
                as? [String: Any])
            Self.expectShape(fake, like: real, extra: ["subtitle", "number_of_pages"], "books API entry")
            Self.expectShape(try #require((fake["authors"] as? [[String: Any]])?.first),
                             like: try #require((real["authors"] as? [[String: Any]])?.first), "author")
            Self.expectShape(try #require(fake["identifiers"] as? [String: Any]),
                             like: try #require(real["identifiers"] as? [String: Any]), extra: ["isbn_13"], "identifiers")
            #expect(fake["key"] as? String == "/books/OL7353617M")
            #expect(fake["publish_date"] as? String == "October 1, 1988")

            let script = try await client.get(services.baseURL + "/api/books?bibkeys=ISBN:9780140328721")
            #expect(script.bodyText.hasPrefix("var _OLBookInfo = {"))
            #expect(script.bodyText.contains("\"preview\":\"noview\""))
        }
    }

    @Test("search.json has the fixture's shape; isbn and edition_key come only when fields asks",
          .enabled(if: TestFixtures.sharedAvailable))
    func searchShape() async throws {
        let secondEdition = FakeBook(title: "Fantastic Mr Fox", authors: ["Roald Dahl"], year: 1974,
                                     isbn13: "9780141346441",
                                     workKey: "/works/OL45883W", editionKey: "/books/OL9999999M")
        try await withFakeServices([Self.foxWithDetails, secondEdition, TestBooks.sabriel]) { services, client async throws in
            let real = try Self.fixture("openlibrary-search-response-bookwyrm.json")
            let realDoc = try #require((real["docs"] as? [[String: Any]])?.first)

            let all = try Self.object(try await client.get(services.baseURL + "/search.json?title=fantastic+mr+fox&fields=*").body)
            Self.expectShape(all, like: real, extra: ["numFoundExact", "q", "offset", "documentation_url"], "search")
            let docs = try #require(all["docs"] as? [[String: Any]])
            #expect(docs.count == 1, "two editions of one work are one document")
            let doc = try #require(docs.first)
            Self.expectShape(doc, like: realDoc, extra: ["subtitle"], "search doc")
            #expect(doc["key"] as? String == "/works/OL45883W")
            #expect(doc["edition_key"] as? [String] == ["OL7353617M", "OL9999999M"])
            #expect(doc["first_publish_year"] as? Int == 1970)
            #expect(doc["edition_count"] as? Int == 2)

            let plain = try Self.object(try await client.get(services.baseURL + "/search.json?q=fox").body)
            let plainDoc = try #require((plain["docs"] as? [[String: Any]])?.first)
            #expect(plainDoc["isbn"] == nil)
            #expect(plainDoc["edition_key"] == nil)
            #expect(plainDoc["title"] as? String == "Fantastic Mr Fox")

            let none = try Self.object(try await client.get(services.baseURL + "/search.json?title=nothing+like+this").body)
            #expect(none["numFound"] as? Int == 0)
            #expect((none["docs"] as? [Any])?.isEmpty == true)

            let picked = try Self.object(try await client.get(services.baseURL + "/search.json?author=garth+nix&fields=key,title").body)
            #expect((picked["docs"] as? [[String: Any]])?.map { Set($0.keys) } == [["key", "title"]])
        }
    }

    @Test("/isbn/{isbn}.json redirects to the edition record, which has the fixture's shape",
          .enabled(if: TestFixtures.sharedAvailable))
    func editionAndWorkShape() async throws {
        try await withFakeServices([Self.foxWithDetails]) { services, client async throws in
            let response = try await client.get(services.baseURL + "/isbn/0140328726.json")
            #expect(response.status == 200)
            #expect(response.redirectCount == 1)
            #expect(response.effectiveURL == services.baseURL + "/books/OL7353617M.json")
            let edition = try Self.object(response.body)
            Self.expectShape(edition, like: try Self.fixture("openlibrary-edition-bookwyrm.json"),
                             extra: ["subtitle", "isbn_13"], "edition")
            #expect((edition["works"] as? [[String: String]])?.first?["key"] == "/works/OL45883W")

            let work = try Self.object(try await client.get(services.baseURL + "/works/OL45883W.json").body)
            Self.expectShape(work, like: try Self.fixture("openlibrary-work-bookwyrm.json"),
                             extra: ["subtitle"], "work")
            #expect(work["first_publish_date"] as? String == "1970")

            let missing = try await client.get(services.baseURL + "/isbn/9780000000002.json")
            #expect(missing.status == 404)
            #expect(try Self.object(missing.body)["error"] as? String == "notfound")
        }
    }

    @Test("Google's volume list and volume have the fixtures' shapes; no match has no items",
          .enabled(if: TestFixtures.sharedAvailable))
    func googleShape() async throws {
        try await withFakeServices([Self.foxWithDetails]) { services, client async throws in
            let real = try Self.fixture("googlebooks-volumes-search-jellyfin.json")
            let realItem = try #require((real["items"] as? [[String: Any]])?.first)
            let realInfo = try #require(realItem["volumeInfo"] as? [String: Any])

            let list = try Self.object(try await client.get(services.baseURL + "/books/v1/volumes?q=isbn:0140328726").body)
            Self.expectShape(list, like: real, "volume list")
            #expect(list["totalItems"] as? Int == 1)
            let item = try #require((list["items"] as? [[String: Any]])?.first)
            Self.expectShape(item, like: realItem, "volume")
            let info = try #require(item["volumeInfo"] as? [String: Any])
            Self.expectShape(info, like: realInfo, extra: ["subtitle"], "volumeInfo")
            #expect(info["publishedDate"] as? String == "1988-10-01")

            let single = try Self.object(try await client.get(services.baseURL + "/books/v1/volumes/foxVolume01").body)
            let realSingle = try Self.fixture("googlebooks-volume-get-en-jellyfin.json")
            Self.expectShape(single, like: realSingle, "single volume")

            let byTitle = try Self.object(try await client.get(
                services.baseURL + "/books/v1/volumes?q=intitle:fantastic+fox+inauthor:dahl&maxResults=40").body)
            #expect(byTitle["totalItems"] as? Int == 1)

            let none = try Self.object(try await client.get(services.baseURL + "/books/v1/volumes?q=intitle:zzz").body)
            #expect(Set(none.keys) == ["kind", "totalItems"])
            #expect(none["totalItems"] as? Int == 0)

            let tooMany = try await client.get(services.baseURL + "/books/v1/volumes?q=fox&maxResults=41")
            #expect(tooMany.status == 400)
        }
    }

    @Test("With a required API key, Google endpoints refuse other keys with Google's 400")
    func requiredKey() async throws {
        try await withFakeServices(configuration: .init(googleAPIKey: "right")) { services, client async throws in
            let wrong = try await client.get(services.baseURL + "/books/v1/volumes?q=isbn:9780140328721&key=wrong")
            #expect(wrong.status == 400)
            let error = try #require(try Self.object(wrong.body)["error"] as? [String: Any])
            #expect(error["message"] as? String == "API key not valid. Please pass a valid API key.")
            let right = try await client.get(services.baseURL + "/books/v1/volumes?q=isbn:9780140328721&key=right")
            #expect(right.status == 200)
            // Open Library does not care.
            #expect(try await client.get(services.baseURL + "/search.json?q=fox").status == 200)
        }
    }

    @Test("Scripted faults hit the next matching requests in order, then answers are normal again")
    func faultScript() async throws {
        try await withFakeServices { services, client async throws in
            services.injectFaults([.tooManyRequests(retryAfter: "5"), .serviceUnavailable(retryAfter: nil), .notFound,
                                   .status(418)], pathPrefix: "/search.json")
            #expect(services.pendingFaultCount == 4)
            let books = try await client.get(services.baseURL + "/api/books?bibkeys=ISBN:9780140328721&format=json&jscmd=data")
            #expect(books.status == 200)
            var statuses: [Int] = []
            for _ in 0..<5 { statuses.append(try await client.get(services.baseURL + "/search.json?q=fox").status) }
            #expect(statuses == [429, 503, 404, 418, 200])
            #expect(services.requestLog.map(\.answer) == [
                .status(200), .fault(.tooManyRequests(retryAfter: "5")), .fault(.serviceUnavailable(retryAfter: nil)),
                .fault(.notFound), .fault(.status(418)), .status(200),
            ])
            #expect(services.requestLog.map(\.sequenceNumber) == [1, 2, 3, 4, 5, 6])
            #expect(services.pendingFaultCount == 0)
        }
    }

    @Test("Malformed JSON is a complete 200 with half the body; a truncated body is a transfer error")
    func bodyFaults() async throws {
        try await withFakeServices { services, client async throws in
            services.injectFaults([.malformedJSON, .truncatedBody])
            let malformed = try await client.get(services.baseURL + "/search.json?q=fox")
            #expect(malformed.status == 200)
            #expect((try? JSONSerialization.jsonObject(with: malformed.body)) == nil)
            let error = await #expect(throws: HTTPError.self) { _ = try await client.get(services.baseURL + "/search.json?q=fox") }
            #expect(error?.retryOutcome == .malformedBody)
        }
    }

    @Test("Seeded random faults repeat exactly for the same seed")
    func randomFaults() async throws {
        func answers(seed: UInt64) async throws -> [FakeBookServices.Answer] {
            try await withFakeServices { services, client async throws in
                services.setRandomFaults(rate: 0.5, seed: seed, faults: [.status(500), .status(503), .notFound])
                for _ in 0..<30 { _ = try await client.get(services.baseURL + "/search.json?q=fox") }
                return services.requestLog.map(\.answer)
            }
        }
        let first = try await answers(seed: 42)
        #expect(try await answers(seed: 42) == first)
        let faulted = first.filter { if case .fault = $0 { true } else { false } }.count
        #expect(faulted > 5 && faulted < 25, "\(faulted) of 30 faulted at rate 0.5")
    }

    @Test("The server-side rate limit answers 429 with Retry-After and counts each violation")
    func serverRateLimit() async throws {
        let clock = ManualClock()
        try await withFakeServices(configuration: .init(rateLimit: .init(requestsPerSecond: 2, tolerance: .zero)),
                                   timeSource: { clock.now.offset }) { services, client async throws in
            let url = services.baseURL + "/search.json?q=fox"
            #expect(try await client.get(url).status == 200)
            let refused = try await client.get(url)
            #expect(refused.status == 429)
            #expect(refused.headers["Retry-After"] == "1")
            clock.advance(by: .milliseconds(499))
            #expect(try await client.get(url).status == 429)
            clock.advance(by: .milliseconds(1))
            #expect(try await client.get(url).status == 200)
            #expect(services.rateLimitViolations == 2)
            #expect(services.requestLog.map(\.answer) == [.status(200), .rateLimited, .rateLimited, .status(200)])
            #expect(services.requestLog.map(\.arrival) == [.zero, .zero, .milliseconds(499), .milliseconds(500)])
            // Google Books has its own bucket.
            #expect(try await client.get(services.baseURL + "/books/v1/volumes?q=fox").status == 200)
            #expect(services.requestLog.last?.service == .googleBooks)
            services.resetLog()
            #expect(services.rateLimitViolations == 0)
            #expect(services.requestLog.isEmpty)
        }
    }

    @Test("Latency delays every answer, and slow requests are served concurrently")
    func latencyAndConcurrency() async throws {
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.maxRequestsPerHost = 8
        try await withFakeServices(configuration: .init(latency: .milliseconds(100)),
                                   clientConfiguration: clientConfiguration) { services, client async throws in
            let start = ContinuousClock.now
            _ = try await client.get(services.baseURL + "/search.json?q=fox")
            #expect(start.duration(to: .now) >= .milliseconds(100))
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask { try await client.get(services.baseURL + "/search.json?q=\(index)").status }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(services.server.maxConcurrentRequests > 1)
        }
    }

    @Test("The log keeps path, raw query, form-decoded parameters and arrival order")
    func requestLog() async throws {
        try await withFakeServices { services, client async throws in
            _ = try await client.get(services.baseURL + "/books/v1/volumes?q=intitle:time+war+inauthor:El-Mohtar&maxResults=5")
            _ = try await client.get(services.baseURL + "/search.json?title=Pippi%20L%C3%A5ngstrump%20%26%20Co")
            let log = services.requestLog
            #expect(log.map(\.path) == ["/books/v1/volumes", "/search.json"])
            #expect(log[0].query == "q=intitle:time+war+inauthor:El-Mohtar&maxResults=5")
            #expect(log[0].parameter("q") == "intitle:time war inauthor:El-Mohtar")
            #expect(log[1].parameter("title") == "Pippi Långstrump & Co")
            #expect(log[0].arrival <= log[1].arrival)
            #expect(log[0].answer == .status(200))
        }
    }

    @Test("Canned responses serve a file verbatim for one path", .enabled(if: TestFixtures.sharedAvailable))
    func cannedResponse() async throws {
        try await withFakeServices { services, client async throws in
            let fixture = try TestFixtures.data("openlibrary-search-response-bookwyrm.json")
            services.setResponse(ScriptedResponse(body: Array(fixture)), forPath: "/search.json")
            #expect(try await client.get(services.baseURL + "/search.json?q=anything").body == fixture)
            services.setResponse(nil, forPath: "/search.json")
            #expect(try await client.get(services.baseURL + "/search.json?q=anything").body != fixture)
        }
    }

    @Test("Generated books have distinct, valid ISBNs and keys, the same for the same seed")
    func generatedBooks() throws {
        let books = FakeBook.generated(count: 1_500)
        #expect(Set(books.compactMap(\.isbn13)).count == 1_500)
        #expect(Set(books.map(\.workKey)).count == 1_500)
        #expect(Set(books.map(\.googleVolumeID)).count == 1_500)
        for book in books.prefix(50) {
            #expect((try? ISBN(book.isbn10 ?? ""))?.isbn13 == book.isbn13)
        }
        #expect(FakeBook.generated(count: 10) == Array(books.prefix(10)))
        #expect(FakeBook.generated(count: 10, seed: 2).compactMap(\.isbn13) != books.prefix(10).compactMap(\.isbn13))
    }
}
