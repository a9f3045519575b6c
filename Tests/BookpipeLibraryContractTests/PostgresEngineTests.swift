import BookpipeCore
import BookpipeLibrary
@testable import BookpipePostgres
import Foundation
import Testing

/// What the PostgreSQL engine adds to the contract: claims by workers on many machines (leases on
/// the server's clock, heartbeats, fencing), and connection failures in one clear line each.
@Suite struct PostgresEngineTests {
    static let pending = EnrichmentSelection(statuses: [.pending])

    /// A new library of `rows` pending records, and its conninfo (to open more handles, as other workers would).
    static func library(rows: Int) async throws -> (PostgresLibrary, String) {
        let conninfo = try PostgresTestServer.newDatabase()
        let library = try PostgresLibrary(url: conninfo)
        try await library.registerSourceFile(SourceFileInfo(hash: "c0ffee", path: "list.csv", format: "goodreads",
                                                            header: ["Title"], encoding: "utf-8", size: 100), runID: nil)
        _ = try await library.submitInsert((1...rows).map { LibraryContractTests.record($0) }, runID: nil)
        return (library, conninfo)
    }

    /// An owner on another machine: only its lease decides whether its claims are live.
    static func elsewhere(_ name: String) -> ClaimOwner {
        ClaimOwner(id: "worker-\(name).example:4242:\(UUID().uuidString)", host: "worker-\(name).example", processID: 4242,
                   command: "bookpipe enrich", startedAt: Date())
    }

