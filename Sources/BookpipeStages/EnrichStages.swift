import BookpipeCore
import BookpipeEnrichment
import BookpipePipeline
import BookpipeLibrary
import Foundation
import Synchronization

/// What the command line says about enrichment: on or off, which sources, where they are.
/// Values set here override the pipeline file's parameters.
public struct EnrichmentSettings: Sendable {
    /// False for `--no-enrich`: the enrichment stages pass records through untouched.
    public var isEnabled: Bool
    /// The chain to use instead of the pipeline file's `sources` (`--sources`, `--offline`).
    public var sources: [String]?
    /// The local catalogue file (`--catalog`, `BOOKPIPE_CATALOG`); nil: no catalogue.
    public var catalogPath: String?
    /// Open Library's base URL (`--openlibrary-url`, `BOOKPIPE_OPENLIBRARY_URL`).
    public var openLibraryURL: String?
    /// Google Books' base URL (`--googlebooks-url`, `BOOKPIPE_GOOGLEBOOKS_URL`).
    public var googleBooksURL: String?
    /// Google Books API key (`GOOGLE_BOOKS_API_KEY`; never logged).
    public var googleBooksAPIKey: String?
    /// The contact named in the User-Agent (`--contact`, `BOOKPIPE_CONTACT`).
    public var contact: String?
    /// Ignore cached answers (`--refresh`).
    public var refresh: Bool
    /// Cached answers older than this are asked again (`--max-cache-age`); nil: the pipeline's value.
    public var maximumCacheAge: Duration?
    /// Which records are (re-)enriched: `pending` by default; `bookpipe enrich --failed` adds
    /// `failed`, `--unmatched` adds `notFound` and `needsCandidateSelection`.
    public var statuses: [RecordStatus]
    /// `--stale 30d`: records whose answers are older than this are asked again (their cached
    /// answers, older too, are bypassed; fresher ones, asked by another record, are used).
    public var staleAfter: Duration?
    /// `--until`, `--max-duration`: when the run stops reading and asking.
    public var deadline: EnrichmentDeadline?
    /// What is live in the run's enrichment: the sources and their counters (for progress), the
    /// plan's rows, the HTTP client. The summary is made from the run's events (``EnrichmentSummary``).
    public let run: EnrichmentRun
    /// Requests per second by source name (`openlibrary`, `googlebooks`), instead of the pipeline
    /// file's `openlibraryRate` / `googlebooksRate` (`--openlibrary-rate`, the configuration file).
    public var requestsPerSecond: [String: Double] = [:]

    /// Creates settings; enrichment is on and everything else comes from the pipeline file.
    public init(isEnabled: Bool = true, sources: [String]? = nil, catalogPath: String? = nil,
                openLibraryURL: String? = nil, googleBooksURL: String? = nil, googleBooksAPIKey: String? = nil,
                contact: String? = nil, refresh: Bool = false, maximumCacheAge: Duration? = nil,
                statuses: [RecordStatus] = [.pending], staleAfter: Duration? = nil,
                deadline: EnrichmentDeadline? = nil, run: EnrichmentRun = EnrichmentRun()) {
        self.isEnabled = isEnabled
        self.sources = sources
        self.catalogPath = catalogPath
        self.openLibraryURL = openLibraryURL
        self.googleBooksURL = googleBooksURL
        self.googleBooksAPIKey = googleBooksAPIKey
        self.contact = contact
        self.refresh = refresh
        self.maximumCacheAge = maximumCacheAge
        self.statuses = statuses
        self.staleAfter = staleAfter
        self.deadline = deadline
        self.run = run
    }

    /// The stored records this run asks about and their order (see ``EnrichmentSelection``). The
    /// overnight job (a run with ``staleAfter`` or a ``deadline``) also retries failed lookups
    /// whose retry time has come, first, as its documentation promises, whatever ``statuses`` say.
    public func selection(now: Date = Date()) -> EnrichmentSelection {
        EnrichmentSelection(statuses: statuses, staleBefore: staleAfter.map { now.addingTimeInterval(-$0.timeInterval) },
                            repairsWorkKeys: true, retriesDueFailures: staleAfter != nil || deadline != nil, now: now)
    }
}

