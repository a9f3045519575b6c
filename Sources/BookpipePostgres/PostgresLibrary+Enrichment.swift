import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    // MARK: - Lookup cache and host quotas

    /// The cached answers of `source` to these questions (fetched at or after `notBefore`), by question.
    public func cachedAnswers(source: String, questions: [String], notBefore: Date?) async throws(StoreError)
        -> [String: CachedAnswer] {
        guard !questions.isEmpty else { return [:] }
        return try withConnection("cached answers") { connection in
            var answers: [String: CachedAnswer] = [:]
            for row in try connection.execute("""
                SELECT question, answer, fetched_at FROM lookup_cache
                WHERE source = $1 AND question = ANY($2::text[]) AND ($3::float8 IS NULL OR fetched_at >= $3::float8)
                """, [source, Self.array(questions), notBefore.map(Self.text)], what: "cached answers", reading: true).rows {
                guard let question = row[0], let answer = row[1], let fetchedAt = Self.date(row[2]) else { continue }
                answers[question] = CachedAnswer(answerJSON: answer, fetchedAt: fetchedAt)
            }
            return answers
        }
    }

    /// Stores answers; an answer already cached for a question is replaced.
    public func cacheAnswers(source: String, _ answers: [(question: String, answerJSON: String)], fetchedAt: Date)
        async throws(StoreError) {
        guard !answers.isEmpty else { return }
        try transaction("\(answers.count) cached answers") { connection in
            for answer in answers {
                try connection.execute("""
                    INSERT INTO lookup_cache (source, question, answer, fetched_at) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (source, question) DO UPDATE SET answer = excluded.answer, fetched_at = excluded.fetched_at
                    """, [source, answer.question, answer.answerJSON, Self.text(fetchedAt)], what: "cached answers")
            }
        }
    }

    /// Takes the questions no other asker holds (or whose lease ran out on the server's clock) in
    /// one statement; returns those `asker` holds now.
    public func takeQuestions(source: String, _ questions: [String], asker: String, lease: Duration) async throws(StoreError)
        -> Set<String> {
        guard !questions.isEmpty else { return [] }
        return try withConnection("questions to \(source)", reading: false) { connection in
            let rows = try connection.execute("""
                INSERT INTO questions_in_flight (source, question, asker, lease_until)
                SELECT $1, question, $3, now() + $4::float8 * interval '1 second' FROM unnest($2::text[]) AS question
                ON CONFLICT (source, question) DO UPDATE SET asker = excluded.asker, lease_until = excluded.lease_until
                WHERE questions_in_flight.lease_until <= now() OR questions_in_flight.asker = excluded.asker
                RETURNING question
                """, [source, Self.array(Array(Set(questions))), asker, Self.seconds(lease)], what: "questions to \(source)").rows
            return Set(rows.compactMap { $0[0] })
        }
    }

    /// Gives up questions `asker` took.
    public func releaseQuestions(source: String, _ questions: [String], asker: String) async throws(StoreError) {
        guard !questions.isEmpty else { return }
        try withConnection("questions to \(source)", reading: false) { connection in
            try connection.execute("DELETE FROM questions_in_flight WHERE source = $1 AND question = ANY($2::text[]) AND asker = $3",
                                   [source, Self.array(questions), asker], what: "questions to \(source)")
        }
    }

    /// Who holds each of these questions now (leases run out on the server's clock left out).
    public func questionAskers(source: String, _ questions: [String]) async throws(StoreError) -> [String: String] {
        guard !questions.isEmpty else { return [:] }
        return try withConnection("questions to \(source)") { connection in
            var askers: [String: String] = [:]
            for row in try connection.execute("""
                SELECT question, asker FROM questions_in_flight
                WHERE source = $1 AND question = ANY($2::text[]) AND lease_until > now()
                """, [source, Self.array(questions)], what: "questions to \(source)", reading: true).rows {
                if let question = row[0], let asker = row[1] { askers[question] = asker }
            }
            return askers
        }
    }

    /// How many answers the cache holds.
    public func cachedAnswerCount() async throws(StoreError) -> Int {
        try withConnection("cache size") { connection in
            try connection.execute("SELECT count(*) FROM lookup_cache", what: "cache size", reading: true)
                .scalar.flatMap { Int($0) } ?? 0
        }
    }

    /// The cached lookups for these questions, from every source.
    public func cachedLookups(questions: [String]) async throws(StoreError) -> [CachedLookup] {
        guard !questions.isEmpty else { return [] }
        return try withConnection("lookup cache") { connection in
            try connection.execute("""
                SELECT source, question, answer, fetched_at FROM lookup_cache WHERE question = ANY($1::text[])
                ORDER BY source, question
                """, [Self.array(questions)], what: "lookup cache", reading: true).rows.map { row in
                CachedLookup(source: row[0] ?? "", question: row[1] ?? "", answerJSON: row[2] ?? "",
                             fetchedAt: Self.date(row[3]) ?? Date(timeIntervalSince1970: 0))
            }
        }
    }

    /// The stored block on a host, when one is stored.
    public func hostQuota(host: String) async throws(StoreError) -> StoredHostQuota? {
        try withConnection("host quota") { connection in
            try connection.execute("SELECT blocked_until, reason FROM host_quotas WHERE host = $1", [host],
                                   what: "host quota", reading: true).rows.first.map { row in
                StoredHostQuota(host: host, blockedUntil: Self.date(row[0]) ?? Date(timeIntervalSince1970: 0),
                                reason: row[1] ?? "")
            }
        }
    }

    /// Stores a block on a host; the later end wins.
    public func saveHostQuota(_ quota: StoredHostQuota) async throws(StoreError) {
        try withConnection("host quota", reading: false) { connection in
            try connection.execute("""
                INSERT INTO host_quotas (host, blocked_until, reason) VALUES ($1, $2, $3)
                ON CONFLICT (host) DO UPDATE SET
                    reason = CASE WHEN excluded.blocked_until > host_quotas.blocked_until THEN excluded.reason
                                  ELSE host_quotas.reason END,
                    blocked_until = greatest(host_quotas.blocked_until, excluded.blocked_until)
                """, [quota.host, Self.text(quota.blockedUntil), quota.reason], what: "host quota")
        }
    }

    // MARK: - Saving results

    /// Saves what enrichment found, applying ``ReenrichmentRules`` to each record in one
    /// transaction. With `owner`, completion is fenced: the records' rows are locked first (so a
    /// claim being taken meanwhile commits before the check), a record another owner's claim holds
    /// is not written (``EnrichmentSave/fencedOut``), and this owner's claims on the saved records
    /// are consumed in the same transaction (finished records leave `record_claims`). A batch
    /// costs a fixed number of statements, not a few per record.
    public func saveEnrichment(_ records: [BookRecord], runID: Int64?, at time: Date, owner: ClaimOwner?)
        async throws(StoreError) -> EnrichmentSave {
        let incoming = records.filter { $0.enrichment != nil }
        guard !incoming.isEmpty else { return EnrichmentSave() }
        return try transaction("\(records.count) enrichment results") { connection in
            let seconds = Self.text(time)
            let ids = Self.array(Array(Set(incoming.map(\.id))).sorted())
            // Locked in key order, so two savers never wait on each other in a circle. The statement reads
            // the stored quotas' end too (the same on every row): one round trip less a batch. Without a
            // row, no record is decided, so no quota is needed.
            var stored: [String: (record: BookRecord, locked: Set<String>)] = [:]
            var quotaEnd: Date?
            for row in try connection.execute("""
                SELECT id, data, locked_fields, (SELECT max(blocked_until) FROM host_quotas WHERE blocked_until > $2)
                FROM records WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE OF records
                """, [ids, seconds], what: "enrichment results").rows {
                guard let id = row[0] else { continue }
                quotaEnd = Self.date(row[3])
                stored[id] = (try self.decode(BookRecord.self, row[1], what: "record \(id)"),
                              Set(try self.decode([String].self, row[2], what: "locked fields of \(id)")))
            }
            var result = EnrichmentSave()
            var fenced = Set<String>()
            if let owner {
                // Read after the rows are locked: a claim taken meanwhile has committed by now. One
                // statement reads the claims on these records by their key, consumes this owner's and
                // returns the others' (fenced out). The claims to consume are named by key, never
                // looked up by owner: every claim the owner ever took shares that key, and until a
                // vacuum the owner index leads through all of them (0037). No claim on these records
                // can appear or change hands meanwhile: their rows are locked, and a claim locks first.
                for row in try connection.execute("""
                    WITH held AS MATERIALIZED (
                        SELECT record_id, owner FROM record_claims WHERE record_id = ANY($1::text[])),
                    consumed AS (
                        DELETE FROM record_claims k
                        WHERE k.record_id = ANY(ARRAY(SELECT record_id FROM held WHERE owner = $2)))
                    SELECT record_id FROM held WHERE owner <> $2
                    """, [ids, owner.id], what: "record claims").rows {
                    if let id = row[0] { fenced.insert(id) }
                }
            }
            var retries: [String: Date] = [:]
            var writes: [RecordUpdate] = []
            for record in incoming {
                guard let new = record.enrichment, let (before, locked) = stored[record.id] else { continue }
                if fenced.contains(record.id) {
                    result.fencedOut.append(record.id)
                    continue
                }
                let state = StoredEnrichmentState(
                    status: before.status, reviewStatus: before.reviewStatus, lockedFields: locked,
                    enrichment: before.enrichment,
                    editedTitleAndAuthors: before.reviewStatus == .userEdited ? (before.title, before.authors) : nil)
                switch ReenrichmentRules.decide(record, stored: state, quotaEnd: quotaEnd, at: time) {
                case .keep:
                    continue
                case .retryLater(let retryAt):
                    retries[record.id] = retryAt
                case .write(let decided, let changes, let retryAt):
                    // Only status, findings and enrichment are written (never a person's fields).
                    var written = before
                    written.enrichment = decided.enrichment ?? new
                    written.findings = decided.findings
                    // A record named again in the batch is decided from this write, as a second save would.
                    stored[record.id] = (written, locked)
                    writes.append(RecordUpdate(record: written, lookedUp: (time, retryAt)))
                    result.changes += changes
                }
            }
            try self.writeUpdates(writes, runID: runID, connection)
            if !retries.isEmpty {
                try connection.execute("""
                    UPDATE records r SET enriched_at = coalesce(r.enriched_at, $2::float8), retry_at = due.retry_at
                    FROM unnest($1::text[], $3::float8[]) AS due(id, retry_at) WHERE r.id = due.id
                    """, [Self.array(Array(retries.keys)), seconds, Self.array(retries.values.map { Self.text($0) })],
                    what: "enrichment results")
            }
            try self.log(result.changes, runID: runID, connection)
            return result
        }
    }

    /// Appends changes to the change log, in one statement.
    func log(_ changes: [RecordChange], runID: Int64?, _ connection: PostgresConnection) throws {
        guard !changes.isEmpty else { return }
        try connection.execute("""
            INSERT INTO record_changes (record_id, field, old, new, kind, source, run_id, changed_at)
            SELECT c.record_id, c.field, c.old, c.new, c.kind, c.source, $7::bigint, c.changed_at
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $8::float8[])
                AS c(record_id, field, old, new, kind, source, changed_at)
            """, [Self.array(changes.map(\.recordID)), Self.array(changes.map(\.field)), Self.array(changes.map(\.old)),
                  Self.array(changes.map(\.new)), Self.array(changes.map { $0.kind?.rawValue }), Self.array(changes.map(\.source)),
                  Self.text(runID), Self.array(changes.map { Self.text($0.changedAt) })], what: "change log")
    }

    /// Each source's share of looked-up rows, nil with fewer than `minimum` looked up.
    public func lookupReach(chain: [String], minimum: Int) async throws(StoreError) -> [String: Double]? {
        try withConnection("lookup history") { connection in
            var matched: [String: Int] = [:]
            var total = 0
            for row in try connection.execute("""
                SELECT data::jsonb -> 'enrichment' -> 'match' ->> 'source', count(*) FROM records
                WHERE status IN ('enriched', 'notFound', 'needsCandidateSelection') GROUP BY 1
                """, what: "lookup history", reading: true).rows {
                let count = row[1].flatMap { Int($0) } ?? 0
                total += count
                if let source = row[0] { matched[source, default: 0] += count }
            }
            return EnrichmentSelection.reach(chain: chain, matchedBySource: matched, lookedUp: total, minimum: minimum)
        }
    }

    /// The change log of one record, oldest first.
    public func recordChanges(recordID: String) async throws(StoreError) -> [RecordChange] {
        try withConnection("record changes") { connection in
            try connection.execute("""
                SELECT field, old, new, kind, source, changed_at FROM record_changes WHERE record_id = $1 ORDER BY id
                """, [recordID], what: "record changes", reading: true).rows.map { row in
                RecordChange(recordID: recordID, field: row[0] ?? "", old: row[1], new: row[2],
                             kind: row[3].flatMap(RecordChange.Kind.init(rawValue:)), source: row[4],
                             changedAt: Self.date(row[5]) ?? Date(timeIntervalSince1970: 0))
            }
        }
    }

    /// When each of these records was last enriched (absent: never).
    public func enrichedAt(recordIDs: [String]) async throws(StoreError) -> [String: Date] {
        guard !recordIDs.isEmpty else { return [:] }
        return try withConnection("enrichment times") { connection in
            var result: [String: Date] = [:]
            for row in try connection.execute("""
                SELECT id, enriched_at FROM records WHERE id = ANY($1::text[]) AND enriched_at IS NOT NULL
                """, [Self.array(recordIDs)], what: "enrichment times", reading: true).rows {
                if let id = row[0], let date = Self.date(row[1]) { result[id] = date }
            }
            return result
        }
    }

    /// Keeps a run's per-source request figures.
    public func recordRunSources(_ counters: [SourceCounters], runID: Int64) async throws(StoreError) {
        guard !counters.isEmpty else { return }
        try transaction("run sources") { connection in
            for counter in counters {
                try connection.execute("""
                    INSERT INTO run_sources (run_id, source, counters) VALUES ($1, $2, $3)
                    ON CONFLICT (run_id, source) DO UPDATE SET counters = excluded.counters
                    """, [String(runID), counter.name, try self.encode(counter)], what: "run sources")
            }
        }
    }
}
