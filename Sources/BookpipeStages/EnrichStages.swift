import BookpipeCore
import BookpipeEnrichment
import BookpipePipeline
import BookpipeStore
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
    /// Shared counters of the run, for progress and the summary.
    public let run: EnrichmentRun

    /// Creates settings; enrichment is on and everything else comes from the pipeline file.
    public init(isEnabled: Bool = true, sources: [String]? = nil, catalogPath: String? = nil,
                openLibraryURL: String? = nil, googleBooksURL: String? = nil, googleBooksAPIKey: String? = nil,
                contact: String? = nil, refresh: Bool = false, maximumCacheAge: Duration? = nil,
                statuses: [RecordStatus] = [.pending], run: EnrichmentRun = EnrichmentRun()) {
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
        self.run = run
    }
}

/// The enrichment state shared by the stages of one run: the sources in use (with their
/// counters), rows finished, rows expected, and the HTTP client (created on first use).
public final class EnrichmentRun: Sendable {
    /// What a remote source's rate limit allows, for the estimate shown before a run.
    public struct Budget: Sendable, Hashable {
        /// The source's name.
        public var source: String
        /// Its rate limit.
        public var requestsPerSecond: Double
        /// Requests one row needs at most (a share of an ISBN batch plus a title search).
        public var requestsPerRow: Double
        /// Attempts one request makes at most under the retry policy
        /// (``RetryPolicy/maxAttemptsPerRequest``); 1 when nothing is retried.
        public var attemptsPerRequest: Int = 1
    }

    private struct State {
        var budgets: [Budget] = []
        var sources: [any MetadataSource] = []
        var rowsDone = 0
        var rowsExpected: Int?
        var outcomes: [RecordStatus: Int] = [:]
        var client: HTTPClient?
        var hasEnrichStep = false
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

    /// Outcomes of the rows enriched in this run.
    public var outcomes: [RecordStatus: Int] { state.withLock { $0.outcomes } }

    /// Rows enriched in this run.
    public var rowsDone: Int { state.withLock { $0.rowsDone } }

    /// True once an `enrich-records` step of this run has started: only then do other steps pass
    /// it stored rows that still wait for enrichment.
    public var hasEnrichStep: Bool { state.withLock { $0.hasEnrichStep } }

    func enrichStepStarted() { state.withLock { $0.hasEnrichStep = true } }

    /// Sets the number of rows expected (for progress and the plan).
    public func expect(rows: Int?) { state.withLock { $0.rowsExpected = rows } }

    /// The chain and the time the rate limits allow for the rows expected, shown before a run
    /// starts; nil until rows are expected.
    ///
    /// Per remote source: the requests the rows need when every answer comes at the first attempt,
    /// and the most they can need when the retry policy retries every request to its limit (with
    /// the time the rate allows for them; the retry waits come on top).
    public var plan: String? {
        let (rows, budgets, sources) = state.withLock { ($0.rowsExpected, $0.budgets, $0.sources) }
        guard let rows else { return nil }
        var text = "Enriching about \(rows) rows from " + sources.map(\.name).joined(separator: " → ") + "."
        for budget in budgets {
            let requests = Int((Double(rows) * budget.requestsPerRow).rounded(.up))
            let rate = budget.requestsPerSecond
            text += "\n  \(budget.source): \(requests) requests at \(rate.formatted())/s "
                + "≈ \(Self.formatSeconds(Double(requests) / rate)) when every answer comes first time"
            if budget.attemptsPerRequest > 1 {
                let most = requests * budget.attemptsPerRequest
                text += "; with retries at most \(most) requests ≈ \(Self.formatSeconds(Double(most) / rate)) plus the retry waits"
            }
            text += " (cached answers and earlier sources need none)"
        }
        return text
    }

    /// `42 s`, `3 min 5 s`, `2 h 10 min`.
    public static func formatSeconds(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total / 60 % 60) min"
    }

