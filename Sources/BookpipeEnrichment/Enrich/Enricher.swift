import BookpipeCore
import BookpipeStore
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
/// (batched across the whole batch of records, cache first), and when that does not settle the
/// row, its title and first author are searched. All candidates gathered so far, from every
/// source, are scored together by ``MatchScorer``. The first acceptance ends the chain for that
/// row. The outcome of every row is one of:
///
/// - `enriched`: a candidate was accepted (``EnrichmentResult/match``);
/// - `failed`: nothing was accepted and at least one lookup failed for good (the reason names the
///   source and the status, timeout or quota) — never reported as not found;
/// - `needsCandidateSelection`: candidates exist but none is safe to accept (the best five are kept
///   with their per-field breakdown);
/// - `notFound`: every source answered and none had the book.
///
/// Rows a person edited (`userEdited`) are returned unchanged.
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
    private var cache: LookupCache

    /// Creates an enricher.
    /// - Parameters:
    ///   - sources: Asked in this order; later sources only for rows not matched yet.
    ///   - store: The library whose lookup cache is used (nil: no cache).
    ///   - options: Cache, concurrency and match settings.
    public init(sources: [any MetadataSource], store: LibraryStore?, options: EnrichmentOptions = EnrichmentOptions()) {
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
    /// - Returns: The records in the same order, each with its ``BookRecord/enrichment`` set.
    /// - Throws: `CancellationError`; ``StoreError`` when the cache cannot be read or written.
    public func enrich(_ records: [BookRecord]) async throws -> [BookRecord] {
        var states: [Int: RowState] = [:]
        for (index, record) in records.enumerated() where record.reviewStatus != .userEdited {
            states[index] = Self.initialState(record)
        }
        for source in sources {
            try Task.checkCancellation()
            // 1. ISBNs of every open row, in one call (the source batches them).
            let open = states.keys.filter { states[$0]?.accepted == nil }.sorted()
            var seen = Set<String>()
            let isbnQuestions = open.flatMap { states[$0]?.isbns ?? [] }
                .filter { seen.insert($0).inserted }
                .map { LookupQuestion.isbn($0) }
            if !isbnQuestions.isEmpty {
                let answers = try await cache.answers(isbnQuestions, from: source)
                for index in open {
                    guard var state = states[index] else { continue }
                    for isbn in state.isbns {
                        absorb(answers[.isbn(isbn)], source: source, into: &state)
                    }
                    decide(&state)
                    states[index] = state
                }
            }
            // 2. Title searches for rows still open.
            let searches = open.filter { index in
                guard let state = states[index] else { return false }
                return state.accepted == nil && !state.searchTitle.isEmpty
            }
            try await withThrowingTaskGroup(of: (Int, [LookupQuestion: LookupAnswer]).self) { group in
                var next = searches.makeIterator()
                func startNext() {
                    guard let index = next.next(), let state = states[index] else { return }
                    let question = LookupQuestion.title(state.searchTitle, author: state.firstAuthor)
                    let cache = self.cache
                    group.addTask { (index, try await cache.answers([question], from: source)) }
                }
                for _ in 0..<options.searchConcurrency { startNext() }
                while let (index, answers) = try await group.next() {
                    if var state = states[index] {
                        for answer in answers.values { absorb(answer, source: source, into: &state) }
                        decide(&state)
                        states[index] = state
                    }
                    startNext()
                }
            }
        }
        return records.enumerated().map { index, record in
            guard let state = states[index] else { return record }
            return finish(record, state)
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

    /// Adds a candidate; the same work from the same source is kept once, with the ISBNs of both.
    private static func merge(_ candidate: Candidate, into candidates: inout [Candidate]) {
        if let index = candidates.firstIndex(where: { $0.source == candidate.source && $0.workKey == candidate.workKey }) {
            var existing = candidates[index]
            for isbn in candidate.isbn13s where !existing.isbn13s.contains(isbn) { existing.isbn13s.append(isbn) }
            if existing.year == nil { existing.year = candidate.year }
            if existing.editionKey == nil { existing.editionKey = candidate.editionKey }
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
        var shortlist: [Candidate] = []
        if case .needsSelection(let ranked) = scorer.decide(for: state.query, candidates: state.candidates) {
            shortlist = ranked
        }
        if let suspect = shortlist.first(where: { ($0.breakdown["isbn"] ?? 0) > 0
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
                                                 candidates: shortlist)
        } else if !shortlist.isEmpty {
            record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: shortlist)
        } else {
            record.enrichment = EnrichmentResult(status: .notFound)
        }
        return record
    }
}
