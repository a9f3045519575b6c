import BookpipeCore
import BookpipeImaging
import BookpipeLibrary
import BookpipePipeline
import BookpipeReview
import BookpipeReviewServer
import BookpipeStages
import BookpipeStore
import Foundation
import Testing

/// A library with a scanned shelf in its review queue (a real JPEG, a real SQLite file), one
/// detection with a hostile title, and a running server on 127.0.0.1 port 0.
struct ServerFixture {
    static let hostileTitle = "<script>window.pwned=1</script>\"Quoted\" 'single' \u{202E}desrever"
    let folder: String
    var library: String { folder + "/library.sqlite" }
    static let access = ReviewAccess(token: String(repeating: "ab", count: 32), csrf: String(repeating: "cd", count: 32))
    static var cookie: [String: String] { ["Cookie": "\(ReviewAccess.cookieName)=\(access.token)"] }
    static var posting: [String: String] { cookie.merging(["X-CSRF-Token": access.csrf]) { $1 } }

    init() async throws {
        folder = NSTemporaryDirectory() + "bookpipe-review-serve-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var pixels = [UInt8](repeating: 0, count: 400 * 300 * 3)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index / 3 % 400) }
        let jpeg = try JPEGEncoder(quality: 90).encode(try PixelBuffer(width: 400, height: 300, bytes: pixels))
        try Data(jpeg).write(to: URL(fileURLWithPath: folder + "/shelf.jpg"))
        let books: [[String: Any]] = [
            ["title": Self.hostileTitle, "author": "Eve <b>Bold</b>", "confidence": 0.2,
             "boundingBox": ["x": 0.1, "y": 0.1, "width": 0.1, "height": 0.8]],
            ["title": "Dune", "author": "Frank Herbert", "confidence": 0.3,
             "boundingBox": ["x": 0.5, "y": 0.1, "width": 0.1, "height": 0.8]],
            ["title": "Emma", "author": "Jane Austen", "confidence": 0.4],
        ]
        let scan: [String: Any] = ["format": "bookshelf-scan", "version": 1,
                                   "scans": [["scanId": "one", "originalImagePath": "shelf.jpg", "books": books]]]
        try JSONSerialization.data(withJSONObject: scan).write(to: URL(fileURLWithPath: folder + "/scan.json"))
        let routing = try ReviewRouting(threshold: 0.60)
        let scanPath = folder + "/scan.json"
        let pipeline = Pipeline("scan-import") {
            ReadScans(files: [scanPath])
            RouteForReview(routing: routing)
            CopyScanPhotos()
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
        }
        let resources = StageResources().adding(try LibraryStore(path: library))
        _ = try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: pipeline.name, resources: resources))
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }

    /// Runs `body` against a live server on this library; stops the server after.
    func withServer(_ body: @Sendable (LoopbackClient, any Library) async throws -> Void) async throws {
        let store = try LibraryStore(path: library)
        let server = ReviewServer(queue: ReviewQueue(store: store), access: Self.access)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do { try await server.application(port: 0) { continuation.yield($0) }.run() } catch is CancellationError {}
            }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(LoopbackClient(port: port), store)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }
}

@Suite(.timeLimit(.minutes(5)), .serialized)
struct ReviewServerTests {
    /// The queue as the page lists it, each item with the version `/api/select` gives it now.
    static func queued(_ client: LoopbackClient) async throws -> [[String: Any]] {
        let items = try #require(try await client.send("GET", "/api/queue", headers: ServerFixture.cookie).json()["items"] as? [[String: Any]])
        #expect(items.allSatisfy { $0["version"] == nil }, "the list is read without decoding records")
        let selection = try await client.send("GET", "/api/select", headers: ServerFixture.cookie).json()
        var versions: [String: String] = [:]
        for item in try #require(selection["items"] as? [[String: String]]) { versions[item["id"] ?? ""] = item["version"] }
        return items.map { item in
            var item = item
            item["version"] = versions[item["id"] as? String ?? ""]
            return item
        }
    }