/// What is live in one run's enrichment: the sources in use (with their counters, for the progress
/// line), rows finished and expected, the plan, and the HTTP client (created on first use). No step
/// reads another's decision here: those travel on the records (``BookRecord/thisRun``) and the run's
/// summary is made from its events (``EnrichmentSummary``; docs/decisions/0033).
public final class EnrichmentRun: Sendable {
    /// What a remote source's rate limit allows, for the estimate shown before a run.
    public struct Budget: Sendable, Hashable {
        /// The source's name.
        public var source: String
        /// Its rate limit.
        public var requestsPerSecond: Double
        /// ISBNs one request asks (Open Library's Books API: 25; Google Books: 1).
        public var isbnBatchSize: Int
        /// Attempts one request makes at most under the retry policy
        /// (``RetryPolicy/maxAttemptsPerRequest``); 1 when nothing is retried.
        public var attemptsPerRequest: Int = 1
        /// The share of rows expected to reach this source (earlier sources answer the others), from
        /// the library's earlier lookups (``LibraryStore/lookupReach(chain:minimum:)``); nil when the
        /// library has too few: the chain then decides (``EnrichmentEstimate``).
        public var reach: Double?

        /// Creates a budget.
        public init(source: String, requestsPerSecond: Double, isbnBatchSize: Int, attemptsPerRequest: Int = 1,
                    reach: Double? = nil) {
            self.source = source
            self.requestsPerSecond = requestsPerSecond
            self.isbnBatchSize = isbnBatchSize
            self.attemptsPerRequest = attemptsPerRequest
            self.reach = reach
        }
    }

    private struct State {
        var budgets: [Budget] = []
        var sources: [any MetadataSource] = []
        var rowsDone = 0
        var rowsThroughChain = 0
        var rowsExpected: Int?
        var plannedSeconds: Double?
        var client: HTTPClient?
        var warnedAboutContact = false
        var deadline: EnrichmentDeadline?
    }

    private let state = Mutex(State())

    /// Creates an empty run.
    public init() {}

    /// The sources used, in chain order.
    public var sources: [any MetadataSource] { state.withLock { $0.sources } }

    /// The rate budgets of the remote sources, in chain order.
    public var budgets: [Budget] { state.withLock { $0.budgets } }

    func register(budget: Budget) {
        state.withLock { state in
            if !state.budgets.contains(where: { $0.source == budget.source }) { state.budgets.append(budget) }
        }
    }

    /// Sets the share of rows expected to reach each source, from the library's earlier lookups.
    public func setReach(_ reach: [String: Double]) {
        state.withLock { state in
            for index in state.budgets.indices {
                if let share = reach[state.budgets[index].source] { state.budgets[index].reach = share }
            }
        }
    }

    /// Rows whose enrichment finished so far in this run (for progress; the summary counts from the run's events).
    public var rowsDone: Int { state.withLock { $0.rowsDone } }

    /// Rows the run expects (nil until known).
    public var rowsExpected: Int? { state.withLock { $0.rowsExpected } }

    /// True when every source of the chain was given up as unreachable: the run asks nothing more.
    public var noSourceLeft: Bool {
        let sources = self.sources
        return !sources.isEmpty && sources.allSatisfy { $0.unreachableHost != nil }
    }

    /// What each source did so far, in chain order, and which were given up as unreachable
    /// (told at the run's end: ``PipelineEvent/sourcesUsed(_:)``).
    public var sourceOutcomes: [SourceOutcome] {
        sources.map { source in
            SourceOutcome(counters: Self.progress(source), isRemote: source.isRemote,
                          unreachable: source.unreachableHost.map {
                              SourceOutcome.Unreachable(host: $0.host, cause: $0.unreachable.cause, lookupsInARow: $0.unreachable.inARow)
                          })
        }
    }

    /// Sets the deadline a pipeline file gives (`library-records`' `maxDuration`) when the command gave none.
    func setDeadline(_ deadline: EnrichmentDeadline?) { state.withLock { $0.deadline = deadline } }

    /// The deadline of the run: the command's, else the pipeline file's.
    func deadline(_ settings: EnrichmentSettings) -> EnrichmentDeadline? {
        settings.deadline ?? state.withLock { $0.deadline }
    }

