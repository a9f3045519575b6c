import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    /// The selection's condition and order over `records r`, with its parameters from `$first` on
    /// (the same order as the SQLite engine's queue: failed and due, never enriched, the rest
    /// stalest first, failed and still blocked last).
    static func selection(_ selection: EnrichmentSelection, first: Int) -> (condition: String, order: String, values: [String?]) {
        let statuses = selection.statuses.isEmpty ? ["pending"] : selection.statuses.map(\.rawValue)
        var values: [String?] = [array(statuses), text(selection.now)]
        let now = "$\(first + 1)::float8"
        var conditions = ["r.status = ANY($\(first)::text[])"]
        if let staleBefore = selection.staleBefore {
            values.append(text(staleBefore))
            conditions.append("(r.status <> 'pending' AND coalesce(r.enriched_at, r.updated_at) < $\(first + 2)::float8)")
        }
        if selection.repairsWorkKeys {
            conditions.append("(r.status = 'enriched' AND r.work_key LIKE '/books/%')")
        }
        if selection.retriesDueFailures && !selection.statuses.contains(.failed) {
            conditions.append("(r.status = 'failed' AND coalesce(r.retry_at, 0) <= \(now))")
        }
        // `now` is named in the condition too, so every parameter has a use whatever the statement.
        let condition = "\(now) IS NOT NULL AND r.locked_fields NOT LIKE '%\"match\"%' AND (\(conditions.joined(separator: " OR ")))"
        let order = """
            CASE WHEN r.status = 'failed' AND coalesce(r.retry_at, 0) <= \(now) THEN 0
                 WHEN r.status = 'pending' THEN 1 WHEN r.status = 'failed' THEN 3 ELSE 2 END,
            r.queue_time, r.file_id, r.row
            """
        return (condition, order, values)
    }

    /// The records `selection` names that a claim may take, as branches that each walk an index
    /// in claim order, lock rows with `SKIP LOCKED` (passing over rows another claim is taking this
    /// moment) and stop after `limit` (`$limit`; NULL: no limit): one per status asked (failed split
    /// into due and not due), per status stale, the misfiled work keys, the due failures. Each
    /// yields `id, bucket, queue_time, file_id, row`; their union holds the first `limit` free
    /// records of the whole order, which the claim sorts. (One query over the `OR` of the
    /// conditions sorted every candidate on each claim: 270 ms for 100,000 pending records, most
    /// of it reading the whole table.) Rows a branch locked but the claim does not take are
    /// unlocked at its commit.
    ///
    /// With `after` (a bucket and the SQL of a `(queue_time, file_id, row)` position), only records
    /// past that place of the order: a branch whose records all sort before it yields none, and
    /// the branch of its bucket starts its index walk there. A branch mixing buckets (stale
    /// failures: due or not) walks from its start.
    static func claimBranches(_ selection: EnrichmentSelection, now: String, stale: String?, limit: String,
                              after: (bucket: Int, position: String)? = nil) -> [String] {
        let free = "r.locked_fields NOT LIKE '%\"match\"%' AND NOT EXISTS (SELECT 1 FROM record_claims k WHERE k.record_id = q.id)"
        let bucketSQL = """
            CASE WHEN q.status = 'failed' AND coalesce(q.retry_at, 0) <= \(now) THEN 0
                 WHEN q.status = 'pending' THEN 1 WHEN q.status = 'failed' THEN 3 ELSE 2 END
            """
        var branches: [String] = []
        // Each branch walks `record_queue` (its indexes, migration 9) and locks both rows: the
        // record's, as a save does before it checks the claims (so the fencing is unchanged), and
        // the queue's, so that a record another worker saved after this statement's snapshot is
        // tested again as last committed and passed over (a row locked is read again). Testing the
        // condition on `records` instead made the planner's guess of its selectivity (none known,
        // 0.5 %) turn the walk into a sort of every candidate.
        func branch(_ condition: String, bucket: Int?) {
            var walked = condition
            if let after, let bucket {
                if bucket < after.bucket { walked = "false" }
                if bucket == after.bucket { walked += " AND (q.queue_time, q.file_id, q.row) > \(after.position)" }
            }
            branches.append("SELECT q.id, \(bucketSQL) AS bucket, q.queue_time, q.file_id, q.row "
                + "FROM record_queue q JOIN records r ON r.id = q.id "
                + "WHERE \(walked) AND \(free) ORDER BY q.queue_time, q.file_id, q.row "
                + "LIMIT \(limit) FOR UPDATE OF q, r SKIP LOCKED")
        }
        let statuses = selection.statuses.isEmpty ? [RecordStatus.pending] : selection.statuses
        let due = "coalesce(q.retry_at, 0) <= \(now)"
        for status in statuses {
            if status == .failed {
                branch("q.status = 'failed' AND \(due)", bucket: 0)
                branch("q.status = 'failed' AND NOT (\(due))", bucket: 3)
            } else {
                branch("q.status = '\(status.rawValue)'", bucket: status == .pending ? 1 : 2)
            }
        }
        if let stale {
            for status in RecordStatus.allCases where status != .pending {
                branch("q.status = '\(status.rawValue)' AND q.queue_time < \(stale)", bucket: status == .failed ? nil : 2)
            }
        }
        if selection.repairsWorkKeys { branch("q.status = 'enriched' AND q.work_key LIKE '/books/%'", bucket: 2) }
        if selection.retriesDueFailures && !selection.statuses.contains(.failed) { branch("q.status = 'failed' AND \(due)", bucket: 0) }
        return branches
    }

    /// Seconds of a duration, as SQL takes them (`$n * interval '1 second'`).
    static func seconds(_ duration: Duration) -> String {
        String(max(0, duration.timeInterval))
    }

    /// Takes, for `owner`, the records `selection` names that no live claim holds, in one
    /// transaction on the server's clock:
    /// 1. owners whose lease ended (`lease_until <= now()`), or that are processes of this host
    ///    that no longer run, are deleted with their claims;
    /// 2. the owner's lease is set to `now() + lease`;
    /// 3. the records are taken with `FOR UPDATE SKIP LOCKED` (another worker claiming at the same
    ///    moment skips them rather than waits), and the claim rows' primary key makes one holder per
    ///    record whatever the interleaving; each claim gets a fencing token from a sequence.
    public func claimRecords(_ selection: EnrichmentSelection, owner: ClaimOwner, lease: Duration, limit: Int?)
        async throws(StoreError) -> RecordClaim {
        try transaction("record claims") { connection in
            // Owners of this host whose process is gone hold nothing, whatever their lease says.
            let local = try connection.execute("SELECT owner, pid FROM claim_owners WHERE host = $1", [owner.host],
                                               what: "claim owners").rows
            let gone = local.compactMap { row -> String? in
                guard let id = row[0], let pid = row[1].flatMap({ Int32($0) }) else { return nil }
                let candidate = ClaimOwner(id: id, host: owner.host, processID: pid, command: "", startedAt: Date())
                return candidate.isGoneFromThisHost ? id : nil
            }
            let removedOwners = try connection.execute("DELETE FROM claim_owners WHERE lease_until <= now() OR owner = ANY($1::text[])",
                                                       [Self.array(gone)], what: "expired claims").affected
            try connection.execute("""
                INSERT INTO claim_owners (owner, host, pid, command, started_at, lease_until)
                VALUES ($1, $2, $3, $4, $5, now() + $6::float8 * interval '1 second')
                ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until
                """, [owner.id, owner.host, String(owner.processID), owner.command, Self.text(owner.startedAt),
                      Self.seconds(lease)], what: "claim owner")
            let (condition, order, values) = Self.selection(selection, first: 2)
            // The claim table holds only work in flight: both reads below start from it and look each
            // record up by its key (LATERAL), never scanning `records`, whatever the table's statistics say.
            // The whole selection: what the owner holds comes first. A batch (a limit): only the next ones.
            var ids = limit != nil ? [] : try connection.execute("""
                SELECT r.id FROM record_claims k
                CROSS JOIN LATERAL (SELECT r.* FROM records r WHERE r.id = k.record_id AND \(condition) LIMIT 1) r
                WHERE k.owner = $1 ORDER BY \(order)
                """, [owner.id] + values, what: "record claims").rows.compactMap { $0[0] }
            let room = limit.map { max(0, $0) }
            if room != 0 {
                // Parameters: $1 owner, $2 now, $3 stale (when asked), then the limit, then the cursor's position.
                let stale = selection.staleBefore.map(Self.text)
                let fixed: [String?] = [owner.id, Self.text(selection.now)] + (stale.map { [$0] } ?? [])
                let limitParameter = "$\(fixed.count + 1)::bigint"
                let position = "($\(fixed.count + 2)::float8, $\(fixed.count + 3)::bigint, $\(fixed.count + 4)::integer)"
                func claim(after cursor: ClaimCursor?) -> String {
                    let branches = Self.claimBranches(selection, now: "$2::float8", stale: stale == nil ? nil : "$3::float8",
                                                      limit: limitParameter, after: cursor.map { ($0.bucket, position) })
                    let definitions = branches.enumerated().map { "branch\($0) AS MATERIALIZED (\($1))" }.joined(separator: ",\n")
                    let union = branches.indices.map { "SELECT * FROM branch\($0)" }.joined(separator: " UNION ALL ")
                    // The cursor's parameters are named whether or not a branch compares with them.
                    let named = cursor == nil ? "" : "WHERE \(position) IS NOT NULL"
                    return """
                        WITH \(definitions),
                        pool AS (SELECT DISTINCT ON (id) * FROM (\(union)) branches \(named) ORDER BY id),
                        candidates AS MATERIALIZED (
                            SELECT * FROM pool ORDER BY bucket, queue_time, file_id, row LIMIT \(limitParameter)),
                        numbered AS (SELECT *, row_number() OVER () AS position FROM candidates),
                        taken AS (
                            INSERT INTO record_claims (record_id, owner, token)
                            SELECT id, $1, nextval('claim_tokens') FROM numbered ORDER BY position
                            ON CONFLICT (record_id) DO NOTHING RETURNING record_id)
                        SELECT numbered.id, taken.record_id IS NOT NULL, numbered.bucket, numbered.queue_time,
                            numbered.file_id, numbered.row
                        FROM numbered LEFT JOIN taken ON taken.record_id = numbered.id ORDER BY numbered.position
                        """
                }
                // A batch claim walks on from where this run's last one stopped (`claimCursors`),
                // not from the start of the order: the records before it are finished, or held by
                // some run — with two workers, each keeping hundreds of records in flight, every
                // claim stepped over them all, an index entry and a claim look-up each (2.1 ms a
                // claim with one worker, 3.8 ms with two; docs/decisions/0037). When the walk
                // from the cursor comes back short, the claim walks again from the start: records
                // passed over (another claim was taking them that moment, their holder's lease
                // ran out, they became due) are found then, and an empty claim still means no free
                // record is left. A claim that removed an owner whose lease ran out walks from the
                // start at once, so its records are taken again within a claim.
                let cursorKey = ClaimCursor.key(owner: owner, selection: selection)
                var cursor = limit == nil || removedOwners > 0 ? nil : claimCursors.withLock { $0[cursorKey] }
                var furthest = cursor
                // A candidate can be a record another claim took the moment before: its claim committed
                // after this statement's snapshot was taken, so the record looked free, its row lock was
                // already released, and only the claim's key refused it. The statement then runs again
                // with a fresh snapshot (which sees that claim) for what is still wanted, so a claim
                // never comes back short, or empty, while free records remain (a batch-by-batch run
                // takes an empty claim for the end of its work).
                var wanted = room
                for _ in 0..<9 {
                    let cursorValues: [String?] = cursor.map { [$0.queueTime, $0.fileID, $0.row] } ?? []
                    let rows = try connection.execute(claim(after: cursor), fixed + [wanted.map(String.init)] + cursorValues,
                                                      what: "record claims").rows
                    let taken = rows.filter { $0[1] == "t" }
                    ids += taken.compactMap { $0[0] }
                    for row in taken {
                        if let place = ClaimCursor(row: row), furthest.map({ place > $0 }) ?? true { furthest = place }
                    }
                    wanted = wanted.map { $0 - taken.count }
                    if wanted == 0 { break }
                    if taken.count == rows.count {
                        // The walk ran out: from the cursor, walk again from the start; from the start, nothing is left.
                        guard cursor != nil else { break }
                        cursor = nil
                    }
                }
                if limit != nil, let furthest { claimCursors.withLock { $0[cursorKey] = furthest } }
            }
            // From the few owners to each one's claims by the owner index: `record_claims` churns (a
            // row in and out for every record worked), so a scan of it would step over every dead row
            // left since the last vacuum (3 ms a claim with one worker, 9 ms with two, measured).
            // A batch (a limit) that took all it asked for counts nothing (the contract): with two
            // workers the count was 1.96 ms of every claim at 100,000 rows, growing with the claims
            // taken, since the owner index keeps dead entries until a vacuum (docs/decisions/0037).
            // A batch that comes back short counts every record the others hold, as the SQLite
            // engine does: looking each one up to test the selection read four index and table
            // pages a record held (1.8 ms a claim with two workers). The whole selection counts
            // only the held records it names.
            let holders: [ClaimHolder]
            if let limit, ids.count >= limit {
                holders = []
            } else if limit != nil {
                holders = try connection.execute("""
                    SELECT o.owner, o.host, o.pid, o.command, o.started_at, extract(epoch FROM o.lease_until), held.records
                    FROM claim_owners o CROSS JOIN LATERAL (
                        SELECT count(*) AS records FROM record_claims k WHERE k.owner = o.owner) held
                    WHERE o.owner <> $1 AND held.records > 0
                    ORDER BY o.owner
                    """, [owner.id], what: "record claims").rows.map(Self.holder)
            } else {
                holders = try connection.execute("""
                    SELECT o.owner, o.host, o.pid, o.command, o.started_at, extract(epoch FROM o.lease_until), held.records
                    FROM claim_owners o CROSS JOIN LATERAL (
                        SELECT count(*) AS records FROM record_claims k
                        CROSS JOIN LATERAL (SELECT 1 FROM records r WHERE r.id = k.record_id AND \(condition) LIMIT 1) r
                        WHERE k.owner = o.owner) held
                    WHERE o.owner <> $1 AND held.records > 0
                    ORDER BY o.owner
                    """, [owner.id] + values, what: "record claims").rows.map(Self.holder)
            }
            return RecordClaim(ids: ids, heldElsewhere: holders)
        }
    }

    /// How many records `selection` names that no live claim holds (leases on the server's clock).
    public func countClaimable(_ selection: EnrichmentSelection) async throws(StoreError) -> Int {
        try withConnection("records to claim") { connection in
            let (condition, _, values) = Self.selection(selection, first: 1)
            return try connection.execute("""
                SELECT count(*) FROM records r WHERE \(condition) AND NOT EXISTS (
                    SELECT 1 FROM record_claims k JOIN claim_owners o ON o.owner = k.owner
                    WHERE k.record_id = r.id AND o.lease_until > now())
                """, values, what: "records to claim", reading: true).scalar.flatMap { Int($0) } ?? 0
        }
    }

    /// A holder from `owner, host, pid, command, started_at, lease_until (epoch), count`.
    static func holder(_ row: [String?]) -> ClaimHolder {
        ClaimHolder(owner: ClaimOwner(id: row[0] ?? "", host: row[1] ?? "", processID: row[2].flatMap { Int32($0) } ?? 0,
                                      command: row[3] ?? "", startedAt: date(row[4]) ?? Date(timeIntervalSince1970: 0)),
                    records: row[6].flatMap { Int($0) } ?? 0, leaseUntil: date(row[5]) ?? Date(timeIntervalSince1970: 0))
    }

    /// Extends `owner`'s lease to `now() + lease` on the server's clock (a heartbeat). False when
    /// the owner is no longer listed: its lease ran out and another claim removed it with its claims.
    public func renewClaims(owner: ClaimOwner, lease: Duration) async throws(StoreError) -> Bool {
        try withConnection("claim lease", reading: false) { connection in
            try connection.execute("""
                UPDATE claim_owners SET lease_until = greatest(lease_until, now() + $2::float8 * interval '1 second')
                WHERE owner = $1
                """, [owner.id, Self.seconds(lease)], what: "claim lease").affected > 0
        }
    }

    /// Gives up every claim `owner` holds.
    public func releaseClaims(owner: ClaimOwner) async throws(StoreError) {
        claimCursors.withLock { cursors in cursors = cursors.filter { !$0.key.hasPrefix(owner.id + "\u{1F}") } }
        try withConnection("claim release", reading: false) { connection in
            try connection.execute("DELETE FROM claim_owners WHERE owner = $1", [owner.id], what: "claim release")
        }
    }

    /// The live claims, by owner (leases ended on the server's clock, and processes of this host
    /// that no longer run, are left out).
    public func claimHolders() async throws(StoreError) -> [ClaimHolder] {
        try withConnection("claims") { connection in
            try connection.execute("""
                SELECT o.owner, o.host, o.pid, o.command, o.started_at, extract(epoch FROM o.lease_until), count(*)
                FROM record_claims k JOIN claim_owners o ON o.owner = k.owner
                WHERE o.lease_until > now() GROUP BY o.owner ORDER BY o.owner
                """, what: "claims", reading: true).rows.map(Self.holder).filter { !$0.owner.isGoneFromThisHost }
        }
    }
}

