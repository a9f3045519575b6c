import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB
import Synchronization

extension Schema {
    /// v11: claims with leases (docs/decisions/0017). One row per claiming run (its lease, renewed
    /// by one update), one per claimed record; finished records leave the table, so it stays small.
    static func registerClaimMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v11-claims: record claims with leases") { db in
            try db.execute(sql: """
                CREATE TABLE claim_owners (
                    owner TEXT PRIMARY KEY,          -- <host>:<pid>:<random>
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    command TEXT NOT NULL,
                    started_at REAL NOT NULL,        -- seconds since 1970
                    lease_until REAL NOT NULL        -- seconds since 1970; renewed by heartbeats
                );
                CREATE TABLE record_claims (
                    key INTEGER PRIMARY KEY,         -- records.key
                    owner TEXT NOT NULL
                );
                CREATE INDEX record_claims_owner ON record_claims(owner);
                """)
        }
    }
}

extension LibraryStore {
    /// Takes the records `selection` names that no live claim holds, in the selection's order, in
    /// one write transaction (SQLite lets one writer in at a time, so two runs never both take a
    /// record). Owners that are gone — lease expired, or a process of this host that no longer
    /// runs — are removed first, with their claims.
    public func claimRecords(_ selection: EnrichmentSelection, owner: ClaimOwner, lease: Duration, limit: Int?)
        async throws(StoreError) -> RecordClaim {
        let now = Date()
        let leaseUntil = now.addingTimeInterval(lease.timeInterval)
        // Liveness is checked in Swift (a process of this host is asked whether it runs), before the
        // write; inside it, only owners still in the table are removed.
        let gone = try goneOwners(now: now)
        return try await perform("record claims") { db in
            for id in gone {
                try db.execute(sql: "DELETE FROM record_claims WHERE owner = ?", arguments: [id])
                try db.execute(sql: "DELETE FROM claim_owners WHERE owner = ?", arguments: [id])
            }
            try db.cachedStatement(sql: """
                INSERT INTO claim_owners (owner, host, pid, command, started_at, lease_until) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until
                """).execute(arguments: [owner.id, owner.host, owner.processID, owner.command,
                                         owner.startedAt.timeIntervalSince1970, leaseUntil.timeIntervalSince1970])
            let claimedElsewhere = try db.cachedStatement(sql: "SELECT owner FROM record_claims WHERE key = ?")
            let insert = try db.cachedStatement(sql: "INSERT INTO record_claims (key, owner) VALUES (?, ?)")
            if let limit {
                let keys = try self.claimNext(limit, selection, owner: owner, db: db, claimedElsewhere: claimedElsewhere,
                                              insert: insert)
                // What other runs hold, when the claim comes back short (the contract: a full batch
                // counts no holders). The claims table holds only records being worked on, so it is small.
                var heldBy: [String: Int] = [:]
                if keys.count < limit {
                    for row in try Row.fetchAll(
                        db.cachedStatement(sql: "SELECT owner, count(*) AS n FROM record_claims WHERE owner != ? GROUP BY owner"),
                        arguments: [owner.id]) {
                        heldBy[row["owner"]] = row["n"]
                    }
                }
                return RecordClaim(ids: try self.recordIDs(keys: keys, db: db), heldElsewhere: try Self.holders(db, counts: heldBy))
            }
            let queue = try Self.enrichmentQueue(selection, db: db)
            var heldBy: [String: Int] = [:]
            var keys: [Int64] = []
            for key in queue {
                if let holder = try String.fetchOne(claimedElsewhere, arguments: [key]) {
                    // The whole selection: what the owner holds is claimed again.
                    if holder != owner.id { heldBy[holder, default: 0] += 1 } else { keys.append(key) }
                    continue
                }
                try insert.execute(arguments: [key, owner.id])
                keys.append(key)
            }
            let ids = try self.recordIDs(keys: keys, db: db)
            return RecordClaim(ids: ids, heldElsewhere: try Self.holders(db, counts: heldBy))
        }
    }

    /// The next `limit` records of `owner`'s run that no claim holds, claimed. The selection's
    /// order is read once for the run (``claimQueues``) and walked batch by batch: each key is
    /// checked again (held by a claim? still one the selection names?) before it is taken, so a
    /// claim costs its batch, not the whole library (reading the queue again for every batch made
    /// an offline run quadratic: 1.2 ms a row at 10,000 rows, 2.65 ms at 30,000). When the walk
    /// reaches the end, the queue is read again once: records that joined or became due meanwhile
    /// are found, and an empty read ends the run.
    private func claimNext(_ limit: Int, _ selection: EnrichmentSelection, owner: ClaimOwner, db: Database,
                           claimedElsewhere: Statement, insert: Statement) throws -> [Int64] {
        let queueKey = ClaimQueues.key(owner: owner, selection: selection)
        var queue = claimQueues.take(queueKey)
        var readNow = false
        if queue == nil {
            queue = try Self.enrichmentQueue(selection, db: db)[...]
            readNow = true
        }
        var keys: [Int64] = []
        while keys.count < limit {
            guard let key = queue?.popFirst() else {
                if readNow { break }
                queue = try Self.enrichmentQueue(selection, db: db)[...]
                readNow = true
                continue
            }
            // Held by any claim (this run's own too: a batch never returns what its owner holds).
            if try String.fetchOne(claimedElsewhere, arguments: [key]) != nil { continue }
            guard try Self.isSelected(key: key, by: selection, db: db) else { continue }
            try insert.execute(arguments: [key, owner.id])
            keys.append(key)
        }
        if let queue, !queue.isEmpty { claimQueues.keep(queue, for: queueKey) }
        return keys
    }