    /// True the first time it is asked (the warning about a missing contact is given once).
    func shouldWarnAboutContact() -> Bool {
        state.withLock { state in
            defer { state.warnedAboutContact = true }
            return !state.warnedAboutContact
        }
    }

    /// Sets the number of rows expected (for progress and the plan).
    public func expect(rows: Int?) { state.withLock { $0.rowsExpected = rows } }

    /// Takes `rows` off the rows expected: rows the run chose that a step before the lookups
    /// dropped (a `filter`), so progress ends at the rows actually looked up.
    public func passOver(rows: Int) {
        guard rows > 0 else { return }
        state.withLock { $0.rowsExpected = $0.rowsExpected.map { max(0, $0 - rows) } }
    }

    /// The estimate of each remote source for the rows expected (``EnrichmentEstimate``), in
    /// chain order; empty until rows are expected.
    public var estimates: [EnrichmentEstimate.SourceEstimate] {
        let (rows, budgets, sources) = state.withLock { ($0.rowsExpected, $0.budgets, $0.sources) }
        guard let rows else { return [] }
        return EnrichmentEstimate.estimate(rows: rows, chain: Self.chain(sources: sources, budgets: budgets))
    }

    /// The chain as the estimate sees it: every source in order, the remote ones with their budget.
    static func chain(sources: [any MetadataSource], budgets: [Budget]) -> [EnrichmentEstimate.Source] {
        var names = sources.map(\.name)
        for budget in budgets where !names.contains(budget.source) { names.append(budget.source) }
        return names.map { name in
            guard let budget = budgets.first(where: { $0.source == name }) else {
                return EnrichmentEstimate.Source(name: name, requestsPerSecond: nil)
            }
            return EnrichmentEstimate.Source(name: name, requestsPerSecond: budget.requestsPerSecond,
                                             isbnBatchSize: budget.isbnBatchSize, reach: budget.reach,
                                             attemptsPerRequest: budget.attemptsPerRequest)
        }
    }

    /// The expected time of the run in seconds (the busiest host's), nil without rows expected or
    /// remote sources.
    public var expectedSeconds: Double? {
        let estimates = self.estimates
        return estimates.isEmpty ? nil : EnrichmentEstimate.seconds(estimates)
    }

    /// The plan shown before a run starts: the rows, the chain, the expected requests and time of
    /// each remote source and of the run (the busiest host's: the hosts work at the same time); nil
    /// until rows are expected. With a deadline, what fits.
    public var plan: String? { plan(deadline: nil) }

    /// The plan, with what fits before `deadline`. See ``EnrichmentEstimate`` for the arithmetic.
    ///
    /// ```text
    /// Enriching 1,500 rows from openlibrary → googlebooks: about 3 min 54 s (each host at its own rate, all at once).
    ///   openlibrary: about 702 requests for the 1,500 rows that reach it (42 ISBN batches, 645 title searches, 14 retries) ≈ 3 min 54 s at 3/s
    ///   googlebooks: about 171 requests for 150 rows (10 %) ≈ 2 min 51 s at 1/s
    ///   Assumed until this library has history: …; worst case, every request retried to the policy's limit: 12× the requests.
    /// ```
    public func plan(deadline: EnrichmentDeadline?) -> String? {
        let (rows, sources, budgets) = state.withLock { ($0.rowsExpected, $0.sources, $0.budgets) }
        guard let rows else { return nil }
        let estimates = self.estimates
        let names = Self.chain(sources: sources, budgets: budgets).map(\.name)
        var text = "Enriching \(rows.formatted()) rows from " + names.joined(separator: " → ")
        guard !estimates.isEmpty else { return text + "." }
        text += ": about \(DurationText.describe(seconds: EnrichmentEstimate.seconds(estimates))) "
            + "(each host at its own rate, all at once; cached answers need no request)."
        for estimate in estimates {
            let requests = Int(estimate.requests.rounded())
            let rowsReaching = Int(estimate.rows.rounded())
            let share = estimate.share >= 0.995 ? "the \(rowsReaching.formatted()) rows that reach it"
                : "\(rowsReaching.formatted()) rows (\(Int((estimate.share * 100).rounded())) %\(estimate.shareFromHistory ? " in this library's earlier lookups" : ""))"
            text += "\n  \(estimate.name): about \(requests.formatted()) requests for \(share) "
                + "(\(Int(estimate.isbnRequests.rounded()).formatted()) ISBN \(estimate.isbnRequests == 1 ? "request" : "requests"), "
                + "\(Int(estimate.searches.rounded()).formatted()) title \(Int(estimate.searches.rounded()) == 1 ? "search" : "searches"), "
                + "\(Int(estimate.retries.rounded()).formatted()) \(Int(estimate.retries.rounded()) == 1 ? "retry" : "retries")) "
                + "≈ \(DurationText.describe(seconds: estimate.seconds)) at \(estimate.requestsPerSecond.formatted())/s"
        }
        let assumptions = EnrichmentEstimate.Assumptions()
        var notes: [String] = []
        if estimates.contains(where: { !$0.shareFromHistory }) {
            notes.append("assumed until this library has history: \(Int(assumptions.isbnShare * 100)) % of rows with an ISBN, "
                         + "\(Int(assumptions.isbnSettles * 100)) % of those settled by it, \(Int(assumptions.answeredShare * 100)) % "
                         + "of the rows a source sees answered there")
        }
        notes.append("\(Int(assumptions.retryShare * 100)) % of requests retried")
        if let worst = estimates.map(\.attemptsPerRequest).max(), worst > 1 {
            notes.append("worst case, every request retried to the policy's limit: \(worst)× the requests")
        }
        text += "\n  (" + notes.joined(separator: "; ") + ".)"
        if let deadline, let fits = fits(deadline: deadline) { text += "\n" + fits }
        return text
    }

