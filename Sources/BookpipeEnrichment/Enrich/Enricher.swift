import BookpipeCore
import BookpipeLibrary
import Foundation

/// Settings of an ``Enricher``.
public struct EnrichmentOptions: Sendable, Hashable {
    /// Ignore cached answers and ask again (new answers replace the cached ones): `--refresh`.
    public var refresh: Bool
    /// Cached answers older than this are asked again; nil keeps them for ever.
    public var maximumCacheAge: Duration?
    /// Title searches of one batch in flight at once (the per-host rate limit still applies).
    public var searchConcurrency: Int
    /// The scorer's points and thresholds.
    public var matchPolicy: MatchPolicy

    /// Creates options; every value defaults to the documented one.
    public init(refresh: Bool = false, maximumCacheAge: Duration? = .seconds(90 * 86_400),
                searchConcurrency: Int = 8, matchPolicy: MatchPolicy = .default) {
        self.refresh = refresh
        self.maximumCacheAge = maximumCacheAge
        self.searchConcurrency = max(1, searchConcurrency)
        self.matchPolicy = matchPolicy
    }
}

/// Looks records up in a chain of sources and decides, for each, whether a work can be
/// accepted safely.
///
/// For each source in order, for the records not yet matched: the row's ISBN-13s are looked up
/// (batched with the other rows that reach the source together, cache first), and when that does
/// not settle the row, its title and first author are searched; then the row goes on to the next
/// source without waiting for the others (see ``enrich(_:)``). All candidates gathered so far, from
/// every source, are scored together by ``MatchScorer``. The first acceptance ends the chain for
/// that row. The outcome of every row is one of:
///
/// - `enriched`: a candidate was accepted (``EnrichmentResult/match``);
/// - `failed`: nothing was accepted and at least one lookup failed for good (the reason names the
///   source and the status, timeout or quota) — never reported as not found;
/// - `needsCandidateSelection`: candidates exist but none is safe to accept (the best five are kept
///   with their per-field breakdown);
/// - `notFound`: every source answered and none had the book.
///
/// Rows a person edited (`userEdited`) are looked up like the others, from their edited title and
/// authors; the enricher sets only ``BookRecord/enrichment`` and findings, never title or authors.
///
/// ```swift
/// let enricher = Enricher(sources: [catalog, openLibrary, googleBooks], store: store)
/// let enriched = try await enricher.enrich(records)
/// try store.update(enriched)
/// ```
public struct Enricher: Sendable {
    /// The sources, asked in order.
    public var sources: [any MetadataSource]
    /// The scorer.
    public var scorer: MatchScorer
    /// The options.
    public var options: EnrichmentOptions
    /// Sources asked only to tie other candidates to their works (``WorkResolution``), besides
    /// those of the chain that name works: the local catalogue when one is configured but left
    /// out of the chain.
    public var workResolvers: [any MetadataSource] = []
    /// Called once for each row as it leaves the chain (accepted, or every source asked), while
    /// the batch's other rows are still being asked: for progress that moves during a batch.
    public var rowLeftChain: (@Sendable () -> Void)?
    private var cache: LookupCache

    /// Creates an enricher.
    /// - Parameters:
    ///   - sources: Asked in this order; later sources only for rows not matched yet.
    ///   - store: The library whose lookup cache is used (nil: no cache).
    ///   - options: Cache, concurrency and match settings.
    public init(sources: [any MetadataSource], store: (any LibraryEnrichmentStore)?, options: EnrichmentOptions = EnrichmentOptions()) {
        self.sources = sources
        self.options = options
        self.scorer = MatchScorer(policy: options.matchPolicy)
        self.cache = LookupCache(store: store, refresh: options.refresh, maximumAge: options.maximumCacheAge)
    }

    /// The same enricher, but asking the sources again instead of reading cached answers (new
    /// answers still replace the cached ones): for the records a re-enrichment asks because their
    /// answers are stale (`--stale`), and only for them.
    public func bypassingCache() -> Enricher {
        var copy = self
        copy.cache.refresh = true
        return copy
    }

    /// What is known about one row while the chain runs.
    private struct RowState {
        var query: MatchQuery
        var isbns: [String]
        var searchTitle: String
        var firstAuthor: String?
        var candidates: [Candidate] = []
        var failures: [String] = []
        var accepted: Candidate?
    }