    func register(_ sources: [any MetadataSource]) {
        state.withLock { state in
            for source in sources where !state.sources.contains(where: { $0.name == source.name }) {
                state.sources.append(source)
            }
        }
    }

    func finished(_ records: [BookRecord]) -> EnrichmentProgress {
        state.withLock { state in
            state.rowsDone += records.count
            for record in records { state.outcomes[record.status, default: 0] += 1 }
            return EnrichmentProgress(rowsDone: state.rowsDone, rowsExpected: state.rowsExpected,
                                      sources: state.sources.map(Self.progress))
        }
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

    /// The current counters of every source.
    public var progress: EnrichmentProgress {
        state.withLock { state in
            EnrichmentProgress(rowsDone: state.rowsDone, rowsExpected: state.rowsExpected,
                               sources: state.sources.map(Self.progress))
        }
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
            name: "enrich-records",
            summary: "Looks records up in the chain of sources (cache first, rate-limited, retried) and scores the candidates.",
            kind: .step, parameters: SourceChain.parameters
        ) { parameters in
            try SourceChain.validate(parameters)
            return .stage(EnrichRecords(parameters: parameters))
        },
    ]
}

/// Looks each record up in the chain of sources and scores the candidates (see ``Enricher``).
/// Only records in ``EnrichmentSettings/statuses`` (`pending` unless the command asked for
/// more) are looked up; others pass through unchanged. The chain is set up on the first batch
/// from the step's parameters, the run's ``EnrichmentSettings`` (command-line overrides) and
/// the run's ``LibraryStore`` (the cache); without settings, enrichment is off.
public struct EnrichRecords: Stage {
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
        let indices = batch.indices.filter { statuses.contains(batch[$0].status) && batch[$0].reviewStatus != .userEdited }
        guard !indices.isEmpty else { return batch }
        let enriched = try await enricher(settings: settings, context: context).enrich(indices.map { batch[$0] })
        var result = batch
        for (index, record) in zip(indices, enriched) { result[index] = record }
        context.progress.emit(.enrichmentAdvanced(settings.run.finished(enriched)))
        return result
    }

    /// Sets up the chain of sources and tells the person what the rate limits allow for the rows
    /// the run expects (``EnrichmentRun/expect(rows:)``).
    /// - Throws: ``SourceChainError`` when a source cannot be set up.
    public func start(in context: StageContext) async throws {
        guard let settings = context.resource(EnrichmentSettings.self), settings.isEnabled else { return }
        settings.run.enrichStepStarted()
        _ = try enricher(settings: settings, context: context)
        if !settings.run.sources.isEmpty, let plan = settings.run.plan {
            context.progress.emit(.message(plan))
        }
    }

    /// Stores what each source did in this run (for reports; best effort) and stops the run's
    /// HTTP client.
    public func end(_ outcome: RunOutcome, in context: StageContext) async {
        guard let settings = context.resource(EnrichmentSettings.self) else { return }
        if let store = context.resource(LibraryStore.self), let runID = context.resource(LibraryRun.self)?.currentID {
            let counters = settings.run.progress.sources.map {
                RunSourceCounters(source: $0.name, requests: $0.requests, cacheHits: $0.cacheHits, retries: $0.retries,
                                  rateLimited: $0.rateLimited, failures: $0.failures,
                                  meanLatencyMilliseconds: $0.meanLatencyMilliseconds)
            }
            try? await store.recordRunSources(counters, runID: runID)
        }
        await settings.run.shutdown()
    }

    private func enricher(settings: EnrichmentSettings, context: StageContext) throws -> Enricher {
        let store = try context.require(LibraryStore.self, for: name)
        return try enricher.value.withLock { enricher in
            if let enricher { return enricher }
            let made = try SourceChain.enricher(parameters, settings: settings, store: store)
            enricher = made
            return made
        }
    }
}

/// The enricher of one ``EnrichRecords`` step, made on its first batch.
private final class LazyEnricher: Sendable {
    let value = Mutex<Enricher?>(nil)
}