/// A place in a selection's claim order: a record's bucket (due failures, never enriched, the
/// rest, failures not due) and its `(queue_time, file_id, row)`, as the server gave them (text:
/// `float8` text round-trips exactly).
struct ClaimCursor: Comparable {
    var bucket: Int
    var queueTime: String
    var fileID: String
    var row: String

    /// From a claim's row `id, taken, bucket, queue_time, file_id, row`.
    init?(row: [String?]) {
        guard row.count >= 6, let bucket = row[2].flatMap({ Int($0) }), let queueTime = row[3], let fileID = row[4],
              let number = row[5] else { return nil }
        self.bucket = bucket
        self.queueTime = queueTime
        self.fileID = fileID
        self.row = number
    }

    /// The key of a run's cursor: its owner, and what the selection names (not its `now`).
    static func key(owner: ClaimOwner, selection: EnrichmentSelection) -> String {
        [owner.id, selection.statuses.map(\.rawValue).joined(separator: ","),
         selection.staleBefore.map { String($0.timeIntervalSince1970) } ?? "-",
         String(selection.repairsWorkKeys), String(selection.retriesDueFailures)].joined(separator: "\u{1F}")
    }

    static func < (left: ClaimCursor, right: ClaimCursor) -> Bool {
        let leftPlace = (left.bucket, Double(left.queueTime) ?? 0, Int64(left.fileID) ?? 0, Int64(left.row) ?? 0)
        let rightPlace = (right.bucket, Double(right.queueTime) ?? 0, Int64(right.fileID) ?? 0, Int64(right.row) ?? 0)
        return leftPlace < rightPlace
    }
}
