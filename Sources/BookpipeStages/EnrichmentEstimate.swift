import BookpipeCore
import BookpipeIngest
import BookpipeLibrary
import BookpipePipeline
import Foundation

/// What an enrichment run is expected to ask and how long it should take, from the rows and the
/// sources' rates: the arithmetic of the plan shown before a run (``EnrichmentRun/plan(deadline:)``),
/// as pure functions, and the rows a run will enrich (``rowsToEnrich(in:statuses:importing:)``, read
/// from the library and the inputs).
///
/// For each remote source of the chain:
///
/// - **rows that reach it**: the library's history (``Source/reach``, the share of rows earlier
///   sources left open in earlier runs) or, without it, the chain: every source answers
///   ``Assumptions/answeredShare`` of the rows it sees, so a later source sees only the rest;
/// - **ISBN requests**: its rows with an ISBN (``Assumptions/isbnShare``) in batches of
///   ``Source/isbnBatchSize`` (Open Library's Books API: 25; Google Books: 1);
/// - **title searches**: its rows without an ISBN, and those whose ISBN did not settle them
///   (1 − ``Assumptions/isbnSettles``);
/// - **retries** as an expectation: ``Assumptions/retryShare`` of the requests (the worst case,
///   every request retried to the policy's limit, is ``Source/attemptsPerRequest`` times the
///   requests: a footnote, not the estimate);
/// - **time**: its requests ÷ its rate. The hosts work at the same time, so the run takes about
///   the busiest host's time.
///
/// ```swift
/// let estimates = EnrichmentEstimate.estimate(rows: 1_500, chain: [
///     .init(name: "openlibrary", requestsPerSecond: 3, isbnBatchSize: 25),
///     .init(name: "googlebooks", requestsPerSecond: 1, isbnBatchSize: 1)])
/// EnrichmentEstimate.seconds(estimates)   // about 234: Open Library's 702 requests at 3/s
/// ```
public enum EnrichmentEstimate {
    /// Rows a run will enrich, estimated before it starts: stored rows waiting in `statuses`,
    /// plus the data lines of the inputs not imported whole before (`library-records` sets the
    /// exact count once it has claimed its records).
    /// - Parameters:
    ///   - store: The library.
    ///   - statuses: The statuses the run enriches.
    ///   - inputs: The files the run imports first (none for `bookpipe enrich`).
    public static func rowsToEnrich(in store: any Library, statuses: [RecordStatus], importing inputs: [String]) async -> Int {
        var rows = (try? await store.countRecords(statuses: statuses, fileHashes: nil)) ?? 0
        // A file imported whole before (the same path and size) brings no new row: its rows still
        // waiting are among the stored ones counted above.
        let imported = Set(((try? await store.sourceFiles()) ?? []).filter(\.isComplete).map { "\($0.path)\u{0}\($0.size)" })
        for input in inputs {
            let size = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? nil
            if let size, imported.contains("\(input)\u{0}\(size)") { continue }
            rows += max(0, InputLineCounter.records(in: input) - 1)
        }
        return rows
    }

    /// The queries of the `filter` steps that come before `enrich-records` in `pipeline`: the
    /// records they drop are never looked up.
    public static func filtersBeforeLookups(in pipeline: Pipeline) -> [LibraryQuery] {
        var queries: [LibraryQuery] = []
        for step in pipeline.steps {
            if step.stageName == EnrichRecords.stageName { return queries }
            guard step.stageName == FilterRecords.stageName,
                  let text = step.parameters.first(where: { $0.0 == "query" })?.1,
                  let query = try? LibraryQuery.parse(LibraryQuery.tokens(text)) else { continue }
            queries.append(query)
        }
        return []
    }

    /// Rows a run that reads the library will enrich when `filters` drop records before their
    /// lookups: the stored rows waiting in `statuses` that every query matches, as `bookpipe list`
    /// finds them (the filter step's rule). Nil when the library cannot list them.
    public static func rowsToEnrich(in store: any Library, statuses: [RecordStatus], passing filters: [LibraryQuery]) async
        -> Int? {
        let query = LibraryQuery(filters.flatMap(\.conditions))
        var rows = 0
        do {
            try await store.listRecords(query, order: [], limit: nil) { listed in
                if statuses.contains(listed.record.status) { rows += 1 }
            }
        } catch {
            return nil
        }
        return rows
    }

