import Foundation
import Synchronization
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// Books the source tests know, in the fake services.
enum TestBooks {
    static let fox = FakeBook(title: "Fantastic Mr Fox", authors: ["Roald Dahl"], year: 1970,
                              isbn13: "9780140328721", isbn10: "0140328726",
                              workKey: "/works/OL45883W", editionKey: "/books/OL7353617M", googleVolumeID: "foxVolume01",
                              publishDate: "October 1, 1988", publishedDate: "1988-10-01", publisher: "Puffin")
    /// Listed by Open Library with only its ISBN-10 (like the Books API fixture).
    static let sabriel = FakeBook(title: "Sabriel", authors: ["Garth Nix"], year: 1996, isbn10: "0060273224",
                                  workKey: "/works/OL15832982W", editionKey: "/books/OL22951843M",
                                  googleVolumeID: "sabrielVol1")
    static let timeWar = FakeBook(title: "This Is How You Lose the Time War", authors: ["Amal El-Mohtar", "Max Gladstone"],
                                  year: 2019, isbn13: "9781534431003", isbn10: "1534431004",
                                  workKey: "/works/OL20639540W", editionKey: "/books/OL27901088M",
                                  googleVolumeID: "timeWarVol01")
    static let gideon = FakeBook(title: "Gideon the Ninth", subtitle: "The Locked Tomb", authors: ["Tamsyn Muir"],
                                 year: 2019, isbn13: "9781250313195", workKey: "/works/OL20034367W",
                                 editionKey: "/books/OL27336311M", googleVolumeID: "gideonVol01")
    static let all = [fox, sabriel, timeWar, gideon]

    /// An ISBN-13 no fake book has (valid check digit).
    static let absentISBN = "9780000000002"
}

/// A fixed wall-clock start (a whole second) that tests move along with a manual clock.
let testEpoch = Date(timeIntervalSince1970: 1_900_000_000)

/// Runs `operation`, moving `clock` to its next deadline whenever `workers` tasks (minus those
/// finished) sleep on it, so waits happen instantly and in order.
func driving<T: Sendable>(_ clock: ManualClock, workers: Int = 1, finished: (@Sendable () -> Int)? = nil,
                          _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let done = Flag()
    async let result: T = {
        defer { done.set() }
        return try await operation()
    }()
    while !done.isSet, !Task.isCancelled {
        let unfinished = workers - (finished?() ?? 0)
        if unfinished > 0, clock.sleeperCount >= unfinished {
            clock.advanceToNextDeadline()
        } else {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
    return try await result
}

/// A fast policy for tests on the real clock: the same table, with millisecond waits.
let quickRetryPolicy = RetryPolicy(
    rateLimited: .init(initialBackoff: .milliseconds(5), multiplier: 2, maxRetries: 2),
    unavailable: .init(requeueDelay: .milliseconds(5), maxRequeues: 2),
    transport: .init(maxAttempts: 2))

/// A rate limit that never makes a test wait.
let unlimitedRate = RateLimit(requestsPerSecond: 10_000, burst: 1_000)

/// Fake services with `books`, started, plus a client; both closed by `body`'s end.
func withFakeServices<T>(_ books: [FakeBook] = TestBooks.all,
                         configuration: FakeBookServices.Configuration = .init(),
                         timeSource: (@Sendable () -> Duration)? = nil,
                         clientConfiguration: HTTPClientConfiguration = HTTPClientConfiguration(),
                         _ body: (FakeBookServices, HTTPClient) async throws -> T) async throws -> T {
    let services = FakeBookServices(books: books, configuration: configuration, timeSource: timeSource)
    try services.start()
    let client = try HTTPClient(configuration: clientConfiguration)
    defer {
        client.close()
        services.stop()
    }
    return try await body(services, client)
}

/// The remote sources, for the contract suite.
enum SourceKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case openLibrary
    case googleBooks

    var testDescription: String { rawValue }

    func makeSource<C: Clock<Duration>>(fetcher: PolicyHTTPFetcher<C>, baseURL: String,
                                         apiKey: String? = nil) -> any MetadataSource {
        switch self {
        case .openLibrary: return OpenLibrarySource(fetcher: fetcher, baseURL: baseURL)
        case .googleBooks: return GoogleBooksSource(fetcher: fetcher, baseURL: baseURL, apiKey: apiKey)
        }
    }

    /// The ISBNs asked in one logged request.
    func isbns(in request: FakeBookServices.LoggedRequest) -> [String] {
        switch self {
        case .openLibrary:
            return (request.parameter("bibkeys") ?? "").split(separator: ",").map { String($0.dropFirst("ISBN:".count)) }
        case .googleBooks:
            guard let q = request.parameter("q"), q.hasPrefix("isbn:") else { return [] }
            return [String(q.dropFirst("isbn:".count))]
        }
    }
}

extension Duration {
    var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

/// A one-way flag shared between tasks.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// A counter shared between tasks.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
