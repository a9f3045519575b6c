import BookpipeCore
import BookpipeLibrary
import BookpipePostgres
import BookpipeStore
import Foundation
import Testing

/// An engine under the contract: how to make an empty library of it, and how to open the same
/// library again (a second process's view of it).
struct LibraryEngine: Sendable, CustomStringConvertible {
    var description: String
    /// Makes a new, empty library; returns it and a way to open another handle on the same library.
    var make: @Sendable () throws -> (library: any Library, reopen: @Sendable () throws -> any Library)

    /// Every engine the suite runs against.
    static let all: [LibraryEngine] = [
        LibraryEngine(description: "SQLite") {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString).sqlite").path
            return (try LibraryStore(path: path), { try LibraryStore(path: path) })
        },
        LibraryEngine(description: "PostgreSQL", make: {
            let conninfo = try PostgresTestServer.newDatabase()
            return (try PostgresLibrary(url: conninfo), { try PostgresLibrary(url: conninfo) })
        }),
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

    @Test("List entries: read back per list with digest; an imported update is applied and logged; gone and present again",
          arguments: LibraryEngine.all)
    func listEntries(_ engine: LibraryEngine) async throws {
        let (library, _) = try engine.make()
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title", "Author"], encoding: "utf-8", size: 100), runID: nil)
        let records = (1...3).map { row -> BookRecord in
            var record = Self.record(row)
            record.listEntry = ListIdentity.entry(list: "goodreads", key: "id:\(row)")
            return record
        }
        try await library.committed(try await library.submitInsert(records, runID: nil))
        let entries = try await library.listEntries(list: "goodreads", excludingFile: nil)
        #expect(entries.map(\.key) == ["id:1", "id:2", "id:3"])
        #expect(entries.map(\.digest) == records.map { ListIdentity.readDigest(of: $0) })
        #expect(try await library.listEntries(list: "goodreads", excludingFile: "c0ffee").isEmpty)
        #expect(try await library.listEntries(list: "storygraph", excludingFile: nil).isEmpty)

        var updated = records[1]
        updated.shelf = "read"
        let change = RecordChange(recordID: updated.id, field: "shelf", old: nil, new: "read", kind: .imported,
                                  source: "newer.csv", changedAt: Date(timeIntervalSince1970: 1_000))
        try await library.markGone(recordIDs: ["c0ffee:2", "c0ffee:3"], fileHash: "c0ffee", at: Date())
        try await library.applyImportedUpdates([ImportedUpdate(record: updated, digest: 42, changes: [change])], runID: nil,
                                               at: Date(timeIntervalSince1970: 1_000))
        let after = try await library.listEntries(list: "goodreads", excludingFile: nil)
        #expect(after.map(\.isGone) == [false, false, true], "an applied update counts the record present again")
        #expect(after[1].digest == 42)
        #expect(try await library.records(ids: ["c0ffee:2"]).first?.shelf == "read")
        #expect(try await library.recordChanges(recordID: "c0ffee:2").map(\.kind) == [.imported])
        try await library.markPresent(recordIDs: ["c0ffee:3"])
        #expect(try await library.listEntries(list: "goodreads", excludingFile: nil).allSatisfy { !$0.isGone })
    }

    @Test("Books: members carry list and ISBN-13; a person's link decision replaces the earlier one and is logged on both records",
          arguments: LibraryEngine.all)
    func bookLinks(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 3)
        #expect(try await library.linkDecisions().isEmpty)
        #expect(try await library.recordLinkDecision(LinkDecision("c0ffee:1", "c0ffee:2", linked: false), at: Date()))
        #expect(try await library.recordLinkDecision(LinkDecision("c0ffee:2", "c0ffee:1", linked: true), at: Date()))
        #expect(try await library.recordLinkDecision(LinkDecision("c0ffee:1", "nope:1", linked: true), at: Date()) == false)
        #expect(try await library.linkDecisions() == [LinkDecision("c0ffee:1", "c0ffee:2", linked: true)])
        let members = try await library.bookMembers()
        #expect(Set(members.map(\.recordID)).isSuperset(of: ["c0ffee:1", "c0ffee:2"]))
        #expect(BookGrouping.books(members, decisions: try await library.linkDecisions()).contains(["c0ffee:1", "c0ffee:2"]))
        #expect(try await library.recordChanges(recordID: "c0ffee:1").filter { $0.field == "book" }.map(\.kind) == [.unlinked, .linked])
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