    /// Enriches a batch of records.
    ///
    /// Each row moves through the chain on its own: the ISBNs of the rows that reach a source
    /// together are one call (the source batches them), each row's title search runs as soon as
    /// its ISBN answers leave it open, and a row the source leaves open goes on to the next source
    /// at once — it does not wait for the batch's other rows. So while Open Library answers one
    /// row, Google Books may already answer another, each host at its own rate (issue 14). A
    /// source that batches ISBNs (``MetadataSource/maximumISBNsPerRequest`` > 1) collects the rows
    /// that arrive until a request is full or no row can arrive any more, so a chain behind the
    /// local catalogue still sends full Books API requests.
    ///
    /// - Returns: The records in the same order, each with its ``BookRecord/enrichment`` set.
    /// - Throws: `CancellationError`; ``StoreError`` when the cache cannot be read or written.
    public func enrich(_ records: [BookRecord]) async throws -> [BookRecord] {
        try await enrich(records, stoppingAt: nil).records
    }

    /// What ``enrich(_:stoppingAt:)`` did with a batch.
    public struct Batch: Sendable {
        /// The records in the order given: those finished with their ``BookRecord/enrichment``
        /// set, the others exactly as given.
        public var records: [BookRecord]
        /// Indices (ascending) of the records the deadline left unfinished: one of their lookups
        /// was not sent (or its retry was abandoned) because the deadline had passed. Nothing is
        /// known about them that the next run would not ask again; they are neither failed nor
        /// not found.
        public var unfinished: [Int]

        /// Creates a batch's result.
        public init(records: [BookRecord], unfinished: [Int]) {
            self.records = records
            self.unfinished = unfinished
        }

        /// The records whose lookups all completed.
        public var finished: [BookRecord] {
            guard !unfinished.isEmpty else { return records }
            let left = Set(unfinished)
            return records.indices.filter { !left.contains($0) }.map { records[$0] }
        }
    }

    /// Enriches a batch of records (see ``enrich(_:)``), sending no request once `deadline` has
    /// passed.
    ///
    /// Lookups run with `deadline` as ``RequestDeadline/current``: once it has passed, the
    /// sources send nothing more (a rate-limit or retry wait that would end after it is abandoned
    /// at once), and a row whose lookup was thereby not made is left as given and named in
    /// ``Batch/unfinished``. Answers that arrive (a request already sent is answered) are used as
    /// usual, and every other row of the batch is finished, so the deadline is overrun by at most
    /// one request per source.
    ///
    /// - Returns: The records in the same order and those left unfinished.
    /// - Throws: `CancellationError`; ``StoreError`` when the cache cannot be read or written.
    public func enrich(_ records: [BookRecord], stoppingAt deadline: RequestDeadline?) async throws -> Batch {
        try await RequestDeadline.$current.withValue(deadline) {
            try await chain(records)
        }
    }

    private func chain(_ records: [BookRecord]) async throws -> Batch {
        var flow = ChainFlow(sources: sources, searchConcurrency: options.searchConcurrency)
        for (index, record) in records.enumerated() {
            flow.states[index] = Self.initialState(record)
        }
        if !sources.isEmpty {
            try Task.checkCancellation()
            try await withThrowingTaskGroup(of: ChainFlow.Arrival.self) { group in
                let cache = self.cache
                let sources = self.sources
                func start(_ work: [ChainFlow.Work]) {
                    for item in work {
                        switch item {
                        case .isbns(let sourceIndex, let rows, let questions):
                            group.addTask {
                                do {
                                    return .isbns(source: sourceIndex, rows: rows,
                                                  answers: try await cache.answers(questions, from: sources[sourceIndex]))
                                } catch is RequestDeadlineReached {
                                    return .stopped(source: sourceIndex, rows: rows, searched: false)
                                }
                            }
                        case .search(let sourceIndex, let row, let question):
                            group.addTask {
                                do {
                                    return .search(source: sourceIndex, row: row,
                                                   answers: try await cache.answers([question], from: sources[sourceIndex]))
                                } catch is RequestDeadlineReached {
                                    return .stopped(source: sourceIndex, rows: [row], searched: true)
                                }
                            }
                        }
                    }
                }
                var reported = 0
                func report() {
                    guard let rowLeftChain else { return }
                    while reported < flow.rowsThrough {
                        reported += 1
                        rowLeftChain()
                    }
                }
                start(flow.begin(rows: flow.states.keys.sorted()))
                report()
                while let arrival = try await group.next() {
                    start(flow.receive(arrival) { answers, source, state in
                        for answer in answers { absorb(answer, source: source, into: &state) }
                        decide(&state)
                    })
                    report()
                }
            }
        }
        try await tieCandidatesToWorks(&flow.states, skipping: flow.unfinished)
        let unfinished = flow.unfinished.sorted()
        let finished = records.enumerated().map { index, record in
            guard let state = flow.states[index], !flow.unfinished.contains(index) else { return record }
            return finish(record, state)
        }
        return Batch(records: finished, unfinished: unfinished)
    }

