import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// What every remote ``MetadataSource`` must do, run against each one with the fake services.
@Suite(.timeLimit(.minutes(5)))
struct MetadataSourceContractTests {
    /// Runs `body` with `kind`'s source pointed at fresh fake services, on the real clock with
    /// millisecond retry delays.
    func withSource(_ kind: SourceKind, books: [FakeBook] = TestBooks.all, policy: RetryPolicy = quickRetryPolicy,
                    clientConfiguration: HTTPClientConfiguration = HTTPClientConfiguration(),
                    _ body: (any MetadataSource, FakeBookServices) async throws -> Void) async throws {
        try await withFakeServices(books, clientConfiguration: clientConfiguration) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, clock: ContinuousClock(), rateLimit: unlimitedRate,
                                            retryPolicy: policy)
            try await body(kind.makeSource(fetcher: fetcher, baseURL: services.baseURL), services)
        }
    }

    @Test("Finds a book by its ISBN-13", arguments: SourceKind.allCases)
    func foundByISBN(kind: SourceKind) async throws {
        try await withSource(kind) { source, _ in
            let answers = try await source.lookUp(isbns: ["9780140328721"])
            #expect(Array(answers.keys) == ["9780140328721"])
            guard case .found(let candidates)? = answers["9780140328721"], let candidate = candidates.first else {
                Issue.record("expected found, got \(String(describing: answers["9780140328721"]))")
                return
            }
            #expect(candidate.title == "Fantastic Mr Fox")
            #expect(candidate.authors == ["Roald Dahl"])
            #expect(candidate.year == 1988)
            #expect(candidate.isbn13s == ["9780140328721"])
            #expect(candidate.source == source.name)
            // A work key is an Open Library work or empty (a Google Books volume names none); the edition is named.
            #expect(candidate.workKey.isEmpty || WorkKey.isWork(candidate.workKey))
            #expect(candidate.editionKey?.isEmpty == false)
        }
    }

    @Test("Finds a book listed only by its ISBN-10 when asked by the ISBN-13", arguments: SourceKind.allCases)
    func foundByConvertedISBN10(kind: SourceKind) async throws {
        try await withSource(kind) { source, _ in
            let answer = try await source.answer(.isbn("9780060273224"))
            guard case .found(let candidates) = answer else {
                Issue.record("expected found, got \(answer)")
                return
            }
            #expect(candidates.map(\.title) == ["Sabriel"])
            #expect(candidates.first?.isbn13s == ["9780060273224"])
        }
    }

    @Test("An ISBN the source does not have is not found", arguments: SourceKind.allCases)
    func absentISBN(kind: SourceKind) async throws {
        try await withSource(kind) { source, services async throws in
            let answers = try await source.lookUp(isbns: [TestBooks.absentISBN])
            #expect(answers == [TestBooks.absentISBN: .notFound])
            #expect(services.requestLog.count == 1)
        }
    }

    @Test("Sixty ISBNs: each answered exactly once, in as many requests as the batch size needs",
          arguments: SourceKind.allCases)
    func batchOfSixty(kind: SourceKind) async throws {
        let books = FakeBook.generated(count: 50, seed: 7)
        let known = books.compactMap(\.isbn13)
        let unknown = FakeBook.generated(count: 10, seed: 8).compactMap(\.isbn13)
        let isbns = known.prefix(25) + unknown + known.dropFirst(25)
        try await withSource(kind, books: books) { source, services async throws in
            let answers = try await source.lookUp(isbns: Array(isbns))
            #expect(answers.count == 60)
            #expect(Set(answers.keys) == Set(isbns))
            for isbn in known {
                guard case .found(let candidates)? = answers[isbn] else {
                    Issue.record("\(isbn): expected found, got \(String(describing: answers[isbn]))")
                    continue
                }
                #expect(candidates.first?.isbn13s.first == isbn)
            }
            for isbn in unknown { #expect(answers[isbn] == .notFound) }

            let perRequest = source.maximumISBNsPerRequest
            #expect(services.requestLog.count == (60 + perRequest - 1) / perRequest)
            let asked = services.requestLog.flatMap(kind.isbns(in:))
            #expect(asked.count == 60)
            #expect(Set(asked) == Set(isbns))
            #expect(services.requestLog.allSatisfy { kind.isbns(in: $0).count <= perRequest })
        }
    }

    @Test("Repeated ISBNs are asked once; no ISBNs send nothing", arguments: SourceKind.allCases)
    func repeatsAndEmpty(kind: SourceKind) async throws {
        try await withSource(kind) { source, services async throws in
            #expect(try await source.lookUp(isbns: []).isEmpty)
            #expect(services.requestLog.isEmpty)
            let answers = try await source.lookUp(isbns: ["9780140328721", "9780140328721"])
            #expect(answers.count == 1)
            #expect(services.requestLog.flatMap(kind.isbns(in:)) == ["9780140328721"])
        }
    }

    @Test("A title and author search finds the work", arguments: SourceKind.allCases)
    func searchFound(kind: SourceKind) async throws {
        try await withSource(kind) { source, _ in
            let answer = try await source.search(title: "This Is How You Lose the Time War", author: "Max Gladstone")
            guard case .found(let candidates) = answer, let first = candidates.first else {
                Issue.record("expected found, got \(answer)")
                return
            }
            #expect(first.title == "This Is How You Lose the Time War")
            #expect(first.authors == ["Amal El-Mohtar", "Max Gladstone"])
            #expect(first.year == 2019)
            #expect(first.isbn13s == ["9781534431003"])
            #expect(candidates.count == 1)
            // By title alone too, and through the protocol's `answer(_:)`.
            #expect(try await source.answer(.title("Sabriel", author: nil)) != .notFound)
        }
    }

    @Test("A subtitle is joined to the title", arguments: SourceKind.allCases)
    func subtitle(kind: SourceKind) async throws {
        try await withSource(kind) { source, _ in
            let answer = try await source.search(title: "Gideon the Ninth", author: "Tamsyn Muir")
            guard case .found(let candidates) = answer else {
                Issue.record("expected found, got \(answer)")
                return
            }
            #expect(candidates.map(\.title) == ["Gideon the Ninth: The Locked Tomb"])
        }
    }

    @Test("A search with no match is not found", arguments: SourceKind.allCases)
    func searchNotFound(kind: SourceKind) async throws {
        try await withSource(kind) { source, services async throws in
            #expect(try await source.search(title: "A Book Nobody Wrote", author: "Nobody") == .notFound)
            #expect(try await source.search(title: "Sabriel", author: "Roald Dahl") == .notFound)
            #expect(services.requestLog.count == 2)
        }
    }

    @Test("A server that keeps failing makes every lookup failed, never not found",
          arguments: SourceKind.allCases, [FakeBookServices.Fault.serviceUnavailable(retryAfter: nil), .status(500),
                                           .malformedJSON, .resetConnection, .status(400)])
    func serverFailure(kind: SourceKind, fault: FakeBookServices.Fault) async throws {
        try await withSource(kind) { source, services async throws in
            services.setRandomFaults(rate: 1, seed: 1, faults: [fault])
            let answers = try await source.lookUp(isbns: ["9780140328721", TestBooks.absentISBN])
            #expect(answers.count == 2)
            for (isbn, answer) in answers {
                guard case .failed(let reason) = answer else {
                    Issue.record("\(isbn): expected failed, got \(answer)")
                    continue
                }
                #expect(reason.hasPrefix("GET \(services.baseURL)/"))
                #expect(!answer.isDefinite)
            }
            let search = try await source.search(title: "Sabriel", author: nil)
            guard case .failed = search else {
                Issue.record("expected failed, got \(search)")
                return
            }
            #expect(source.statistics.snapshot.failures >= 2)
        }
    }

    @Test("Cancelling the task aborts a lookup in flight with CancellationError", arguments: SourceKind.allCases)
    func cancellation(kind: SourceKind) async throws {
        var configuration = HTTPClientConfiguration()
        configuration.requestTimeout = .seconds(300)   // only cancellation can end the request
        try await withSource(kind, clientConfiguration: configuration) { source, services async throws in
            services.setRandomFaults(rate: 1, seed: 1, faults: [.stall])
            let lookup = Task { try await source.lookUp(isbns: ["9780140328721"]) }
            let search = Task { try await source.search(title: "Sabriel", author: nil) }
            while services.requestLog.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
            lookup.cancel()
            search.cancel()
            let lookupResult = await lookup.result
            let searchResult = await search.result
            #expect(throws: CancellationError.self) { try lookupResult.get() }
            #expect(throws: CancellationError.self) { try searchResult.get() }
            #expect(services.requestLog.count == 2)
        }
    }

    @Test("Statistics count requests, retries and 429s", arguments: SourceKind.allCases)
    func statistics(kind: SourceKind) async throws {
        try await withSource(kind) { source, services async throws in
            services.injectFaults([.tooManyRequests(retryAfter: nil), .serviceUnavailable(retryAfter: nil)])
            guard case .found = try await source.search(title: "Sabriel", author: "Garth Nix") else {
                Issue.record("expected found")
                return
            }
            let statistics = source.statistics.snapshot
            #expect(statistics.requests == 3)
            #expect(statistics.retries == 2)
            #expect(statistics.rateLimited == 1)
            #expect(statistics.failures == 0)
            #expect(statistics.meanLatency != nil)
        }
    }
}
