import BookpipeCatalog
import BookpipeCore
import BookpipeEnrichment
import BookpipePipeline
import BookpipeLibrary
import Foundation

/// Builds the chain of metadata sources an `enrich-records` step asks, from the pipeline file's
/// parameters and the command line's settings.
public enum SourceChain {
    /// The sources bookpipe knows, in the default order.
    public static let knownSources = ["catalog", "openlibrary", "googlebooks"]

    /// The parameters of `enrich-records` (every policy value is one).
    static let parameters: [ParameterSpec] = [
        ParameterSpec("sources", .stringList, default: .stringList(knownSources),
                      summary: "the chain, in order; catalog is skipped when no catalogue is configured"),
        ParameterSpec("openlibraryRate", .number, default: .number(3), summary: "Open Library requests per second"),
        ParameterSpec("googlebooksRate", .number, default: .number(1), summary: "Google Books requests per second"),
        ParameterSpec("isbnBatchSize", .integer, default: .integer(25),
                      summary: "ISBNs per Open Library Books API request (1–100; Open Library asks for about 25)"),
        ParameterSpec("searchConcurrency", .integer, default: .integer(8), summary: "title searches in flight per batch"),
        ParameterSpec("maxRequestsPerHost", .integer, default: .integer(2), summary: "requests in flight per host"),
        ParameterSpec("connectTimeout", .duration, default: .duration(.seconds(10)), summary: "connect timeout"),
        ParameterSpec("requestTimeout", .duration, default: .duration(.seconds(30)), summary: "total timeout of a request"),
        ParameterSpec("rateLimitedBackoff", .duration, default: .duration(.seconds(1)),
                      summary: "first wait after a 429 (doubles: 1 s, 2 s, 4 s, 8 s); a longer Retry-After wins"),
        ParameterSpec("rateLimitedRetries", .integer, default: .integer(4), summary: "retries after 429 before failing"),
        ParameterSpec("maxRetryAfter", .duration, default: .duration(.seconds(600)),
                      summary: "longest Retry-After honoured before the lookup fails (and the quota is stored)"),
        ParameterSpec("unavailableDelay", .duration, default: .duration(.seconds(30)),
                      summary: "after a 503 or a malformed body, the request goes back in the queue for this long"),
        ParameterSpec("unavailableRequeues", .integer, default: .integer(5), summary: "requeues after 503 before failing"),
        ParameterSpec("transportAttempts", .integer, default: .integer(3),
                      summary: "attempts on timeout or connection error"),
        ParameterSpec("unreachableAfter", .integer, default: .integer(3),
                      summary: "lookups in a row that never connect (refused, not resolved, TLS, timed out) after which "
                        + "a source is not asked again in the run (at least 2)"),
        ParameterSpec("maxCacheAge", .duration, default: .duration(.seconds(90 * 86_400)),
                      summary: "cached answers older than this are asked again"),
        ParameterSpec("acceptAt", .integer, default: .integer(60), summary: "lowest score accepted without a person"),
        ParameterSpec("minimumLead", .integer, default: .integer(30),
                      summary: "points the best candidate must lead the best different work by"),
        ParameterSpec("isbnNeedsCorroboration", .boolean, default: .boolean(true),
                      summary: "an ISBN decides only when title or author agree too"),
    ]

    /// The retry policy the parameters describe.
    static func retryPolicy(_ parameters: StageParameters) -> RetryPolicy {
        RetryPolicy(
            rateLimited: .init(initialBackoff: parameters.duration("rateLimitedBackoff") ?? .seconds(1),
                               maxRetries: max(0, parameters.integer("rateLimitedRetries") ?? 4),
                               maxRetryAfter: parameters.duration("maxRetryAfter") ?? .seconds(600)),
            unavailable: .init(requeueDelay: parameters.duration("unavailableDelay") ?? .seconds(30),
                               maxRequeues: max(0, parameters.integer("unavailableRequeues") ?? 5)),
            transport: .init(maxAttempts: max(1, parameters.integer("transportAttempts") ?? 3),
                             unreachableAfter: parameters.integer("unreachableAfter") ?? 3))
    }

    /// The match policy the parameters describe.
    static func matchPolicy(_ parameters: StageParameters) -> MatchPolicy {
        var policy = MatchPolicy()
        policy.acceptAt = parameters.integer("acceptAt") ?? policy.acceptAt
        policy.minimumLead = parameters.integer("minimumLead") ?? policy.minimumLead
        policy.isbnNeedsCorroboration = parameters.boolean("isbnNeedsCorroboration") ?? policy.isbnNeedsCorroboration
        return policy
    }

