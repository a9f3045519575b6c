import BookpipeCore
import BookpipePipeline
import BookpipeStore
import BookpipeTesting
import Foundation
import Testing
@testable import BookpipeEnrichment

/// Workers on one library share one rate budget per host (issue 28 item 3): two handles on one
/// library file stand for two processes; the fake services count every request that arrives
/// earlier than their rate allows. Waits are on the real clock (the budget's clock is the
/// library's); the assertions are lower bounds, which a slow machine only makes easier to meet.
@Suite(.timeLimit(.minutes(5)))
struct LibraryRateBudgetTests {
    struct Count: Decodable, Sendable {
        var numFound: Int
    }

    static func libraryPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("budget-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("library.sqlite").path
    }

    /// A worker's fetcher: its own limiter at `rate`, and the library's shared budget; no retries,
    /// so a request the server refuses stays refused.
    static func worker(_ client: HTTPClient, library: LibraryStore, rate: Double) -> PolicyHTTPFetcher<ContinuousClock> {
        let clock = ContinuousClock()
        return PolicyHTTPFetcher(
            client: client, clock: clock,
            rateLimiter: RateLimiter(clock: clock, defaultLimit: RateLimit(requestsPerSecond: rate, burst: 1),
                                     shared: LibraryRateBudget(store: library)),
            retryPolicy: RetryPolicy(rateLimited: .init(maxRetries: 0)))
    }

    @Test("Two workers at 5/s each on one library send 5/s together: 16 requests, no violation, spread over at least 3 s")
    func twoWorkersShareOneRate() async throws {
        // Slack of two and a half intervals: between a worker's token and its request arriving lie a
        // read of the library (the host's quota) and the scheduling of a shared, loaded machine. It
        // never raises the long-run rate: a pair of workers each sending at 5/s falls 100 ms further
        // behind at every request and is refused after five (the spread below catches them too).
        let serverLimit = FakeBookServices.RateLimit(requestsPerSecond: 5, tolerance: .milliseconds(500))
        try await withFakeServices(configuration: .init(rateLimit: serverLimit)) { services, client async throws in
            let path = try Self.libraryPath()
            let workers = [try LibraryStore(path: path), try LibraryStore(path: path)].map { Self.worker(client, library: $0, rate: 5) }
            let url = services.baseURL + "/search.json?q=fox"
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in workers {
                    for _ in 0..<2 {
                        group.addTask {
                            for _ in 0..<4 {
                                let outcome = try await worker.fetch(url) { try JSONDecoder().decode(Count.self, from: $0.body) }
                                guard case .value = outcome else {
                                    Issue.record("expected a value, got \(outcome)")
                                    return
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let arrivals = services.requestLog.map(\.arrival).sorted()
            #expect(arrivals.count == 16)
            #expect(services.rateLimitViolations == 0)
            // 16 requests at 5/s with a burst of 1 take at least 15 intervals (3 s); each worker
            // alone at 5/s would have finished its 8 in about 1.4 s.
            if let first = arrivals.first, let last = arrivals.last {
                #expect(last - first >= .milliseconds(2_900), "\(arrivals)")
            }
        }
    }

    @Test("A 429 with Retry-After seen by one worker pauses the other: its next request arrives after the pause")
    func aRetryAfterPausesEveryWorker() async throws {
        try await withFakeServices { services, client async throws in
            let path = try Self.libraryPath()
            let first = Self.worker(client, library: try LibraryStore(path: path), rate: 100)
            let second = Self.worker(client, library: try LibraryStore(path: path), rate: 100)
            services.injectFaults([.tooManyRequests(retryAfter: "2")])
            let url = services.baseURL + "/search.json?q=fox"
            let refused = try await first.fetch(url) { try JSONDecoder().decode(Count.self, from: $0.body) }
            guard case .failed = refused else {
                Issue.record("expected the 429 to fail the lookup (no retries), got \(refused)")
                return
            }
            let answered = try await second.fetch(url) { try JSONDecoder().decode(Count.self, from: $0.body) }
            guard case .value = answered else {
                Issue.record("expected a value, got \(answered)")
                return
            }
            let log = services.requestLog
            #expect(log.count == 2)
            if log.count == 2 {
                #expect(log[1].arrival - log[0].arrival >= .milliseconds(1_900), "\(log)")
            }
        }
    }
}
