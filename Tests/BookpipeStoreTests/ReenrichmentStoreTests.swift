import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

/// The re-enrichment's store side on real SQLite files: the change log, what is never overwritten,
/// and the overnight order.
@Suite struct ReenrichmentStoreTests {
    func temporaryLibrary() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("reenrich-\(UUID().uuidString).sqlite").path
    }

    func record(_ row: Int) -> BookRecord {
        BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "abc", row: row, line: row + 1, format: "goodreads",
                                        rawFields: ["Title \(row)"]),
                   title: "Title \(row)", authors: ["Author"], rawISBNs: [], year: 2001)
    }

    func enriched(_ record: BookRecord, work: String, edition: String? = nil, title: String = "Title",
                  year: Int? = 2001, source: String = "openlibrary") -> BookRecord {
        var record = record
        let candidate = Candidate(workKey: work, editionKey: edition, title: title, authors: ["Author"], year: year,
                                  source: source, score: 180)
        record.enrichment = EnrichmentResult(status: .enriched, match: Match(
            workKey: work, editionKey: edition, title: title, authors: ["Author"], score: 180, source: source),
            candidates: [candidate])
        return record
    }

    func status(_ record: BookRecord, _ status: RecordStatus, failure: String? = nil) -> BookRecord {
        var record = record
        record.enrichment = EnrichmentResult(status: status, failure: failure)
        return record
    }

    @Test("The share of looked-up rows that reach each source of the chain comes from the matches earlier sources made")
    func lookupReach() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try store.insert((1...10).map(record))
        #expect(try store.lookupReach(chain: ["catalog", "openlibrary", "googlebooks"], minimum: 5) == nil, "nothing looked up yet")
        // 10 looked up: the catalogue matched 4, Open Library 3, Google 1; 2 not found.
        var answered = (1...4).map { enriched(record($0), work: "/works/OL\($0)W", source: "catalog") }
        answered += (5...7).map { enriched(record($0), work: "/works/OL\($0)W") }
        answered += [enriched(record(8), work: "", edition: "googlebooks:x", source: "googlebooks"),
                     status(record(9), .notFound), status(record(10), .notFound)]
        _ = try await store.saveEnrichment(answered, runID: nil)
        let reach = try #require(try store.lookupReach(chain: ["catalog", "openlibrary", "googlebooks"], minimum: 5))
        #expect(reach == ["catalog": 1.0, "openlibrary": 0.6, "googlebooks": 0.3])
        #expect(try store.lookupReach(chain: ["catalog"], minimum: 11) == nil, "too few to go by")
    }

    @Test("A first answer is not a change; a moved match, a new year and a lost match are logged with old, new, source and time")
    func changeLog() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try store.insert([record(1), record(2)])
        let first = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try await store.saveEnrichment([enriched(record(1), work: "/works/OL1W", year: 1990),
                                                enriched(record(2), work: "/works/OL2W")], runID: nil, at: first).isEmpty)
        let later = first.addingTimeInterval(86_400 * 40)
        let changes = try await store.saveEnrichment(
            [enriched(record(1), work: "/works/OL9W", title: "Other", year: 1995, source: "googlebooks"),
             status(record(2), .needsCandidateSelection)], runID: nil, at: later)
        let log = try store.recordChanges(recordID: "abc:1")
        #expect(log == changes.filter { $0.recordID == "abc:1" })
        #expect(log.map(\.field) == ["match", "title", "year"])
        let match = try #require(log.first)
        #expect(match.old == "/works/OL1W" && match.new == "/works/OL9W" && match.kind == .moved)
        #expect(match.source == "googlebooks" && match.changedAt == later)
        #expect(log.last?.old == "1990" && log.last?.new == "1995")
        let lost = try store.recordChanges(recordID: "abc:2")
        #expect(lost.map(\.field) == ["status", "match"])
        #expect(lost.last?.kind == .lost && lost.last?.new == nil)
        // Never silent: both records carry a finding (in show and the report) naming the command
        // that tells the record's story.
        let stored = try store.records(ids: ["abc:1", "abc:2"])
        #expect(stored[0].findings.map(\.code) == ["enrich.match-moved"])
        #expect(stored[1].findings.map(\.code) == ["enrich.match-lost"])
        #expect(stored[0].findings.first?.message.hasSuffix("(/works/OL9W); check it with bookpipe show abc:1.") == true)
        #expect(stored[1].findings.first?.message.hasSuffix("now needsCandidateSelection; check it with bookpipe show abc:2.") == true)
        #expect(stored[1].status == .needsCandidateSelection)
        #expect(try store.counts().byStatus == [.enriched: 1, .needsCandidateSelection: 1])
    }

    @Test("A failed lookup keeps the earlier match; a match a person chose is never overwritten")
    func neverOverwritten() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        var unsure = record(2)
        unsure.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL2W", title: "Title 2", authors: ["Author"], source: "openlibrary", score: 80)])
        try store.insert([record(1), record(2)])
        _ = try await store.saveEnrichment([enriched(record(1), work: "/works/OL1W"), unsure], runID: nil)
        try await store.choose(id: "abc:2", candidate: 1)
        let changes = try await store.saveEnrichment(
            [status(record(1), .failed, failure: "openlibrary: GET …: 503"), enriched(record(2), work: "/works/OL5W")],
            runID: nil)
        #expect(changes.isEmpty)
        let stored = try store.records(ids: ["abc:1", "abc:2"])
        #expect(stored[0].enrichment?.match?.workKey == "/works/OL1W")
        #expect(stored[0].status == .enriched)
        #expect(stored[1].enrichment?.match?.workKey == "/works/OL2W" && stored[1].status == .enriched)
    }

    @Test("An edition key stored as work key, replaced by its work, is a repair, not a move")
    func repairIsNotAMove() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try store.insert([record(1)])
        _ = try await store.saveEnrichment([enriched(record(1), work: "/books/OL7M", edition: "/books/OL7M")], runID: nil)
        #expect(try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending])) == [try key(store, "abc:1")],
                "a stored edition key is queued for repair")
        let changes = try await store.saveEnrichment([enriched(record(1), work: "/works/OL3W", edition: "/books/OL7M")],
                                                     runID: nil)
        #expect(changes.map(\.kind) == [.repaired])
        #expect(try store.records(ids: ["abc:1"]).first?.findings.isEmpty == true)
        #expect(try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending])).isEmpty)
    }

    @Test("The overnight order: failed lookups due, then never enriched, then the stalest; failures behind a quota last")
    func overnightOrder() async throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        try store.insert((1...7).map(record))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let day = 86_400.0
        // 1: enriched 40 days ago; 2: enriched 60 days ago; 3: enriched yesterday; 4, 5: pending;
        // 6: failed (503), retry at once; 7: failed behind a quota that ends tomorrow.
        _ = try await store.saveEnrichment([enriched(record(1), work: "/works/OL1W")], runID: nil, at: now - 40 * day)
        _ = try await store.saveEnrichment([enriched(record(2), work: "/works/OL2W")], runID: nil, at: now - 60 * day)
        _ = try await store.saveEnrichment([enriched(record(3), work: "/works/OL3W")], runID: nil, at: now - day)
        _ = try await store.saveEnrichment([status(record(6), .failed, failure: "openlibrary: 503")], runID: nil,
                                           at: now - 2 * day)
        try await store.saveHostQuota(StoredHostQuota(host: "www.googleapis.com", blockedUntil: now + day, reason: "daily quota"))
        _ = try await store.saveEnrichment([status(record(7), .failed, failure: "googlebooks: quota exhausted")],
                                           runID: nil, at: now - 3 * day + 1)
        // Saved "3 days ago", but the quota stored "now" ends tomorrow: record 7 waits for it.
        let keys = try (1...7).map { try key(store, "abc:\($0)") }
        let queue = try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending, .failed], staleBefore: now - 30 * day,
                                                                  repairsWorkKeys: true, now: now))
        #expect(queue == [keys[5], keys[3], keys[4], keys[1], keys[0], keys[6]])
        // Without --stale, enriched records are not asked.
        let pendingOnly = try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending, .failed], now: now))
        #expect(pendingOnly == [keys[5], keys[3], keys[4], keys[6]])
        // The overnight job without --failed: the failure that is due first, the one behind the quota left out.
        let overnight = try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending], staleBefore: now - 30 * day,
                                                                      retriesDueFailures: true, now: now))
        #expect(overnight == [keys[5], keys[3], keys[4], keys[1], keys[0]])
        // Once the quota has ended, the failure behind it is due first.
        let later = try store.enrichmentQueue(EnrichmentSelection(statuses: [.failed], now: now + 2 * day))
        #expect(Set(later.prefix(2)) == [keys[5], keys[6]])
    }

    @Test("Records enriched without an enrichment time (before v5) are ordered by their last update")
    func migrationDatesOldRecords() async throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        try store.insert([record(1), record(2)])
        try await store.update([enriched(record(1), work: "/works/OL1W")])
        let dates = try store.enrichedAt(recordIDs: ["abc:1", "abc:2"])
        #expect(dates["abc:2"] == nil)
        // Through update (not saveEnrichment), the record has no time yet: the stale query falls back
        // to its last update, so an old library's records are still ordered by age.
        let staleQueue = try store.enrichmentQueue(EnrichmentSelection(statuses: [], staleBefore: Date().addingTimeInterval(60),
                                                                       repairsWorkKeys: false))
        #expect(staleQueue.contains(try key(store, "abc:1")))
    }

    @Test("v9: Google Books volumes stored as work keys are cleared (the volume kept as the edition), so are an unmatched record's edition keys; non-works leave the works table; works and matches enrich repairs stay")
    func migrationClearsSourceSpecificWorkKeys() async throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        try store.insert([record(1), record(2), record(3), record(4)])
        var unmatched = record(3)
        unmatched.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/books/OL9M", title: "Title", authors: ["Author"], source: "catalog", score: 60),
            Candidate(workKey: "/works/OL10W", title: "Title", authors: ["Author"], source: "catalog", score: 50),
        ])
        try await store.update([enriched(record(1), work: "googlebooks:abc123", edition: "googlebooks:abc123", source: "googlebooks"),
                                enriched(record(2), work: "/works/OL7W", edition: "/books/OL7M"), unmatched,
                                enriched(record(4), work: "/books/OL11M", edition: "/books/OL11M")])
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO works (key, title, authors, source, updated_at) VALUES ('googlebooks:abc123', 'Title', '[]', 'googlebooks', 0);
                DELETE FROM grdb_migrations WHERE identifier LIKE 'v9-work-keys%';
                """)
        }
        let reopened = try LibraryStore(path: path)
        let records = try reopened.records(ids: ["abc:1", "abc:2", "abc:3", "abc:4"])
        #expect(records[0].enrichment?.match?.workKey == "")
        #expect(records[0].enrichment?.match?.editionKey == "googlebooks:abc123")
        #expect(records[0].enrichment?.candidates.map(\.workKey) == [""])
        #expect(records[0].enrichment?.acceptedCandidate?.year == 2001)
        #expect(records[1].enrichment?.match?.workKey == "/works/OL7W")
        #expect(records[2].enrichment?.candidates.map(\.workKey) == ["", "/works/OL10W"])
        #expect(records[2].enrichment?.candidates.first?.editionKey == "/books/OL9M")
        #expect(records[3].enrichment?.match?.workKey == "/books/OL11M", "left for enrich, which asks for its work")
        let works = try await queue.read { try String.fetchAll($0, sql: "SELECT key FROM works ORDER BY key") }
        #expect(!works.contains("googlebooks:abc123"))
    }

    func key(_ store: LibraryStore, _ id: String) throws -> Int64 {
        let (hash, row) = try #require(RecordKey.parse(id: id))
        let found = try store.read("id") { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM source_files WHERE hash = ?", arguments: [hash])
        }
        let fileID = try #require(found)
        return RecordKey.make(fileID: fileID, row: row)
    }
}