    /// How many records `selection` names that no live claim holds.
    public func countClaimable(_ selection: EnrichmentSelection) async throws(StoreError) -> Int {
        let gone = Set(try goneOwners(now: Date()))
        return try read("records to claim") { db in
            let queue = try Self.enrichmentQueue(selection, db: db)
            let held = try Row.fetchAll(db, sql: "SELECT key, owner FROM record_claims").compactMap { row -> Int64? in
                gone.contains(row["owner"]) ? nil : row["key"]
            }
            guard !held.isEmpty else { return queue.count }
            let heldKeys = Set(held)
            return queue.reduce(0) { $0 + (heldKeys.contains($1) ? 0 : 1) }
        }
    }

    /// Extends `owner`'s lease; false when the owner's claims were taken over (it is no longer listed).
    public func renewClaims(owner: ClaimOwner, lease: Duration) async throws(StoreError) -> Bool {
        let until = Date().addingTimeInterval(lease.timeInterval).timeIntervalSince1970
        return try await perform("claim lease") { db in
            try db.execute(sql: "UPDATE claim_owners SET lease_until = max(lease_until, ?) WHERE owner = ?",
                           arguments: [until, owner.id])
            return db.changesCount > 0
        }
    }

    /// Gives up every claim `owner` holds.
    public func releaseClaims(owner: ClaimOwner) async throws(StoreError) {
        claimQueues.forget(owner: owner)
        try await perform("claim release") { db in
            try db.execute(sql: "DELETE FROM record_claims WHERE owner = ?", arguments: [owner.id])
            try db.execute(sql: "DELETE FROM claim_owners WHERE owner = ?", arguments: [owner.id])
        }
    }

    /// The live claims, by owner (owners that are gone are left out).
    public func claimHolders() throws(StoreError) -> [ClaimHolder] {
        let now = Date()
        let gone = Set(try goneOwners(now: now))
        return try read("claims") { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT owner, count(*) AS n FROM record_claims GROUP BY owner") {
                let owner: String = row["owner"]
                if !gone.contains(owner) { counts[owner] = row["n"] }
            }
            return try Self.holders(db, counts: counts)
        }
    }

    /// Ids of owners whose claims are no longer live.
    private func goneOwners(now: Date) throws(StoreError) -> [String] {
        try read("claim owners") { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM claim_owners")).compactMap { row -> String? in
                let owner = Self.claimOwner(row)
                let leaseUntil = Date(timeIntervalSince1970: row["lease_until"])
                return owner.holdsLease(until: leaseUntil, now: now) ? nil : owner.id
            }
        }
    }

    private static func claimOwner(_ row: Row) -> ClaimOwner {
        ClaimOwner(id: row["owner"], host: row["host"], processID: row["pid"], command: row["command"],
                   startedAt: Date(timeIntervalSince1970: row["started_at"]))
    }

    private static func holders(_ db: Database, counts: [String: Int]) throws -> [ClaimHolder] {
        try counts.keys.sorted().compactMap { id -> ClaimHolder? in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM claim_owners WHERE owner = ?", arguments: [id])
            else { return nil }
            return ClaimHolder(owner: claimOwner(row), records: counts[id] ?? 0,
                               leaseUntil: Date(timeIntervalSince1970: row["lease_until"]))
        }
    }

    /// The ids of records by key, in the order given.
    func recordIDs(keys: [Int64], db: Database) throws -> [String] {
        var hashes: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, hash FROM source_files") { hashes[row["id"]] = row["hash"] }
        return keys.compactMap { key in
            hashes[key >> 32].map { "\($0):\(key & RecordKey.rowMask)" }
        }
    }
}

/// The rest of each run's queue (``LibraryStore/claimRecords(_:owner:lease:limit:)`` batch by
/// batch), by owner and selection, in this process: what the next claim walks on from.
final class ClaimQueues: Sendable {
    private let queues = Mutex<[String: ArraySlice<Int64>]>([:])

    /// The key of `owner`'s queue for `selection` (the selection's clock left out: it moves each claim).
    static func key(owner: ClaimOwner, selection: EnrichmentSelection) -> String {
        "\(owner.id)|\(selection.statuses.map(\.rawValue))|\(selection.staleBefore?.timeIntervalSince1970 ?? -1)|"
            + "\(selection.repairsWorkKeys)|\(selection.retriesDueFailures)"
    }

    /// Takes the queue kept for `key` (nil: none; read it).
    func take(_ key: String) -> ArraySlice<Int64>? {
        queues.withLock { $0.removeValue(forKey: key) }
    }

    /// Keeps the rest of a queue for the next claim.
    func keep(_ queue: ArraySlice<Int64>, for key: String) {
        queues.withLock { $0[key] = queue }
    }

    /// Forgets every queue of `owner` (its run has ended).
    func forget(owner: ClaimOwner) {
        queues.withLock { queues in
            for key in queues.keys where key.hasPrefix(owner.id + "|") { queues.removeValue(forKey: key) }
        }
    }
}