    @Test("Four workers drain a library in small claims at once: every record is claimed and saved exactly once; a claim comes back short only when nothing is left")
    func workersShareTheWork() async throws {
        let (library, conninfo) = try await Self.library(rows: 400)
        let workers = try (0..<4).map { _ in try PostgresLibrary(url: conninfo) }
        let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
            for (index, worker) in workers.enumerated() {
                group.addTask {
                    let owner = Self.elsewhere("\(index)")
                    var mine: [String] = []
                    while true {
                        let claim = try await worker.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 7)
                        // Short (or empty) only at the end: records are only ever taken here, never
                        // given back, so none can have become free since (a batch-by-batch run stops
                        // at an empty claim: a spurious one would leave work undone).
                        if claim.ids.count < 7 {
                            #expect(try await worker.countClaimable(Self.pending) == 0, "a short claim while records were free")
                        }
                        if claim.ids.isEmpty { break }
                        var results = try await worker.records(ids: claim.ids)
                        for index in results.indices { results[index].enrichment = EnrichmentResult(status: .notFound) }
                        let saved = try await worker.saveEnrichment(results, runID: nil, at: Date(), owner: owner)
                        #expect(saved.fencedOut.isEmpty)
                        mine += claim.ids
                    }
                    try await worker.releaseClaims(owner: owner)
                    return mine
                }
            }
            var all: [String] = []
            for try await ids in group { all += ids }
            return all
        }
        #expect(claimed.count == 400)
        #expect(Set(claimed).count == 400)
        #expect(try await library.counts().byStatus == [.notFound: 400])
        #expect(try await library.claimHolders().isEmpty, "finished records leave the claim table")
    }

    @Test("A holder on another machine keeps its records while its lease lasts; once it lapses they are taken again")
    func deadHolderElsewhere() async throws {
        let (library, conninfo) = try await Self.library(rows: 5)
        let other = try PostgresLibrary(url: conninfo)
        let alive = Self.elsewhere("alive")
        #expect(try await library.claimRecords(Self.pending, owner: alive, lease: .seconds(3600), limit: 2).ids.count == 2)
        let dead = Self.elsewhere("dead")
        // A lease of zero has run out on the server's clock by the next transaction: a worker that died.
        #expect(try await other.claimRecords(Self.pending, owner: dead, lease: .zero, limit: 2).ids == ["c0ffee:3", "c0ffee:4"])
        let next = try await other.claimRecords(Self.pending, owner: Self.elsewhere("next"), lease: .seconds(60), limit: nil)
        #expect(next.ids == ["c0ffee:3", "c0ffee:4", "c0ffee:5"])
        #expect(next.heldElsewhere.map(\.owner.id) == [alive.id])
        #expect(next.heldElsewhereCount == 2)
    }

    @Test("A batch claim walks on from where the run's last one stopped, yet records freed behind it are taken: at once when a lease ran out, before the claim comes back empty when released")
    func claimCursorFindsRecordsBehindIt() async throws {
        let (library, conninfo) = try await Self.library(rows: 8)
        let other = try PostgresLibrary(url: conninfo)
        let owner = Self.elsewhere("walker")
        let ids = { (rows: ClosedRange<Int>) in rows.map { "c0ffee:\($0)" } }
        let dying = Self.elsewhere("dying")
        #expect(try await other.claimRecords(Self.pending, owner: dying, lease: .seconds(3600), limit: 2).ids == ids(1...2))
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 2).ids == ids(3...4))
        // The other worker dies: its lease runs out on the server's clock (set here, rather than waited for).
        try other.withConnection("lease") { connection in
            try connection.execute("UPDATE claim_owners SET lease_until = now() - interval '1 second' WHERE owner = $1",
                                   [dying.id], what: "lease")
        }
        // The claim that removes the dead owner walks from the start: its records first, not 5 and 6.
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 2).ids == ids(1...2))
        let leaving = Self.elsewhere("leaving")
        #expect(try await other.claimRecords(Self.pending, owner: leaving, lease: .seconds(60), limit: 2).ids == ids(5...6))
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 2).ids == ids(7...8))
        // 5 and 6 are given back behind the owner's place: the walk from there finds nothing, the walk
        // from the start finds them, so the claim is not empty while free records remain.
        try await other.releaseClaims(owner: leaving)
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 3).ids == ids(5...6))
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: 3).ids.isEmpty)
    }

    @Test("A claim goes with its record and with its owner: a removed record, a released owner and one whose lease ran out leave no claim behind")
    func claimsGoWithRecordAndOwner() async throws {
        let (library, conninfo) = try await Self.library(rows: 6)
        let other = try PostgresLibrary(url: conninfo)
        let kept = Self.elsewhere("kept")
        #expect(try await library.claimRecords(Self.pending, owner: kept, lease: .seconds(3600), limit: 3).ids.count == 3)
        let lapsing = Self.elsewhere("lapsing")
        #expect(try await other.claimRecords(Self.pending, owner: lapsing, lease: .zero, limit: 2).ids.count == 2)
        let claims = {
            try library.withConnection("test") { connection in
                try connection.execute("SELECT record_id, owner FROM record_claims ORDER BY record_id", what: "test").rows
                    .map { "\($0[0] ?? "")=\($0[1] == kept.id ? "kept" : "other")" }
            }
        }
        #expect(try claims() == ["c0ffee:1=kept", "c0ffee:2=kept", "c0ffee:3=kept", "c0ffee:4=other", "c0ffee:5=other"])
        _ = try await library.removeRecords(ids: ["c0ffee:2"], command: "bookpipe remove", at: Date())
        #expect(try claims() == ["c0ffee:1=kept", "c0ffee:3=kept", "c0ffee:4=other", "c0ffee:5=other"])
        // The next claim removes the owner whose lease ran out, and its claims with it.
        let next = Self.elsewhere("next")
        #expect(try await other.claimRecords(Self.pending, owner: next, lease: .seconds(60), limit: 1).ids == ["c0ffee:4"])
        #expect(try claims() == ["c0ffee:1=kept", "c0ffee:3=kept", "c0ffee:4=other"])
        try await library.releaseClaims(owner: kept)
        #expect(try claims() == ["c0ffee:4=other"])
    }

    @Test("A lookup failed on a quota is retried when the stored quota ends: the save reads the quota with the records it locks")
    func quotaFailureWaitsForQuota() async throws {
        let (library, _) = try await Self.library(rows: 2)
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded())
        let until = now.addingTimeInterval(3600)
        try await library.saveHostQuota(StoredHostQuota(host: "https://www.googleapis.com", blockedUntil: until, reason: "daily quota"))
        var results = try await library.records(ids: ["c0ffee:1", "c0ffee:2"])
        results[0].enrichment = EnrichmentResult(status: .failed, failure: "googlebooks: daily quota exhausted")
        results[1].enrichment = EnrichmentResult(status: .failed, failure: "503")
        _ = try await library.saveEnrichment(results, runID: nil, at: now, owner: nil)
        let retries = try library.withConnection("test") { connection in
            try connection.execute("SELECT id, retry_at FROM records ORDER BY id", what: "test").rows.map { "\($0[0] ?? "")=\($0[1] ?? "-")" }
        }
        // The quota's end for the quota failure, the save's time (at once) for the other.
        #expect(retries == ["c0ffee:1=\(Int(until.timeIntervalSince1970))", "c0ffee:2=\(Int(now.timeIntervalSince1970))"])
    }

    @Test("A heartbeat extends the lease: a lease renewed before it lapses keeps the records from other workers")
    func heartbeatExtendsLease() async throws {
        let (library, conninfo) = try await Self.library(rows: 3)
        let other = try PostgresLibrary(url: conninfo)
        let owner = Self.elsewhere("busy")
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(3600), limit: nil).ids.count == 3)
        #expect(try await library.renewClaims(owner: owner, lease: .seconds(3600)))
        let holders = try await other.claimHolders()
        #expect(holders.map(\.records) == [3])
        // The lease is the server's now() + lease: about an hour from now, whatever this machine's clock says.
        let leaseUntil = try #require(holders.first?.leaseUntil)
        #expect(abs(leaseUntil.timeIntervalSinceNow - 3600) < 300)
        let late = try await other.claimRecords(Self.pending, owner: Self.elsewhere("late"), lease: .seconds(60), limit: nil)
        #expect(late.ids.isEmpty)
        #expect(late.heldElsewhereCount == 3)
    }

    @Test("A stale worker's completion is refused after another took its records")
    func fencedCompletion() async throws {
        let (library, conninfo) = try await Self.library(rows: 2)
        let other = try PostgresLibrary(url: conninfo)
        let stale = Self.elsewhere("stale")
        #expect(try await library.claimRecords(Self.pending, owner: stale, lease: .zero, limit: nil).ids.count == 2)
        let fresh = Self.elsewhere("fresh")
        #expect(try await other.claimRecords(Self.pending, owner: fresh, lease: .seconds(60), limit: nil).ids.count == 2)
        #expect(try await library.renewClaims(owner: stale, lease: .seconds(60)) == false, "its heartbeat learns it lost them")
        var staleResults = try await library.records(ids: ["c0ffee:1", "c0ffee:2"])
        for index in staleResults.indices { staleResults[index].enrichment = EnrichmentResult(status: .notFound) }
        let refused = try await library.saveEnrichment(staleResults, runID: nil, at: Date(), owner: stale)
        #expect(refused.fencedOut == ["c0ffee:1", "c0ffee:2"])
        #expect(try await library.counts().byStatus == [.pending: 2])
        var freshResults = staleResults
        for index in freshResults.indices { freshResults[index].enrichment = EnrichmentResult(status: .failed, failure: "503") }
        #expect(try await other.saveEnrichment(freshResults, runID: nil, at: Date(), owner: fresh).fencedOut.isEmpty)
        #expect(try await library.counts().byStatus == [.failed: 2])
        #expect(try await library.claimHolders().isEmpty)
    }

    @Test("Connection failures say what is wrong in one line: no server, a refused password, a missing database")
    func connectionFailures() throws {
        guard let server = ProcessInfo.processInfo.environment["BOOKPIPE_TEST_POSTGRES"] else { throw PostgresTestServer.Missing() }
        func failure(_ conninfo: String) -> String {
            do {
                _ = try PostgresLibrary(url: conninfo)
                return "opened"
            } catch {
                return "\(error)"
            }
        }
        let refused = failure("host=127.0.0.1 port=1 user=bookpipe dbname=postgres connect_timeout=5")
        #expect(refused.contains("no PostgreSQL server answers there"), "\(refused)")
        let password = failure(server + " user=bookpipe_password password=wrong")
        #expect(password.contains("the server refused the user name or password"), "\(password)")
        #expect(!password.contains("wrong"), "the password is never shown")
        let missing = failure(server + " dbname=no_such_library")
        #expect(missing.contains("database \"no_such_library\" does not exist on the server"), "\(missing)")
        for message in [refused, password, missing] { #expect(!message.contains("\n")) }
        #expect(PostgresLibrary.redacted("postgres://ann:secret@db.example/library") == "postgres://ann:***@db.example/library")
        #expect(PostgresConnection.versionText(110_022) == "11.22")
        #expect(PostgresConnection.minimumServerVersion > 110_022, "a server older than 12 is refused at connection")
    }

    @Test("Migrations are versioned: opened at once or again, a library is migrated once; an older one gets the newer migrations")
    func migrationsOnce() async throws {
        let conninfo = try PostgresTestServer.newDatabase()
        async let first = Task { try PostgresLibrary(url: conninfo) }.value
        async let second = Task { try PostgresLibrary(url: conninfo) }.value
        let (a, b) = try await (first, second)
        _ = try await a.beginRun(command: "bookpipe import", pipeline: "csv-import")
        #expect(try await b.runs().count == 1)
        let reopened = try PostgresLibrary(url: conninfo)
        #expect(try await reopened.runs().count == 1)
        // A library made before migration 2 (as if by an older bookpipe) gets it when opened; its rows stay.
        try reopened.withConnection("test", reading: false) { connection in
            try connection.execute("""
                DROP FUNCTION take_host_token; DROP TABLE host_buckets; DELETE FROM schema_migrations WHERE version = 2
                """, what: "test")
        }
        let upgraded = try PostgresLibrary(url: conninfo)
        #expect(try await upgraded.takeHostToken("openlibrary.org", rate: 1, burst: 1) == .zero)
        #expect(try await upgraded.runs().count == 1)
        let versions = try upgraded.withConnection("test") { connection in
            try connection.execute("SELECT version FROM schema_migrations ORDER BY version", what: "test").rows.compactMap { $0[0] }
        }
        #expect(versions == PostgresSchema.migrations.map { String($0.version) })
    }
}

