import Foundation
import Testing
import BookpipeTesting
@testable import BookpipeHTTP

/// The test server itself: what it records and how it closes.
@Suite(.timeLimit(.minutes(5)))
struct LoopbackHTTPServerTests {
    @Test("Requests are recorded in order with method, path, query, headers and connection")
    func recordsRequests() async throws {
        let server = LoopbackHTTPServer { request in .json(#"{"path": "\#(request.path)"}"#) }
        let port = try server.start()
        let client = try HTTPClient()
        defer {
            client.close()
            server.stop()
        }
        #expect(server.baseURL == "http://127.0.0.1:\(port)")
        _ = try await client.get(server.baseURL + "/search.json?title=The%20Hobbit&fields=key,title")
        _ = try await client.get(server.baseURL + "/api/books?bibkeys=ISBN:1,ISBN:2")
        let requests = server.requests
        #expect(requests.map(\.head.sequenceNumber) == [1, 2])
        #expect(requests.map(\.head.path) == ["/search.json", "/api/books"])
        #expect(requests[0].head.queryValue("title") == "The Hobbit")
        #expect(requests[0].head.queryValue("fields") == "key,title")
        #expect(requests[1].head.target == "/api/books?bibkeys=ISBN:1,ISBN:2")
        #expect(requests.allSatisfy { $0.head.connectionID == 1 })
        #expect(requests[0].arrival <= requests[1].arrival)
        server.resetRecords()
        #expect(server.requests.isEmpty)
    }

    @Test("Stopping the server releases a stalled connection: the request in flight fails")
    func stopReleasesStalls() async throws {
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let server = LoopbackHTTPServer { _ in
            arrived.yield()
            return .stall
        }
        try server.start()
        let client = try HTTPClient(configuration: .init(requestTimeout: .seconds(300)))
        defer { client.close() }
        let url = server.baseURL + "/hang"
        let request = Task { try await client.get(url) }
        var iterator = arrivals.makeAsyncIterator()
        _ = await iterator.next()
        server.stop()
        #expect(server.openConnectionCount == 0)
        await #expect(throws: HTTPError.self) { _ = try await request.value }
        // No request after the stop: another test's server may already have the freed port.
    }

    @Test("A response that asks to close the connection makes the client open a new one")
    func closesWhenAsked() async throws {
        let server = LoopbackHTTPServer { _ in ScriptedResponse(body: Array("ok".utf8), closesConnection: true) }
        try server.start()
        let client = try HTTPClient()
        defer {
            client.close()
            server.stop()
        }
        for _ in 0..<3 { #expect(try await client.get(server.baseURL + "/").bodyText == "ok") }
        #expect(server.acceptedConnections == 3)
    }

    @Test("Fixtures are found from the source tree", .enabled(if: TestFixtures.sharedAvailable))
    func findsFixtures() throws {
        let data = try TestFixtures.data("googlebooks-volumes-search-jellyfin.json")
        #expect(data.count > 1000)
    }
}
