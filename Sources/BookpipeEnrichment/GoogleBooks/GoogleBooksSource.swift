import Foundation
import BookpipeCore
import BookpipePipeline

/// Google Books (`www.googleapis.com`, or any server that speaks its API) as a ``MetadataSource``.
///
/// - ISBNs: `GET {base}/books/v1/volumes?q=isbn:…&maxResults=N`, one ISBN per request.
/// - Titles: `GET {base}/books/v1/volumes?q=intitle:…+inauthor:…&maxResults=N`.
/// - A response without `items` is ``LookupAnswer/notFound``.
/// - With an API key, `&key=…` is added. The key never appears in a failure reason, a log
///   line or a cache key: reasons name only the host and path (see ``PolicyHTTPFetcher``), and
///   HTTP errors redact it (``URLRedaction``).
/// - Google's daily quota (429 or 403 saying so) is stored in the fetcher's
///   ``HostQuotaStore``; until midnight Pacific time every lookup fails at once without a request.
///
/// Candidates: a volume names no Open Library work, so ``Candidate/workKey`` is empty (never an
/// invented key) and ``Candidate/editionKey`` is `googlebooks:<volume id>`; the year comes from
/// `publishedDate` (`2004`, `2020-11`, `2018-12-11` or a timestamp), the publisher from
/// `volumeInfo.publisher`.
///
/// ```swift
/// let googleBooks = GoogleBooksSource(client: client,
///                                     apiKey: ProcessInfo.processInfo.environment["GOOGLE_BOOKS_API_KEY"])
/// let answer = try await googleBooks.search(title: "Children of Time", author: "Adrian Tchaikovsky")
/// ```
public struct GoogleBooksSource<C: Clock<Duration>>: MetadataSource {
    /// Google's own address.
    public static var defaultBaseURL: String { "https://www.googleapis.com" }
    /// The largest `maxResults` Google accepts.
    public static var maximumResultsPerRequest: Int { 40 }

    /// `googlebooks`.
    public var name: String { "googlebooks" }
    /// 1: Google Books answers one ISBN per request.
    public var maximumISBNsPerRequest: Int { 1 }
    /// Always true.
    public var isRemote: Bool { true }
    /// The counters of the fetcher.
    public var statistics: SourceStatistics { fetcher.statistics }
    /// The server, once the fetcher has given it up as unreachable for this run.
    public var unreachableHost: UnreachableHost? { fetcher.unreachableHost }

    /// Where requests go, without a trailing slash (`https://www.googleapis.com`).
    public let baseURL: String
    /// `maxResults` sent with every request (1...40).
    public let maxResults: Int
    /// ISBN requests in flight at once for one ``lookUp(isbns:)`` call (the rate limit still applies).
    public let concurrentRequests: Int
    /// Sends the requests under the source's policies.
    public let fetcher: PolicyHTTPFetcher<C>
    private let apiKey: String?

    /// Creates the source.
    ///
    /// - Parameters:
    ///   - fetcher: the policies (rate limit, retries, quotas, statistics) and the HTTP client.
    ///   - baseURL: the server (default ``defaultBaseURL``; `--googlebooks-url`).
    ///   - apiKey: an API key (the CLI passes `GOOGLE_BOOKS_API_KEY`); `nil` or empty sends none.
    ///   - maxResults: results per request, clamped to 1...40 (default 10).
    ///   - concurrentRequests: ISBN requests in flight per ``lookUp(isbns:)`` call (default 2).
    public init(fetcher: PolicyHTTPFetcher<C>, baseURL: String = Self.defaultBaseURL, apiKey: String? = nil,
                maxResults: Int = 10, concurrentRequests: Int = 2) {
        self.fetcher = fetcher
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        let key = apiKey?.trimmingCharacters(in: .whitespacesAndNewlines)
        self.apiKey = key?.isEmpty == false ? key : nil
        self.maxResults = min(Self.maximumResultsPerRequest, max(1, maxResults))
        self.concurrentRequests = max(1, concurrentRequests)
    }

    /// Whether requests carry an API key.
    public var hasAPIKey: Bool { apiKey != nil }

