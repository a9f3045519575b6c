import Foundation
import BookpipeCore
import BookpipePipeline

/// Open Library (`openlibrary.org`, or any server that speaks its API) as a ``MetadataSource``.
///
/// - ISBNs: the Books API, `GET {base}/api/books?bibkeys=ISBN:…,ISBN:…&format=json&jscmd=details`,
///   at most 25 ISBNs per request as Open Library's maintainers ask. The answer is keyed by the
///   bibkey exactly as sent; an absent key is ``LookupAnswer/notFound`` for that ISBN, and a
///   request that failed makes every ISBN in it ``LookupAnswer/failed(reason:)``.
/// - Titles: `GET {base}/search.json?title=…&author=…&fields=…&limit=N`. `fields` names
///   `isbn` and `edition_key`, which the search API leaves out unless asked.
///
/// Candidates: ``Candidate/workKey`` is always the work (`/works/OL…W`). A search result names
/// its work; the Books API is asked with `jscmd=details`, whose `details` is the edition record
/// with its `works` (`jscmd=data` names no work), so an ISBN candidate has the edition's work as
/// work key, the edition (`/books/OL…M`) as edition key, and the edition's `publish_date` as
/// year. An edition that names no work gives no candidate (the title search still runs).
///
/// ```swift
/// let client = try HTTPClient(configuration: .init(
///     userAgent: HTTPClientConfiguration.userAgent(contact: "mailto:me@example.org")))
/// let openLibrary = OpenLibrarySource(client: client)          // real clock, 3 requests/s
/// let answers = try await openLibrary.lookUp(isbns: ["9780140328721"])
///
/// // In tests: a manual clock and a local server.
/// let fetcher = PolicyHTTPFetcher(client: client, clock: ManualClock(), rateLimit: .openLibrary)
/// let local = OpenLibrarySource(fetcher: fetcher, baseURL: server.baseURL)
/// ```
///
/// The `User-Agent` comes from the client's configuration: Open Library asks bulk clients to
/// name themselves and a contact. Rate limit, retries and quotas come from the fetcher.
public struct OpenLibrarySource<C: Clock<Duration>>: MetadataSource {
    /// Open Library's own address.
    public static var defaultBaseURL: String { "https://openlibrary.org" }
    /// The fields `search.json` is asked for.
    public static var searchFields: String {
        "key,title,subtitle,author_name,author_key,first_publish_year,isbn,edition_key"
    }

    /// `openlibrary`.
    public var name: String { "openlibrary" }
    /// ISBNs per Books API request: 25 by default, the batch size Open Library's maintainers ask for
    /// (`isbnBatchSize` in the pipeline file; 1…100).
    public let maximumISBNsPerRequest: Int
    /// Always true.
    public var isRemote: Bool { true }
    /// The counters of the fetcher.
    public var statistics: SourceStatistics { fetcher.statistics }
    /// True: the Books API names each edition's work.
    public var namesWorks: Bool { true }
    /// The server, once the fetcher has given it up as unreachable for this run.
    public var unreachableHost: UnreachableHost? { fetcher.unreachableHost }

    /// Where requests go, without a trailing slash (`https://openlibrary.org`).
    public let baseURL: String
    /// Results asked of `search.json` (`limit=`).
    public let searchLimit: Int
    /// Batches sent at the same time by one ``lookUp(isbns:)`` call (the rate limit still applies).
    public let concurrentRequests: Int
    /// Sends the requests under the source's policies.
    public let fetcher: PolicyHTTPFetcher<C>

    /// Creates the source.
    ///
    /// - Parameters:
    ///   - fetcher: the policies (rate limit, retries, quotas, statistics) and the HTTP client.
    ///   - baseURL: the server (default ``defaultBaseURL``; `--openlibrary-url`).
    ///   - searchLimit: results per title search (at least 1; default 10).
    ///   - concurrentRequests: batches in flight per ``lookUp(isbns:)`` call (at least 1; default 2).
    ///   - isbnBatchSize: ISBNs per Books API request (1…100; default 25).
    public init(fetcher: PolicyHTTPFetcher<C>, baseURL: String = Self.defaultBaseURL, searchLimit: Int = 10,
                concurrentRequests: Int = 2, isbnBatchSize: Int = 25) {
        self.fetcher = fetcher
        self.maximumISBNsPerRequest = min(100, max(1, isbnBatchSize))
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.searchLimit = max(1, searchLimit)
        self.concurrentRequests = max(1, concurrentRequests)
    }

    /// Looks up ISBN-13s through the Books API, 25 per request.
    ///
    /// - Parameter isbns: ISBN-13s; repeats are asked once.
    /// - Returns: an answer for every distinct ISBN passed: ``LookupAnswer/found(_:)`` with one
    ///   candidate (the edition), ``LookupAnswer/notFound`` when the response has no entry for
    ///   its bibkey, or ``LookupAnswer/failed(reason:)`` when its request failed.
    /// - Throws: `CancellationError` when the task is cancelled; requests in flight are aborted.
    public func lookUp(isbns: [String]) async throws -> [String: LookupAnswer] {
        let unique = SourceResponses.unique(isbns)
        let size = maximumISBNsPerRequest
        let batches = stride(from: 0, to: unique.count, by: size).map { Array(unique[$0..<min($0 + size, unique.count)]) }
        return try await SourceResponses.answers(for: batches, width: concurrentRequests) { batch in
            try await lookUpBatch(batch)
        }
    }

