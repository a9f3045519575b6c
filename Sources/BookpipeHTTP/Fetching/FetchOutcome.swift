/// The end of one ``PolicyHTTPFetcher/fetch(_:headers:decode:)``: a decoded value, a definite
/// "not found", or a failure after the retry policy ran out.
///
/// A failed fetch is never reported as ``notFound``: only a 404 or 410 from the server is.
///
/// ```swift
/// switch try await fetcher.fetch(url, decode: { try JSONDecoder().decode(Books.self, from: $0.body) }) {
/// case .value(let books): use(books)
/// case .notFound: markNotFound()
/// case .failed(let reason): markFailed(reason)   // retryable later; the reason names the cause
/// }
/// ```
public enum FetchOutcome<Value> {
    /// A 2xx response whose body `decode` turned into this value.
    case value(Value)
    /// The server answered 404 or 410: the resource does not exist. Not retried.
    case notFound
    /// The request failed for good: a status that is not retried (400, 401, 403, …), the retry
    /// policy ran out (429, 503, timeouts, malformed bodies), or a stored quota blocks the host.
    /// The reason is for people: it names the status, the timeout or the quota, and the host
    /// and path asked (never the query, so API keys stay out of it).
    case failed(reason: String)
}

extension FetchOutcome: Sendable where Value: Sendable {}
extension FetchOutcome: Equatable where Value: Equatable {}
extension FetchOutcome: Hashable where Value: Hashable {}