    /// Where every row of one ``enrich(_:)`` call is in the chain, and what to ask next. Owned by
    /// the task running ``enrich(_:)``; lookups run as child tasks and report back as ``Arrival``s.
    private struct ChainFlow {
        /// A lookup to start.
        enum Work {
            /// The ISBNs of `rows`, at the source `source`, in one call.
            case isbns(source: Int, rows: [Int], questions: [LookupQuestion])
            /// One row's title search at the source `source`.
            case search(source: Int, row: Int, question: LookupQuestion)
        }

        /// A lookup that has answered.
        enum Arrival: Sendable {
            case isbns(source: Int, rows: [Int], answers: [LookupQuestion: LookupAnswer])
            case search(source: Int, row: Int, answers: [LookupQuestion: LookupAnswer])
            /// The deadline stopped the lookup of `rows` (their ISBNs, or one row's search) before
            /// it was sent: they go no further.
            case stopped(source: Int, rows: [Int], searched: Bool)
        }

        let sources: [any MetadataSource]
        let searchConcurrency: Int
        var states: [Int: RowState] = [:]
        /// Rows the deadline stopped (see ``Arrival/stopped(source:rows:searched:)``).
        private(set) var unfinished = Set<Int>()
        /// Rows that have left the chain: accepted, or asked at every source.
        private(set) var rowsThrough = 0
        /// Rows at each source (waiting for their ISBNs, asking, or waiting to search).
        private var rowsAt: [Int]
        /// Rows waiting for an ISBN call at each source.
        private var waitingForISBNs: [[Int]]
        /// Rows waiting for a title search at each source, in arrival order, and searches in flight.
        private var searchQueue: [[Int]]
        private var searchesInFlight: [Int]

        init(sources: [any MetadataSource], searchConcurrency: Int) {
            self.sources = sources
            self.searchConcurrency = max(1, searchConcurrency)
            rowsAt = Array(repeating: 0, count: sources.count)
            waitingForISBNs = Array(repeating: [], count: sources.count)
            searchQueue = Array(repeating: [], count: sources.count)
            searchesInFlight = Array(repeating: 0, count: sources.count)
        }

        /// Every row enters the first source.
        mutating func begin(rows: [Int]) -> [Work] {
            var work: [Work] = []
            for row in rows { enter(row, source: 0, work: &work) }
            flush(&work)
            return work
        }

        /// Takes in answers (`update` absorbs a row's answers and decides), moves rows on, and
        /// says what to ask next.
        mutating func receive(_ arrival: Arrival,
                              update: ([LookupAnswer?], any MetadataSource, inout RowState) -> Void) -> [Work] {
            var work: [Work] = []
            switch arrival {
            case .isbns(let sourceIndex, let rows, let answers):
                for row in rows {
                    guard var state = states[row] else { continue }
                    update(state.isbns.map { answers[.isbn($0)] }, sources[sourceIndex], &state)
                    states[row] = state
                    search(row, source: sourceIndex, work: &work)
                }
            case .search(let sourceIndex, let row, let answers):
                searchesInFlight[sourceIndex] -= 1
                if var state = states[row] {
                    update(Array(answers.values), sources[sourceIndex], &state)
                    states[row] = state
                }
                leave(row, source: sourceIndex, work: &work)
                startSearches(at: sourceIndex, work: &work)
            case .stopped(let sourceIndex, let rows, let searched):
                for row in rows {
                    unfinished.insert(row)
                    rowsAt[sourceIndex] -= 1
                }
                if searched {
                    searchesInFlight[sourceIndex] -= 1
                    startSearches(at: sourceIndex, work: &work)
                }
            }
            flush(&work)
            return work
        }