    /// What fits before the deadline at the expected pace: "48,000 rows need about 4 h 27 min at
    /// these rates; the deadline allows 3 h: about 32,000 in this run." (nil without remote sources).
    public func fits(deadline: EnrichmentDeadline) -> String? {
        let rows = state.withLock { $0.rowsExpected }
        let estimates = self.estimates
        guard let rows, rows > 0, !estimates.isEmpty else { return nil }
        // The hosts work at the same time: the busiest one sets the pace.
        let busiest = EnrichmentEstimate.seconds(estimates)
        let allowed = deadline.remaining.timeInterval
        let fits = EnrichmentEstimate.rowsFitting(rows: rows, estimates: estimates, allowed: allowed)
        return "\(rows.formatted()) rows need about \(DurationText.describe(seconds: busiest)) at these rates "
            + "(each host at its own rate, all at once); the deadline allows \(DurationText.describe(seconds: allowed)): "
            + (fits >= rows ? "all of them." : "about \(fits.formatted()) in this run; the same command continues.")
    }

    func register(_ sources: [any MetadataSource]) {
        state.withLock { state in
            for source in sources where !state.sources.contains(where: { $0.name == source.name }) {
                state.sources.append(source)
            }
        }
    }

    func finished(_ records: [BookRecord]) -> EnrichmentProgress {
        state.withLock { $0.rowsDone += records.count }
        return progress
    }

    /// Notes a row that has left the chain (its batch may still be asking others), for progress.
    func rowLeftChain() -> EnrichmentProgress {
        state.withLock { $0.rowsThroughChain += 1 }
        return progress
    }

    /// The shared HTTP client, created with `configuration` on first use.
    func client(_ configuration: @autoclosure () -> HTTPClientConfiguration) throws -> HTTPClient {
        try state.withLock { state in
            if let client = state.client { return client }
            let client = try HTTPClient(configuration: configuration())
            state.client = client
            return client
        }
    }

    /// Stops the HTTP client (at the end of the run).
    public func shutdown() async {
        let client = state.withLock { state -> HTTPClient? in
            defer { state.client = nil }
            return state.client
        }
        await client?.shutdown()
    }

    /// The current counters of every source: rows done (those that have left the chain count at
    /// once, not when their batch ends), the rows expected (never fewer than done) and the plan's
    /// expected time.
    public var progress: EnrichmentProgress {
        state.withLock { state in
            let done = max(state.rowsDone, state.rowsThroughChain)
            return EnrichmentProgress(rowsDone: done, rowsExpected: state.rowsExpected.map { max($0, done) },
                                      sources: state.sources.map(Self.progress), expectedSeconds: state.plannedSeconds)
        }
    }

