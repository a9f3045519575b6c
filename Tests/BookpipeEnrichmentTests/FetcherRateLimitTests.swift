import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment

/// Sources never go faster than their rate limit: the fake services count every request that
/// arrives early as a violation.
@Suite(.timeLimit(.minutes(5)))
struct FetcherRateLimitTests {
    struct Count: Decodable, Sendable {
        var numFound: Int
    }

    @Test("On a manual clock, 30 requests from 3 tasks at 5/s arrive 200 ms apart with no violation")
    func manualClockRate() async throws {
        let clock = ManualClock()
        let rate = RateLimit(requestsPerSecond: 5, burst: 1)
        try await withFakeServices(configuration: .init(rateLimit: .init(requestsPerSecond: 5, tolerance: .zero)),
                                   timeSource: { clock.now.offset }) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: rate)
            let finished = Counter()
            let url = services.baseURL + "/search.json?q=fox"
            let values = try await driving(clock, workers: 3, finished: { finished.value }) {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<3 {
                        group.addTask {
                            defer { finished.increment() }
                            var found = 0
                            for _ in 0..<10 {
                                if case .value = try await fetcher.fetch(url, decode: {
                                    try JSONDecoder().decode(Count.self, from: $0.body)
                                }) { found += 1 }
                            }
                            return found
                        }
                    }
                    return try await group.reduce(0, +)
                }
            }
            #expect(values == 30)
            #expect(services.rateLimitViolations == 0)
            let arrivals = services.requestLog.map(\.arrival).sorted()
            #expect(arrivals == (0..<30).map { .milliseconds(200 * $0) })
        }
    }

    /// The real clock adds scheduling jitter between the client's limiter and the server's
    /// clock (this machine is shared): the server allows one interval of it, which still
    /// refuses any client that sends faster than the rate for more than two requests (the
    /// next test shows the refusals).
    @Test("On the real clock at 10/s, 20 requests from 4 tasks cause no violation")
    func realClockRate() async throws {
        let serverLimit = FakeBookServices.RateLimit(requestsPerSecond: 10, tolerance: .milliseconds(100))
        try await withFakeServices(configuration: .init(rateLimit: serverLimit)) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, rateLimit: RateLimit(requestsPerSecond: 10, burst: 1))
            let url = services.baseURL + "/search.json?q=fox"
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<5 {
                            let outcome = try await fetcher.fetch(url) { try JSONDecoder().decode(Count.self, from: $0.body) }
                            guard case .value = outcome else {
                                Issue.record("expected a value, got \(outcome)")
                                return
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(services.requestLog.count == 20)
            #expect(services.rateLimitViolations == 0)
            #expect(fetcher.statistics.snapshot.rateLimited == 0)
        }
    }

    @Test("Without a client-side limit the same load is refused: the server counts every 429 the fetcher sees")
    func withoutLimitTheServerRefuses() async throws {
        let serverLimit = FakeBookServices.RateLimit(requestsPerSecond: 10, tolerance: .milliseconds(100))
        try await withFakeServices(configuration: .init(rateLimit: serverLimit)) { services, client async throws in
            // No retries and no adaptive slow-down: each request is sent once, as fast as it can go.
            let policy = RetryPolicy(rateLimited: .init(maxRetries: 0))
            let rate = RateLimit(requestsPerSecond: 10_000, burst: 1_000, minimumRequestsPerSecond: 10_000)
            let fetcher = PolicyHTTPFetcher(client: client, rateLimit: rate, retryPolicy: policy)
            let url = services.baseURL + "/search.json?q=fox"
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<2 { _ = try await fetcher.fetch(url) { try JSONDecoder().decode(Count.self, from: $0.body) } }
                    }
                }
                try await group.waitForAll()
            }
            let statistics = fetcher.statistics.snapshot
            #expect(services.rateLimitViolations > 0)
            #expect(statistics.requests == 8)
            #expect(statistics.rateLimited == services.rateLimitViolations)
            #expect(statistics.failures == services.rateLimitViolations)
        }
    }
}
