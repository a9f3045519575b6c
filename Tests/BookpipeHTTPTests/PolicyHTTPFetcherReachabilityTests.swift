import Foundation
import Testing
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeHTTP

/// The fetcher gives up a server it cannot reach (the rule of ``ReachabilityStateMachine``),
/// against a closed loopback port and a real server, on a manual clock.
@Suite(.timeLimit(.minutes(5)))
struct PolicyHTTPFetcherReachabilityTests {

    /// Moves `clock` to its next deadline whenever every unfinished worker sleeps on it, until all
    /// are done or the test is cancelled (its time limit).
    static func drive(_ clock: ManualClock, workers: Int, finished: @Sendable () -> Int) async {
        while finished() < workers, !Task.isCancelled {
            if clock.sleeperCount >= workers - finished() {
                clock.advanceToNextDeadline()
            } else {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    /// Runs `fetches` one after the other on `clock`, moving it whenever the fetch sleeps.
    static func run(_ fetcher: PolicyHTTPFetcher<ManualClock>, clock: ManualClock, urls: [String])
        async throws -> [FetchOutcome<String>] {
        var outcomes: [FetchOutcome<String>] = []
        for url in urls {
            let done = Flag()
            async let outcome = {
                defer { done.set() }
                return try await fetcher.fetch(url) { String(decoding: $0.body, as: UTF8.self) }
            }()
            await Self.drive(clock, workers: 1) { done.isSet ? 1 : 0 }
            outcomes.append(try await outcome)
        }
        return outcomes
    }

    @Test("After 3 lookups in a row that could not connect, the host is given up: the 4th fails at once, sends nothing, and says what to check")
    func givesUpAfterThreeLookups() async throws {
        let closed = try ClosedPort()
        defer { closed.close() }
        let host = "127.0.0.1:\(closed.port)"
        let clock = ManualClock()
        let client = try HTTPClient()
        defer { client.close() }
        // 1 request a second: each lookup's first attempt waits for its token; its retries after
        // "connection refused" do not (nothing reached the server).
        let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: RateLimit(requestsPerSecond: 1, burst: 1))
        let urls = (1...5).map { "http://\(host)/search.json?title=Book+\($0)" }
        let outcomes = try await Self.run(fetcher, clock: clock, urls: urls)

        let refused = FetchOutcome<String>.failed(reason: "GET http://\(host)/search.json: connection refused: could not "
            + "connect or lost the connection on attempt 3 of 3; check the network and the source's base URL, then retry "
            + "(bookpipe enrich --failed)")
        #expect(Array(outcomes.prefix(3)) == [refused, refused, refused])
        let notSent = FetchOutcome<String>.failed(reason: "GET http://\(host)/search.json: not sent: \(host) could not be "
            + "reached (connection refused) for 3 lookups in a row, so it is not asked again in this run; check the network "
            + "and the source's base URL, then rerun with bookpipe enrich --failed")
        #expect(Array(outcomes.suffix(2)) == [notSent, notSent])
        #expect(fetcher.unreachableHost == UnreachableHost(host: host, unreachable: Unreachable(inARow: 3, cause: "connection refused")))
        let statistics = fetcher.statistics.snapshot
        #expect(statistics.requests == 9, "3 attempts for each of the first 3 lookups, none after")
        #expect(statistics.failures == 5)
        // Tokens at 0, 1 and 2 s; the given-up host waits for none.
        #expect(clock.now.offset == .seconds(2))
    }

    @Test("Lookups waiting for a token when the host is given up stop waiting: they fail at the next token time, unsent")
    func waitingLookupsStopWaiting() async throws {
        let closed = try ClosedPort()
        defer { closed.close() }
        let host = "127.0.0.1:\(closed.port)"
        let clock = ManualClock()
        let client = try HTTPClient()
        defer { client.close() }
        let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: RateLimit(requestsPerSecond: 1, burst: 1))
        let finished = Counter()
        async let outcomes = withThrowingTaskGroup(of: FetchOutcome<String>.self) { group in
            for index in 1...8 {
                group.addTask {
                    defer { finished.increment() }
                    return try await fetcher.fetch("http://\(host)/search.json?title=Book+\(index)") { _ in "" }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        await Self.drive(clock, workers: 8) { finished.value }
        let all = try await outcomes
        #expect(all.count == 8)
        #expect(all.filter { if case .failed(let reason) = $0 { reason.contains(": not sent: ") } else { false } }.count == 5)
        #expect(fetcher.statistics.snapshot.requests == 9)
        // Tokens at 0, 1 and 2 s for the three lookups sent; the five waiting leave at 3 s, not at 3…7 s.
        #expect(clock.now.offset <= .seconds(3))
    }

    @Test("A lookup the server answered between lookups that could not connect starts the count again: no stop")
    func answeredLookupResetsTheCount() async throws {
        let answering = LoopbackHTTPServer { _ in .json("{}") }
        let port = try answering.start()
        defer { answering.stop() }
        let closedPort = try ClosedPort()
        defer { closedPort.close() }
        let closed = closedPort.port
        let clock = ManualClock()
        let client = try HTTPClient()
        defer { client.close() }
        let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: RateLimit(requestsPerSecond: 1_000, burst: 1_000))
        let refused = "http://127.0.0.1:\(closed)/search.json"
        let answered = "http://127.0.0.1:\(port)/search.json"
        let outcomes = try await Self.run(fetcher, clock: clock,
                                          urls: [refused, refused, answered, refused, refused, answered, refused, refused])
        #expect(outcomes.map { if case .value = $0 { "v" } else { "x" } }.joined() == "xxvxxvxx")
        #expect(fetcher.unreachableHost == nil)
        #expect(fetcher.reachability.unreachableInARow == 2)
    }

    @Test("Answers that are failures (503) reach the server: they never give it up")
    func answersNeverGiveUp() async throws {
        let server = LoopbackHTTPServer { _ in .serviceUnavailable() }
        try server.start()
        defer { server.stop() }
        let clock = ManualClock()
        let client = try HTTPClient()
        defer { client.close() }
        let policy = RetryPolicy(unavailable: .init(requeueDelay: .seconds(1), maxRequeues: 0))
        let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: RateLimit(requestsPerSecond: 1_000, burst: 1_000),
                                        retryPolicy: policy)
        let outcomes = try await Self.run(fetcher, clock: clock, urls: Array(repeating: server.baseURL + "/api/books", count: 5))
        #expect(outcomes.allSatisfy { if case .failed(let reason) = $0 { reason.contains("503") } else { false } })
        #expect(fetcher.unreachableHost == nil)
        #expect(server.requests.count == 5)
    }
}
