import BookpipeCore
import BookpipeLibrary
import BookpipePostgres
import BookpipeTesting
import Foundation
import Testing

/// Several machines (issue 28, items 2, 3 and 7): three `bookpipe enrich` processes work one
/// PostgreSQL library against a loopback Open Library that enforces its rate limit; one is
/// killed with SIGKILL in the middle of a batch. Every time limit here is a hang guard.
@Suite(.serialized) struct SeveralWorkersTests {
    /// Claims of 5 records, Open Library at 10 requests/s for all workers together.
    static let pipeline = """
        name: shared-enrich
        source:
          stage: library-records
          with:
            batchSize: 5
        steps:
          - stage: enrich-records
            with:
              sources: [openlibrary]
              openlibraryRate: 10
              requestTimeout: 60s
          - stage: save-enrichment
            on-failure: stop

        """

    /// A Goodreads export of `books` with no ISBN: each row is one title search.
    static func writeExport(_ books: [FakeBook], to url: URL) throws {
        var text = "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Recommended For,Recommended By,Owned Copies,Original Purchase Date,Original Purchase Location,Condition,Condition Description,BCID\n"
        for (index, book) in books.enumerated() {
            text += "\(index + 1),\"\(book.title)\",\(book.authors.first ?? ""),,,\"=\"\"\"\"\",\"=\"\"\"\"\",0,4.00,Pub,Paperback,300,"
                + "\(book.year ?? 2000),\(book.year ?? 2000),,2020/01/01,,,read,,,,1,,,0,,,,,\n"
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// The library's cache key of a title search as the fake logged it (`LookupQuestion.cacheKey`).
    static func cacheKey(_ request: FakeBookServices.LoggedRequest) -> String? {
        guard request.path.hasSuffix("/search.json"), let title = request.parameter("title") else { return nil }
        return "title:\(TextFolding.key(title))|author:\(request.parameter("author").map(AuthorNormalizer.key) ?? "")"
    }

    /// Polls `condition` every 50 ms; fails the test after `limit` (a hang guard, not a speed check).
    static func waitUntil(_ what: String, limit: Duration = .seconds(300), _ condition: () async throws -> Bool) async throws {
        let start = ContinuousClock.now
        while try await !condition() {
            guard start.duration(to: .now) < limit else {
                Issue.record("gave up waiting for \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test("Three workers share one PostgreSQL library; one killed with SIGKILL mid-batch: every row enriched once, no answered question asked again, no rate violation",
          .timeLimit(.minutes(15)))
    func threeWorkersAndAKill() async throws {
        let books = FakeBook.generated(count: 90, seed: 28)
        // Slack for scheduling jitter between a worker's token and its request's arrival (this
        // machine is shared); it never raises the long-run rate: workers that sent 10/s each would
        // run out of it within a few requests.
        let services = FakeBookServices(books: books, configuration: .init(
            rateLimit: .init(requestsPerSecond: 10, tolerance: .milliseconds(250))))
        try services.start()
        defer { services.stop() }
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("export.csv")
        try Self.writeExport(books, to: input)
        let pipeline = directory.appendingPathComponent("shared-enrich.yaml")
        try Self.pipeline.write(to: pipeline, atomically: true, encoding: .utf8)
        let url = try PostgresLibraryCommandTests.newLibraryURL()
        let imported = try CLI.run(["import", input.path, "--no-enrich", "--library", url, "--progress", "none"], in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let library: any Library = try PostgresLibrary(url: url)
        #expect(try await library.counts().byStatus[.pending] == books.count)

        func worker(_ number: Int) throws -> (Process, Pipe, Pipe) {
            try CLI.start(["enrich", "--pipeline", pipeline.path, "--openlibrary-url", services.baseURL, "--library", url,
                           "--contact", "mailto:worker\(number)@example.org", "--progress", "none"], in: directory)
        }
        let victimAgent = "worker1@"
        // Mid-batch: after its first three requests, the server holds the first worker's requests
        // unanswered (the server decides, so a slow test thread cannot miss the moment); its
        // claimed batch still has rows to ask. The other two go on.
        services.holdRequests(fromUserAgentContaining: victimAgent, afterLettingThrough: 3)
        let victim = try worker(1)
        let survivors = [try worker(2), try worker(3)]
        func answeredCount(by agent: String) -> Int {
            services.requestLog.filter { $0.userAgent?.contains(agent) == true && Self.wasAnswered($0) }.count
        }
        func victimRequests() -> [FakeBookServices.LoggedRequest] {
            services.requestLog.filter { $0.userAgent?.contains(victimAgent) == true }
        }

        // Held, and none of its requests still being routed (each has its answer or is held).
        try await Self.waitUntil("a request of the first worker held") {
            let requests = victimRequests()
            return requests.contains { if case .fault(.stall) = $0.answer { return true } else { return false } }
                && !requests.contains { if case .status(0) = $0.answer { return true } else { return false } }
        }
        // What it was answered is in the shared cache before it dies (a worker stores each answer
        // as it comes; a kill between the answer and the store would rightly ask again).
        let answered = victimRequests().filter(Self.wasAnswered)
        let answeredKeys = answered.compactMap(Self.cacheKey)
        #expect(answeredKeys.count == answered.count)
        try await Self.waitUntil("the first worker's answers in the cache") {
            try await library.cachedAnswers(source: "openlibrary", questions: answeredKeys, notBefore: nil).count == answeredKeys.count
        }
        #expect(!(try await library.claimHolders().filter { $0.owner.processID == victim.0.processIdentifier }.isEmpty),
                "the first worker holds claims when it is killed")
        // All three at work together before the kill.
        try await Self.waitUntil("the other workers' answers") { answeredCount(by: "worker2@") >= 1 && answeredCount(by: "worker3@") >= 1 }
        kill(victim.0.processIdentifier, SIGKILL)
        victim.0.waitUntilExit()
        services.holdRequests(fromUserAgentContaining: nil)

        // Waited for without holding a thread of the task pool (other suites' tests need them).
        func finish(_ worker: (Process, Pipe, Pipe)) async throws -> String {
            let (process, out, err) = worker
            try await Self.waitUntil("a worker's end", limit: .seconds(120)) { !process.isRunning }
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(stderr)")
            return stdout + stderr
        }
        var outputs: [String] = []
        for survivor in survivors { outputs.append(try await finish(survivor)) }
        // The same command again finishes whatever the survivors left (none, when they outlived the kill).
        _ = try await finish(try worker(4))

        // Every row exactly once, enriched; no claim left.
        let counts = try await library.counts()
        #expect(counts.records == books.count)
        #expect(counts.byStatus[.enriched] == books.count, "\(counts.byStatus)")
        #expect(try await library.claimHolders().isEmpty)
        #expect(outputs.allSatisfy { Self.enrichedInRun($0) > 0 }, "both survivors enriched rows: \(outputs)")
        // No question answered was asked again: a repeat is only of a request held unanswered.
        let log = services.requestLog
        var answeredBefore = Set<String>()
        for request in log {
            guard let key = Self.cacheKey(request) else { continue }
            #expect(!answeredBefore.contains(key), "asked again after an answer: \(request)")
            if Self.wasAnswered(request) { answeredBefore.insert(key) }
        }
        #expect(answeredBefore.count == books.count, "each title searched and answered")
        // The three workers together kept Open Library's rate.
        #expect(services.rateLimitViolations == 0, "\(log.filter { if case .rateLimited = $0.answer { true } else { false } })")
    }

    /// True when the server answered the request (any status; not held, not refused by the rate limit).
    static func wasAnswered(_ request: FakeBookServices.LoggedRequest) -> Bool {
        if case .status(let code) = request.answer { return code != 0 }
        return false
    }

    /// "enriched in this run: N rows" of a summary.
    static func enrichedInRun(_ output: String) -> Int {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("enriched in this run: ") }) else { return 0 }
        return Int(line.dropFirst("enriched in this run: ".count).prefix { $0.isNumber }) ?? 0
    }
}
