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
    }

    private struct State {
        var budgets: [Budget] = []
        var sources: [any MetadataSource] = []
        var rowsDone = 0
        var rowsExpected: Int?
        var outcomes: [RecordStatus: Int] = [:]
        var client: HTTPClient?
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

    /// Sets the number of rows expected (for progress).
    public func expect(rows: Int?) { state.withLock { $0.rowsExpected = rows } }

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
    public func shutdown() {
        let client = state.withLock { state -> HTTPClient? in
            defer { state.client = nil }
            return state.client
        }
        client?.shutdown()
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

/// Looks each record up in the chain of sources and scores the candidates (see ``Enricher``).
/// Only records in ``EnrichmentSettings/statuses`` (`pending` unless the command asked for
/// more) are looked up; others pass through unchanged.
public struct EnrichRecords: Stage {
    /// The enricher.
    public var enricher: Enricher
    /// The run's environment.
    public var environment: ImportEnvironment

    /// Creates the stage.
    public init(enricher: Enricher, environment: ImportEnvironment) {
        self.enricher = enricher
        self.environment = environment
    }

    /// Enriches the batch's records that need it.
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        guard environment.enrichment.isEnabled else { return batch }
        let statuses = environment.enrichment.statuses
        let indices = batch.indices.filter { statuses.contains(batch[$0].status) && batch[$0].reviewStatus != .userEdited }
        guard !indices.isEmpty else { return batch }
        let enriched = try await enricher.enrich(indices.map { batch[$0] })
        var result = batch
        for (index, record) in zip(indices, enriched) { result[index] = record }
        context.progress.emit(.enrichmentAdvanced(environment.enrichment.run.finished(enriched)))
        return result
    }
}

/// Stores what enrichment found (status, match, candidates, findings) and the matched works.
public struct SaveEnrichment: Stage {
    /// The run's environment.
    public var environment: ImportEnvironment

    /// Creates the stage.
    public init(environment: ImportEnvironment) {
        self.environment = environment
    }

    /// Updates the batch's enriched records in one transaction.
    /// - Throws: ``StoreError`` when the write fails (nothing of the batch is written).
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        guard environment.enrichment.isEnabled else { return batch }
        let changed = batch.filter { $0.enrichment != nil }
        try environment.store.update(changed, runID: environment.runID)
        return batch
    }
}

/// Reads records from the library in batches (for `bookpipe enrich`): every record in one of
/// ``EnrichmentSettings/statuses``, in id order.
public struct LibraryRecords: SourceStage {
    /// Records per batch.
    public var batchSize: Int
    /// The run's environment.
    public var environment: ImportEnvironment

    /// Creates the source.
    public init(batchSize: Int, environment: ImportEnvironment) {
        self.batchSize = max(1, batchSize)
        self.environment = environment
    }

    /// Emits the records.
    public func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        let store = environment.store
        let statuses = environment.enrichment.statuses
        let total = try store.countRecords(statuses: statuses)
        environment.enrichment.run.expect(rows: total)
        context.progress.emit(.message("\(total) records to enrich (status \(statuses.map(\.rawValue).joined(separator: ", ")))."))
        try await Self.emitStored(from: store, statuses: statuses, fileHashes: nil, batchSize: batchSize, into: emit)
    }

    /// Emits the stored records in `statuses` (optionally of these files only) in key order, a batch
    /// at a time. Paging by the last key read means a record whose status changes meanwhile is
    /// never emitted twice.
    static func emitStored(from store: LibraryStore, statuses: [RecordStatus], fileHashes: [String]?,
                           batchSize: Int, into emit: BatchEmitter<BookRecord>) async throws {
        var afterKey: Int64?
        while true {
            try Task.checkCancellation()
            let (batch, lastKey) = try store.records(statuses: statuses, fileHashes: fileHashes, afterKey: afterKey,
                                                     limit: batchSize)
            guard let lastKey, !batch.isEmpty else { return }
            afterKey = lastKey
            try await emit(batch)
        }
    }
}
