import BookpipeCore
import BookpipeLibrary
import BookpipeStore
import Foundation
import Testing

/// An engine under the contract: how to make an empty library of it, and how to open the same
/// library again (a second process's view of it).
struct LibraryEngine: Sendable, CustomStringConvertible {
    var description: String
    /// Makes a new, empty library; returns it and a way to open another handle on the same library.
    var make: @Sendable () throws -> (library: any Library, reopen: @Sendable () throws -> any Library)

    /// Every engine the suite runs against. The PostgreSQL engine adds itself here.
    static let all: [LibraryEngine] = [
        LibraryEngine(description: "SQLite") {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString).sqlite").path
            return (try LibraryStore(path: path), { try LibraryStore(path: path) })
        },
    ]
}

/// The library contract's suite: what every engine must do, asserted through ``Library`` only.
/// A new engine is done when it passes (DESIGN §7; docs/decisions/0016).
@Suite struct LibraryContractTests {
    static func record(_ row: Int, file: String = "c0ffee", title: String? = nil, status: RecordStatus? = nil) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "list.csv", fileHash: file, row: row, line: row + 1,
                                                     format: "goodreads", rawFields: ["Title \(row)", "Author"]),
                                title: title ?? "Title \(row)", authors: ["Ann Author"], rawISBNs: [], year: 2001)
        Normalizer.normalize(&record, currentYear: 2026)
        if let status { record.enrichment = EnrichmentResult(status: status) }
        return record
    }

    static func filled(_ engine: LibraryEngine, rows: Int) async throws -> (any Library, @Sendable () throws -> any Library) {
        let (library, reopen) = try engine.make()
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title", "Author"], encoding: "utf-8", size: 100), runID: nil)
        try await library.committed(try await library.submitInsert((1...rows).map { record($0) }, runID: nil))
        return (library, reopen)
    }

    static let pending = EnrichmentSelection(statuses: [.pending])

    @Test("Records: an insert is idempotent, keeps the first version, and counts by status", arguments: LibraryEngine.all)
    func idempotentRecords(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 5)
        var changed = Self.record(3)
        changed.title = "Changed"
        try await library.committed(try await library.submitInsert([changed] + (4...7).map { Self.record($0) }, runID: nil))
        #expect(try await library.counts().records == 7)
        #expect(try await library.records(ids: ["c0ffee:3"]).first?.title == "Title 3")
        #expect(try await library.records(ids: ["c0ffee:7", "nope:1", "c0ffee:1"]).map(\.id) == ["c0ffee:7", "c0ffee:1"])
        #expect(try await library.finishedRows(fileHash: "c0ffee").count == 7)
        var seen: [String] = []
        try await library.forEachRecord { seen.append($0.id) }
        #expect(seen == (1...7).map { "c0ffee:\($0)" })
    }

    @Test("Claims: two runs claiming at once never share a record, and the second says who holds the rest",
          arguments: LibraryEngine.all)
    func twoClaimers(_ engine: LibraryEngine) async throws {
        let (first, reopen) = try await Self.filled(engine, rows: 40)
        let second = try reopen()
        let a = ClaimOwner.thisProcess(command: "enrich a")
        let b = ClaimOwner.thisProcess(command: "enrich b")
        async let claimA = first.claimRecords(Self.pending, owner: a, lease: .seconds(60), limit: 25)
        async let claimB = second.claimRecords(Self.pending, owner: b, lease: .seconds(60), limit: 25)
        let (ca, cb) = try await (claimA, claimB)
        #expect(Set(ca.ids).isDisjoint(with: cb.ids))
        #expect(ca.ids.count + cb.ids.count == 40)
        #expect(Set(ca.ids + cb.ids).count == 40)
        let later = try await first.claimRecords(Self.pending, owner: ClaimOwner.thisProcess(command: "enrich c"),
                                                 lease: .seconds(60), limit: nil)
        #expect(later.ids.isEmpty)
        #expect(later.heldElsewhereCount == 40)
        #expect(Set(later.heldElsewhere.map(\.owner.id)) == [a.id, b.id])
        #expect(later.heldElsewhere.first { $0.owner.id == a.id }?.description.contains("being enriched by another run (pid \(getpid())") == true)
    }

    @Test("Claims: an expired lease is taken again; the late run's results are fenced out, the new owner's stand",
          arguments: LibraryEngine.all)
    func expiryAndFencing(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 3)
        let late = ClaimOwner.thisProcess(command: "enrich late")
        // A lease of zero has run out as soon as it is taken: no waiting on the clock.
        let taken = try await library.claimRecords(Self.pending, owner: late, lease: .zero, limit: nil)
        #expect(taken.ids.count == 3)
        let next = ClaimOwner.thisProcess(command: "enrich next")
        let retaken = try await library.claimRecords(Self.pending, owner: next, lease: .seconds(60), limit: nil)
        #expect(retaken.ids == taken.ids)
        #expect(retaken.heldElsewhere.isEmpty)
        #expect(try await library.renewClaims(owner: late, lease: .seconds(60)) == false)

        var lateResult = try #require(try await library.records(ids: ["c0ffee:1"]).first)
        lateResult.enrichment = EnrichmentResult(status: .notFound)
        let fenced = try await library.saveEnrichment([lateResult], runID: nil, at: Date(), owner: late)
        #expect(fenced.fencedOut == ["c0ffee:1"])
        #expect(try await library.records(ids: ["c0ffee:1"]).first?.status == .pending)

        var nextResult = lateResult
        nextResult.enrichment = EnrichmentResult(status: .failed, failure: "openlibrary: 503")
        let saved = try await library.saveEnrichment([nextResult], runID: nil, at: Date(), owner: next)
        #expect(saved.fencedOut.isEmpty)
        #expect(try await library.records(ids: ["c0ffee:1"]).first?.status == .failed)
        // The saved record's claim is released; the rest are held until the run releases them.
        #expect(try await library.claimHolders().map(\.records) == [2])
        try await library.releaseClaims(owner: next)
        #expect(try await library.claimHolders().isEmpty)
    }

    @Test("Claims: a process of this host that no longer runs holds nothing, whatever its lease says",
          arguments: LibraryEngine.all)
    func deadProcessReleases(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 2)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        var dead = ClaimOwner.thisProcess(command: "enrich killed")
        dead.processID = child.processIdentifier
        dead.id = "\(dead.host):\(dead.processID):dead"
        #expect(try await library.claimRecords(Self.pending, owner: dead, lease: .seconds(3600), limit: nil).ids.count == 2)
        let alive = try await library.claimRecords(Self.pending, owner: .thisProcess(command: "enrich again"),
                                                   lease: .seconds(60), limit: nil)
        #expect(alive.ids.count == 2)
        #expect(alive.heldElsewhere.isEmpty)
    }

    @Test("Review: a decision applies the rules in one transaction; a refusal writes nothing for any id",
          arguments: LibraryEngine.all)
    func reviewTransactions(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 2)
        var uncertain = try #require(try await library.records(ids: ["c0ffee:2"]).first)
        uncertain.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL1W", title: "Title 2", authors: ["Ann Author"], source: "openlibrary", score: 150),
        ])
        try await library.update([uncertain], runID: nil)
        await #expect(throws: ReviewError.uncertainMatch(id: "c0ffee:2", candidates: 1)) {
            try await library.verify(ids: ["c0ffee:1", "c0ffee:2"])
        }
        #expect(try await library.reviewActions().isEmpty)
        let chosen = try await library.choose(id: "c0ffee:2", candidate: 1)
        #expect(chosen.enrichment?.match?.workKey == "/works/OL1W")
        #expect(try await library.recordEdits(id: "c0ffee:2").map(\.field) == ["match"])
        let edited = try await library.edit(id: "c0ffee:1", title: "  Dune ", authors: ["Frank Herbert"])
        #expect(edited.title == "Dune" && edited.reviewStatus == .userEdited)
        #expect(try await library.personEditedFields()["c0ffee:1"] == ["title", "authors"])
        #expect(try await library.reviewActions().map(\.action) == ["choose", "edit"])
        // A locked match is never overwritten by enrichment.
        var later = chosen
        later.enrichment = EnrichmentResult(status: .notFound)
        _ = try await library.saveEnrichment([later], runID: nil)
        #expect(try await library.records(ids: ["c0ffee:2"]).first?.enrichment?.match?.workKey == "/works/OL1W")
    }

    @Test("Cache and quotas: answers by source and question, newer than a date; the later quota wins",
          arguments: LibraryEngine.all)
    func cacheAndQuotas(_ engine: LibraryEngine) async throws {
        let (library, _) = try engine.make()
        let old = Date(timeIntervalSince1970: 1_700_000_000)
        try await library.cacheAnswers(source: "openlibrary", [(question: "isbn:1", answerJSON: "{}")], fetchedAt: old)
        try await library.cacheAnswers(source: "openlibrary", [(question: "isbn:2", answerJSON: "[]")], fetchedAt: Date())
        #expect(try await library.cachedAnswers(source: "openlibrary", questions: ["isbn:1", "isbn:2", "isbn:3"]).keys.sorted()
                == ["isbn:1", "isbn:2"])
        #expect(try await library.cachedAnswers(source: "openlibrary", questions: ["isbn:1", "isbn:2"],
                                                notBefore: old.addingTimeInterval(1)).keys.sorted() == ["isbn:2"])
        #expect(try await library.cachedAnswers(source: "googlebooks", questions: ["isbn:1"]).isEmpty)
        #expect(try await library.cachedAnswerCount() == 2)
        let until = Date().addingTimeInterval(3600)
        try await library.saveHostQuota(StoredHostQuota(host: "https://www.googleapis.com", blockedUntil: until, reason: "daily quota"))
        try await library.saveHostQuota(StoredHostQuota(host: "https://www.googleapis.com", blockedUntil: until.addingTimeInterval(-60),
                                                        reason: "earlier"))
        let quota = try #require(try await library.hostQuota(host: "https://www.googleapis.com"))
        #expect(abs(quota.blockedUntil.timeIntervalSince(until)) < 0.01)
    }

    @Test("Runs are recorded with how they ended; search finds records ignoring case and accents",
          arguments: LibraryEngine.all)
    func runsAndSearch(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 1)
        try await library.committed(try await library.submitInsert([Self.record(2, title: "Le Petit Prince")], runID: nil))
        let run = try await library.beginRun(command: "bookpipe enrich", pipeline: "enrich")
        try await library.finishRun(run, status: .finished, summary: nil)
        #expect(try await library.runs().first?.status == .finished)
        _ = try await library.refreshSearchIndex()
        #expect(try await library.searchIndexIsCurrent())
        #expect(try await library.search("le petit PRINCE", limit: 5, ranking: 100).map(\.id) == ["c0ffee:2"])
    }
}