extension PostgresEngineTests {
    @Test("A connection the server dropped (a restart, an ended backend) is opened again, and the work goes on")
    func reconnects() async throws {
        let (library, conninfo) = try await Self.library(rows: 3)
        let other = try PostgresLibrary(url: conninfo)
        let ended = try other.withConnection("test") { connection in
            try connection.execute("""
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """, what: "test").scalar
        }
        #expect(ended == "1", "the first handle's backend was ended")
        #expect(try await library.counts().records == 3)
        let owner = Self.elsewhere("after-restart")
        #expect(try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: nil).ids.count == 3)
    }
}

extension PostgresEngineTests {
    @Test("Searches and word queries go through pg_trgm's indexes: the plan reads an index, not the table, and finds the same records")
    func trigramSearch() async throws {
        let (library, _) = try await Self.library(rows: 300)
        let plan = try library.withConnection("test") { connection in
            try connection.execute("SET enable_seqscan = off", what: "test")
            defer { _ = try? connection.execute("RESET enable_seqscan", what: "test") }
            return try connection.execute("""
                EXPLAIN SELECT r.id FROM records r
                WHERE r.search_title LIKE '% ' || 'titl' || '%' OR r.search_authors LIKE '% ' || 'titl' || '%'
                """, what: "test").rows.compactMap { $0[0] }.joined(separator: "\n")
        }
        #expect(plan.contains("records_search_title") && plan.contains("records_search_authors"), "\(plan)")
        // Whole words, the last one a word's start: "12" alone, "title 12" also 120 to 129.
        #expect(try await library.search("12 titl", limit: 10, ranking: 100).hits.map(\.id) == ["c0ffee:12"])
        #expect(try await library.search("title 12", limit: 20, ranking: 100).hits.count == 11)
        #expect(try await library.search("ann author", limit: 500, ranking: 500).hits.count == 300)
    }
}