        private mutating func enter(_ row: Int, source: Int, work: inout [Work]) {
            guard let state = states[row] else { return }
            guard source < sources.count, state.accepted == nil else {
                rowsThrough += 1
                return
            }
            rowsAt[source] += 1
            if state.isbns.isEmpty {
                search(row, source: source, work: &work)
            } else {
                waitingForISBNs[source].append(row)
            }
        }

        /// After its ISBNs: the row's title search at this source, or on to the next one.
        private mutating func search(_ row: Int, source: Int, work: inout [Work]) {
            guard let state = states[row], state.accepted == nil, !state.searchTitle.isEmpty else {
                return leave(row, source: source, work: &work)
            }
            searchQueue[source].append(row)
            startSearches(at: source, work: &work)
        }

        private mutating func startSearches(at source: Int, work: inout [Work]) {
            while searchesInFlight[source] < searchConcurrency, !searchQueue[source].isEmpty {
                let row = searchQueue[source].removeFirst()
                guard let state = states[row] else { continue }
                searchesInFlight[source] += 1
                work.append(.search(source: source, row: row,
                                    question: .title(state.searchTitle, author: state.firstAuthor)))
            }
        }

        private mutating func leave(_ row: Int, source: Int, work: inout [Work]) {
            rowsAt[source] -= 1
            enter(row, source: source + 1, work: &work)
        }

        /// Sends the ISBN calls that are due: at a source that takes one ISBN per request, at once;
        /// at a batching source, when a request is full or no row can still arrive from the
        /// sources before it.
        private mutating func flush(_ work: inout [Work]) {
            var rowsBefore = 0
            for source in sources.indices {
                defer { rowsBefore += rowsAt[source] }
                guard !waitingForISBNs[source].isEmpty else { continue }
                var seen = Set<String>()
                let isbns = waitingForISBNs[source].flatMap { states[$0]?.isbns ?? [] }.filter { seen.insert($0).inserted }
                guard rowsBefore == 0 || isbns.count >= sources[source].maximumISBNsPerRequest else { continue }
                work.append(.isbns(source: source, rows: waitingForISBNs[source], questions: isbns.map { .isbn($0) }))
                waitingForISBNs[source] = []
            }
        }
    }

    // MARK: - Works

    /// Ties the candidates that name no work, and matter to a row's outcome, to their works
    /// through their ISBNs (``WorkResolution``): the accepted candidate, or the best
    /// ``MatchPolicy/maximumCandidates`` of a row not accepted. The ISBNs of every row are asked
    /// together (the resolvers batch them). Rows not accepted are then decided again: editions of
    /// one work are no longer rivals.
    private func tieCandidatesToWorks(_ states: inout [Int: RowState], skipping unfinished: Set<Int>) async throws {
        let resolvers = WorkResolution.resolvers(in: sources + workResolvers.filter { extra in
            !sources.contains { $0.name == extra.name }
        })
        guard !resolvers.isEmpty else { return }
        func workless(_ state: RowState) -> [Candidate] {
            if let accepted = state.accepted { return accepted.workKey.isEmpty ? [accepted] : [] }
            let ranked = state.candidates.map { scorer.score($0, for: state.query) }.sorted { $0.score > $1.score }
            return ranked.prefix(max(1, options.matchPolicy.maximumCandidates)).filter { $0.workKey.isEmpty }
        }
        var seen = Set<String>()
        var isbns: [String] = []
        for (row, state) in states where !unfinished.contains(row) {
            for candidate in workless(state) {
                for isbn in candidate.isbn13s where seen.insert(isbn).inserted { isbns.append(isbn) }
            }
        }
        guard !isbns.isEmpty else { return }
        let works = try await WorkResolution.works(for: isbns.sorted(), resolvers: resolvers, cache: cache)
        for row in states.keys where !unfinished.contains(row) {
            guard var state = states[row] else { continue }
            var changed = false
            for index in state.candidates.indices {
                if let work = WorkResolution.work(of: state.candidates[index], in: works) {
                    state.candidates[index].workKey = work
                    changed = true
                }
            }
            if let accepted = state.accepted, let work = WorkResolution.work(of: accepted, in: works) {
                state.accepted?.workKey = work
                changed = true
            }
            guard changed else { continue }
            decide(&state)
            states[row] = state
        }
    }

    // MARK: - Steps

