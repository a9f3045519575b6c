import BookpipeCore
import BookpipeEnrichment
import BookpipePipeline
import BookpipeStore
import BookpipeTesting
import Foundation
import Synchronization
import Testing
@testable import BookpipeStages

/// The overnight re-enrichment through the engine: `library-records` → `enrich-records` →
/// `save-enrichment` on real SQLite files against the fake services on loopback, deadlines on a
/// manual clock (no real sleeping).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ReenrichmentTests {
    static let pipelineFile = """
        name: test-reenrich
        source:
          stage: library-records
          with:
            batchSize: 20
        steps:
          - stage: enrich-records
            with:
              sources: [openlibrary, googlebooks]
              openlibraryRate: 1000
              googlebooksRate: 1000
              rateLimitedBackoff: 10ms
              rateLimitedRetries: 1
              maxRetryAfter: 10s
              unavailableDelay: 10ms
              unavailableRequeues: 1
              transportAttempts: 2
              requestTimeout: 2s
          - stage: save-enrichment
            on-failure: stop

        """

    /// Runs one action after each batch enriched, in order (moving a clock past the deadline, or
    /// back); nothing once they are used up.
    /// Runs the k-th action once k batches of 20 rows have left the chain (progress now moves
    /// row by row, from 0 at the start).
    final class AfterBatches: ProgressSink {
        let actions: Mutex<(pending: [@Sendable () -> Void], fired: Int)>
        init(_ actions: [@Sendable () -> Void]) { self.actions = Mutex((actions, 0)) }
        func emit(_ event: ProgressEvent) {
            guard case .enrichmentAdvanced(let progress) = event else { return }
            actions.withLock { state -> (@Sendable () -> Void)? in
                guard !state.pending.isEmpty, progress.rowsDone >= (state.fired + 1) * 20 else { return nil }
                state.fired += 1
                return state.pending.removeFirst()
            }?()
        }
    }

    /// Collects messages (the plan, the warnings).
    final class Messages: ProgressSink {
        let lines = Mutex<[String]>([])
        func emit(_ event: ProgressEvent) {
            if case .message(let text) = event { lines.withLock { $0.append(text) } }
        }
        var all: [String] { lines.withLock { $0 } }
    }

    /// The ids a run with `selection` would take, in order (claimed with no lease: nothing is held).
    static func queue(_ store: LibraryStore, _ selection: EnrichmentSelection) async throws -> [String] {
        try await store.claimRecords(selection, owner: .thisProcess(command: "test"), lease: .zero, limit: nil).ids
    }

    static func library(_ books: [FakeBook]) throws -> LibraryStore {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reenrich-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        let records = books.enumerated().map { index, book in
            var record = BookRecord(origin: RecordOrigin(file: "books.csv", fileHash: "feed", row: index + 1,
                                                         line: index + 2, format: "goodreads", rawFields: [book.title]),
                                    title: book.title, authors: book.authors, rawISBNs: book.isbn13s, year: book.year)
            Normalizer.normalize(&record, currentYear: 2026)
            return record
        }
        try store.insert(records)
        return store
    }

    @discardableResult
    static func run(_ store: LibraryStore, services: FakeBookServices, settings: EnrichmentSettings,
                    progress: any ProgressSink = NullProgressSink(),
                    pipeline text: String = pipelineFile) async throws -> PipelineRunner.Result {
        let pipeline = try StandardStages.registry.build(try PipelineFile.parse(text, fileName: "test.yaml"),
                                                         arguments: [:])
        let resources = StageResources().adding(store).adding(settings)
        let result = await PipelineRunner().execute(pipeline, context: StageContext(
            pipelineName: pipeline.name, progress: progress, resources: resources))
        if let error = result.error { throw error }
        return result
    }

    /// Open Library at 127.0.0.1 and Google Books at localhost: two hosts, as in reality (a quota
    /// stored for one must not block the other).
    static func settings(_ services: FakeBookServices, deadline: EnrichmentDeadline? = nil,
                         staleAfter: Duration? = nil, statuses: [RecordStatus] = [.pending]) -> EnrichmentSettings {
        EnrichmentSettings(openLibraryURL: services.baseURL,
                           googleBooksURL: services.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"),
                           contact: "mailto:test@example.org", statuses: statuses, staleAfter: staleAfter,
                           deadline: deadline)
    }

    @Test("A run that asks only the local catalogue reads the library in batches of catalogueBatchSize; one that asks hosts, of batchSize")
    func catalogueRunsTakeLargerBatches() async throws {
        let store = try Self.library(FakeBook.generated(count: 23))
        let source = LibraryRecords(batchSize: 4, catalogueBatchSize: 10)
        func batchSizes(sources: [String]?) async throws -> [Int] {
            let sizes = Mutex<[Int]>([])
            let context = StageContext(pipelineName: "test", progress: NullProgressSink(), resources: StageResources()
                .adding(store).adding(EnrichmentSettings(sources: sources)))
            try await source.produce(into: BatchEmitter { batch in sizes.withLock { $0.append(batch.count) } }, in: context)
            return sizes.withLock { $0 }
        }
        #expect(try await batchSizes(sources: ["catalog"]) == [10, 10, 3])
        #expect(try await batchSizes(sources: nil) == [4, 4, 4, 4, 4, 3])
        #expect(try await batchSizes(sources: ["catalog", "openlibrary"]) == [4, 4, 4, 4, 4, 3])
    }

    @Test("At the deadline the run stops cleanly: the batch in flight is saved, the rest is left and the same run continues")
    func deadlineStopsAndResumes() async throws {
        let books = FakeBook.generated(count: 60)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        let clock = ManualClock()
        let first = Self.settings(services, deadline: EnrichmentDeadline(clock: clock, after: .seconds(3600)))
        let result = try await Self.run(store, services: services, settings: first,
                                        progress: AfterBatches([{ clock.advance(by: .seconds(7200)) }]))
        #expect(result.error == nil)
        #expect(try store.counts().byStatus == [.enriched: 20, .pending: 40])
        #expect(EnrichmentSummary(report: result.report).stoppedAtDeadline)
        #expect(EnrichmentSummary(report: result.report).rowsLeftAtDeadline == 40)
        #expect(EnrichmentSummary(report: result.report).changeLines.contains { $0.hasPrefix("stopped at the deadline: 40 rows left; run the same command again") })
        let asked = services.requestLog.count
        // The same run again, without a deadline, asks only about the 40 rows left.
        let second = Self.settings(services)
        let secondSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: second).report)
        #expect(try store.counts().byStatus == [.enriched: 60])
        #expect(secondSummary.rowsDone == 40)
        #expect(!secondSummary.stoppedAtDeadline)
        let secondRequests = services.requestLog.dropFirst(asked)
        #expect(secondRequests.count == 2, "40 ISBNs in two Books API requests: \(secondRequests.map(\.description))")
        // Every match is a work, with the edition beside it.
        let stored = try store.records(ids: (1...60).map { "feed:\($0)" })
        #expect(stored.allSatisfy { $0.enrichment?.match?.workKey.hasPrefix("/works/") == true })
        #expect(zip(stored, books).allSatisfy { $0.enrichment?.match?.editionKey == $1.editionKey })
    }

    /// A library of `books` stored without ISBNs: each row is one title search (Open Library
    /// knows them all, so Google Books is never asked).
    static func titleOnlyLibrary(_ books: [FakeBook]) throws -> LibraryStore {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reenrich-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        let records = books.enumerated().map { index, book in
            var record = BookRecord(origin: RecordOrigin(file: "books.csv", fileHash: "feed", row: index + 1,
                                                         line: index + 2, format: "goodreads", rawFields: [book.title]),
                                    title: book.title, authors: book.authors, rawISBNs: [], year: book.year)
            Normalizer.normalize(&record, currentYear: 2026)
            return record
        }
        try store.insert(records)
        return store
    }

    @Test("The deadline passing while batches are asking stops every source at once: later rows are not asked and stay as stored, answers received are saved, the rows left are counted, and the next run asks exactly them")
    func deadlineStopsBatchesInFlight() async throws {
        let books = FakeBook.generated(count: 60)
        let store = try Self.titleOnlyLibrary(books)
        let services = FakeBookServices(books: books, configuration: .init(latency: .milliseconds(15)))
        try services.start()
        defer { services.stop() }
        let clock = ManualClock()
        let first = Self.settings(services, deadline: EnrichmentDeadline(clock: clock, after: .seconds(3600)))
        // Every batch is asking by the time the fifth search arrives; then the deadline passes.
        let passed = Task {
            while services.requestLog.count < 5 { try await Task.sleep(for: .milliseconds(1)) }
            let atDeadline = services.requestLog.count
            clock.advance(by: .seconds(7200))
            return atDeadline
        }
        let result = try await Self.run(store, services: services, settings: first)
        let atDeadline = try await passed.value
        #expect(result.error == nil)
        let asked = services.requestLog
        let counts = try store.counts().byStatus
        let enriched = counts[.enriched] ?? 0
        let pending = counts[.pending] ?? 0
        #expect(enriched + pending == 60, "nothing failed or not found: \(counts)")
        #expect(pending > 0 && EnrichmentSummary(report: result.report).stoppedAtDeadline)
        // Only requests already sent (at most two in flight to the host) were answered after it.
        #expect(asked.count - atDeadline <= 2, "\(asked.count) requests, \(atDeadline) when the deadline passed")
        // Every answer received was saved: one search per row, and each row asked is enriched.
        #expect(enriched == asked.count)
        #expect(EnrichmentSummary(report: result.report).rowsLeftAtDeadline == pending)
        #expect(EnrichmentSummary(report: result.report).rowsDone == enriched)
        #expect(EnrichmentSummary(report: result.report).changeLines.contains {
            $0.hasPrefix("stopped at the deadline: \(pending) rows left; run the same command again")
        })
        let stored = try store.records(ids: (1...60).map { "feed:\($0)" })
        #expect(stored.filter { $0.status == .pending }.allSatisfy { $0.enrichment == nil && $0.findings.isEmpty })
        // The same command again asks exactly the rows left, each once: none asked before.
        services.resetLog()
        let second = Self.settings(services)
        let secondSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: second).report)
        #expect(try store.counts().byStatus == [.enriched: 60])
        #expect(secondSummary.rowsDone == pending)
        let titlesBefore = Set(asked.compactMap { $0.parameter("title") })
        let titlesAfter = services.requestLog.compactMap { $0.parameter("title") }
        #expect(titlesAfter.count == pending && Set(titlesAfter).count == pending)
        #expect(titlesBefore.isDisjoint(with: titlesAfter))
    }

    @Test("A retry wait that would end after the deadline is abandoned at once: the row stays as stored (not failed) and is left for the next run")
    func retryWaitPastTheDeadlineIsAbandoned() async throws {
        let books = FakeBook.generated(count: 1)
        let store = try Self.titleOnlyLibrary(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        services.injectFaults([.serviceUnavailable(retryAfter: nil)], pathPrefix: "/search")
        let clock = ManualClock()
        // Ten seconds left; a 503 asks for a 30-second requeue.
        let settings = Self.settings(services, deadline: EnrichmentDeadline(clock: clock, after: .seconds(10)))
        let started = ContinuousClock.now
        let result = try await Self.run(store, services: services, settings: settings,
                                        pipeline: Self.pipelineFile.replacingOccurrences(of: "unavailableDelay: 10ms",
                                                                                         with: "unavailableDelay: 30s"))
        #expect(result.error == nil)
        #expect(started.duration(to: .now) < .seconds(10), "the 30-second wait was not slept")
        #expect(services.requestLog.count == 1)
        #expect(try store.counts().byStatus == [.pending: 1])
        #expect(EnrichmentSummary(report: result.report).stoppedAtDeadline
                && EnrichmentSummary(report: result.report).rowsLeftAtDeadline == 1)
        #expect(EnrichmentSummary(report: result.report).outcomes.isEmpty)
    }

    @Test("The overnight job (--stale or a deadline, no --failed) retries failed lookups whose retry time has come, first; one behind a quota not yet ended is left out")
    func overnightRetriesDueFailures() async throws {
        let books = FakeBook.generated(count: 4)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        // 1: failed (503), due at once; 2: failed behind a Google quota that ends tomorrow; 3, 4: pending.
        var due = try #require(try store.records(ids: ["feed:1"]).first)
        due.enrichment = EnrichmentResult(status: .failed, failure: "openlibrary: 503")
        _ = try await store.saveEnrichment([due], runID: nil, at: Date().addingTimeInterval(-86_400))
        try await store.saveHostQuota(StoredHostQuota(host: "www.googleapis.com", blockedUntil: Date().addingTimeInterval(86_400),
                                                      reason: "daily quota"))
        var blocked = try #require(try store.records(ids: ["feed:2"]).first)
        blocked.enrichment = EnrichmentResult(status: .failed, failure: "googlebooks: quota exhausted")
        _ = try await store.saveEnrichment([blocked], runID: nil)
        for settings in [Self.settings(services, staleAfter: .seconds(30 * 86_400)),
                         Self.settings(services, deadline: EnrichmentDeadline(clock: ManualClock(), after: .seconds(3600)))] {
            #expect(try await Self.queue(store, settings.selection()) == ["feed:1", "feed:3", "feed:4"])
        }
        let settings = Self.settings(services, deadline: EnrichmentDeadline(clock: ManualClock(), after: .seconds(3600)))
        let settingsSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: settings).report)
        #expect(settingsSummary.rowsDone == 3)
        let stored = try store.records(ids: ["feed:1", "feed:2", "feed:3", "feed:4"]).map(\.status)
        #expect(stored == [.enriched, .failed, .enriched, .enriched])
        // Plain enrich (no overnight options) still asks only pending records.
        #expect(try await Self.queue(store, Self.settings(services).selection()).isEmpty)
    }

    @Test("The plan says how many rows fit before the deadline at these rates")
    func planSaysWhatFits() async throws {
        let run = EnrichmentRun()
        run.register(budget: .init(source: "openlibrary", requestsPerSecond: 3, isbnBatchSize: 25))
        run.register(budget: .init(source: "googlebooks", requestsPerSecond: 1, isbnBatchSize: 1))
        run.expect(rows: 48_000)
        let deadline = EnrichmentDeadline(clock: ManualClock(), after: .seconds(3600))
        let text = try #require(run.fits(deadline: deadline))
        // No history: the chain (Google sees the 10 % Open Library leaves). Open Library: 1,344 ISBN
        // batches + 21,120 searches, 2 % retried = 22,913 requests at 3/s = 7,638 s = 2 h 7 min.
        #expect(text.hasPrefix("48,000 rows need about 2 h 7 min at these rates"), "\(text)")
        #expect(text.contains("the deadline allows 1 h 0 min: about 22,624 in this run"), "\(text)")
        // With the library's history: 90 % of rows reach Open Library (the catalogue answers the rest),
        // 8 % reach Google: 20,622 requests at 3/s = 6,874 s = 1 h 54 min.
        run.setReach(["openlibrary": 0.9, "googlebooks": 0.08])
        let expected = try #require(run.fits(deadline: deadline))
        #expect(expected.hasPrefix("48,000 rows need about 1 h 54 min at these rates"), "\(expected)")
        #expect(expected.contains("about 25,137 in this run"), "\(expected)")
        #expect(run.plan?.contains("googlebooks: about 4,465 requests for 3,840 rows (8 % in this library's earlier lookups)") == true,
                "\(run.plan ?? "")")
    }

    @Test("--stale re-asks old answers past the cache, logs the match that moved and counts it in the summary")
    func staleRecordsAreReasked() async throws {
        let books = FakeBook.generated(count: 5)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        try await Self.run(store, services: services, settings: Self.settings(services))
        #expect(try store.counts().byStatus == [.enriched: 5])
        // Pretend record 1 was matched to another work 40 days ago, and its answers are that old.
        var old = try #require(try store.records(ids: ["feed:1"]).first)
        let then = Date().addingTimeInterval(-40 * 86_400)
        old.enrichment?.match?.workKey = "/works/OL1W"
        for index in old.enrichment!.candidates.indices { old.enrichment!.candidates[index].workKey = "/works/OL1W" }
        try await store.update([old])
        for id in ["feed:1", "feed:2"] {
            var record = try #require(try store.records(ids: [id]).first)
            record.enrichment?.status = .enriched
            _ = try await store.saveEnrichment([record], runID: nil, at: then)
        }
        services.resetLog()
        let settings = Self.settings(services, staleAfter: .seconds(30 * 86_400))
        let settingsSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: settings).report)
        #expect(settingsSummary.rowsDone == 2, "only the two records answered 40 days ago are asked")
        #expect(settingsSummary.changesByField == ["match": 1])
        #expect(settingsSummary.matchChanges == [.moved: 1])
        #expect(settingsSummary.changeLines.first == "changed records by field: match 1: 1 to another work")
        let changes = try store.recordChanges(recordID: "feed:1")
        #expect(changes.last?.old == "/works/OL1W" && changes.last?.new == books[0].workKey && changes.last?.source == "openlibrary")
        let moved = try #require(try store.records(ids: ["feed:1"]).first?.findings.first { $0.code == "enrich.match-moved" })
        // It names a command that shows it (`review list` does not list findings).
        #expect(moved.message.hasSuffix("check it with bookpipe show feed:1."), "\(moved.message)")
        #expect(services.requestLog.count == 1, "the two ISBNs in one request, the cache bypassed for them")
    }

    @Test("A stored edition key is repaired to its work by plain enrich, batched, and counted as a repair")
    func editionKeysAreRepaired() async throws {
        let books = FakeBook.generated(count: 30)
        let store = try Self.library(books)
        var stored = try store.records(ids: (1...30).map { "feed:\($0)" })
        for index in stored.indices {
            let edition = books[index].editionKey
            stored[index].enrichment = EnrichmentResult(status: .enriched, match: Match(
                workKey: edition, editionKey: edition, title: books[index].title, authors: books[index].authors,
                score: 200, source: "openlibrary"), candidates: [Candidate(
                workKey: edition, editionKey: edition, title: books[index].title, authors: books[index].authors,
                year: books[index].year, isbn13s: books[index].isbn13s, source: "openlibrary", score: 200)])
        }
        try await store.update(stored)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        let settings = Self.settings(services)
        let settingsSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: settings).report)
        let repaired = try store.records(ids: (1...30).map { "feed:\($0)" })
        #expect(zip(repaired, books).allSatisfy { $0.enrichment?.match?.workKey == $1.workKey })
        #expect(settingsSummary.matchChanges == [.repaired: 30])
        #expect(services.requestLog.count == 2, "30 ISBNs in two Books API requests, no request per row")
    }

    @Test("A Retry-After of a day is stored as a quota; the run goes on with Open Library; nothing failed is not found")
    func dayLongRetryAfterBecomesAQuota() async throws {
        let books = FakeBook.generated(count: 40)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books, configuration: .init(openLibraryCoverage: 0.5))
        try services.start()
        defer { services.stop() }
        services.injectFaults([.tooManyRequests(retryAfter: "86400")], pathPrefix: "/books/v1")
        let settings = Self.settings(services)
        try await Self.run(store, services: services, settings: settings)
        let host = try PolicyHTTPFetcher<ContinuousClock>.hostKey(
            of: services.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost"))
        let quota = try #require(try store.hostQuota(host: host))
        #expect(quota.blockedUntil > Date().addingTimeInterval(80_000))
        let counts = try store.counts().byStatus
        let openLibraryKnows = books.filter { services.configuration.openLibraryKnows($0) }.count
        // Open Library's books are matched; of the others, Google lookups already in flight when the
        // quota was stored may still answer; every other one is failed, none is "not found".
        #expect((counts[.enriched] ?? 0) >= openLibraryKnows)
        #expect((counts[.enriched] ?? 0) + (counts[.failed] ?? 0) == 40)
        #expect(try store.hostQuota(host: PolicyHTTPFetcher<ContinuousClock>.hostKey(of: services.baseURL)) == nil,
                "Open Library's host is not blocked")
        // The next run (failed lookups due first) sends the blocked host nothing: the quota is carried over.
        let failedBefore = counts[.failed] ?? 0
        services.resetLog()
        let next = Self.settings(services, statuses: [.pending, .failed])
        try await Self.run(store, services: services, settings: next)
        #expect(services.requestLog.allSatisfy { $0.service == .openLibrary })
        #expect(try store.counts().byStatus[.failed] == failedBefore)
        #expect(try store.counts().byStatus[.notFound] == nil)
    }

    @Test("A run of more than 1,000 remote lookups without a contact is warned about once")
    func missingContactWarnedOnce() async throws {
        let books = FakeBook.generated(count: 1)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        var settings = Self.settings(services)
        settings.contact = nil
        // 3,000 rows: about 1,910 Open Library requests expected (120 ISBN batches, 1,320 searches, 2 % retried).
        settings.run.expect(rows: 3_000)
        let messages = Messages()
        let stage = EnrichRecords(parameters: StageParameters(["sources": .stringList(["openlibrary"])]))
        let context = StageContext(pipelineName: "t", progress: messages, resources: StageResources().adding(store).adding(settings))
        try await stage.start(in: context)
        try await stage.start(in: context)
        #expect(messages.all.filter { $0.hasPrefix("warning:") && $0.contains("--contact") }.count == 1)
        await stage.end(.finished, in: context)
    }

    /// A clock whose time a test sets, forwards or backwards (a wall clock corrected by NTP, a
    /// laptop's clock set by hand): nothing sleeps on it here.
    final class JumpingClock: Clock, Sendable {
        let offset = Mutex(Duration.zero)
        var now: ManualClock.Instant { ManualClock.Instant(offset: offset.withLock { $0 }) }
        var minimumResolution: Duration { .zero }
        func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
            try await Task.sleep(for: .milliseconds(1))
        }
        func jump(by duration: Duration) { offset.withLock { $0 += duration } }
    }

    @Test("The clock jumps back two hours, then forward past the deadline: the run neither gains time nor stops early, then stops cleanly and resumes")
    func deadlineSurvivesClockJumps() async throws {
        let books = FakeBook.generated(count: 60)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        let clock = JumpingClock()
        let deadline = EnrichmentDeadline(clock: clock, after: .seconds(3600))
        let first = Self.settings(services, deadline: deadline)
        // After batch 1: two hours back (the time left stays at most what was allowed, and the
        // run goes on); after batch 2: three hours forward, past the deadline.
        let result = try await Self.run(store, services: services, settings: first,
                                        progress: AfterBatches([{ clock.jump(by: .seconds(-7200)) },
                                                                { clock.jump(by: .seconds(10_800)) }]))
        #expect(result.error == nil)
        #expect(try store.counts().byStatus == [.enriched: 40, .pending: 20])
        #expect(EnrichmentSummary(report: result.report).stoppedAtDeadline)
        #expect(EnrichmentSummary(report: result.report).rowsLeftAtDeadline == 20)
        #expect(deadline.hasPassed && deadline.remaining == .zero)
        // The same command again continues with the 20 rows left.
        let second = Self.settings(services)
        let secondSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: second).report)
        #expect(try store.counts().byStatus == [.enriched: 60])
        #expect(secondSummary.rowsDone == 20)
    }

    @Test("A clock set back never gives a deadline more time than it was allowed")
    func clockSetBackGivesNoExtraTime() {
        let clock = JumpingClock()
        let deadline = EnrichmentDeadline(clock: clock, after: .seconds(60))
        clock.jump(by: .seconds(-3600))
        #expect(deadline.remaining == .seconds(60))
        #expect(!deadline.hasPassed)
        clock.jump(by: .seconds(3600 + 61))
        #expect(deadline.remaining == .zero)
        #expect(deadline.hasPassed)
    }

    @Test("Open Library answering 200 with an HTML page (a captive portal) fails those rows clearly: no crash, no empty match, nothing cached, retried later")
    func htmlPageIsAFailedLookup() async throws {
        let books = FakeBook.generated(count: 20)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        services.setRandomFaults(rate: 1, seed: 1, faults: [.htmlPage])
        var settings = Self.settings(services)
        settings.sources = ["openlibrary"]
        try await Self.run(store, services: services, settings: settings)
        #expect(try store.counts().byStatus == [.failed: 20], "failed lookups, never not found or matched")
        let stored = try store.records(ids: (1...20).map { "feed:\($0)" })
        #expect(stored.allSatisfy { $0.enrichment?.match == nil })
        let reason = try #require(stored.first?.enrichment?.failure)
        #expect(reason.contains("HTML page"), "\(reason)")
        #expect(reason.contains("openlibrary"), "\(reason)")
        #expect(try store.cachedAnswerCount() == 0, "an HTML page is no answer to cache")
        // The portal is gone: `enrich --failed` asks again and matches every row.
        services.setRandomFaults(rate: 0, seed: 1, faults: [])
        let again = Self.settings(services, statuses: [.pending, .failed])
        var retry = again
        retry.sources = ["openlibrary"]
        try await Self.run(store, services: services, settings: retry)
        #expect(try store.counts().byStatus == [.enriched: 20])
    }

    @Test("A publisher that changed is logged like the other fields (old, new, source) and counted by field in the summary")
    func publisherChangesAreRecorded() async throws {
        var books = FakeBook.generated(count: 3)
        for index in books.indices { books[index].publisher = "Penguin" }
        let store = try Self.library(books)
        do {
            let services = FakeBookServices(books: books)
            try services.start()
            defer { services.stop() }
            try await Self.run(store, services: services, settings: Self.settings(services))
        }
        let first = try #require(try store.records(ids: ["feed:1"]).first?.enrichment)
        #expect(first.acceptedCandidate?.publisher == "Penguin", "kept through matching")
        // Open Library now names another publisher for the first book's edition.
        books[0].publisher = "Vintage"
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        var settings = Self.settings(services, statuses: [.enriched])
        settings.refresh = true
        let settingsSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: settings).report)
        #expect(settingsSummary.changesByField == ["publisher": 1])
        #expect(settingsSummary.changeLines.first == "changed records by field: publisher 1")
        let changes = try store.recordChanges(recordID: "feed:1")
        #expect(changes.map(\.field) == ["publisher"])
        #expect(changes.first?.old == "Penguin" && changes.first?.new == "Vintage" && changes.first?.source == "openlibrary")
        #expect(try store.recordChanges(recordID: "feed:2").isEmpty)
    }

    /// A library of shelf-scan detections of `books` as a spine shows them: UPPER CASE, no ISBN
    /// (so a lookup searches by title and author), each waiting for review.
    static func detections(_ books: [FakeBook]) throws -> LibraryStore {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reenrich-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        try store.insert(books.enumerated().map { index, book in
            var record = BookRecord(origin: RecordOrigin(file: "scan.json", fileHash: "5ca0", row: index + 1, line: index + 2,
                                                         format: "scan", rawFields: ["{}"], scan: "scan.json"),
                                    title: book.title.uppercased(), authors: book.authors.map { $0.uppercased() },
                                    reviewStatus: .needsReview)
            Normalizer.normalize(&record, currentYear: 2026)
            return record
        })
        return store
    }

    @Test("A detection a person corrected is matched from the corrected title and authors, by plain enrich and by --all; title and authors stay the person's")
    func correctedDetectionIsMatchedFromTheCorrection() async throws {
        let books = FakeBook.generated(count: 3)
        let store = try Self.detections(Array(books.prefix(2)))
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        try await Self.run(store, services: services, settings: Self.settings(services))
        #expect(try store.records(ids: ["5ca0:1"]).first?.enrichment?.match?.workKey == books[0].workKey)

        // The spine was misread: it is the third book.
        let corrected = books[2]
        try await store.edit(id: "5ca0:1", title: corrected.title, authors: corrected.authors)
        #expect(try store.records(ids: ["5ca0:1"]).first?.status == .pending)
        let plain = Self.settings(services)
        let plainSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: plain).report)
        #expect(plainSummary.rowsDone == 1, "plain enrich asks the corrected record, and only it")
        var stored = try #require(try store.records(ids: ["5ca0:1"]).first)
        #expect(stored.enrichment?.match?.workKey == corrected.workKey)
        #expect(stored.title == corrected.title && stored.authors == corrected.authors && stored.reviewStatus == .userEdited)
        #expect(try await store.provenance(of: stored) == ["title": "person", "authors": "person", "match": "openlibrary"])

        let all = Self.settings(services, statuses: RecordStatus.allCases)
        let allSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: all).report)
        #expect(allSummary.rowsDone == 2)
        stored = try #require(try store.records(ids: ["5ca0:1"]).first)
        #expect(stored.enrichment?.match?.workKey == corrected.workKey && stored.title == corrected.title)
        #expect(try await store.provenance(of: stored) == ["title": "person", "authors": "person", "match": "openlibrary"])
    }

    @Test("A match a person chose, and none, survive enrich --all: not asked, not replaced")
    func chosenMatchesSurviveEnrichAll() async throws {
        let books = FakeBook.generated(count: 3)
        let store = try Self.detections(books)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        try await Self.run(store, services: services, settings: Self.settings(services))
        // Rows 1 and 2 made uncertain; the person takes the second candidate for row 1 (another work
        // than enrichment would accept) and none for row 2.
        var unsure = try store.records(ids: ["5ca0:1", "5ca0:2"])
        for index in unsure.indices {
            unsure[index].enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
                Candidate(workKey: books[index].workKey, title: books[index].title, authors: books[index].authors,
                          source: "openlibrary", score: 90),
                Candidate(workKey: books[2].workKey, title: books[2].title, authors: books[2].authors,
                          source: "openlibrary", score: 40),
            ])
        }
        _ = try await store.saveEnrichment(unsure, runID: nil)
        try await store.choose(id: "5ca0:1", candidate: 2)
        try await store.chooseNone(id: "5ca0:2")
        services.resetLog()
        let all = Self.settings(services, statuses: RecordStatus.allCases)
        let allSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: all).report)
        #expect(allSummary.rowsDone == 1, "only the row nobody decided is asked")
        let stored = try store.records(ids: ["5ca0:1", "5ca0:2"])
        #expect(stored[0].status == .enriched && stored[0].enrichment?.match?.workKey == books[2].workKey)
        #expect(stored[1].status == .notFound && stored[1].enrichment?.match == nil)
        var suppliers: [String?] = []
        for record in stored { suppliers.append(try await store.provenance(of: record)["match"]) }
        #expect(suppliers == ["person", "person"])
    }

    @Test("Google Books matches store no invented work key: empty, the volume as edition; old googlebooks: keys are cleared from the cache's answers as a repair, not a move")
    func googleMatchesHaveNoInventedWorkKey() async throws {
        let books = FakeBook.generated(count: 10)
        let store = try Self.library(books)
        let services = FakeBookServices(books: books, configuration: .init(openLibraryCoverage: 0))
        try services.start()
        defer { services.stop() }
        try await Self.run(store, services: services, settings: Self.settings(services))
        #expect(try store.counts().byStatus == [.enriched: 10])
        let ids = (1...10).map { "feed:\($0)" }
        var stored = try store.records(ids: ids)
        #expect(stored.allSatisfy { $0.enrichment?.match?.workKey == "" })
        #expect(stored.allSatisfy { $0.enrichment?.match?.editionKey?.hasPrefix("googlebooks:") == true })
        #expect(stored.allSatisfy { $0.enrichment!.candidates.allSatisfy { $0.workKey.isEmpty || WorkKey.isWork($0.workKey) } })
        // Matches as an older bookpipe stored them: the volume as the work; re-asked with --all,
        // answered from the cache, they come back with no work key, logged as repairs.
        for index in stored.indices {
            let volume = try #require(stored[index].enrichment?.match?.editionKey)
            stored[index].enrichment?.match?.workKey = volume
            for candidate in stored[index].enrichment!.candidates.indices {
                stored[index].enrichment!.candidates[candidate].workKey = stored[index].enrichment!.candidates[candidate].editionKey!
            }
        }
        try await store.update(stored)
        services.resetLog()
        let settings = Self.settings(services, statuses: [.enriched])
        let settingsSummary = EnrichmentSummary(report: try await Self.run(store, services: services, settings: settings).report)
        #expect(try store.records(ids: ids).allSatisfy { $0.enrichment?.match?.workKey == "" })
        #expect(settingsSummary.matchChanges == [.repaired: 10])
        #expect(services.requestLog.filter { $0.service == .googleBooks }.isEmpty, "answered from the cache")
        #expect(try store.records(ids: ids).allSatisfy { !$0.findings.contains { $0.code == "enrich.match-moved" } })
    }
}
