import Foundation
import Testing
import BookpipePipeline
import BookpipeTesting
@testable import BookpipeHTTP

@Suite(.timeLimit(.minutes(5)))
struct HTTPClientTests {
    static let booksFixture = "openlibrary-books-api-jscmd-data-bookwyrm.json"
    static let editionFixture = "openlibrary-edition-bookwyrm.json"

    /// Starts a server, runs `body` with a client pointed at it, then shuts both down.
    func withServer<T>(configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
                       handler: @escaping @Sendable (HTTPRequestHead) -> ScriptedResponse,
                       _ body: (LoopbackHTTPServer, HTTPClient) async throws -> T) async throws -> T {
        let server = LoopbackHTTPServer(handler: handler)
        try server.start()
        let client = try HTTPClient(configuration: configuration)
        defer {
            client.close()
            server.stop()
        }
        return try await body(server, client)
    }

    @Test("A 200 response brings back the body, the headers, the final URL and the timing",
          .enabled(if: TestFixtures.sharedAvailable))
    func okResponse() async throws {
        let fixture = try TestFixtures.data(Self.booksFixture)
        var configuration = HTTPClientConfiguration()
        configuration.userAgent = HTTPClientConfiguration.userAgent(contact: "mailto:test@example.org")
        try await withServer(configuration: configuration, handler: { request in
            request.path == "/api/books"
                ? ScriptedResponse(status: 200, headers: [("Content-Type", "application/json"), ("X-Served-By", "loopback")],
                                   body: Array(fixture))
                : .notFound
        }) { server, client in
            let url = server.baseURL + "/api/books?bibkeys=ISBN:9782070427796&format=json&jscmd=data"
            let response = try await client.get(url, headers: [("Accept", "application/json")])
            #expect(response.status == 200)
            #expect(response.body == fixture)
            #expect(response.headers.contentType == "application/json")
            #expect(response.headers["x-served-by"] == "loopback")
            #expect(response.effectiveURL == url)
            #expect(response.redirectCount == 0)
            #expect(response.newConnections == 1)
            #expect(response.totalTime > .zero)
            #expect(response.retryOutcome == .success)
            let json = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            #expect(json?["ISBN:9782070427796"] != nil)

            let request = try #require(server.requests.first?.head)
            #expect(request.method == "GET")
            #expect(request.queryValue("bibkeys") == "ISBN:9782070427796")
            #expect(request.header("User-Agent") == "bookpipe/0.1.0 (+mailto:test@example.org)")
            #expect(request.header("Accept") == "application/json")
            #expect(request.header("Accept-Encoding")?.contains("gzip") == true)
        }
    }

    @Test("404, 429 and 503 are responses, with Retry-After read in both forms")
    func errorStatuses() async throws {
        let date = "Wed, 21 Oct 2065 07:28:00 GMT"
        try await withServer(handler: { request in
            switch request.path {
            case "/missing": return .notFound
            case "/busy": return .tooManyRequests(retryAfter: "10")
            case "/busy-until": return .tooManyRequests(retryAfter: date)
            default: return .serviceUnavailable()
            }
        }) { server, client in
            let missing = try await client.get(server.baseURL + "/missing")
            #expect(missing.status == 404)
            var machine = RetryStateMachine()
            #expect(machine.next(after: missing.retryOutcome, now: Date()) == .permanentNotFound)

            let busy = try await client.get(server.baseURL + "/busy")
            #expect(busy.status == 429)
            #expect(busy.headers.retryAfter == .seconds(10))
            #expect(busy.retryOutcome == .status(429, retryAfter: .seconds(10)))

            let busyUntil = try await client.get(server.baseURL + "/busy-until")
            #expect(busyUntil.headers.retryAfter == RetryAfter(headerValue: date))
            #expect(busyUntil.headers.retryAfter != nil)

            let unavailable = try await client.get(server.baseURL + "/down")
            #expect(unavailable.status == 503)
            #expect(unavailable.retryOutcome == .status(503, retryAfter: nil))
        }
    }

    @Test("Fifty sequential requests reuse one kept-alive connection")
    func keepAlive() async throws {
        try await withServer(handler: { _ in .json("{}") }) { server, client in
            var newConnections = 0
            for index in 0..<50 {
                let response = try await client.get(server.baseURL + "/search.json?q=\(index)")
                #expect(response.status == 200)
                newConnections += response.newConnections
            }
            #expect(server.requests.count == 50)
            #expect(server.acceptedConnections <= 2, "accepted \(server.acceptedConnections) connections")
            #expect(newConnections == server.acceptedConnections)
        }
    }

