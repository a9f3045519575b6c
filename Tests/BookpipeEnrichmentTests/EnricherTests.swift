import BookpipeCore
import BookpipePipeline
import BookpipeStore
import BookpipeTesting
import Foundation
import Testing
@testable import BookpipeEnrichment

/// The enricher end to end: real sources over HTTP against the fake services on loopback, the
/// library's cache in a real SQLite file.
@Suite(.timeLimit(.minutes(2)))
struct EnricherTests {
    static func record(_ row: Int, title: String, authors: [String] = [], isbns: [String] = [], year: Int? = nil)
        -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "export.csv", fileHash: "feedbeef", row: row, line: row + 1),
                                title: title, authors: authors, rawISBNs: isbns, year: year, reviewStatus: .verified)
        Normalizer.normalize(&record)
        return record
    }

    static func temporaryStore() throws -> LibraryStore {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("enricher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try LibraryStore(path: directory.appendingPathComponent("library.sqlite").path)
    }

    static func openLibrary(_ services: FakeBookServices, _ client: HTTPClient, policy: RetryPolicy = quickRetryPolicy)
        -> OpenLibrarySource<ContinuousClock> {
        OpenLibrarySource(fetcher: PolicyHTTPFetcher(client: client, rateLimit: unlimitedRate, retryPolicy: policy),
                          baseURL: services.baseURL)
    }

    static func googleBooks(_ services: FakeBookServices, _ client: HTTPClient) -> GoogleBooksSource<ContinuousClock> {
        GoogleBooksSource(fetcher: PolicyHTTPFetcher(client: client, rateLimit: unlimitedRate, retryPolicy: quickRetryPolicy),
                          baseURL: services.baseURL)
    }

    @Test("Found by ISBN, found by title and author, absent: enriched, enriched, notFound; ISBNs go in one batch")
    func outcomes() async throws {
        try await withFakeServices { services, client async throws in
            let enricher = Enricher(sources: [Self.openLibrary(services, client)], store: nil)
            let records = [
                Self.record(1, title: "Fantastic Mr. Fox", authors: ["Dahl, Roald"], isbns: ["=\"0140328726\""]),
                Self.record(2, title: "This Is How You Lose the Time War", authors: ["Amal El-Mohtar"], year: 2019),
                Self.record(3, title: "A Book Nobody Wrote", authors: ["Nobody At All"], isbns: ["9780306406157"]),
            ]
            let enriched = try await enricher.enrich(records)
            #expect(enriched.map(\.id) == records.map(\.id))
            #expect(enriched.map(\.status) == [.enriched, .enriched, .notFound])
            #expect(enriched[0].enrichment?.match?.editionKey == TestBooks.fox.editionKey)
            #expect(enriched[1].enrichment?.match?.workKey == TestBooks.timeWar.workKey)
            let bookRequests = services.requestLog.filter { $0.path == "/api/books" }
            #expect(bookRequests.count == 1, "both ISBNs in one Books API request")
        }
    }

    @Test("A lookup that keeps failing is failed with the reason, never notFound; a later run finds it")
    func failureIsNotNotFound() async throws {
        let store = try Self.temporaryStore()
        try await withFakeServices { services, client async throws in
            let records = [Self.record(1, title: "Fantastic Mr Fox", authors: ["Roald Dahl"], isbns: ["9780140328721"])]
            services.setRandomFaults(rate: 1, seed: 1, faults: [.serviceUnavailable(retryAfter: nil)])
            let failed = try await Enricher(sources: [Self.openLibrary(services, client)], store: store).enrich(records)
            #expect(failed[0].status == .failed)
            #expect(failed[0].enrichment?.failure?.contains("openlibrary") == true)
            #expect(failed[0].enrichment?.failure?.contains("503") == true)
            // Failures are not cached: once the server recovers, the same question is asked and answered.
            services.clearFaults()
            let retried = try await Enricher(sources: [Self.openLibrary(services, client)], store: store).enrich(failed.map {
                var record = $0
                record.enrichment = nil
                return record
            })
            #expect(retried[0].status == .enriched)
        }
    }

    @Test("Google Books answers only what Open Library could not settle")
    func chainFallsThrough() async throws {
        let onlyInGoogle = FakeBook(title: "The Quiet Orchard", authors: ["Mira Valdés"], year: 2011,
                                    isbn13: "9780306406157", googleVolumeID: "orchardVol1")
        try await withFakeServices([TestBooks.fox]) { openLibrary, client async throws in
            try await withFakeServices([TestBooks.fox, onlyInGoogle]) { google, _ async throws in
                let enricher = Enricher(sources: [Self.openLibrary(openLibrary, client), Self.googleBooks(google, client)],
                                        store: nil)
                let enriched = try await enricher.enrich([
                    Self.record(1, title: "Fantastic Mr Fox", authors: ["Roald Dahl"], isbns: ["9780140328721"]),
                    Self.record(2, title: "The Quiet Orchard", authors: ["Mira Valdes"], isbns: ["9780306406157"]),
                ])
                #expect(enriched.map(\.status) == [.enriched, .enriched])
                #expect(enriched.map { $0.enrichment?.match?.source } == ["openlibrary", "googlebooks"])
                let askedGoogle = google.requestLog.map { $0.parameter("q") ?? "" }
                #expect(!askedGoogle.contains { $0.contains("9780140328721") }, "Google is not asked what Open Library settled")
                #expect(askedGoogle.contains { $0.contains("9780306406157") })
            }
        }
    }

    @Test("A rerun answers every question from the library's cache and sends no request")
    func cacheOnRerun() async throws {
        let store = try Self.temporaryStore()
        try await withFakeServices { services, client async throws in
            let records = [
                Self.record(1, title: "Fantastic Mr Fox", authors: ["Roald Dahl"], isbns: ["9780140328721"]),
                Self.record(2, title: "Sabriel", authors: ["Garth Nix"]),
                Self.record(3, title: "Not A Real Book", authors: ["No One"]),
            ]
            let first = try await Enricher(sources: [Self.openLibrary(services, client)], store: store).enrich(records)
            let requestsAfterFirst = services.requestLog.count
            #expect(requestsAfterFirst >= 3)
            let source = Self.openLibrary(services, client)
            let second = try await Enricher(sources: [source], store: store).enrich(records)
            #expect(services.requestLog.count == requestsAfterFirst, "no request on the rerun")
            #expect(source.statistics.snapshot.cacheHits >= 3)
            #expect(second.map(\.status) == first.map(\.status))
            // --refresh asks again.
            _ = try await Enricher(sources: [Self.openLibrary(services, client)], store: store,
                                   options: EnrichmentOptions(refresh: true)).enrich(records)
            #expect(services.requestLog.count > requestsAfterFirst)
        }
    }

    @Test("A question another run is asking is not sent again: this run waits for its answer in the cache; one whose asker died is asked")
    func questionAskedByOneRunAtATime() async throws {
        let store = try Self.temporaryStore()
        let elsewhere = try Self.temporaryStore()
        try await withFakeServices { services, client async throws in
            let fox = Self.record(1, title: "Fantastic Mr Fox", authors: ["Roald Dahl"], isbns: ["9780140328721"])
            let key = LookupQuestion.isbn("9780140328721").cacheKey
            #expect(try await store.takeQuestions(source: "openlibrary", [key], asker: "another worker", lease: .seconds(600)) == [key])
            let source = Self.openLibrary(services, client)
            let waiting = Task { try await Enricher(sources: [source], store: store).enrich([fox]) }
            try await Task.sleep(for: .seconds(1))
            #expect(services.requestLog.isEmpty, "nothing is sent for a question another run is asking")
            // The other worker's answer (asked here through another library) reaches the cache, and it lets go.
            _ = try await Enricher(sources: [Self.openLibrary(services, client)], store: elsewhere).enrich([fox])
            let asked = services.requestLog.count
            let answer = try #require(try await elsewhere.cachedAnswers(source: "openlibrary", questions: [key])[key])
            try await store.cacheAnswers(source: "openlibrary", [(question: key, answerJSON: answer.answerJSON)], fetchedAt: Date())
            try await store.releaseQuestions(source: "openlibrary", [key], asker: "another worker")
            let enriched = try await waiting.value
            #expect(enriched.map(\.status) == [.enriched])
            #expect(services.requestLog.count == asked, "the answer came from the cache, not from a second request")
            #expect(source.statistics.snapshot.cacheHits == 1)
            // A question whose asker died (its lease ran out) is asked at once.
            let absent = Self.record(2, title: "A Book Nobody Wrote", authors: ["Nobody At All"], isbns: ["9780306406157"])
            let absentKey = LookupQuestion.isbn("9780306406157").cacheKey
            _ = try await store.takeQuestions(source: "openlibrary", [absentKey], asker: "a dead worker", lease: .zero)
            let after = try await Enricher(sources: [Self.openLibrary(services, client)], store: store).enrich([absent])
            #expect(after.map(\.status) == [.notFound])
            #expect(services.requestLog.count > asked)
            // A question held by a process of this host that no longer runs is asked at once, whatever its lease.
            let finished = Process()
            finished.executableURL = URL(fileURLWithPath: "/bin/true")
            try finished.run()
            finished.waitUntilExit()
            let deadAsker = "\(ProcessInfo.processInfo.hostName):\(finished.processIdentifier):1f"
            let sabriel = Self.record(3, title: "Sabriel", authors: ["Garth Nix"], isbns: ["9780060273224"])
            let sabrielKey = LookupQuestion.isbn("9780060273224").cacheKey
            #expect(try await store.takeQuestions(source: "openlibrary", [sabrielKey], asker: deadAsker, lease: .seconds(600))
                    == [sabrielKey])
            let beforeSabriel = services.requestLog.count
            _ = try await Enricher(sources: [Self.openLibrary(services, client)], store: store).enrich([sabriel])
            #expect(services.requestLog.count > beforeSabriel, "asked by this run, not left to the dead process")
        }
    }

    @Test("Google's daily quota is kept in the library: the next run sends Google nothing until it resets")
    func quotaKeptBetweenRuns() async throws {
        let store = try Self.temporaryStore()
        try await withFakeServices { google, client async throws in
            func source() -> GoogleBooksSource<ContinuousClock> {
                GoogleBooksSource(fetcher: PolicyHTTPFetcher(client: client, rateLimit: unlimitedRate,
                                                             retryPolicy: quickRetryPolicy,
                                                             quotaStore: LibraryHostQuotaStore(store: store)),
                                  baseURL: google.baseURL)
            }
            let records = [Self.record(1, title: "Fantastic Mr Fox", authors: ["Roald Dahl"], isbns: ["9780140328721"])]
            google.injectFaults([.googleDailyQuota])
            let first = try await Enricher(sources: [source()], store: store).enrich(records)
            #expect(first[0].status == .failed)
            #expect(first[0].enrichment?.failure?.lowercased().contains("quota") == true)
            let sent = google.requestLog.count
            #expect(sent == 1)
            // A new run (new source, same library): blocked before sending anything.
            let second = try await Enricher(sources: [source()], store: store).enrich(records)
            #expect(second[0].status == .failed)
            #expect(google.requestLog.count == sent, "no request while the stored quota lasts")
            #expect(try store.hostQuota(host: PolicyHTTPFetcher<ContinuousClock>.hostKey(of: google.baseURL)) != nil)
        }
    }

    @Test("With faults injected at random, every row comes back exactly once, none matched wrongly, and a retry finishes")
    func randomFaults() async throws {
        let books = FakeBook.generated(count: 60, seed: 7)
        let store = try Self.temporaryStore()
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.requestTimeout = .milliseconds(400)
        clientConfiguration.maxRequestsPerHost = 4
        try await withFakeServices(books, clientConfiguration: clientConfiguration) { services, client async throws in
            var records = books.enumerated().map { index, book in
                Self.record(index + 1, title: book.title, authors: book.authors,
                            isbns: index.isMultiple(of: 2) ? book.isbn13s : [], year: book.year)
            }
            records += (0..<10).map { Self.record(61 + $0, title: "Absent Volume \($0) Of Nothing", authors: ["Ghost Writer"]) }
            services.setRandomFaults(rate: 0.3, seed: 42, faults: [
                .tooManyRequests(retryAfter: nil), .serviceUnavailable(retryAfter: nil), .resetConnection,
                .truncatedBody, .malformedJSON, .stall,
            ])
            let workOfRow = Dictionary(uniqueKeysWithValues: books.enumerated().map { ($0.offset + 1, $0.element) })
            func check(_ enriched: [BookRecord]) {
                #expect(enriched.map(\.id) == records.map(\.id), "every row exactly once, in order")
                for record in enriched {
                    if let book = workOfRow[record.origin.row], let match = record.enrichment?.match {
                        #expect(match.workKey == book.workKey || match.editionKey == book.editionKey,
                                "row \(record.origin.row) matched the right book")
                    }
                    if record.origin.row > 60 { #expect(record.enrichment?.match == nil, "absent books are never matched") }
                    #expect(record.status != .pending)
                }
            }
            let first = try await Enricher(sources: [Self.openLibrary(services, client)], store: store,
                                           options: EnrichmentOptions(searchConcurrency: 4)).enrich(records)
            check(first)
            services.clearFaults()
            let failedRows = first.filter { $0.status == .failed }.map { var record = $0; record.enrichment = nil; return record }
            let second = try await Enricher(sources: [Self.openLibrary(services, client)], store: store).enrich(failedRows)
            #expect(second.allSatisfy { $0.status != .failed })
            let final = Dictionary((first + second).map { ($0.id, $0) }, uniquingKeysWith: { _, retried in retried })
            #expect(final.values.filter { $0.origin.row <= 60 }.allSatisfy { $0.status == .enriched })
        }
    }

    @Test("A cached answer from before work keys were work keys (a Google volume as its work) reads as today's answer: no work key, the volume as edition")
    func cachedSourceKeysAreNoWorkKeys() {
        let old = LookupAnswer.found([
            Candidate(workKey: "googlebooks:abc", editionKey: "googlebooks:abc", title: "Dune", authors: [], source: "googlebooks"),
            Candidate(workKey: "/works/OL1W", editionKey: "/books/OL2M", title: "Dune", authors: [], source: "openlibrary"),
        ])
        guard case .found(let candidates) = LookupCache.withWorkKeysOnly(old) else {
            Issue.record("not found")
            return
        }
        #expect(candidates.map(\.workKey) == ["", "/works/OL1W"])
        #expect(candidates.map(\.editionKey) == ["googlebooks:abc", "/books/OL2M"])
        #expect(LookupCache.withWorkKeysOnly(.notFound) == .notFound)
    }
}