extension PostgresEngineTests {
    /// Every column of every record, as text (`to_jsonb`), by record id and column.
    static func columns(_ library: PostgresLibrary) throws -> [String: [String: String]] {
        try library.withConnection("test") { connection in
            var columns: [String: [String: String]] = [:]
            for row in try connection.execute("SELECT r.id, c.key, c.value FROM records r, jsonb_each_text(to_jsonb(r)) c",
                                              what: "test").rows {
                if let id = row[0], let key = row[1] { columns[id, default: [:]][key] = row[2] ?? "NULL" }
            }
            return columns
        }
    }

    /// The HOT updates of `records` so far: the handle's backend reports its figures first (the
    /// flush is forced, so this reads no clock), then a new transaction reads them.
    static func hotUpdates(_ library: PostgresLibrary) throws -> (hot: Int, all: Int) {
        try library.withConnection("test") { connection in
            try connection.execute("SELECT pg_stat_force_next_flush()", what: "test")
            let row = try connection.execute("SELECT n_tup_hot_upd, n_tup_upd FROM pg_stat_user_tables WHERE relname = 'records'",
                                             what: "test").rows.first
            return (row?[0].flatMap { Int($0) } ?? 0, row?[1].flatMap { Int($0) } ?? 0)
        }
    }

    @Test("An enrichment save is a HOT update: no index of records covers a column it changes, the server counts HOT updates, and record_queue follows every write")
    func enrichmentSaveIsHOT() async throws {
        let (library, conninfo) = try await Self.library(rows: 12)
        try await library.refreshListing()
        let before = try Self.columns(library)
        let hotBefore = try Self.hotUpdates(library)
        let owner = Self.elsewhere("hot")
        let claim = try await library.claimRecords(Self.pending, owner: owner, lease: .seconds(60), limit: nil)
        #expect(claim.ids.count == 12)
        var results = try await library.records(ids: claim.ids)
        for index in results.indices {
            results[index].enrichment = index.isMultiple(of: 3) ? EnrichmentResult(status: .notFound)
                : EnrichmentResult(status: .enriched, match: Match(workKey: "/works/OL\(index)W", editionKey: "/books/OL\(index)M",
                                                                    title: "Title", authors: ["Ann Author"], score: 90, source: "catalog"))
        }
        #expect(try await library.saveEnrichment(results, runID: nil, at: Date(), owner: owner).fencedOut.isEmpty)
        let after = try Self.columns(library)
        var changed = Set<String>()
        for (id, values) in after { for (column, value) in values where before[id]?[column] != value { changed.insert(column) } }
        #expect(changed.isSuperset(of: ["status", "queue_time", "enriched_at", "work_key", "listed", "data"]), "\(changed.sorted())")
        // Every column an index of `records` reads: its keys, its expressions' and its predicate's
        // columns (the server records each as a dependency of the index).
        let indexed = try library.withConnection("test") { connection in
            try connection.execute("""
                SELECT DISTINCT c.relname || '.' || a.attname FROM pg_index i
                JOIN pg_class c ON c.oid = i.indexrelid
                JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
                    AND d.refobjid = i.indrelid AND d.refobjsubid > 0
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = d.refobjsubid
                WHERE i.indrelid = 'records'::regclass
                """, what: "test").rows.compactMap { $0[0] }
        }
        #expect(indexed.contains("records_search_title.search_title"), "the catalogue query reads index columns: \(indexed)")
        let covered = indexed.filter { changed.contains(String($0.split(separator: ".")[1])) }
        #expect(covered.isEmpty, "indexes of records cover columns an enrichment save changes: \(covered.sorted())")
        let hotAfter = try Self.hotUpdates(library)
        #expect(hotAfter.all - hotBefore.all == 12)
        #expect(hotAfter.hot > hotBefore.hot, "no HOT update: \(hotBefore) → \(hotAfter)")
        // The queue's copy of the columns follows inserts, updates and deletes (the triggers of migration 9).
        _ = try await library.submitInsert([LibraryContractTests.record(13)], runID: nil)
        let other = try PostgresLibrary(url: conninfo)
        try other.withConnection("test", reading: false) { connection in
            try connection.execute("UPDATE records SET review_status = 'needsReview', retry_at = 7 WHERE id = 'c0ffee:2'", what: "test")
            try connection.execute("DELETE FROM records WHERE id = 'c0ffee:5'", what: "test")
        }
        let differing = try library.withConnection("test") { connection in
            try connection.execute("""
                SELECT count(*) FROM records r FULL JOIN record_queue q USING (id)
                WHERE (r.file_id, r.row, r.status, r.review_status, r.queue_time, r.retry_at, r.work_key, r.listed)
                    IS DISTINCT FROM (q.file_id, q.row, q.status, q.review_status, q.queue_time, q.retry_at, q.work_key, q.listed)
                """, what: "test").scalar
        }
        #expect(differing == "0")
        #expect(try await library.reviewQueueCount(kind: .scan) == 1)
        #expect(try await library.counts().records == 12)
        #expect(try await library.listingIsCurrent() == false)
    }