    /// Keeps the plan's expected time for progress (computed once, not at every row).
    func notePlannedTime() {
        let seconds = expectedSeconds
        state.withLock { $0.plannedSeconds = seconds }
    }

    private static func progress(_ source: any MetadataSource) -> EnrichmentProgress.Source {
        let snapshot = source.statistics.snapshot
        return EnrichmentProgress.Source(
            name: source.name, requests: snapshot.requests, cacheHits: snapshot.cacheHits, retries: snapshot.retries,
            rateLimited: snapshot.rateLimited, failures: snapshot.failures,
            meanLatencyMilliseconds: snapshot.meanLatency.map {
                Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15
            })
    }
}

/// The enrichment stage.
public enum EnrichmentStages {
    /// `enrich-records`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: EnrichRecords.stageName,
            summary: "Looks records up in the chain of sources (cache first, rate-limited, retried) and scores the candidates.",
            kind: .step, parameters: SourceChain.parameters,
            contract: StageContract(reads: [.storedRecords], writes: [.records])
        ) { parameters in
            try SourceChain.validate(parameters)
            return .stage(EnrichRecords(parameters: parameters))
        },
    ]
}

/// Looks each record up in the chain of sources and scores the candidates (see ``Enricher``).
/// Only records in ``EnrichmentSettings/statuses`` (`pending` unless the command asked for
/// more) are looked up; others pass through unchanged. A record a person edited is looked up
/// like any other, from the person's title and authors (``SaveEnrichment`` never overwrites
/// them). The chain is set up on the first batch from the step's parameters, the run's
/// ``EnrichmentSettings`` (command-line overrides) and the run's ``LibraryStore`` (the cache);
/// without settings, enrichment is off.
public struct EnrichRecords: Stage {
    /// The stage's name in pipeline files.
    public static let stageName = "enrich-records"
    /// The step's parameters (sources, rates, retry policy, match policy).
    public let parameters: StageParameters
    private let enricher = LazyEnricher()

    /// Creates the stage.
    public init(parameters: StageParameters) {
        self.parameters = parameters
    }