    @Test("No more than the configured number of requests are in flight to one host", arguments: [1, 3])
    func perHostCap(cap: Int) async throws {
        var configuration = HTTPClientConfiguration()
        configuration.maxRequestsPerHost = cap
        try await withServer(configuration: configuration,
                             handler: { _ in ScriptedResponse.json("{}").withLatency(.milliseconds(100)) }) { server, client in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask { try await client.get(server.baseURL + "/r/\(index)").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(server.maxConcurrentRequests <= cap)
            #expect(server.acceptedConnections <= cap)
        }
    }

    @Test("A server that never answers times out with a timeout error")
    func stallTimesOut() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.requestTimeout = .milliseconds(500)
        try await withServer(configuration: configuration, handler: { _ in .stall }) { server, client in
            let error = await #expect(throws: HTTPError.self) {
                _ = try await client.get(server.baseURL + "/hang?key=SECRET123")
            }
            guard case .timedOut(_, let limit, _, _)? = error else {
                Issue.record("expected timedOut, got \(String(describing: error))")
                return
            }
            #expect(limit == .milliseconds(500))
            #expect(error?.retryOutcome == .timeout)
            let message = error?.description ?? ""
            #expect(message.hasPrefix("GET \(server.baseURL)/hang?key=REDACTED timed out (limit 0.5 seconds)"))
            #expect(!message.contains("SECRET123"))
        }
    }

    @Test("A connection reset without an answer is a connection error")
    func connectionReset() async throws {
        try await withServer(handler: { _ in .resetConnection }) { server, client in
            let error = await #expect(throws: HTTPError.self) { _ = try await client.get(server.baseURL + "/reset") }
            guard case .connectionFailed? = error else {
                Issue.record("expected connectionFailed, got \(String(describing: error))")
                return
            }
            #expect(error?.retryOutcome == .connectionError)
        }
    }

    @Test("A closed port is a connection that could not be made, refused, and retried like a connection error")
    func connectionRefused() async throws {
        // Bound, never listening: no other test's server can take the port meanwhile.
        let closed = try ClosedPort()
        defer { closed.close() }
        let client = try HTTPClient()
        defer { client.close() }
        let error = await #expect(throws: HTTPError.self) { _ = try await client.get("http://127.0.0.1:\(closed.port)/") }
        guard case .couldNotConnect(_, let reason, _)? = error else {
            Issue.record("expected couldNotConnect, got \(String(describing: error))")
            return
        }
        #expect(reason == "connection refused")
        #expect(error?.retryOutcome == .connectionError)
        #expect(error?.description.hasPrefix("GET http://127.0.0.1:\(closed.port)/ failed: could not connect (connection refused). ") == true,
                "\(String(describing: error))")
    }

    @Test("A host name that does not resolve is a connection that could not be made")
    func hostNotResolved() async throws {
        let client = try HTTPClient()
        defer { client.close() }
        // .invalid never resolves (RFC 6761), with or without a network.
        let error = await #expect(throws: HTTPError.self) { _ = try await client.get("http://backend.invalid/") }
        guard case .couldNotConnect(_, let reason, _)? = error else {
            Issue.record("expected couldNotConnect, got \(String(describing: error))")
            return
        }
        #expect(reason == "host name not resolved")
    }

    @Test("A body cut off before its Content-Length is a truncated-body error")
    func truncatedBody() async throws {
        let body = #"{"ISBN:9780140328721": {"title": "Fantastic Mr Fox"}}"#
        try await withServer(handler: { _ in .truncated(body, sending: 10) }) { server, client in
            let error = await #expect(throws: HTTPError.self) { _ = try await client.get(server.baseURL + "/cut") }
            #expect(error == .truncatedBody(url: server.baseURL + "/cut", received: 10, expected: body.utf8.count, method: .get))
            #expect(error?.retryOutcome == .malformedBody)
        }
    }

    @Test("Cancelling the task aborts an in-flight request with CancellationError")
    func cancellation() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.requestTimeout = .seconds(300)   // far beyond the test's time limit
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        try await withServer(configuration: configuration, handler: { _ in
            arrived.yield()
            return .stall
        }) { server, client in
            let task = Task { try await client.get(server.baseURL + "/hang") }
            var iterator = arrivals.makeAsyncIterator()
            _ = await iterator.next()
            task.cancel()
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            // The client is still usable afterwards.
            #expect(client.configuration.requestTimeout == .seconds(300))
        }
    }

    @Test("A task cancelled while queued behind the per-host limit never reaches the server")
    func cancellationWhileQueued() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.maxRequestsPerHost = 1
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        try await withServer(configuration: configuration, handler: { request in
            arrived.yield()
            return request.path == "/first" ? .stall : .json("{}")
        }) { server, client in
            let first = Task { try await client.get(server.baseURL + "/first") }
            var iterator = arrivals.makeAsyncIterator()
            _ = await iterator.next()
            let second = Task { try await client.get(server.baseURL + "/second") }
            second.cancel()
            await #expect(throws: CancellationError.self) { try await second.value }
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.value }
            #expect(server.requests.map(\.head.path) == ["/first"])
        }
    }

    @Test("Redirects are followed: /isbn/… answers with the edition it points to",
          .enabled(if: TestFixtures.sharedAvailable))
    func followsRedirects() async throws {
        let edition = try TestFixtures.data(Self.editionFixture)
        try await withServer(handler: { request in
            switch request.path {
            case "/isbn/9780140328721.json": return .redirect(to: "/books/OL22951843M.json")
            case "/books/OL22951843M.json":
                return ScriptedResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(edition))
            default: return .notFound
            }
        }) { server, client in
            let response = try await client.get(server.baseURL + "/isbn/9780140328721.json")
            #expect(response.status == 200)
            #expect(response.body == edition)
            #expect(response.redirectCount == 1)
            #expect(response.effectiveURL == server.baseURL + "/books/OL22951843M.json")
            #expect(response.headers.location == nil, "only the final response's headers are kept")
            #expect(server.requests.map(\.head.path) == ["/isbn/9780140328721.json", "/books/OL22951843M.json"])
        }
    }

    @Test("A redirect loop fails with too-many-redirects")
    func redirectLoop() async throws {
        var configuration = HTTPClientConfiguration()
        configuration.maxRedirects = 3
        try await withServer(configuration: configuration, handler: { _ in .redirect(to: "/loop") }) { server, client in
            let error = await #expect(throws: HTTPError.self) { _ = try await client.get(server.baseURL + "/loop") }
            #expect(error == .tooManyRedirects(url: server.baseURL + "/loop", limit: 3, method: .get))
            #expect(error?.retryOutcome == nil)
        }
    }

    @Test("Requests after shutdown, and requests in flight during it, fail with shutDown")
    func shutdown() async throws {
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let server = LoopbackHTTPServer { _ in
            arrived.yield()
            return .stall
        }
        try server.start()
        defer { server.stop() }
        let client = try HTTPClient()
        let url = server.baseURL + "/hang"
        let inFlight = Task { () -> HTTPError? in
            do { _ = try await client.get(url) } catch let error as HTTPError { return error } catch { return nil }
            return nil
        }
        var iterator = arrivals.makeAsyncIterator()
        _ = await iterator.next()
        await client.shutdown()
        #expect(await inFlight.value == .shutDown(url: url, method: .get))
        await #expect(throws: HTTPError.shutDown(url: url, method: .get)) { _ = try await client.get(url) }
    }

    @Test("A failure names the request's real method and URL: POST and DELETE are not called GET")
    func failureNamesTheMethod() async throws {
        // Bound, never listening: a stopped server's port could be taken by another test's server.
        let closed = try ClosedPort()
        defer { closed.close() }
        let url = "http://127.0.0.1:\(closed.port)/v3/jobs/scans"
        let client = try HTTPClient()
        defer { client.close() }
        for method in [HTTPRequest.Method.post, .delete] {
            let error = await #expect(throws: HTTPError.self) {
                _ = try await client.send(HTTPRequest(method, url, body: method == .post ? [1, 2, 3] : nil))
            }
            guard case .couldNotConnect(let failedURL, _, let failedMethod)? = error else {
                Issue.record("expected couldNotConnect, got \(String(describing: error))")
                continue
            }
            #expect(failedURL == url)
            #expect(failedMethod == method)
            #expect(error?.description.hasPrefix("\(method.rawValue) \(url) failed: could not connect") == true)
        }
    }

    @Test("URLs that are not http(s) are rejected before anything is sent",
          arguments: ["ftp://example.org/file", "not a url", "http:///nohost"])
    func invalidURLs(url: String) async throws {
        let client = try HTTPClient()
        defer { client.close() }
        let error = await #expect(throws: HTTPError.self) { _ = try await client.get(url) }
        guard case .invalidURL? = error else {
            Issue.record("expected invalidURL, got \(String(describing: error))")
            return
        }
    }

    @Test("A malformed JSON body arrives intact: deciding it is malformed is the caller's job")
    func malformedJSON() async throws {
        try await withServer(handler: { _ in .malformedJSON }) { server, client in
            let response = try await client.get(server.baseURL + "/api/books")
            #expect(response.status == 200)
            #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: response.body) }
        }
    }

    static let redactions: [(String, String)] = [
        ("https://www.googleapis.com/books/v1/volumes?q=isbn:123&key=AIzaSECRET",
         "https://www.googleapis.com/books/v1/volumes?q=isbn:123&key=REDACTED"),
        ("https://x.org/a?KEY=s&api_key=t&keep=1#frag", "https://x.org/a?KEY=REDACTED&api_key=REDACTED&keep=1#frag"),
        ("https://user:pass@x.org/a?q=1", "https://REDACTED@x.org/a?q=1"),
        ("https://openlibrary.org/search.json?title=key", "https://openlibrary.org/search.json?title=key"),
        ("no url at all", "no url at all"),
    ]

    @Test("API keys and passwords never appear in redacted URLs", arguments: redactions)
    func redaction(url: String, expected: String) {
        #expect(URLRedaction.redact(url) == expected)
    }

    @Test("The User-Agent names bookpipe, its version and the contact")
    func userAgent() {
        #expect(HTTPClientConfiguration.userAgent() == "bookpipe/0.1.0")
        #expect(HTTPClientConfiguration.userAgent(version: "1.2.3", contact: " mailto:a@b.org ")
                == "bookpipe/1.2.3 (+mailto:a@b.org)")
        #expect(HTTPClientConfiguration.userAgent(contact: "evil\r\nX-Injected: 1") == "bookpipe/0.1.0 (+evilX-Injected: 1)")
    }
}
