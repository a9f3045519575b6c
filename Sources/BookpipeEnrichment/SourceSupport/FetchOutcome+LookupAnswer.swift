import BookpipeCore
import BookpipeHTTP

extension FetchOutcome {
    /// The lookup answer this fetch gives: ``LookupAnswer/found(_:)`` with the candidates read
    /// from the value (``LookupAnswer/notFound`` when there are none), ``LookupAnswer/notFound``
    /// for a 404, ``LookupAnswer/failed(reason:)`` for a failure.
    ///
    /// ```swift
    /// let outcome = try await fetcher.fetch(url) { try JSONDecoder().decode(Search.self, from: $0.body) }
    /// return outcome.answer { search in search.docs.compactMap(\.candidate) }
    /// ```
    public func answer(_ candidates: (Value) throws -> [Candidate]) rethrows -> LookupAnswer {
        switch self {
        case .value(let value):
            let found = try candidates(value)
            return found.isEmpty ? .notFound : .found(found)
        case .notFound:
            return .notFound
        case .failed(let reason):
            return .failed(reason: reason)
        }
    }
}