    /// Enriches the batch's records that need it.
    /// - Throws: ``SourceChainError`` when a source cannot be set up; ``StoreError`` when the cache
    ///   cannot be read or written.
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        guard let settings = context.resource(EnrichmentSettings.self), settings.isEnabled else { return batch }
        let statuses = settings.statuses
        // Records the reader chose although their status is not asked for (stale answers, stored
        // edition keys) are asked past the cache: their cached answers are as old as they are.
        var indices: [Int] = []
        var stale: [Int] = []
        for index in batch.indices {
            let chosen = batch[index].thisRun.chosenForLookup
            // A failed lookup the reader chose is due (the overnight job retries those): asked
            // like the others, through the cache (a failure is never cached).
            if statuses.contains(batch[index].status) || (chosen && batch[index].status == .failed) {
                indices.append(index)
            } else if chosen {
                stale.append(index)
            }
        }
        indices += stale
        guard !indices.isEmpty else { return batch }
        let deadline = settings.run.deadline(settings)
        if let deadline, deadline.hasPassed {
            // Past the deadline: nothing more is asked; the rows stay as stored for the next run.
            context.report(.recordsLeft(indices.count, because: .deadline))
            return []
        }
        let enricher = try enricher(settings: settings, context: context)
        if settings.run.noSourceLeft {
            // Every source was given up as unreachable: nothing is asked, the rows stay as stored
            // and the run ends at once (the summary names the hosts).
            context.report(.recordsLeft(indices.count, because: .noSourceReachable))
            return []
        }
        let fresh = indices.count - stale.count
        // Once the deadline passes, no source sends another request: rows whose lookups were not
        // all made stay as stored (nothing saved for them) and count among the rows left.
        let stopping = deadline.map { deadline in RequestDeadline { deadline.remaining } }
        // Both at once: the stale rows' lookups need not wait for the others'.
        async let bypassing = stale.isEmpty ? Enricher.Batch(records: [], unfinished: [])
            : enricher.bypassingCache().enrich(stale.map { batch[$0] }, stoppingAt: stopping)
        let ordinary = try await enricher.enrich(indices.prefix(fresh).map { batch[$0] }, stoppingAt: stopping)
        let stalePart = try await bypassing
        let enriched = ordinary.records + stalePart.records
        let unfinished = Set(ordinary.unfinished + stalePart.unfinished.map { $0 + fresh })
        let finished = enriched.indices.filter { !unfinished.contains($0) }.map { enriched[$0] }
        var outcomes: [RecordStatus: Int] = [:]
        for record in finished { outcomes[record.status, default: 0] += 1 }
        if !outcomes.isEmpty { context.report(.recordsLookedUp(outcomes)) }
        if !unfinished.isEmpty { context.report(.recordsLeft(unfinished.count, because: .deadline)) }
        // The records looked up carry the mark ``SaveEnrichment`` saves by; the unfinished stay as stored.
        var result = batch
        for (position, (index, record)) in zip(indices, enriched).enumerated() {
            result[index] = record
            result[index].thisRun.lookedUp = !unfinished.contains(position)
        }
        context.progress.emit(.enrichmentAdvanced(settings.run.finished(finished)))
        return result
    }

    /// True when the run does not enrich (`--no-enrich`): the step is then left out of the run.
    public func isPassThrough(in context: StageContext) -> Bool {
        !(context.resource(EnrichmentSettings.self)?.isEnabled ?? false)
    }

    /// Sets up the chain of sources and tells the person what the rate limits allow for the rows
    /// the run expects (``EnrichmentRun/expect(rows:)``).
    /// - Throws: ``SourceChainError`` when a source cannot be set up.
    public func start(in context: StageContext) async throws {
        guard let settings = context.resource(EnrichmentSettings.self), settings.isEnabled else { return }
        _ = try enricher(settings: settings, context: context)
        // Later sources are asked only for rows the earlier ones did not answer: the library's own
        // history says how many reach each (without it, the plan counts every row: an upper bound).
        // (One pass over the records' statuses, 0.8 s for a million: only when a remote source has a budget.)
        if !settings.run.budgets.isEmpty, let store = context.resource((any Library).self),
           let reach = try? await store.lookupReach(chain: settings.run.sources.map(\.name), minimum: 50) {
            settings.run.setReach(reach)
        }
        if !settings.run.sources.isEmpty, let plan = settings.run.plan(deadline: settings.deadline) {
            context.progress.emit(.message(plan))
        }
        // The enrichment line from the first second, before any row has finished.
        settings.run.notePlannedTime()
        if !settings.run.sources.isEmpty { context.progress.emit(.enrichmentAdvanced(settings.run.progress)) }
        let remoteLookups = settings.run.estimates.reduce(0.0) { $0 + $1.requests }
        if settings.contact == nil, remoteLookups > 1_000, settings.run.shouldWarnAboutContact() {
            context.progress.emit(.message(
                "warning: about \(Int(remoteLookups).formatted()) remote lookups without a contact: Open Library asks bulk "
                + "clients to name one (--contact mailto:you@example.org or $BOOKPIPE_CONTACT), and blocks anonymous ones; "
                + "for a whole library, a local catalogue (bookpipe catalog import) needs no requests at all."))
        }
    }

    /// Tells what each source did in this run (``PipelineEvent/sourcesUsed(_:)``), stores it
    /// in the library (for reports; best effort) and stops the run's HTTP client.
    public func end(_ outcome: RunOutcome, in context: StageContext) async {
        guard let settings = context.resource(EnrichmentSettings.self) else { return }
        let used = settings.run.sourceOutcomes
        context.report(.sourcesUsed(used))
        if let store = context.resource((any Library).self), let runID = context.resource(LibraryRun.self)?.currentID {
            try? await store.recordRunSources(used.map(\.counters), runID: runID)
        }
        await settings.run.shutdown()
    }

    private func enricher(settings: EnrichmentSettings, context: StageContext) throws -> Enricher {
        let store = try context.require((any Library).self, for: name)
        return try enricher.value.withLock { enricher in
            if let enricher { return enricher }
            var made = try SourceChain.enricher(parameters, settings: settings, store: store)
            let run = settings.run, progress = context.progress
            made.rowLeftChain = { progress.emit(.enrichmentAdvanced(run.rowLeftChain())) }
            enricher = made
            return made
        }
    }
}

/// The enricher of one ``EnrichRecords`` step, made on its first batch.
private final class LazyEnricher: Sendable {
    let value = Mutex<Enricher?>(nil)
}
