import Foundation
import Testing
import BookpipeCore
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeEnrichment
@testable import BookpipeHTTP

/// The fetcher's retry table against the fake services, on a manual clock: the server stamps
/// each arrival with the manual clock's time, so schedules are asserted exactly.
@Suite(.timeLimit(.minutes(5)))
struct PolicyHTTPFetcherTests {
    struct SearchCount: Decodable, Sendable, Equatable {
        var numFound: Int
    }

    /// The pieces of one test: a manual clock, the fake services on it, a fetcher.
    struct Setup: Sendable {
        let clock: ManualClock
        let services: FakeBookServices
        let fetcher: PolicyHTTPFetcher<ManualClock>
        let quotas: InMemoryHostQuotaStore

        var searchURL: String { services.baseURL + "/search.json?title=Fox&limit=1" }
        var arrivals: [Duration] { services.requestLog.map(\.arrival) }
        var host: String { "127.0.0.1:\(services.server.port ?? 0)" }

        func fetchSearch() async throws -> FetchOutcome<SearchCount> {
            try await driving(clock) { [fetcher, searchURL] in
                try await fetcher.fetch(searchURL) { try JSONDecoder().decode(SearchCount.self, from: $0.body) }
            }
        }
    }

    func withSetup(policy: RetryPolicy = .default, rate: RateLimit = unlimitedRate,
                   clientConfiguration: HTTPClientConfiguration = HTTPClientConfiguration(),
                   quotas: InMemoryHostQuotaStore = InMemoryHostQuotaStore(),
                   _ body: (Setup) async throws -> Void) async throws {
        let clock = ManualClock()
        try await withFakeServices(timeSource: { clock.now.offset }, clientConfiguration: clientConfiguration) { services, client async throws in
            let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: rate, retryPolicy: policy,
                                            quotaStore: quotas,
                                            now: { testEpoch.addingTimeInterval(clock.now.offset.inSeconds) })
            try await body(Setup(clock: clock, services: services, fetcher: fetcher, quotas: quotas))
        }
    }

    @Test("A 2xx body is decoded and counted once")
    func success() async throws {
        try await withSetup { setup async throws in
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            let statistics = setup.fetcher.statistics.snapshot
            #expect(statistics.requests == 1)
            #expect(statistics.retries == 0)
            #expect(statistics.failures == 0)
            #expect(statistics.totalLatency > .zero)
        }
    }

    @Test("Five 429s in a row: retries after 1, 2, 4 and 8 s, then fails naming the 429")
    func rateLimitedSchedule() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults(Array(repeating: .tooManyRequests(retryAfter: nil), count: 5))
            let outcome = try await setup.fetchSearch()
            #expect(setup.arrivals == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
            #expect(outcome == .failed(reason: "GET \(setup.services.baseURL)/search.json: HTTP 429 (Too Many Requests) "
                                       + "after 4 retries; lower the rate limit for this host or retry later "
                                       + "(bookpipe enrich --failed)"))
            let statistics = setup.fetcher.statistics.snapshot
            #expect(statistics.requests == 5)
            #expect(statistics.retries == 4)
            #expect(statistics.rateLimited == 5)
            #expect(statistics.failures == 1)
        }
    }

    @Test("Four 429s then a 200: the fifth attempt at 15 s succeeds")
    func rateLimitedThenSuccess() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults(Array(repeating: .tooManyRequests(retryAfter: nil), count: 4))
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.arrivals == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
        }
    }

    @Test("A Retry-After of 10 s wins over the 1 s backoff")
    func retryAfterSecondsWins() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.tooManyRequests(retryAfter: "10"), .tooManyRequests(retryAfter: "1")])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            // 10 s (Retry-After beats 1 s), then 2 s (the backoff beats Retry-After 1).
            #expect(setup.arrivals == [.zero, .seconds(10), .seconds(12)])
        }
    }

    @Test("A Retry-After HTTP date is waited out exactly")
    func retryAfterDate() async throws {
        try await withSetup { setup async throws in
            let date = HTTPDate.format(testEpoch.addingTimeInterval(20))
            setup.services.injectFaults([.tooManyRequests(retryAfter: date)])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.arrivals == [.zero, .seconds(20)])
        }
    }

    @Test("A 503 is requeued after 30 s, twice, and the request then succeeds")
    func unavailableRequeued() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.serviceUnavailable(retryAfter: nil), .serviceUnavailable(retryAfter: nil)])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.arrivals == [.zero, .seconds(30), .seconds(60)])
            #expect(setup.fetcher.statistics.snapshot.retries == 2)
        }
    }

    @Test("503s beyond the requeue limit fail naming the 503, after the configured delays")
    func unavailableGivesUp() async throws {
        let policy = RetryPolicy(unavailable: .init(requeueDelay: .seconds(5), maxRequeues: 2))
        try await withSetup(policy: policy) { setup async throws in
            setup.services.setRandomFaults(rate: 1, seed: 1, faults: [.serviceUnavailable(retryAfter: nil)])
            let outcome = try await setup.fetchSearch()
            #expect(setup.arrivals == [.zero, .seconds(5), .seconds(10)])
            #expect(outcome == .failed(reason: "GET \(setup.services.baseURL)/search.json: HTTP 503 (Service Unavailable) "
                                       + "after 2 requeues; the source may be down, retry later (bookpipe enrich --failed)"))
        }
    }

    @Test("A 503's longer Retry-After sets the requeue delay")
    func unavailableRetryAfter() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.serviceUnavailable(retryAfter: "45")])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.arrivals == [.zero, .seconds(45)])
        }
    }

    @Test("Malformed JSON in a 200 is retried like a 503")
    func malformedJSONRequeued() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.malformedJSON])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.arrivals == [.zero, .seconds(30)])
            #expect(setup.fetcher.statistics.snapshot.retries == 1)
        }
    }

    @Test("A body cut off before its Content-Length is retried like a 503")
    func truncatedBodyRequeued() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.truncatedBody])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.arrivals == [.zero, .seconds(30)])
        }
    }

    @Test("Malformed bodies share the 503 requeue limit and fail naming the body")
    func malformedGivesUp() async throws {
        let policy = RetryPolicy(unavailable: .init(requeueDelay: .seconds(30), maxRequeues: 1))
        try await withSetup(policy: policy) { setup async throws in
            setup.services.injectFaults([.serviceUnavailable(retryAfter: nil), .malformedJSON])
            let outcome = try await setup.fetchSearch()
            #expect(setup.arrivals == [.zero, .seconds(30)])
            #expect(outcome == .failed(reason: "GET \(setup.services.baseURL)/search.json: the response body was "
                                       + "malformed or cut off after 1 requeue; the source may be down, retry later "
                                       + "(bookpipe enrich --failed)"))
        }
    }

    @Test("A 200 with an HTML page (a captive portal) is requeued like a malformed body, then fails saying it was an HTML page")
    func htmlPageGivesUpNamingIt() async throws {
        let policy = RetryPolicy(unavailable: .init(requeueDelay: .seconds(30), maxRequeues: 1))
        try await withSetup(policy: policy) { setup async throws in
            setup.services.injectFaults([.htmlPage, .htmlPage])
            let outcome = try await setup.fetchSearch()
            #expect(setup.arrivals == [.zero, .seconds(30)])
            #expect(outcome == .failed(reason: "GET \(setup.services.baseURL)/search.json: the response body was "
                                       + "malformed or cut off after 1 requeue; the source may be down, retry later "
                                       + "(bookpipe enrich --failed) (the server answered 200 with an HTML page instead "
                                       + "of JSON: a captive portal or a proxy's error page? check the network, then "
                                       + "rerun with bookpipe enrich --failed)"))
        }
    }

    @Test("An HTML page is known by its content type or its first bytes; JSON and other text are not HTML")
    func htmlDetection() {
        func response(_ body: String, type: String?) -> HTTPResponse {
            var headers = HTTPHeaders()
            if let type { headers = HTTPHeaders([HTTPHeader(name: "Content-Type", value: type)]) }
            return HTTPResponse(status: 200, headers: headers, body: Data(body.utf8), requestedURL: "http://x/")
        }
        #expect(PolicyHTTPFetcher<ManualClock>.isHTML(response("<p>hi</p>", type: "text/html; charset=utf-8")))
        #expect(PolicyHTTPFetcher<ManualClock>.isHTML(response("\u{FEFF}  \n<!DOCTYPE html><html>", type: nil)))
        #expect(PolicyHTTPFetcher<ManualClock>.isHTML(response("<HTML><body>", type: "application/octet-stream")))
        #expect(!PolicyHTTPFetcher<ManualClock>.isHTML(response("{\"a\": 1", type: "application/json")))
        #expect(!PolicyHTTPFetcher<ManualClock>.isHTML(response("<xml/>", type: "text/xml")))
    }

    @Test("Three timeouts: three attempts at once, then fails naming the timeout")
    func timeouts() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.requestTimeout = .milliseconds(200)
        try await withSetup(clientConfiguration: configuration) { setup async throws in
            setup.services.injectFaults([.stall, .stall, .stall])
            let outcome = try await setup.fetchSearch()
            #expect(setup.arrivals == [.zero, .zero, .zero])
            guard case .failed(let reason) = outcome else {
                Issue.record("expected failed, got \(outcome)")
                return
            }
            #expect(reason == "GET \(setup.services.baseURL)/search.json: timed out on attempt 3 of 3; check the "
                    + "network and the source's base URL, then retry (bookpipe enrich --failed)")
            #expect(setup.fetcher.statistics.snapshot.requests == 3)
            #expect(setup.fetcher.statistics.snapshot.retries == 2)
        }
    }

    @Test("Two connection resets then a 200: the third attempt succeeds")
    func connectionResets() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.resetConnection, .resetConnection])
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
            #expect(setup.services.requestLog.count == 3)
        }
    }

    @Test("A 404 or 410 is not found after one request", arguments: [404, 410])
    func notFound(status: Int) async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.status(status)])
            #expect(try await setup.fetchSearch() == .notFound)
            #expect(setup.services.requestLog.count == 1)
            #expect(setup.fetcher.statistics.snapshot.failures == 0)
        }
    }

    @Test("Other 4xx statuses fail at once", arguments: [400, 401, 403])
    func clientErrors(status: Int) async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.status(status)])
            let outcome = try await setup.fetchSearch()
            guard case .failed(let reason) = outcome else {
                Issue.record("expected failed, got \(outcome)")
                return
            }
            #expect(reason.hasPrefix("GET \(setup.services.baseURL)/search.json: HTTP \(status) ("))
            #expect(reason.contains("not retried"))
            #expect(setup.services.requestLog.count == 1)
        }
    }

    @Test("Google's daily quota is stored, and the next fetch fails without sending anything")
    func dailyQuotaStoredAndHonoured() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.googleDailyQuota])
            let first = try await setup.fetchSearch()
            guard case .failed(let reason) = first else {
                Issue.record("expected failed, got \(first)")
                return
            }
            let quota = try #require(setup.quotas.quota(forHost: setup.host))
            #expect(reason == "GET \(setup.services.baseURL)/search.json: \(setup.host) quota exhausted until "
                    + "\(HTTPDate.format(quota.blockedUntil)) (HTTP 429 (rateLimitExceeded): the daily quota "
                    + "('Queries per day') is used up; Google resets it at midnight Pacific time); bookpipe sends it "
                    + "nothing before then; rerun later with bookpipe enrich --failed")
            #expect(quota == HostQuota.dailyQuotaExhausted(host: setup.host, now: testEpoch, reason: quota.reason))
            #expect(quota.blockedUntil > testEpoch)
            #expect(quota.blockedUntil <= testEpoch.addingTimeInterval(86_400))

            let second = try await setup.fetchSearch()
            guard case .failed(let blocked) = second else {
                Issue.record("expected failed, got \(second)")
                return
            }
            #expect(blocked.hasPrefix("GET \(setup.services.baseURL)/search.json: \(setup.host) quota exhausted until "
                                      + HTTPDate.format(quota.blockedUntil)))
            #expect(setup.services.requestLog.count == 1, "the second fetch sent nothing")
            #expect(setup.fetcher.statistics.snapshot.requests == 1)
            #expect(setup.fetcher.statistics.snapshot.failures == 2)
        }
    }

    @Test("A 403 with reason dailyLimitExceeded is a daily quota too")
    func dailyLimitExceeded403() async throws {
        try await withSetup { setup async throws in
            setup.services.setResponse(.json(#"""
                {"error": {"errors": [{"domain": "usageLimits", "reason": "dailyLimitExceeded",
                 "message": "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time (PT)."}],
                 "code": 403, "message": "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time (PT)."}}
                """#, status: 403), forPath: "/search.json")
            guard case .failed(let reason) = try await setup.fetchSearch() else {
                Issue.record("expected failed")
                return
            }
            #expect(reason.contains("HTTP 403 (dailyLimitExceeded): the daily quota is used up"))
            #expect(setup.quotas.quota(forHost: setup.host) != nil)
        }
    }

    @Test("A per-minute rateLimitExceeded 429 is backed off, not stored as a quota")
    func perMinuteLimitIsNotAQuota() async throws {
        try await withSetup { setup async throws in
            let body = #"""
                {"error": {"code": 429, "message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'books.googleapis.com'.",
                 "errors": [{"message": "Quota exceeded", "domain": "global", "reason": "rateLimitExceeded"}],
                 "status": "RESOURCE_EXHAUSTED"}}
                """#
            setup.services.setResponse(.json(body, status: 429), forPath: "/search.json")
            let outcome = try await setup.fetchSearch()
            guard case .failed(let reason) = outcome else {
                Issue.record("expected failed, got \(outcome)")
                return
            }
            #expect(reason.contains("HTTP 429 (Too Many Requests) after 4 retries"))
            #expect(setup.arrivals == [.zero, .seconds(1), .seconds(3), .seconds(7), .seconds(15)])
            #expect(setup.quotas.all.isEmpty)
        }
    }

    @Test("A Retry-After longer than the policy waits blocks the host until then")
    func longRetryAfterBecomesQuota() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.tooManyRequests(retryAfter: "3600")])
            guard case .failed(let reason) = try await setup.fetchSearch() else {
                Issue.record("expected failed")
                return
            }
            #expect(reason.contains("HTTP 429 (Too Many Requests): the server asks to wait 3600 s"))
            let quota = try #require(setup.quotas.quota(forHost: setup.host))
            #expect(quota.blockedUntil == testEpoch.addingTimeInterval(3600))
            guard case .failed(let blocked) = try await setup.fetchSearch() else {
                Issue.record("expected failed")
                return
            }
            #expect(blocked.contains("quota exhausted until \(HTTPDate.format(quota.blockedUntil))"))
            #expect(setup.services.requestLog.count == 1)
        }
    }

    @Test("A quota that has expired no longer blocks the host")
    func expiredQuota() async throws {
        let quotas = InMemoryHostQuotaStore()
        try await withSetup(quotas: quotas) { setup async throws in
            quotas.save(HostQuota(host: setup.host, blockedUntil: testEpoch.addingTimeInterval(-1), reason: "old"))
            quotas.save(HostQuota(host: "other.example.org", blockedUntil: testEpoch.addingTimeInterval(3600), reason: "other"))
            #expect(try await setup.fetchSearch() == .value(SearchCount(numFound: 1)))
        }
    }

    @Test("Cancelling a fetch while it backs off throws CancellationError and sends nothing more")
    func cancelDuringBackoff() async throws {
        try await withSetup { setup async throws in
            setup.services.injectFaults([.tooManyRequests(retryAfter: nil)])
            let fetcher = setup.fetcher
            let url = setup.searchURL
            let task = Task {
                try await fetcher.fetch(url) { try JSONDecoder().decode(SearchCount.self, from: $0.body) }
            }
            await setup.clock.waitForSleepers(count: 1)
            task.cancel()
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(setup.services.requestLog.count == 1)
        }
    }

    @Test("Host keys name the port only when the URL does")
    func hostKeys() throws {
        typealias Fetcher = PolicyHTTPFetcher<ContinuousClock>
        #expect(try Fetcher.hostKey(of: "https://OpenLibrary.org/search.json?q=x") == "openlibrary.org")
        #expect(try Fetcher.hostKey(of: "http://127.0.0.1:8080/api/books") == "127.0.0.1:8080")
        #expect(throws: HTTPError.self) { try Fetcher.hostKey(of: "not a url") }
        #expect(Fetcher.place(of: "https://user:pw@www.googleapis.com/books/v1/volumes?q=isbn:1&key=SECRET#x")
                == "https://REDACTED@www.googleapis.com/books/v1/volumes")
    }
}