    /// Looks up ISBN-13s, one request each.
    ///
    /// - Parameter isbns: ISBN-13s; repeats are asked once.
    /// - Returns: an answer for every distinct ISBN: ``LookupAnswer/found(_:)`` with every volume
    ///   Google returned, ``LookupAnswer/notFound`` when the response had no `items`, or
    ///   ``LookupAnswer/failed(reason:)``.
    /// - Throws: `CancellationError` when the task is cancelled; requests in flight are aborted.
    public func lookUp(isbns: [String]) async throws -> [String: LookupAnswer] {
        let batches = SourceResponses.unique(isbns).map { [$0] }
        return try await SourceResponses.answers(for: batches, width: concurrentRequests) { batch in
            var answers: [String: LookupAnswer] = [:]
            for isbn in batch {
                answers[isbn] = try await volumes(matching: "isbn:\(isbn)")
            }
            return answers
        }
    }

    /// Searches volumes with `intitle:` and `inauthor:`.
    ///
    /// - Parameters:
    ///   - title: the search title; an empty title is ``LookupAnswer/notFound`` without a request.
    ///   - author: the first author, sent as `inauthor:` when given.
    /// - Returns: one candidate per volume (Google's order), ``LookupAnswer/notFound`` without
    ///   `items`, or ``LookupAnswer/failed(reason:)``.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func search(title: String, author: String?) async throws -> LookupAnswer {
        let title = Self.searchTerms(title)
        guard !title.isEmpty else { return .notFound }
        var query = "intitle:\(title)"
        if let author = author.map(Self.searchTerms), !author.isEmpty {
            query += " inauthor:\(author)"
        }
        return try await volumes(matching: query)
    }

    private func volumes(matching query: String) async throws -> LookupAnswer {
        var url = "\(baseURL)/books/v1/volumes?q=\(URLQuery.encode(query, keeping: ":", spaceAsPlus: true))"
            + "&maxResults=\(maxResults)"
        if let apiKey { url += "&key=\(URLQuery.encode(apiKey))" }
        let outcome = try await fetcher.fetch(url, headers: [("Accept", "application/json")]) { response in
            try JSONDecoder().decode(GoogleBooksResponses.VolumeList.self, from: response.body)
        }
        return outcome.answer { list in (list.items ?? []).compactMap { $0.candidate(source: name) } }
    }

    /// `text` with whitespace collapsed and the characters that would start another search
    /// keyword (`:`) or a phrase (`"`) made spaces.
    static func searchTerms(_ text: String) -> String {
        String(text.map { $0 == ":" || $0 == "\"" ? " " : $0 })
            .split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
    }
}

extension GoogleBooksSource: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `googlebooks (https://www.googleapis.com, API key set)`: never the key itself.
    public var description: String {
        "\(name) (\(baseURL), \(hasAPIKey ? "API key set" : "no API key"), maxResults \(maxResults))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the settings, with the key hidden.
    public var customMirror: Mirror {
        Mirror(self, children: ["baseURL": baseURL, "apiKey": hasAPIKey ? "REDACTED" : "none",
                                "maxResults": maxResults, "concurrentRequests": concurrentRequests])
    }
}

extension GoogleBooksSource where C == ContinuousClock {
    /// Creates the source on the real clock with its own fetcher.
    ///
    /// - Parameters:
    ///   - client: the shared HTTP client.
    ///   - baseURL: the server (default ``defaultBaseURL``).
    ///   - apiKey: the API key, if any (`GOOGLE_BOOKS_API_KEY`).
    ///   - rateLimit: the token bucket for the host (default 1 request per second).
    ///   - retryPolicy: the retry table (default DESIGN.md §4).
    ///   - quotaStore: where host quotas (the daily quota) are kept; pass the library's store so
    ///     the next run knows.
    ///   - maxResults: results per request (1...40).
    public init(client: HTTPClient, baseURL: String = Self.defaultBaseURL, apiKey: String? = nil,
                rateLimit: RateLimit = .conservative, retryPolicy: RetryPolicy = .default,
                quotaStore: any HostQuotaStore = InMemoryHostQuotaStore(), maxResults: Int = 10) {
        self.init(fetcher: PolicyHTTPFetcher(client: client, rateLimit: rateLimit, retryPolicy: retryPolicy,
                                             quotaStore: quotaStore),
                  baseURL: baseURL, apiKey: apiKey, maxResults: maxResults)
    }
}
