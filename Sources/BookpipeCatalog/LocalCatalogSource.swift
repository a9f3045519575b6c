import BookpipeEnrichment
import BookpipeCore
import GRDB

/// The local catalogue as a ``MetadataSource``: ISBN lookups and title/author searches answered
/// from a ``LocalCatalog`` file, offline and without rate limits.
///
/// ```swift
/// let source = LocalCatalogSource(catalog: try LocalCatalog(path: "catalog.sqlite"))
/// let answers = try await source.lookUp(isbns: ["9780441013593"])
/// let found = try await source.search(title: "Dune", author: "Frank Herbert")
/// ```
///
/// Queries run on the catalogue's reader connections (GRDB's pool), one per core, on the calling
/// task's thread (see `readOnThisThread`), so many tasks may ask at once. ``statistics`` counts one request per ``lookUp(isbns:)`` batch
/// of at most ``maximumISBNsPerRequest`` ISBNs and one per ``search(title:author:)``.
public struct LocalCatalogSource: MetadataSource {
    /// The catalogue asked.
    public let catalog: LocalCatalog
    /// `catalog`.
    public var name: String { LocalCatalog.sourceName }
    /// ISBNs looked up in one read (a local query has no reason to be small).
    public let maximumISBNsPerRequest: Int
    /// False: answers come from a local file and are not worth caching in the library.
    public var isRemote: Bool { false }
    /// The most candidates one search returns.
    public let maximumCandidates: Int
    /// Requests (queries) run, failures, and their latency.
    public let statistics = SourceStatistics()

    /// Creates the source.
    /// - Parameters:
    ///   - catalog: An open catalogue.
    ///   - maximumISBNsPerRequest: ISBNs per read; larger batches are split.
    ///   - maximumCandidates: The most candidates one search returns (one per work).
    public init(catalog: LocalCatalog, maximumISBNsPerRequest: Int = 500, maximumCandidates: Int = 10) {
        self.catalog = catalog
        self.maximumISBNsPerRequest = max(1, maximumISBNsPerRequest)
        self.maximumCandidates = max(1, maximumCandidates)
    }

    /// Looks up ISBN-13s: ``LookupAnswer/found(_:)`` with one candidate per edition carrying the
    /// ISBN (see ``LocalCatalog/candidates(forISBNs:)`` for the fields), or ``LookupAnswer/notFound``.
    ///
    /// - Parameter isbns: ISBN-13s (ISBN-10s are converted; an invalid value is not found).
    /// - Returns: An answer for every ISBN passed, keyed as passed. A database failure gives
    ///   ``LookupAnswer/failed(reason:)`` answers, never `notFound`.
    /// - Throws: `CancellationError` when the calling task is cancelled.
    public func lookUp(isbns: [String]) async throws -> [String: LookupAnswer] {
        var answers: [String: LookupAnswer] = [:]
        var start = 0
        while start < isbns.count {
            try Task.checkCancellation()
            let batch = Array(isbns[start..<min(start + maximumISBNsPerRequest, isbns.count)])
            start += batch.count
            let found = await measure { () async throws -> [String: [Candidate]] in
                try readOnThisThread { db in try LocalCatalog.candidates(forISBNs: batch, in: db) }
            }
            for isbn in batch {
                switch found {
                case .success(let candidates):
                    answers[isbn] = candidates[isbn].map(LookupAnswer.found) ?? .notFound
                case .failure(let error):
                    if error is CancellationError { throw error }
                    answers[isbn] = .failed(reason: reason(error))
                }
            }
        }
        return answers
    }

    /// Searches works by title and author (see ``LocalCatalog/search(title:author:limit:)``).
    ///
    /// - Returns: ``LookupAnswer/found(_:)`` with up to ``maximumCandidates`` work-level
    ///   candidates, best first, or ``LookupAnswer/notFound``; ``LookupAnswer/failed(reason:)``
    ///   when the database cannot be read.
    /// - Throws: `CancellationError` when the calling task is cancelled.
    public func search(title: String, author: String?) async throws -> LookupAnswer {
        try Task.checkCancellation()
        let limit = maximumCandidates
        let result = await measure { () async throws -> [Candidate] in
            try readOnThisThread { db in try LocalCatalog.search(title: title, author: author, limit: limit, in: db) }
        }
        switch result {
        case .success(let candidates):
            return candidates.isEmpty ? .notFound : .found(candidates)
        case .failure(let error):
            if error is CancellationError { throw error }
            return .failed(reason: reason(error))
        }
    }

    /// One read on the calling task's thread: a blocking read of a reader connection.
    ///
    /// Why not GRDB's asynchronous read: a search is a fraction of a millisecond of CPU work, and
    /// the hop to the reader's queue and back (two thread wake-ups) cost about as much again — with
    /// the search it was a third of an offline enrichment's CPU (`benchmarks/enrichment/run-catalog.sh`,
    /// decision note 0020). Rule: **every** read of this source blocks. A blocked thread then waits
    /// only for reads that are running on other threads; an asynchronous read would hold a reader
    /// until a task thread is free to resume it, and with every task thread blocked here, never.
    ///
    /// The read is one deferred transaction, as GRDB's `read` makes it, but opened and closed with
    /// statements prepared once per reader connection: `read` prepares its `BEGIN` and `COMMIT`
    /// anew for every read, two SQL compilations a search (benchmarks/enrichment, fourth round).
    private func readOnThisThread<T>(_ body: (Database) throws -> T) throws -> T {
        try catalog.pool.unsafeRead { db in
            try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
            let result: T
            do {
                result = try body(db)
            } catch {
                // SQLite may have ended the transaction itself (an I/O error); otherwise it is closed here.
                if db.isInsideTransaction { try db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute() }
                throw error
            }
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            return result
        }
    }

    /// Runs one request, counting it and its latency (and a failure).
    private func measure<T: Sendable>(_ body: () async throws -> T) async -> Result<T, any Error> {
        let clock = ContinuousClock()
        let started = clock.now
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        let elapsed = clock.now - started
        let failed = if case .failure(let error) = result, !(error is CancellationError) { true } else { false }
        statistics.update { counters in
            counters.requests += 1
            counters.totalLatency += elapsed
            if failed { counters.failures += 1 }
        }
        return result
    }

    private func reason(_ error: any Error) -> String {
        "the local catalogue \(catalog.path) could not be read: \(LocalCatalog.reason(error))"
    }
}

extension LocalCatalogSource {
    /// True: the catalogue's editions name their works.
    public var namesWorks: Bool { true }
}