    @Test("Claims: with a limit, each claim takes the next records (never those the owner holds); a claim that comes back short counts what others hold",
          arguments: LibraryEngine.all)
    func batchClaims(_ engine: LibraryEngine) async throws {
        let (library, reopen) = try await Self.filled(engine, rows: 10)
        let other = try reopen()
        let owner = ClaimOwner.thisProcess(command: "enrich batches")
        #expect(try await library.countClaimable(Self.pending) == 10)
        let first = try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 4)
        #expect(first.ids == (1...4).map { "c0ffee:\($0)" })
        // Not yet saved: the owner still holds them, and the next claim takes the next four.
        let second = try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 4)
        #expect(second.ids == (5...8).map { "c0ffee:\($0)" })
        #expect(try await other.countClaimable(Self.pending) == 2)
        // A full batch counts no holders (the count is the cost of a claim beside other workers)...
        let neighbour = ClaimOwner.thisProcess(command: "enrich neighbour")
        let full = try await other.claimRecords(Self.pending, owner: neighbour, lease: .seconds(60), limit: 1)
        #expect(full.ids == ["c0ffee:9"])
        #expect(full.heldElsewhere.isEmpty)
        try await other.releaseClaims(owner: neighbour)
        // ...one that comes back short says who holds the rest.
        let elsewhere = try await other.claimRecords(Self.pending, owner: .thisProcess(command: "enrich elsewhere"),
                                                     lease: .seconds(60), limit: 4)
        #expect(elsewhere.ids == ["c0ffee:9", "c0ffee:10"])
        #expect(elsewhere.heldElsewhereCount == 8)
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 4).ids.isEmpty)
        #expect(try await library.countClaimable(Self.pending) == 0)
        // The whole selection (no limit) still gives back what the owner holds.
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: nil).ids.count == 8)
    }

    @Test("Saving a batch of results: each record as if saved alone and in order (written, retried later, kept, named twice); the change log in that order",
          arguments: LibraryEngine.all)
    func saveBatch(_ engine: LibraryEngine) async throws {
        let (library, _) = try await Self.filled(engine, rows: 5)
        func match(_ work: String) -> Match {
            Match(workKey: work, editionKey: nil, title: "Title", authors: ["Ann Author"], score: 150, source: "openlibrary")
        }
        func result(_ row: Int, _ enrichment: EnrichmentResult) async throws -> BookRecord {
            var record = try #require(try await library.records(ids: ["c0ffee:\(row)"]).first)
            record.enrichment = enrichment
            return record
        }
        // Before: record 1 matched; record 2's match chosen by a person.
        _ = try await library.saveEnrichment([try await result(1, EnrichmentResult(status: .enriched, match: match("/works/OL1W")))],
                                             runID: nil, at: Date(timeIntervalSince1970: 1_000), owner: nil)
        var chosen = try await result(2, EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL2W", title: "Title 2", authors: ["Ann Author"], source: "openlibrary", score: 150),
        ]))
        try await library.update([chosen], runID: nil)
        chosen = try await library.choose(id: "c0ffee:2", candidate: 1)

        let time = Date(timeIntervalSince1970: 2_000)
        let batch = [
            try await result(1, EnrichmentResult(status: .failed, failure: "timeout")),           // keeps its match
            try await result(2, EnrichmentResult(status: .notFound)),                              // a person's match: kept
            try await result(3, EnrichmentResult(status: .enriched, match: match("/works/OL3W"))), // found
            try await result(4, EnrichmentResult(status: .enriched, match: match("/works/OL4W"))), // found, then moved
            try await result(4, EnrichmentResult(status: .enriched, match: match("/works/OL5W"))),
            try await result(5, EnrichmentResult(status: .failed, failure: "timeout")),            // failed first time
        ]
        let saved = try await library.saveEnrichment(batch, runID: nil, at: time, owner: nil)
        #expect(saved.changes.map { "\($0.recordID) \($0.kind?.rawValue ?? "-") \($0.new ?? "-")" }.filter { $0.contains("/works/") }
                == ["c0ffee:4 moved /works/OL5W"], "a first answer is no change; the second answer of record 4 moves it")
        let records = Dictionary(uniqueKeysWithValues: try await library.records(ids: (1...5).map { "c0ffee:\($0)" }).map { ($0.id, $0) })
        #expect(records["c0ffee:1"]?.enrichment?.match?.workKey == "/works/OL1W", "a failed lookup never replaces an answer")
        #expect(records["c0ffee:2"]?.enrichment?.match?.workKey == "/works/OL2W", "a person's match is kept")
        #expect(records["c0ffee:3"]?.enrichment?.match?.workKey == "/works/OL3W")
        #expect(records["c0ffee:4"]?.enrichment?.match?.workKey == "/works/OL5W", "the record's last result stands")
        #expect(records["c0ffee:4"]?.findings.map(\.code).contains("enrich.match-moved") == true)
        #expect(records["c0ffee:5"]?.status == .failed)
        let lookedUp = try await library.enrichedAt(recordIDs: (1...5).map { "c0ffee:\($0)" })
        #expect(lookedUp["c0ffee:1"] == Date(timeIntervalSince1970: 1_000), "a retry keeps the earlier lookup's time")
        #expect(lookedUp["c0ffee:2"] == nil)
        #expect(lookedUp["c0ffee:3"] == time && lookedUp["c0ffee:4"] == time && lookedUp["c0ffee:5"] == time)
        // Failures are due again from the save's time: a claim for due failures takes 1 and 5, not the rest.
        let due = EnrichmentSelection(statuses: [.failed], now: time.addingTimeInterval(1))
        let owner = ClaimOwner.thisProcess(command: "retry")
        #expect(Set(try await library.claimRecords(due, owner: owner, lease: .seconds(60), limit: nil).ids) == ["c0ffee:5"])
        #expect(try await library.recordChanges(recordID: "c0ffee:4").map { $0.kind } == [.moved])
        #expect(try await library.recordChanges(recordID: "c0ffee:2").allSatisfy { $0.kind != .lost })
    }

    @Test("Batch claims follow the library as it changes: a record enriched elsewhere meanwhile is not taken, one added meanwhile is",
          arguments: LibraryEngine.all)
    func batchClaimsFollowChanges(_ engine: LibraryEngine) async throws {
        let (library, reopen) = try await Self.filled(engine, rows: 10)
        let other = try reopen()
        let owner = ClaimOwner.thisProcess(command: "enrich batches")
        let first = try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 4)
        #expect(first.ids == (1...4).map { "c0ffee:\($0)" })
        // Another run (no claim) enriches record 6, and a new file brings two pending records.
        var sixth = try #require(try await other.records(ids: ["c0ffee:6"]).first)
        sixth.enrichment = EnrichmentResult(status: .notFound)
        _ = try await other.saveEnrichment([sixth], runID: nil, at: Date(), owner: nil)
        try await other.registerSourceFile(SourceFileInfo(hash: "beef", path: "more.csv", format: "goodreads",
                                                          header: ["Title", "Author"], encoding: "utf-8", size: 10), runID: nil)
        try await other.committed(try await other.submitInsert([Self.record(1, file: "beef"), Self.record(2, file: "beef")],
                                                               runID: nil))
        var taken: [String] = []
        while true {
            let next = try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 4).ids
            if next.isEmpty { break }
            taken += next
        }
        #expect(taken.sorted() == ["beef:1", "beef:2", "c0ffee:10", "c0ffee:5", "c0ffee:7", "c0ffee:8", "c0ffee:9"])
    }

    @Test("One rate budget per host for every worker: a burst, then waits at the rate; each host its own; a pause holds everyone",
          arguments: LibraryEngine.all)
    func sharedRateBudget(_ engine: LibraryEngine) async throws {
        let (library, reopen) = try await Self.filled(engine, rows: 1)
        let other = try reopen()
        // A rate of one token in 10,000 s: after the burst of 3 (taken by two workers), the next waits
        // about 10,000 s less the time the takes took (up to 1,000 s allowed: a hang guard).
        var grants: [Duration] = []
        for worker in [library, other, library] {
            grants.append(try await worker.takeHostToken("openlibrary.org", rate: 0.0001, burst: 3))
        }
        #expect(grants == [.zero, .zero, .zero])
        let wait = try await other.takeHostToken("openlibrary.org", rate: 0.0001, burst: 3)
        #expect(wait > .seconds(9_000) && wait <= .seconds(10_000))
        #expect(try await library.takeHostToken("books.google.com", rate: 0.0001, burst: 1) == .zero, "each host has its own")
        try await library.pauseHost("books.google.com", for: .seconds(36_000), reason: "429 Retry-After: 36000")
        try await library.pauseHost("books.google.com", for: .seconds(60), reason: "a shorter pause")
        let paused = try await other.takeHostToken("books.google.com", rate: 1000, burst: 1000)
        #expect(paused > .seconds(35_000) && paused <= .seconds(36_000), "the longer pause stands, for every worker")
    }

    @Test("Questions in flight: one asker per question across workers; released, or its lease run out, another takes it",
          arguments: LibraryEngine.all)
    func questionsInFlight(_ engine: LibraryEngine) async throws {
        let (library, reopen) = try engine.make()
        let other = try reopen()
        let lease = Duration.seconds(600)
        #expect(try await library.takeQuestions(source: "openlibrary", ["isbn:1", "isbn:2"], asker: "a", lease: lease)
                == ["isbn:1", "isbn:2"])
        #expect(try await other.takeQuestions(source: "openlibrary", ["isbn:2", "isbn:3"], asker: "b", lease: lease) == ["isbn:3"])
        #expect(try await other.questionAskers(source: "openlibrary", ["isbn:2", "isbn:3", "isbn:9"]) == ["isbn:2": "a", "isbn:3": "b"])
        #expect(try await other.takeQuestions(source: "googlebooks", ["isbn:2"], asker: "b", lease: lease) == ["isbn:2"],
                "each source its own questions")
        #expect(try await library.takeQuestions(source: "openlibrary", ["isbn:1"], asker: "a", lease: lease) == ["isbn:1"],
                "an asker keeps its own question")
        try await library.releaseQuestions(source: "openlibrary", ["isbn:2"], asker: "a")
        try await other.releaseQuestions(source: "openlibrary", ["isbn:1"], asker: "b")
        #expect(try await other.takeQuestions(source: "openlibrary", ["isbn:1", "isbn:2"], asker: "b", lease: lease) == ["isbn:2"],
                "released by its asker it is free; another's release of it does nothing")
        // A lease of zero has run out as soon as it is taken: its asker died.
        #expect(try await library.takeQuestions(source: "openlibrary", ["title:x"], asker: "dead", lease: .zero) == ["title:x"])
        #expect(try await other.questionAskers(source: "openlibrary", ["title:x"]).isEmpty, "a lease run out holds nothing")
        #expect(try await other.takeQuestions(source: "openlibrary", ["title:x"], asker: "b", lease: lease) == ["title:x"])
        #expect(try await library.takeQuestions(source: "openlibrary", [], asker: "a", lease: lease).isEmpty)
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

    @Test("Review: a decision checks the version the decider saw inside its transaction; undo puts the record back exactly",
          arguments: LibraryEngine.all)
    func reviewVersionsAndUndo(_ engine: LibraryEngine) async throws {
        let (library, reopen) = try await Self.filled(engine, rows: 2)
        var matched = try #require(try await library.records(ids: ["c0ffee:1"]).first)
        matched.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL1W", title: "Title 1", authors: ["Ann Author"], source: "openlibrary", score: 150),
        ])
        try await library.update([matched], runID: nil)
        let before = try #require(try await library.records(ids: ["c0ffee:1"]).first)
        let seen = ReviewRules.version(of: before)
        let editsBefore = try await library.recordEdits(id: "c0ffee:1")
        let changesBefore = try await library.recordChanges(recordID: "c0ffee:1")

        // Two deciders saw the same version: the first wins, the second is told and writes nothing.
        let other = try reopen()
        let first = try await library.applyReview(.edit(title: "Dune", authors: ["Frank Herbert"]), ids: ["c0ffee:1"],
                                                  at: Date(timeIntervalSince1970: 1_000), versions: ["c0ffee:1": seen])
        await #expect(throws: ReviewError.changedSince(id: "c0ffee:1", now: ReviewRules.standing(of: first[0].record))) {
            try await other.applyReview(.choose(1), ids: ["c0ffee:1"], at: Date(), versions: ["c0ffee:1": seen])
        }
        #expect(try await library.reviewActions().map(\.action) == ["edit"])
        #expect(try await library.recordChanges(recordID: "c0ffee:1").count > changesBefore.count)

        // Undo: the record, its locks and edits and change log as before; logged; not twice.
        let undone = try await other.undoReview(actionIDs: first.map(\.actionID), at: Date(timeIntervalSince1970: 2_000))
        #expect(undone == [before])
        #expect(try await library.records(ids: ["c0ffee:1"]) == [before])
        #expect(try await library.recordEdits(id: "c0ffee:1") == editsBefore)
        #expect(try await library.recordChanges(recordID: "c0ffee:1") == changesBefore)
        #expect(try await library.reviewQueueEntries(kind: .match).map(\.id) == ["c0ffee:1"])
        #expect(try await library.reviewActions().map(\.action) == ["edit", "undo"])
        await #expect(throws: ReviewError.notUndoable(actionID: first[0].actionID)) {
            try await library.undoReview(actionIDs: first.map(\.actionID), at: Date())
        }

        // An undo never loses a later decision on the same record.
        let chosen = try await library.applyReview(.choose(1), ids: ["c0ffee:1"], at: Date(), versions: ["c0ffee:1": seen])
        _ = try await library.applyReview(.edit(title: "Dune", authors: nil), ids: ["c0ffee:1"], at: Date(), versions: [:])
        await #expect(throws: ReviewError.self) {
            try await library.undoReview(actionIDs: chosen.map(\.actionID), at: Date())
        }
        #expect(try await library.records(ids: ["c0ffee:1"]).first?.title == "Dune")
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

    /// Four books of one list, one rejected row, and a second file of one record.
    static func shelved(_ engine: LibraryEngine) async throws -> any Library {
        let (library, _) = try engine.make()
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title", "Author"], encoding: "utf-8", size: 100), runID: nil)
        func book(_ row: Int, _ title: String, _ author: String, year: Int?, shelf: String, rating: Double?,
                  file: String = "c0ffee", isbn: String? = nil) -> BookRecord {
            var record = BookRecord(origin: RecordOrigin(file: file == "c0ffee" ? "list.csv" : "other.csv", fileHash: file,
                                                         row: row, line: row + 1, format: file == "c0ffee" ? "goodreads" : "storygraph",
                                                         rawFields: [title, author]),
                                    title: title, authors: [author], rawISBNs: isbn.map { [$0] } ?? [], year: year)
            record.shelf = shelf
            record.rating = rating
            Normalizer.normalize(&record, currentYear: 2026)
            return record
        }
        var chosen = book(3, "Children of Dune", "Frank Herbert", year: 1976, shelf: "read", rating: 3)
        chosen.enrichment = EnrichmentResult(status: .needsCandidateSelection)
        try await library.committed(try await library.submitInsert([
            book(1, "Dune", "Frank Herbert", year: 1965, shelf: "Read", rating: 5, isbn: "0441013597"),
            book(2, "The Left Hand of Darkness", "Ursula K. Le Guin", year: 1969, shelf: "to-read", rating: nil),
            chosen,
            book(4, "Cien años de soledad", "Gabriel García Márquez", year: 1967, shelf: "read", rating: 4),
        ], runID: nil))
        try await library.insertRejections([RejectedRow(fileHash: "c0ffee", file: "list.csv", line: 7, row: 5, column: 1,
                                                        reason: "unbalanced quote", rawText: "\"x")], runID: nil)
        _ = try await library.finishSourceFile(hash: "c0ffee", rowsTotal: 5, reading: nil, matchedRows: 0)
        try await library.registerSourceFile(SourceFileInfo(hash: "beef00", path: "other.csv", format: "storygraph",
                                                            header: ["Title"], encoding: "utf-8", size: 10), runID: nil)
        try await library.committed(try await library.submitInsert(
            [book(1, "Dune", "Frank Herbert", year: 1965, shelf: "read", rating: 4.5, file: "beef00")], runID: nil))
        return library
    }

    static func listed(_ library: any Library, _ tokens: [String], order: String? = nil) async throws -> [String] {
        var ids: [String] = []
        try await library.listRecords(try LibraryQuery.parse(tokens), order: try order.map(ListingOrder.parse) ?? [],
                                      limit: nil) { ids.append("\($0.number) \($0.record.id)") }
        return ids
    }

    @Test("Listing: fields and words match folded; sorting; numbers given once in library order; references name records",
          arguments: LibraryEngine.all)
    func listing(_ engine: LibraryEngine) async throws {
        let library = try await Self.shelved(engine)
        #expect(try await library.listingIsCurrent() == false)
        #expect(try await Self.listed(library, []) == ["1 c0ffee:1", "2 c0ffee:2", "3 c0ffee:3", "4 c0ffee:4", "5 beef00:1"])
        #expect(try await library.listingIsCurrent())
        #expect(try await Self.listed(library, ["author:herbert", "dune"]) == ["1 c0ffee:1", "3 c0ffee:3", "5 beef00:1"])
        #expect(try await Self.listed(library, ["garcia", "SOLEDAD"]) == ["4 c0ffee:4"])
        #expect(try await Self.listed(library, ["author:herbert", "^children", "^isbn:9780441013593"]) == ["5 beef00:1"])
        #expect(try await Self.listed(library, ["title:left hand", "author:le guin"]) == ["2 c0ffee:2"])
        #expect(try await Self.listed(library, ["isbn:978044101"]) == ["1 c0ffee:1"])
        #expect(try await Self.listed(library, ["year:1966..1970"]) == ["2 c0ffee:2", "4 c0ffee:4"])
        #expect(try await Self.listed(library, ["shelf:READ", "^rating:>=4"]) == ["3 c0ffee:3"])
        #expect(try await Self.listed(library, ["rating:>4"]) == ["1 c0ffee:1", "5 beef00:1"])
        #expect(try await Self.listed(library, ["status:needsCandidateSelection"]) == ["3 c0ffee:3"])
        #expect(try await Self.listed(library, ["review:waiting"]) == ["3 c0ffee:3"])
        #expect(try await Self.listed(library, ["file:storygraph"]) == ["5 beef00:1"])
        #expect(try await Self.listed(library, ["file:list"]).count == 4)
        #expect(try await Self.listed(library, ["gone:yes"]) == [])
        #expect(try await Self.listed(library, ["gone:no"]).count == 5)
        #expect(try await Self.listed(library, ["zzz"]) == [])
        #expect(try await Self.listed(library, [], order: "year-,title").prefix(3) == ["3 c0ffee:3", "2 c0ffee:2", "4 c0ffee:4"])
        #expect(try await Self.listed(library, [], order: "rating") == ["3 c0ffee:3", "4 c0ffee:4", "5 beef00:1", "1 c0ffee:1", "2 c0ffee:2"])

        var named: [String] = []
        try await library.listRecords(LibraryQuery([.init(.ids(["beef00:1", "nope:1", "c0ffee:4"]))]), order: [], limit: nil) {
            named.append($0.record.id)
        }
        #expect(named == ["c0ffee:4", "beef00:1"])
        #expect(try await library.recordIDs(for: .number(4), limit: 2) == ["c0ffee:4"])
        #expect(try await library.recordIDs(for: .id(hashPrefix: "c0f", row: 2), limit: 2) == ["c0ffee:2"])
        #expect(try await library.recordIDs(for: .id(hashPrefix: "c0f", row: nil), limit: 2) == ["c0ffee:1", "c0ffee:2"])
        #expect(try await library.recordIDs(for: .id(hashPrefix: "bee", row: nil), limit: 2) == ["beef00:1"])
        #expect(try await library.recordIDs(for: .number(99), limit: 2) == [])

        // A changed record is listed again under its number; a new one gets the next number.
        var moved = try #require(try await library.records(ids: ["c0ffee:2"]).first)
        moved.shelf = "read"
        moved.enrichment = EnrichmentResult(status: .notFound)
        try await library.update([moved], runID: nil)
        try await library.committed(try await library.submitInsert([Self.record(9, file: "beef00")], runID: nil))
        #expect(try await library.listingIsCurrent() == false)
        #expect(try await Self.listed(library, ["shelf:read", "status:notFound"]) == ["2 c0ffee:2"])
        #expect(try await Self.listed(library, ["title:title"]) == ["6 beef00:9"])
    }

    @Test("Report history: figures kept as given, read back oldest first, the last N; what each run wrote is counted",
          arguments: LibraryEngine.all)
    func reportHistory(_ engine: LibraryEngine) async throws {
        let (library, _) = try engine.make()
        #expect(try await library.reportHistory(limit: nil).isEmpty)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try await library.saveReportHistory(generatedAt: start, scope: "all", figures: ["records": 10, "matched": 92.5])
        let second = try await library.saveReportHistory(generatedAt: start.addingTimeInterval(60), scope: "run 2",
                                                          figures: ["records": 3, "new figure": 1])
        let third = try await library.saveReportHistory(generatedAt: start.addingTimeInterval(120), scope: "all", figures: [:])
        #expect(first < second && second < third)
        let all = try await library.reportHistory(limit: nil)
        #expect(all.map(\.id) == [first, second, third])
        #expect(all[0] == ReportHistoryEntry(id: first, generatedAt: start, scope: "all", figures: ["records": 10, "matched": 92.5]))
        #expect(all[1].scope == "run 2" && all[1].figures == ["records": 3, "new figure": 1])
        #expect(try await library.reportHistory(limit: 2).map(\.id) == [second, third])

        // A run's writes: the records it stored, and those it took over from another run.
        let importRun = try await library.beginRun(command: "import", pipeline: "csv-import")
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title", "Author"], encoding: "utf-8", size: 100), runID: importRun)
        try await library.committed(try await library.submitInsert((1...4).map { Self.record($0) }, runID: importRun))
        let enrichRun = try await library.beginRun(command: "enrich", pipeline: "enrich")
        let some = try await library.records(ids: ["c0ffee:1", "c0ffee:2"])
        _ = try await library.saveEnrichment(some.map { var record = $0; record.enrichment = EnrichmentResult(status: .notFound); return record },
                                             runID: enrichRun)
        _ = try await library.saveEnrichment(some, runID: enrichRun)
        let figures = try await library.qualityFigures(.library) { _ in true }
        #expect(figures.runs.map(\.written) == [4, 2])
        #expect(figures.runs.map(\.records) == [2, 2])
    }

    @Test("Listing the rows behind a report's figure: isbn:invalid, missing:VALUE and finding:CODE, negated too",
          arguments: LibraryEngine.all)
    func reportDrillDowns(_ engine: LibraryEngine) async throws {
        let (library, _) = try engine.make()
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title", "Author"], encoding: "utf-8", size: 100), runID: nil)
        func book(_ row: Int, isbn: String?, authors: [String] = ["Ann Author"], year: Int? = 2001, publisher: String? = nil,
                  pages: Int? = nil, status: RecordStatus? = nil) -> BookRecord {
            var record = BookRecord(origin: RecordOrigin(file: "list.csv", fileHash: "c0ffee", row: row, line: row + 1,
                                                         format: "goodreads", rawFields: ["Title \(row)"]),
                                    title: "Title \(row)", authors: authors, rawISBNs: isbn.map { [$0] } ?? [], year: year)
            record.publisher = publisher
            record.pageCount = pages
            Normalizer.normalize(&record, currentYear: 2026)
            if let status {
                record.enrichment = EnrichmentResult(status: status, match: Match(
                    workKey: "/works/OL1W", editionKey: "/books/OL\(row)M", title: "Title", authors: [], score: 150, source: "catalog"))
            }
            return record
        }
        try await library.committed(try await library.submitInsert([
            book(1, isbn: "0441013597", publisher: "Ace", pages: 412, status: .enriched),
            book(2, isbn: "9780441013594", authors: [], year: nil),      // bad check digit
            book(3, isbn: "4.41013597E+9", authors: ["  ,  "]),           // spreadsheet damage
            book(4, isbn: nil, publisher: "Gollancz", pages: 0, status: .enriched),
        ], runID: nil))
        #expect(try await Self.listed(library, ["isbn:invalid"]) == ["2 c0ffee:2", "3 c0ffee:3"])
        #expect(try await Self.listed(library, ["^isbn:invalid"]) == ["1 c0ffee:1", "4 c0ffee:4"])
        #expect(try await Self.listed(library, ["missing:isbn"]) == ["2 c0ffee:2", "3 c0ffee:3", "4 c0ffee:4"])
        #expect(try await Self.listed(library, ["missing:year"]) == ["2 c0ffee:2"])
        #expect(try await Self.listed(library, ["missing:publisher"]) == ["2 c0ffee:2", "3 c0ffee:3"])
        #expect(try await Self.listed(library, ["missing:pages"]) == ["2 c0ffee:2", "3 c0ffee:3"])
        #expect(try await Self.listed(library, ["missing:author"]) == ["2 c0ffee:2", "3 c0ffee:3"])
        #expect(try await Self.listed(library, ["missing:cover"]) == ["2 c0ffee:2", "3 c0ffee:3"])
        #expect(try await Self.listed(library, ["finding:isbn.invalid-checksum"]) == ["2 c0ffee:2"])
        #expect(try await Self.listed(library, ["finding:isbn", "^finding:isbn.invalid-checksum"]) == ["3 c0ffee:3"])
        #expect(try await Self.listed(library, ["finding:isb"]) == [])
        #expect(throws: LibraryQueryError.self) { try LibraryQuery.parse(["missing:colour"]) }
        // The report's figures name the same records: samples of each missing value, the authorless,
        // values outside the plausible ones, each field's values.
        let figures = try await library.qualityFigures(.library) { _ in true }
        #expect(figures.missingSamples[.isbn]?.map(\.id) == ["c0ffee:2", "c0ffee:3", "c0ffee:4"])
        #expect(figures.missingSamples[.year]?.map(\.id) == ["c0ffee:2"])
        #expect(figures.authorless.map(\.id) == ["c0ffee:2", "c0ffee:3"])
        #expect(figures.outliers.map { "\($0.record.id) \($0.kind) \($0.value)" } == ["c0ffee:4 pages 0"])
        #expect(figures.profiles.first { $0.field == "publisher" }?.values == ["Ace": 1, "Gollancz": 1])
        #expect(figures.profiles.first { $0.field == "year" }?.values == ["2001": 3])
    }

    @Test("Removal: logged as removed; every count, the search and the listing of the rest unchanged; numbers never reused; the row stays finished",
          arguments: LibraryEngine.all)
    func removal(_ engine: LibraryEngine) async throws {
        let library = try await Self.shelved(engine)
        _ = try await Self.listed(library, [])
        _ = try await library.search("dune", limit: 5, ranking: 100)
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let removed = try await library.removeRecords(ids: ["c0ffee:3", "nope:1", "c0ffee:3"], command: "remove", at: time)
        #expect(removed == [RecordChange(recordID: "c0ffee:3", field: "record", old: "Children of Dune", new: nil,
                                         kind: .removed, source: "remove", changedAt: time)])
        #expect(try await library.recordChanges(recordID: "c0ffee:3") == removed)
        #expect(try await library.records(ids: ["c0ffee:3"]).isEmpty)
        #expect(try await library.counts().records == 4)
        #expect(try await library.counts().byStatus[.needsCandidateSelection] == nil)
        #expect(try await library.countRecords(statuses: [.pending], fileHashes: ["c0ffee"]) == 3)
        #expect(try await library.reviewQueueCount(kind: nil) == 0)
        #expect(try await library.listingIsCurrent())
        #expect(try await library.searchIndexIsCurrent())
        #expect(try await library.search("dune", limit: 5, ranking: 100).map(\.id).sorted() == ["beef00:1", "c0ffee:1"])
        #expect(try await Self.listed(library, []) == ["1 c0ffee:1", "2 c0ffee:2", "4 c0ffee:4", "5 beef00:1"])
        #expect(try await library.recordIDs(for: .number(3), limit: 2) == [])
        #expect(try await library.finishedRows(fileHash: "c0ffee").contains(3))
        #expect(try await library.finishSourceFile(hash: "c0ffee", rowsTotal: 5, reading: nil, matchedRows: 0))
        // The same row stored again (a resumed import that did not skip it) gets a new number, never 3.
        try await library.committed(try await library.submitInsert([Self.record(3)], runID: nil))
        #expect(try await Self.listed(library, ["title:title"]) == ["6 c0ffee:3"])
    }

    @Test("Forget: a file's records (each logged), rejected rows and registration go; other files stay; the file can be registered anew",
          arguments: LibraryEngine.all)
    func forget(_ engine: LibraryEngine) async throws {
        let library = try await Self.shelved(engine)
        _ = try await Self.listed(library, [])
        let time = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await library.forgetSourceFile(hash: "nope", command: "forget", at: time) == nil)
        let forgotten = try await library.forgetSourceFile(hash: "c0ffee", command: "forget", at: time)
        #expect(forgotten == ForgottenFile(path: "list.csv", records: 4, rejectedRows: 1))
        #expect(try await library.recordChanges(recordID: "c0ffee:1").map(\.kind) == [.removed])
        #expect(try await library.counts().records == 1)
        #expect(try await library.rejections().isEmpty)
        #expect(try await library.sourceFile(hash: "c0ffee") == nil)
        #expect(try await library.sourceFiles().map(\.hash) == ["beef00"])
        #expect(try await library.finishedRows(fileHash: "c0ffee").count == 0)
        #expect(try await Self.listed(library, []) == ["5 beef00:1"])
        #expect(try await library.forgetSourceFile(hash: "c0ffee", command: "forget", at: time) == nil)
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title", "Author"], encoding: "utf-8", size: 100), runID: nil)
        try await library.committed(try await library.submitInsert([Self.record(1)], runID: nil))
        #expect(try await library.sourceFile(hash: "c0ffee")?.isComplete == false)
        #expect(try await Self.listed(library, []) == ["5 beef00:1", "6 c0ffee:1"])
    }
}
