import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// Google Books' requests, the mapping of its answers (fixtures served verbatim), the API key
/// and the daily quota.
@Suite(.timeLimit(.minutes(5)))
struct GoogleBooksSourceTests {
    static let apiKey = "AIzaSyTEST-secret-key_123"

    func withSource(apiKey: String? = nil, maxResults: Int = 10, requiredKey: String? = nil,
                    clientConfiguration: HTTPClientConfiguration = HTTPClientConfiguration(),
                    quotas: InMemoryHostQuotaStore = InMemoryHostQuotaStore(),
                    _ body: (GoogleBooksSource<ContinuousClock>, FakeBookServices) async throws -> Void) async throws {
        try await withFakeServices(configuration: .init(googleAPIKey: requiredKey),
                                   clientConfiguration: clientConfiguration) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, rateLimit: unlimitedRate, retryPolicy: quickRetryPolicy,
                                            quotaStore: quotas)
            try await body(GoogleBooksSource(fetcher: fetcher, baseURL: services.baseURL, apiKey: apiKey,
                                             maxResults: maxResults), services)
        }
    }

    @Test("The volumes search fixture maps to one candidate per volume; the request is exactly the documented one",
          .enabled(if: TestFixtures.sharedAvailable))
    func searchFixture() async throws {
        try await withSource { source, services async throws in
            services.setResponse(try .json(contentsOf: TestFixtures.url("googlebooks-volumes-search-jellyfin.json")),
                                 forPath: "/books/v1/volumes")
            let answer = try await source.search(title: "Children of Time", author: "Adrian Tchaikovsky")
            #expect(answer == .found([
                Candidate(workKey: "", editionKey: "googlebooks:49T5twEACAAJ",
                          title: "Children of Time", authors: ["Adrian Tchaikovsky"], year: 2018, publisher: "Orbit",
                          isbn13s: ["9780316452502"], source: "googlebooks"),
                Candidate(workKey: "", editionKey: "googlebooks:G7utDwAAQBAJ",
                          title: "Dans la toile du temps", authors: ["Adrian Tchaikovsky"], year: 2019, publisher: "Editions Gallimard",
                          isbn13s: ["9782072853319"], source: "googlebooks"),
            ]))
            let request = try #require(services.requestLog.first)
            #expect(request.path == "/books/v1/volumes")
            #expect(request.query == "q=intitle:Children+of+Time+inauthor:Adrian+Tchaikovsky&maxResults=10")
            #expect(request.parameter("q") == "intitle:Children of Time inauthor:Adrian Tchaikovsky")
        }
    }

    @Test("The single-volume fixture decodes to the same candidate as the search result",
          .enabled(if: TestFixtures.sharedAvailable))
    func singleVolumeFixture() throws {
        let data = try TestFixtures.data("googlebooks-volume-get-en-jellyfin.json")
        let volume = try JSONDecoder().decode(GoogleBooksResponses.Volume.self, from: data)
        #expect(volume.candidate(source: "googlebooks") == Candidate(
            workKey: "", editionKey: "googlebooks:49T5twEACAAJ", title: "Children of Time",
            authors: ["Adrian Tchaikovsky"], year: 2018, publisher: "Orbit", isbn13s: ["9780316452502"], source: "googlebooks"))
    }

    @Test("An ISBN is asked as q=isbn:…; a response without items is not found")
    func isbnRequest() async throws {
        try await withSource { source, services async throws in
            let answers = try await source.lookUp(isbns: [TestBooks.absentISBN])
            #expect(answers == [TestBooks.absentISBN: .notFound])
            #expect(services.requestLog.map(\.query) == ["q=isbn:\(TestBooks.absentISBN)&maxResults=10"])
        }
    }

    @Test("maxResults is clamped to Google's 1...40", arguments: [(0, 1), (25, 25), (100, 40)])
    func maxResults(requested: Int, sent: Int) async throws {
        try await withSource(maxResults: requested) { source, services async throws in
            guard case .found = try await source.search(title: "Sabriel", author: nil) else {
                Issue.record("expected found")
                return
            }
            #expect(services.requestLog.first?.parameter("maxResults") == String(sent))
        }
    }

    @Test("Colons and quotes in a title cannot start another search keyword")
    func searchTerms() async throws {
        try await withSource { source, services async throws in
            _ = try await source.search(title: "2001: A \"Space\"   Odyssey", author: "Arthur C. Clarke")
            #expect(services.requestLog.first?.parameter("q") == "intitle:2001 A Space Odyssey inauthor:Arthur C. Clarke")
        }
    }

    @Test("The API key is sent, and appears in no failure reason, description or dump")
    func apiKeyNeverShown() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.requestTimeout = .seconds(1)   // for the stall; long enough for a loaded machine
        try await withSource(apiKey: Self.apiKey, requiredKey: Self.apiKey,
                             clientConfiguration: configuration) { source, services async throws in
            guard case .found = try await source.lookUp(isbns: ["9780140328721"])["9780140328721"] else {
                Issue.record("expected found with the right key")
                return
            }
            #expect(services.requestLog.first?.parameter("key") == Self.apiKey)

            var reasons: [String] = []
            for fault in [FakeBookServices.Fault.status(400), .status(500), .stall, .resetConnection, .truncatedBody,
                          .malformedJSON, .tooManyRequests(retryAfter: "100000")] {
                services.clearFaults()
                services.setRandomFaults(rate: 1, seed: 1, faults: [fault])
                let answer = try await source.search(title: "Sabriel", author: "Garth Nix")
                guard case .failed(let reason) = answer else {
                    Issue.record("\(fault): expected failed, got \(answer)")
                    continue
                }
                reasons.append(reason)
            }
            #expect(reasons.count == 7)
            for reason in reasons { #expect(!reason.contains(Self.apiKey), "\(reason)") }

            var dumped = ""
            dump(source, to: &dumped)
            for text in [source.description, String(describing: source), String(reflecting: source), dumped] {
                #expect(!text.contains(Self.apiKey), "\(text)")
            }
            #expect(source.description.contains("API key set"))
            #expect(source.hasAPIKey)
        }
    }

    @Test("A wrong key is a 400 failure, not a not-found, and the key is not in the reason")
    func wrongKey() async throws {
        try await withSource(apiKey: "WRONG-key-987", requiredKey: Self.apiKey) { source, services async throws in
            let answer = try await source.lookUp(isbns: ["9780140328721"])["9780140328721"]
            guard case .failed(let reason)? = answer else {
                Issue.record("expected failed, got \(String(describing: answer))")
                return
            }
            #expect(reason == "GET \(services.baseURL)/books/v1/volumes: HTTP 400 (Bad Request): not retried; "
                    + "check the request and the source's base URL")
        }
    }

    @Test("Google's daily quota is stored; later lookups fail at once without a request")
    func dailyQuota() async throws {
        let quotas = InMemoryHostQuotaStore()
        try await withSource(quotas: quotas) { source, services async throws in
            services.injectFaults([.googleDailyQuota])
            let first = try await source.search(title: "Sabriel", author: nil)
            guard case .failed(let reason) = first else {
                Issue.record("expected failed, got \(first)")
                return
            }
            #expect(reason.contains("daily quota ('Queries per day') is used up"))
            let host = "127.0.0.1:\(services.server.port ?? 0)"
            #expect(quotas.quota(forHost: host)?.isBlocked(at: Date()) == true)

            let answers = try await source.lookUp(isbns: ["9780140328721", "9780060273224"])
            for answer in answers.values {
                guard case .failed(let blocked) = answer else {
                    Issue.record("expected failed, got \(answer)")
                    continue
                }
                #expect(blocked.contains("\(host) quota exhausted until"))
            }
            #expect(services.requestLog.count == 1)
        }
    }

    @Test("The source's fixed properties")
    func properties() async throws {
        try await withSource(apiKey: "  ") { source, services async throws in
            #expect(source.name == "googlebooks")
            #expect(source.maximumISBNsPerRequest == 1)
            #expect(source.isRemote)
            #expect(!source.hasAPIKey)
            #expect(GoogleBooksSource<ContinuousClock>.defaultBaseURL == "https://www.googleapis.com")
            _ = try await source.lookUp(isbns: ["9780140328721"])
            #expect(services.requestLog.first?.parameter("key") == nil)
        }
    }
}