    /// The enricher for an `enrich-records` step.
    /// - Throws: ``SourceChainError`` when a source cannot be set up.
    static func enricher(_ parameters: StageParameters, settings: EnrichmentSettings, store: any Library) throws -> Enricher {
        // `--stale 30d`: answers older than that are asked again, for the stale records and any other.
        var maximumCacheAge = settings.maximumCacheAge ?? parameters.duration("maxCacheAge")
        if let stale = settings.staleAfter { maximumCacheAge = min(maximumCacheAge ?? stale, stale) }
        let options = EnrichmentOptions(
            refresh: settings.refresh,
            maximumCacheAge: maximumCacheAge,
            searchConcurrency: parameters.integer("searchConcurrency") ?? 8,
            matchPolicy: matchPolicy(parameters))
        guard settings.isEnabled else {
            return Enricher(sources: [], store: store, options: options)
        }
        let names = settings.sources ?? parameters.stringList("sources") ?? knownSources
        var sources: [any MetadataSource] = []
        for name in names {
            if let source = try makeSource(name, parameters: parameters, settings: settings, store: store) {
                sources.append(source)
            }
        }
        settings.run.register(sources)
        var enricher = Enricher(sources: sources, store: store, options: options)
        // A configured catalogue ties other sources' editions to their works even when the chain
        // leaves it out (issue 23: "via the local catalogue when configured").
        if !names.contains("catalog"), let catalog = try makeSource("catalog", parameters: parameters, settings: settings,
                                                                   store: store) {
            enricher.workResolvers = [catalog]
        }
        return enricher
    }

    /// Checks the parameters a pipeline file gives (source names), so a misspelt source is an
    /// error when the file is validated, not when the run reaches it.
    /// - Throws: ``SourceChainError/unknownSource(_:)``.
    static func validate(_ parameters: StageParameters) throws {
        for name in parameters.stringList("sources") ?? [] where !knownSources.contains(name) {
            throw SourceChainError.unknownSource(name)
        }
    }

    /// One source, or nil when it is optional and not configured (the catalogue).
    static func makeSource(_ name: String, parameters: StageParameters, settings: EnrichmentSettings,
                           store: any Library) throws -> (any MetadataSource)? {
        switch name {
        case "catalog":
            guard let path = settings.catalogPath else { return nil }
            do {
                return LocalCatalogSource(catalog: try LocalCatalog(path: path))
            } catch {
                throw SourceChainError.cannotOpen(source: name, reason: error.description)
            }
        case "openlibrary":
            let rate = settings.requestsPerSecond[name] ?? parameters.number("openlibraryRate") ?? 3
            let client = try httpClient(parameters, settings: settings)
            settings.run.register(budget: .init(source: name, requestsPerSecond: rate,
                                                isbnBatchSize: max(1, parameters.integer("isbnBatchSize") ?? 25),
                                                attemptsPerRequest: retryPolicy(parameters).maxAttemptsPerRequest))
            return OpenLibrarySource(
                fetcher: fetcher(client, rate: rate, parameters: parameters, store: store),
                baseURL: settings.openLibraryURL ?? OpenLibrarySource<ContinuousClock>.defaultBaseURL,
                isbnBatchSize: parameters.integer("isbnBatchSize") ?? 25)
        case "googlebooks":
            let rate = settings.requestsPerSecond[name] ?? parameters.number("googlebooksRate") ?? 1
            let client = try httpClient(parameters, settings: settings)
            settings.run.register(budget: .init(source: name, requestsPerSecond: rate, isbnBatchSize: 1,
                                                attemptsPerRequest: retryPolicy(parameters).maxAttemptsPerRequest))
            return GoogleBooksSource(
                fetcher: fetcher(client, rate: rate, parameters: parameters, store: store),
                baseURL: settings.googleBooksURL ?? GoogleBooksSource<ContinuousClock>.defaultBaseURL,
                apiKey: settings.googleBooksAPIKey)
        default:
            throw SourceChainError.unknownSource(name)
        }
    }

    /// A remote source's fetcher: `rate` requests per second for its host, for every run on the
    /// library together (the library's ``LibraryRateBudget``: several processes or machines on one
    /// library keep the rate between them, and a 429 one sees pauses them all); host quotas kept
    /// in the library.
    private static func fetcher(_ client: HTTPClient, rate: Double, parameters: StageParameters,
                                store: any Library) -> PolicyHTTPFetcher<ContinuousClock> {
        let limit = RateLimit(requestsPerSecond: rate, burst: 1)
        let clock = ContinuousClock()
        return PolicyHTTPFetcher(client: client, clock: clock,
                                 rateLimiter: RateLimiter(clock: clock, defaultLimit: limit, shared: LibraryRateBudget(store: store)),
                                 retryPolicy: retryPolicy(parameters), quotaStore: LibraryHostQuotaStore(store: store))
    }

    /// The run's shared HTTP client, configured from the parameters on first use.
    private static func httpClient(_ parameters: StageParameters, settings: EnrichmentSettings) throws -> HTTPClient {
        do {
            return try settings.run.client(HTTPClientConfiguration(
                userAgent: HTTPClientConfiguration.userAgent(contact: settings.contact),
                connectTimeout: parameters.duration("connectTimeout") ?? .seconds(10),
                requestTimeout: parameters.duration("requestTimeout") ?? .seconds(30),
                maxRequestsPerHost: max(1, parameters.integer("maxRequestsPerHost") ?? 2)))
        } catch {
            throw SourceChainError.cannotOpen(source: "http", reason: "\(error)")
        }
    }
}

/// Why the chain of sources could not be set up.
public enum SourceChainError: Error, Sendable, CustomStringConvertible {
    /// A name that is not a source.
    case unknownSource(String)
    /// A source could not be opened.
    case cannotOpen(source: String, reason: String)

    public var description: String {
        switch self {
        case .unknownSource(let name):
            return "unknown source '\(name)'; known: \(SourceChain.knownSources.joined(separator: ", "))"
        case .cannotOpen(let source, let reason):
            return "cannot set up source '\(source)': \(reason)"
        }
    }
}