    private static func initialState(_ record: BookRecord) -> RowState {
        let normalized = record.normalized
        let searchTitle = normalized?.searchTitle ?? TitleNormalizer.normalize(record.title).searchTitle
        let firstAuthor = normalized?.authors.first ?? record.authors.first.map(AuthorNormalizer.displayName)
        return RowState(query: MatchQuery(record: record),
                        isbns: normalized?.allISBN13s ?? Normalizer.readISBNs(record.rawISBNs).all,
                        searchTitle: searchTitle.trimmingCharacters(in: .whitespacesAndNewlines),
                        firstAuthor: firstAuthor.flatMap { $0.isEmpty ? nil : $0 })
    }

    private func absorb(_ answer: LookupAnswer?, source: any MetadataSource, into state: inout RowState) {
        switch answer {
        case .found(let candidates)?:
            for candidate in candidates { Self.merge(candidate, into: &state.candidates) }
        case .failed(let reason)?:
            let message = "\(source.name): \(reason)"
            if !state.failures.contains(message) { state.failures.append(message) }
        case .notFound?, nil:
            break
        }
    }

    /// Adds a candidate; the same work (or, where the source names no work, the same edition)
    /// from the same source is kept once, with the ISBNs of both.
    private static func merge(_ candidate: Candidate, into candidates: inout [Candidate]) {
        if let index = candidates.firstIndex(where: { $0.source == candidate.source && $0.identity == candidate.identity }) {
            var existing = candidates[index]
            for isbn in candidate.isbn13s where !existing.isbn13s.contains(isbn) { existing.isbn13s.append(isbn) }
            if existing.year == nil { existing.year = candidate.year }
            if existing.editionKey == nil { existing.editionKey = candidate.editionKey }
            if existing.publisher == nil { existing.publisher = candidate.publisher }
            candidates[index] = existing
        } else {
            candidates.append(candidate)
        }
    }

    private func decide(_ state: inout RowState) {
        guard state.accepted == nil, !state.candidates.isEmpty else { return }
        if case .accept(let candidate) = scorer.decide(for: state.query, candidates: state.candidates) {
            state.accepted = candidate
        }
    }

    private func finish(_ record: BookRecord, _ state: RowState) -> BookRecord {
        var record = record
        if let accepted = state.accepted {
            record.enrichment = EnrichmentResult(
                status: .enriched,
                match: Match(workKey: accepted.workKey, editionKey: accepted.editionKey, title: accepted.title,
                             authors: accepted.authors, score: accepted.score, source: accepted.source),
                candidates: [accepted])
            return record
        }
        // A question worth a person's time is queued; candidates below acceptance are only kept.
        var shortlist: [Candidate] = []
        var keptCandidates: [Candidate] = []
        switch scorer.decide(for: state.query, candidates: state.candidates) {
        case .needsSelection(let ranked): shortlist = ranked
        case .belowAcceptance(let ranked): keptCandidates = ranked
        case .accept, .noCandidates: break
        }
        if let suspect = (shortlist + keptCandidates).first(where: { ($0.breakdown["isbn"] ?? 0) > 0
            && ($0.breakdown["title"] ?? 0) == 0 && ($0.breakdown["author"] ?? 0) == 0 }) {
            let authors = suspect.authors.isEmpty ? "" : " by \(suspect.authors.joined(separator: ", "))"
            record.addFinding(Finding(
                code: "isbn.points-to-other-book", severity: .warning, field: "isbn",
                message: "The row's ISBN belongs to \"\(suspect.title)\"\(authors) (\(suspect.source)), "
                    + "whose title and author both differ from the row's; check the ISBN."))
        }
        if state.searchTitle.isEmpty && state.isbns.isEmpty {
            record.enrichment = EnrichmentResult(status: .notFound)
            record.addFinding(Finding(code: "enrich.nothing-to-look-up", severity: .warning, field: "title",
                                      message: "The row has neither a title nor a valid ISBN, so it cannot be looked up."))
        } else if !state.failures.isEmpty {
            record.enrichment = EnrichmentResult(status: .failed, failure: state.failures.joined(separator: "; "),
                                                 candidates: shortlist + keptCandidates)
        } else if !shortlist.isEmpty {
            record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: shortlist)
        } else {
            record.enrichment = EnrichmentResult(status: .notFound, candidates: keptCandidates)
        }
        return record
    }
}