    @Test("A library made before migration 9 gets its queue table filled from its records when opened")
    func queueTableMigration() async throws {
        let (library, conninfo) = try await Self.library(rows: 6)
        try library.withConnection("test", reading: false) { connection in
            // Back to migration 8's layout, as an older bookpipe left it, with a record enriched.
            try connection.execute("""
                DROP TABLE record_queue;
                DROP FUNCTION record_queue_insert, record_queue_update, record_queue_delete CASCADE;
                CREATE INDEX records_queue ON records (status, queue_time, file_id, row);
                CREATE INDEX records_misfiled_work ON records (queue_time, file_id, row)
                    WHERE status = 'enriched' AND work_key LIKE '/books/%';
                CREATE INDEX records_unlisted ON records (file_id, row) WHERE NOT listed;
                CREATE INDEX records_review_queue ON records (file_id, row)
                    WHERE review_status = 'needsReview' OR status = 'needsCandidateSelection';
                UPDATE records SET status = 'enriched', enriched_at = 5 WHERE id = 'c0ffee:1';
                DELETE FROM schema_migrations WHERE version = 9
                """, what: "test")
        }
        let upgraded = try PostgresLibrary(url: conninfo)
        #expect(try await upgraded.counts().byStatus == [.pending: 5, .enriched: 1])
        let claim = try await upgraded.claimRecords(Self.pending, owner: Self.elsewhere("upgraded"), lease: .seconds(60), limit: 10)
        #expect(claim.ids == (2...6).map { "c0ffee:\($0)" })
    }
}