    private func lookUpBatch(_ isbns: [String]) async throws -> [String: LookupAnswer] {
        try await booksAPI(bibkeys: isbns.map { ($0, "ISBN:\($0)") }, isbnOf: { $0 })
    }

    /// Looks up editions by their keys (`/books/OL…M`), 25 per Books API request (`bibkeys=OLID:…`,
    /// `jscmd=details`): how stored matches that name an edition where a work belongs are repaired
    /// without a request per row.
    ///
    /// - Parameter editionKeys: edition keys (`/books/OL…M` or `OL…M`); repeats are asked once.
    /// - Returns: an answer for every distinct key passed, keyed as passed: ``LookupAnswer/found(_:)``
    ///   with the edition's candidate (its ``Candidate/workKey`` is the work), ``LookupAnswer/notFound``,
    ///   or ``LookupAnswer/failed(reason:)``.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func lookUp(editionKeys: [String]) async throws -> [String: LookupAnswer] {
        let unique = SourceResponses.unique(editionKeys)
        let size = maximumISBNsPerRequest
        let batches = stride(from: 0, to: unique.count, by: size).map { Array(unique[$0..<min($0 + size, unique.count)]) }
        return try await SourceResponses.answers(for: batches, width: concurrentRequests) { batch in
            try await booksAPI(bibkeys: batch.map { key in
                (key, "OLID:" + (key.split(separator: "/").last.map(String.init) ?? key))
            }, isbnOf: { _ in nil })
        }
    }

    /// One Books API request (`jscmd=details`) for `bibkeys` (the key answers are filed under, and
    /// the bibkey sent).
    private func booksAPI(bibkeys: [(key: String, bibkey: String)],
                          isbnOf: (String) -> String?) async throws -> [String: LookupAnswer] {
        let query = URLQuery.string([("bibkeys", bibkeys.map(\.bibkey).joined(separator: ",")), ("format", "json"),
                                     ("jscmd", "details")], keeping: ":,")
        let outcome = try await fetcher.fetch("\(baseURL)/api/books?\(query)", headers: Self.jsonHeaders) { response in
            try JSONDecoder().decode([String: OpenLibraryResponses.BooksAPIDetailsEntry].self, from: response.body)
        }
        var answers: [String: LookupAnswer] = [:]
        for (key, bibkey) in bibkeys {
            answers[key] = outcome.answer { entries in
                entries[bibkey]?.candidate(isbn: isbnOf(key), source: name).map { [$0] } ?? []
            }
        }
        return answers
    }

    /// Searches `search.json` by title and author.
    ///
    /// - Parameters:
    ///   - title: the search title; an empty title is ``LookupAnswer/notFound`` without a request.
    ///   - author: the first author, sent as `author=` when given.
    /// - Returns: ``LookupAnswer/found(_:)`` with one candidate per work returned (best first, as
    ///   Open Library ranks them), ``LookupAnswer/notFound`` when no document came back, or
    ///   ``LookupAnswer/failed(reason:)``.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func search(title: String, author: String?) async throws -> LookupAnswer {
        let title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty else { return .notFound }
        var items = [("title", title)]
        if let author = author?.trimmingCharacters(in: .whitespacesAndNewlines), !author.isEmpty {
            items.append(("author", author))
        }
        items += [("fields", Self.searchFields), ("limit", String(searchLimit))]
        let url = "\(baseURL)/search.json?\(URLQuery.string(items, keeping: ","))"
        let outcome = try await fetcher.fetch(url, headers: Self.jsonHeaders) { response in
            try JSONDecoder().decode(OpenLibraryResponses.SearchResponse.self, from: response.body)
        }
        return outcome.answer { result in result.docs.compactMap { $0.candidate(source: name) } }
    }

    static var jsonHeaders: [(name: String, value: String)] { [("Accept", "application/json")] }
}

extension OpenLibrarySource where C == ContinuousClock {
    /// Creates the source on the real clock with its own fetcher.
    ///
    /// - Parameters:
    ///   - client: the shared HTTP client (its `User-Agent` should name a contact).
    ///   - baseURL: the server (default ``defaultBaseURL``).
    ///   - rateLimit: the token bucket for the host (default ``RateLimit/openLibrary``, 3/s).
    ///   - retryPolicy: the retry table (default DESIGN.md §4).
    ///   - quotaStore: where host quotas are kept.
    ///   - searchLimit: results per title search.
    ///   - isbnBatchSize: ISBNs per Books API request (1…100; default 25).
    public init(client: HTTPClient, baseURL: String = Self.defaultBaseURL, rateLimit: RateLimit = .openLibrary,
                retryPolicy: RetryPolicy = .default, quotaStore: any HostQuotaStore = InMemoryHostQuotaStore(),
                searchLimit: Int = 10, isbnBatchSize: Int = 25) {
        self.init(fetcher: PolicyHTTPFetcher(client: client, rateLimit: rateLimit, retryPolicy: retryPolicy,
                                             quotaStore: quotaStore),
                  baseURL: baseURL, searchLimit: searchLimit, isbnBatchSize: isbnBatchSize)
    }
}