    /// The shares the estimate assumes where the library has no history.
    public struct Assumptions: Sendable, Hashable {
        /// Rows with a valid ISBN (Goodreads and StoryGraph exports: about 70 %).
        public var isbnShare: Double = 0.7
        /// Rows with an ISBN that the ISBN lookup settles (the others are searched by title too).
        public var isbnSettles: Double = 0.8
        /// Rows a source answers of those it sees (without history).
        public var answeredShare: Double = 0.9
        /// Requests expected to be sent again (429, 503, timeouts), as a share of the requests.
        public var retryShare: Double = 0.02

        /// The documented defaults.
        public init() {}
    }

    /// A source of the chain, as the estimate sees it.
    public struct Source: Sendable, Hashable {
        /// The source's name.
        public var name: String
        /// Its rate limit (requests a second); nil for a local source (no requests).
        public var requestsPerSecond: Double?
        /// ISBNs one request asks (Open Library 25, Google Books 1).
        public var isbnBatchSize: Int
        /// The share of rows that reached it in the library's earlier runs; nil: no history.
        public var reach: Double?
        /// The most attempts one request can make under the retry policy (the worst case).
        public var attemptsPerRequest: Int

        /// Creates a source.
        public init(name: String, requestsPerSecond: Double?, isbnBatchSize: Int = 1, reach: Double? = nil,
                    attemptsPerRequest: Int = 1) {
            self.name = name
            self.requestsPerSecond = requestsPerSecond
            self.isbnBatchSize = max(1, isbnBatchSize)
            self.reach = reach
            self.attemptsPerRequest = max(1, attemptsPerRequest)
        }
    }

    /// What one remote source is expected to do.
    public struct SourceEstimate: Sendable, Hashable {
        /// The source's name.
        public var name: String
        /// Rows expected to reach it.
        public var rows: Double
        /// The share of the run's rows that is (`rows` ÷ the run's rows).
        public var share: Double
        /// True when the share comes from the library's history, false when from the chain.
        public var shareFromHistory: Bool
        /// ISBN requests (batches).
        public var isbnRequests: Double
        /// Title searches.
        public var searches: Double
        /// Retries expected.
        public var retries: Double
        /// Its rate.
        public var requestsPerSecond: Double
        /// The worst case's attempts per request.
        public var attemptsPerRequest: Int

        /// Every request expected, retries included.
        public var requests: Double { isbnRequests + searches + retries }
        /// Time its rate needs for them, in seconds.
        public var seconds: Double { requests / requestsPerSecond }
    }

    /// The estimate of each remote source of `chain` (in order) for `rows` rows.
    public static func estimate(rows: Int, chain: [Source], assumptions: Assumptions = Assumptions()) -> [SourceEstimate] {
        var estimates: [SourceEstimate] = []
        var reachByChain = 1.0
        for source in chain {
            defer { reachByChain *= 1 - assumptions.answeredShare }
            guard let rate = source.requestsPerSecond, rate > 0 else { continue }
            let share = source.reach ?? reachByChain
            let reaching = Double(rows) * share
            let withISBN = reaching * assumptions.isbnShare
            let isbnRequests = (withISBN / Double(source.isbnBatchSize)).rounded(.up)
            let searches = reaching * (1 - assumptions.isbnShare * assumptions.isbnSettles)
            let retries = (isbnRequests + searches) * assumptions.retryShare
            estimates.append(SourceEstimate(name: source.name, rows: reaching, share: share,
                                            shareFromHistory: source.reach != nil, isbnRequests: isbnRequests,
                                            searches: searches, retries: retries, requestsPerSecond: rate,
                                            attemptsPerRequest: source.attemptsPerRequest))
        }
        return estimates
    }

    /// The run's expected time in seconds: the busiest host's (they work at the same time).
    public static func seconds(_ estimates: [SourceEstimate]) -> Double {
        estimates.map(\.seconds).max() ?? 0
    }

    /// Rows that fit in `allowed` seconds at the expected pace (all of them when the run fits).
    public static func rowsFitting(rows: Int, estimates: [SourceEstimate], allowed: Double) -> Int {
        let needed = seconds(estimates)
        guard needed > allowed, needed > 0 else { return rows }
        return Int(Double(rows) * max(0, allowed) / needed)
    }
}