    @Test("Without the token every page and action is 403; the token once in the address becomes an HttpOnly SameSite=Strict cookie")
    func tokenGuardsEverything() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, store in
            for path in ["/", "/app.js", "/api/queue", "/api/item?id=x", "/crop?id=x", "/api/search?q=dune"] {
                #expect(try await client.send("GET", path).status == 403, "\(path)")
                #expect(try await client.send("GET", path, headers: ["Cookie": "\(ReviewAccess.cookieName)=\(String(repeating: "ab", count: 31))"]).status == 403)
            }
            let post = try await client.send("POST", "/api/decide", headers: ["X-CSRF-Token": ServerFixture.access.csrf],
                                       body: #"{"action":"verify","items":[]}"#)
            #expect(post.status == 403)
            #expect(try await client.send("GET", "/?token=wrong").status == 403)
            let entry = try await client.send("GET", "/?token=\(ServerFixture.access.token)")
            #expect(entry.status == 303)
            #expect(entry.headers["location"] == "/")
            #expect(entry.headers["set-cookie"] == "\(ReviewAccess.cookieName)=\(ServerFixture.access.token); Path=/; HttpOnly; SameSite=Strict")
            let page = try await client.send("GET", "/", headers: ServerFixture.cookie)
            #expect(page.status == 200)
            #expect(page.headers["content-security-policy"]?.hasPrefix("default-src 'self'") == true)
            #expect(page.headers["x-content-type-options"] == "nosniff")
            #expect(try await store.reviewActions().isEmpty)
        }
    }

    @Test("Data changes are POST only, with the CSRF token and from the same origin; a refused request writes nothing")
    func postWithCSRFOnly() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, store in
            let queue = try await client.send("GET", "/api/queue", headers: ServerFixture.cookie).json()
            let items = try await Self.queued(client)
            #expect(items.count == 3)
            #expect((queue["counts"] as? [String: Int]) == ["scan": 3, "match": 0])
            let dune = try #require(items.first { $0["title"] as? String == "Dune" })
            let body = #"{"action":"verify","items":[{"id":"\#(dune["id"]!)","version":"\#(dune["version"]!)"}]}"#
            let get = try await client.send("GET", "/api/decide", headers: ServerFixture.posting)
            #expect(get.status == 405)
            #expect(get.headers["allow"] == "POST")
            #expect(try await client.send("POST", "/api/decide", headers: ServerFixture.cookie, body: body).status == 403)
            #expect(try await client.send("POST", "/api/decide", headers: ServerFixture.cookie.merging(["X-CSRF-Token": "cd"]) { $1 },
                                    body: body).status == 403)
            let foreign = ServerFixture.posting.merging(["Origin": "http://evil.example"]) { $1 }
            #expect(try await client.send("POST", "/api/decide", headers: foreign, body: body).status == 403)
            #expect(try await store.reviewActions().isEmpty)
            let done = try await client.send("POST", "/api/decide", headers: ServerFixture.posting, body: body)
            #expect(done.status == 200)
            #expect(try await store.reviewActions().map(\.action) == ["verify"])
            #expect(try await store.reviewQueueCount(kind: .scan) == 2)
        }
    }

    @Test("A title holding <script>, quotes and U+202E reaches the page only as JSON data; the script puts data in as text")
    func escaping() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, _ in
            let page = try await client.send("GET", "/", headers: ServerFixture.cookie).text
            #expect(!page.contains("<script>window") && !page.contains("pwned") && !page.contains("\u{202E}"))
            #expect(page.contains(#"<script src="/app.js" defer></script>"#))
            let queue = try await client.send("GET", "/api/queue", headers: ServerFixture.cookie)
            #expect(queue.headers["content-type"] == "application/json; charset=utf-8")
            let items = try #require(try queue.json()["items"] as? [[String: Any]])
            #expect(items.contains { $0["title"] as? String == ServerFixture.hostileTitle })
            let script = try await client.send("GET", "/app.js", headers: ServerFixture.cookie).text
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("] {
                #expect(!script.contains(sink), "app.js uses \(sink)")
            }
            #expect(script.contains("textContent"))
        }
    }

    @Test("Two tabs decide one item with the version they saw: one decision stands, the other gets 409 and how the item is now")
    func concurrentDecisions() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, store in
            let items = try await Self.queued(client)
            let emma = try #require(items.first { $0["title"] as? String == "Emma" })
            let versioned = #""items":[{"id":"\#(emma["id"]!)","version":"\#(emma["version"]!)"}]"#
            let bodies = [#"{"action":"verify",\#(versioned)}"#, #"{"action":"edit","title":"Emma.",\#(versioned)}"#]
            let answers = try await withThrowingTaskGroup(of: LoopbackClient.Answer.self) { group in
                for body in bodies { group.addTask { try await client.send("POST", "/api/decide", headers: ServerFixture.posting, body: body) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.status).sorted() == [200, 409])
            let conflict = try #require(answers.first { $0.status == 409 })
            let current = try #require(try conflict.json()["current"] as? [String: Any])
            #expect(current["kind"] as? String == "none")
            #expect((try conflict.json()["error"] as? String)?.contains("changed since you read it") == true)
            #expect(try await store.reviewActions().count == 1)
        }
    }

    @Test("A bulk selection filters by kind, confidence, best score and photo; its decision is one transaction: one stale version and none is decided")
    func bulkAllOrNothing() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, store in
            let items = try await Self.queued(client)
            func count(_ query: String) async throws -> Int? {
                try await client.send("GET", "/api/select?\(query)", headers: ServerFixture.cookie).json()["count"] as? Int
            }
            #expect(try await count("confidenceBelow=0.25") == 1)
            #expect(try await count("kind=scan&confidenceBelow=0.35&photo=with") == 2)
            #expect(try await count("scoreBelow=1") == 3)
            #expect(try await count("kind=match") == 0)
            #expect(try await client.send("GET", "/api/select?kind=books", headers: ServerFixture.cookie).status == 400)
            #expect(try await client.send("GET", "/api/select?confidenceBelow=nan", headers: ServerFixture.cookie).status == 400)
            let listed = items.map { #"{"id":"\#($0["id"]!)","version":"\#($0["version"]!)"}"# }
            let stale = #"{"id":"\#(items[0]["id"]!)","version":"0000000000000000"}"#
            let refused = try await client.send("POST", "/api/decide", headers: ServerFixture.posting,
                                                body: #"{"action":"none","items":[\#(([stale] + listed.dropFirst()).joined(separator: ","))]}"#)
            #expect(refused.status == 409)
            #expect(try await store.reviewActions().isEmpty)
            #expect(try await store.reviewQueueCount(kind: .scan) == 3)
            let done = try await client.send("POST", "/api/decide", headers: ServerFixture.posting,
                                             body: #"{"action":"none","items":[\#(listed.joined(separator: ","))]}"#)
            #expect(done.status == 200)
            #expect((try done.json()["actions"] as? [Int])?.count == 3)
            #expect(try await store.reviewQueueCount(kind: nil) == 0)
        }
    }

    @Test("Undo puts the record back exactly (it is queued again with its first version); a second undo of it is refused")
    func undoRestores() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, store in
            let items = try await Self.queued(client)
            let dune = try #require(items.first { $0["title"] as? String == "Dune" })
            let id = try #require(dune["id"] as? String)
            let before = try await store.records(ids: [id])
            let edit = try await client.send("POST", "/api/decide", headers: ServerFixture.posting, body: """
                {"action":"edit","title":"Dune Messiah","authors":["Frank Herbert"],"items":[{"id":"\(id)","version":"\(dune["version"]!)"}]}
                """)
            #expect(edit.status == 200)
            let actions = try #require(try edit.json()["actions"] as? [Int])
            #expect(try await store.records(ids: [id]).first?.title == "Dune Messiah")
            let undo = try await client.send("POST", "/api/undo", headers: ServerFixture.posting, body: #"{"actions":\#(actions)}"#)
            #expect(undo.status == 200)
            #expect(try await store.records(ids: [id]) == before)
            #expect(try await store.recordEdits(id: id).isEmpty)
            let again = try #require(try undo.json()["items"] as? [[String: Any]]).first
            #expect(again?["version"] as? String == dune["version"] as? String)
            #expect(try await client.send("POST", "/api/undo", headers: ServerFixture.posting, body: #"{"actions":\#(actions)}"#).status == 409)
        }
    }

    @Test("The crop is a JPEG from the managed photo copy; an item's JSON carries candidates, provenance and the crop's address")
    func itemAndCrop() async throws {
        let fixture = try await ServerFixture()
        defer { fixture.remove() }
        try await fixture.withServer { client, _ in
            let items = try await Self.queued(client)
            let dune = try #require(items.first { $0["title"] as? String == "Dune" })
            let id = try #require(dune["id"] as? String)
            let item = try await client.send("GET", "/api/item?id=\(id)", headers: ServerFixture.cookie).json()
            #expect(item["crop"] as? String == "/crop?id=\(id)")
            #expect((item["provenance"] as? [String: String])?["title"] == "file")
            let crop = try await client.send("GET", "/crop?id=\(id)", headers: ServerFixture.cookie)
            #expect(crop.status == 200)
            #expect(crop.headers["content-type"] == "image/jpeg")
            #expect(Array(crop.body.prefix(2)) == [0xFF, 0xD8])
            #expect(try await client.send("GET", "/api/item?id=nope:1", headers: ServerFixture.cookie).status == 404)
        }
    }
}
