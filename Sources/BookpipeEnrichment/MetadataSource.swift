import BookpipeCore
import BookpipeHTTP

/// A question asked of a metadata source: an ISBN, or a title with an optional author.
public enum LookupQuestion: Sendable, Hashable, Codable, CustomStringConvertible {
    /// An ISBN-13 (digits only, check digit valid).
    case isbn(String)
    /// A title search: the search title (series suffix removed) and the first author in
    /// "First Last" order, when the row names one.
    case title(String, author: String?)

    /// The text that identifies the question in the cache: `isbn:9780140328721`, or
    /// `title:<title key>|author:<author key>` (comparison keys, so `"DUNE "` and `"Dune"` are
    /// one question).
    public var cacheKey: String {
        switch self {
        case .isbn(let isbn):
            return "isbn:\(isbn)"
        case .title(let title, let author):
            let authorKey = author.map(AuthorNormalizer.key) ?? ""
            return "title:\(TextFolding.key(title))|author:\(authorKey)"
        }
    }

    public var description: String {
        switch self {
        case .isbn(let isbn): return "ISBN \(isbn)"
        case .title(let title, let author?): return "\"\(title)\" by \(author)"
        case .title(let title, nil): return "\"\(title)\""
        }
    }
}

/// One source's answer to one question.
///
/// A lookup that could not be completed is ``failed(reason:)``, never ``notFound``: only a
/// source that answered "I do not have it" says not found.
public enum LookupAnswer: Sendable, Hashable, Codable {
    /// The source answered with these candidates (at least one).
    case found([Candidate])
    /// The source answered and has nothing for the question (for example an absent bibkey,
    /// `numFound: 0`, no `items`, or a 404).
    case notFound
    /// The lookup failed for good after the retry policy ran out, or a stored quota blocks the
    /// source: the reason names the status code, the timeout or the quota, for the user.
    case failed(reason: String)

    /// True for answers that may be cached: a definite ``found(_:)`` or ``notFound``.
    public var isDefinite: Bool {
        if case .failed = self { return false }
        return true
    }
}

/// A place bookpipe looks books up: Open Library, Google Books, or the local catalogue.
///
/// Implementations do their own batching, rate limiting and retrying (see ``PolicyHTTPFetcher``)
/// and never throw for a failed lookup: failures are ``LookupAnswer/failed(reason:)`` answers.
/// They throw only `CancellationError` when the calling task is cancelled.
///
/// Every source passes the shared contract suite in `Tests/BookpipeEnrichmentTests`.
public protocol MetadataSource: Sendable {
    /// A short stable name: `openlibrary`, `googlebooks`, `catalog`. Stored with every cached
    /// answer and every match.
    var name: String { get }

    /// How many ISBNs one ``lookUp(isbns:)`` call sends in one request (Open Library: 25;
    /// Google Books: 1). Callers may pass more; the source splits them.
    var maximumISBNsPerRequest: Int { get }

    /// True when answers come over the network and are worth caching in the library.
    var isRemote: Bool { get }

    /// Looks up ISBN-13s.
    ///
    /// - Parameter isbns: ISBN-13s, without duplicates.
    /// - Returns: An answer for every ISBN passed, keyed by the ISBN-13 as passed.
    func lookUp(isbns: [String]) async throws -> [String: LookupAnswer]

    /// Searches by title and (optionally) author.
    ///
    /// - Parameters:
    ///   - title: The search title (series suffix removed, as in ``NormalizedForms/searchTitle``).
    ///   - author: The first author in "First Last" order, when the row names one.
    /// - Returns: The candidates the source found, or why it found none.
    func search(title: String, author: String?) async throws -> LookupAnswer

    /// What this source has done so far in this process.
    var statistics: SourceStatistics { get }

    /// The source's server, once it has been given up for the rest of the run because it could
    /// not be reached (see ``PolicyHTTPFetcher``); nil while it is asked. A local source is never
    /// given up (the default implementation says nil).
    var unreachableHost: UnreachableHost? { get }

    /// True when the source's answers to an ISBN name the edition's Open Library work, so the
    /// enricher may tie other sources' editions to works through it (``WorkResolution``): Open
    /// Library and the local catalogue. Default false.
    var namesWorks: Bool { get }
}

extension MetadataSource {
    /// False: the source's answers are not used to find other candidates' works.
    public var namesWorks: Bool { false }

    /// Nil: the source is never given up as unreachable.
    public var unreachableHost: UnreachableHost? { nil }
}

extension MetadataSource {
    /// Answers one question, whichever kind it is.
    public func answer(_ question: LookupQuestion) async throws -> LookupAnswer {
        switch question {
        case .isbn(let isbn):
            return try await lookUp(isbns: [isbn])[isbn] ?? .failed(reason: "\(name) gave no answer for ISBN \(isbn)")
        case .title(let title, let author):
            return try await search(title: title, author: author)
        }
    }
}
