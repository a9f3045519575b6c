import Foundation
import BookpipePipeline
import Synchronization

/// Sends a source's GET requests under its policies: the host quota, the per-host rate limit,
/// the retry table of DESIGN.md §4, and the source's statistics.
///
/// One fetcher per source; every source may share one ``HTTPClient``. For each request:
///
/// 1. If the ``HostQuotaStore`` says the host is blocked, the fetch fails at once and nothing
///    is sent.
/// 2. The ``RateLimiter`` gives a token (waiting on the injected clock if needed).
/// 3. The request is sent; a 2xx body goes through `decode`.
/// 4. ``RetryStateMachine`` decides what comes next:
///
/// | outcome | what the fetcher does (default policy) |
/// |---|---|
/// | 2xx, decoded | ``FetchOutcome/value(_:)`` |
/// | 404, 410 | ``FetchOutcome/notFound`` at once |
/// | 429 | waits 1, 2, 4, 8 s (a longer `Retry-After`, seconds or HTTP date, wins), then fails naming the 429 |
/// | 429/403 revealing a daily quota (Google) | saves ``HostQuota/dailyQuotaExhausted(host:now:resetTimeZone:reason:)`` and fails at once |
/// | `Retry-After` longer than ``RetryPolicy/RateLimited/maxRetryAfter`` | saves the block as a quota and fails |
/// | 503 (500, 502, 504) | requeue: holds nothing, sleeps ``RetryPolicy/Unavailable/requeueDelay`` (30 s), asks the limiter again; at most ``RetryPolicy/Unavailable/maxRequeues`` times |
/// | malformed body (`decode` threw, or the body was cut off) | like a 503; an HTML page instead of JSON (a captive portal, a proxy's error page) is named in the reason |
/// | timeout, connection error | again at once, at most 3 attempts in all (a retry after no connection takes no rate token: nothing reached the server) |
/// | any other status (400, 401, 403, …) | fails at once |
///
/// **A server that cannot be reached** (``reachability``, the rule of ``ReachabilityStateMachine``):
/// once ``RetryPolicy/Transport/unreachableAfter`` fetches in a row (3) have failed without ever
/// connecting (refused, not resolved, no route, TLS, timed out) and no attempt was answered in
/// between, the fetcher sends nothing more for the rest of its life (a run): every fetch, those
/// waiting for a token included, fails at once with a reason naming the host and what to check.
/// One fetcher talks to one source's server, so the rule is the source's.
///
/// Under a run's deadline (``RequestDeadline/current``) no request is sent once it has passed,
/// and no wait that would end after it is begun (see ``fetch(_:headers:decode:)``).
///
/// Every wait (rate limit, backoff, requeue) is a sleep on the injected clock, so tests drive
/// the whole schedule with a ``ManualClock``. Wall-clock time (`now`) is used only to read
/// `Retry-After` dates and to date quotas.
///
/// ```swift
/// let client = try HTTPClient(configuration: .init(
///     userAgent: HTTPClientConfiguration.userAgent(contact: "mailto:me@example.org")))
/// let fetcher = PolicyHTTPFetcher(client: client, rateLimit: .openLibrary)
/// let outcome = try await fetcher.fetch("https://openlibrary.org/search.json?title=Dune") { response in
///     try JSONDecoder().decode(SearchResponse.self, from: response.body)
/// }
/// ```
///
/// Statistics (``SourceStatistics``): `requests` counts every attempt sent, `retries` every
/// retry or requeue, `rateLimited` every 429 received, `failures` every fetch that ended in
/// ``FetchOutcome/failed(reason:)``, `totalLatency` the time spent in the client per attempt.
///
/// Thread safety: `Sendable`; call ``fetch(_:headers:decode:)`` from any number of tasks.
public final class PolicyHTTPFetcher<C: Clock<Duration>>: Sendable {
    /// The HTTP client requests go through (shared between sources).
    public let client: HTTPClient
    /// The clock every wait sleeps on.
    public let clock: C
    /// The per-host token buckets (may be shared with other fetchers).
    public let rateLimiter: RateLimiter<C>
    /// The retry table applied to each request.
    public let retryPolicy: RetryPolicy
    /// Where host quotas are read and saved.
    public let quotaStore: any HostQuotaStore
    /// The counters this fetcher updates.
    public let statistics: SourceStatistics
    /// Whether the server can still be reached (see the type's documentation).
    public let reachability: Reachability
    private let unreachableHostName = Mutex<String?>(nil)
    private let now: @Sendable () -> Date

    /// Creates a fetcher around an existing rate limiter.
    ///
    /// - Parameters:
    ///   - client: the HTTP client (its configuration sets the `User-Agent` and timeouts).
    ///   - clock: the clock waits sleep on; tests pass a ``ManualClock``.
    ///   - rateLimiter: per-host token buckets on the same clock; its host keys are those of
    ///     ``hostKey(of:)``.
    ///   - retryPolicy: the retry table (default: DESIGN.md §4).
    ///   - quotaStore: where host quotas are kept (default: in memory, for this fetcher only).
    ///   - statistics: the counters to update (default: new ones).
    ///   - now: wall-clock time, for `Retry-After` dates and quota expiry (default `Date()`).
    public init(client: HTTPClient, clock: C, rateLimiter: RateLimiter<C>, retryPolicy: RetryPolicy = .default,
                quotaStore: any HostQuotaStore = InMemoryHostQuotaStore(),
                statistics: SourceStatistics = SourceStatistics(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.client = client
        self.clock = clock
        self.rateLimiter = rateLimiter
        self.retryPolicy = retryPolicy
        self.quotaStore = quotaStore
        self.statistics = statistics
        self.reachability = Reachability(givenUpInARowToStop: retryPolicy.transport.unreachableAfter)
        self.now = now
    }

    /// The host this fetcher gave up on, and why, once ``reachability`` has stopped; nil while it
    /// is asked.
    public var unreachableHost: UnreachableHost? {
        guard let stop = reachability.stop, let host = unreachableHostName.withLock({ $0 }) else { return nil }
        return UnreachableHost(host: host, unreachable: stop)
    }

    /// Creates a fetcher with its own rate limiter: every host it talks to gets `rateLimit`.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let fetcher = PolicyHTTPFetcher(client: client, clock: clock, rateLimit: .openLibrary,
    ///                                 retryPolicy: .default, quotaStore: quotas)
    /// ```
    ///
    /// - Parameters: see ``init(client:clock:rateLimiter:retryPolicy:quotaStore:statistics:now:)``;
    ///   `rateLimit` is the token bucket of each host (Open Library: ``RateLimit/openLibrary``).
    public convenience init(client: HTTPClient, clock: C, rateLimit: RateLimit, retryPolicy: RetryPolicy = .default,
                            quotaStore: any HostQuotaStore = InMemoryHostQuotaStore(),
                            statistics: SourceStatistics = SourceStatistics(),
                            now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(client: client, clock: clock, rateLimiter: RateLimiter(clock: clock, defaultLimit: rateLimit),
                  retryPolicy: retryPolicy, quotaStore: quotaStore, statistics: statistics, now: now)
    }

    /// Sends `GET url` under the fetcher's policies and decodes the 2xx body.
    ///
    /// - Parameters:
    ///   - url: an absolute http(s) URL. It may carry an API key in its query: the key never
    ///     appears in a failure reason (reasons name only the host and path).
    ///   - headers: extra request headers (for example `Accept: application/json`).
    ///   - decode: turns a 2xx response into a value. When it throws, the body counts as
    ///     malformed and is retried like a 503.
    /// - Returns: the decoded value, ``FetchOutcome/notFound`` for 404/410, or
    ///   ``FetchOutcome/failed(reason:)`` when the policy gives up or a quota blocks the host.
    /// - Throws: `CancellationError`, when the calling task is cancelled: a request in flight is
    ///   aborted and any wait (rate limit, backoff, requeue) ends at once.
    ///   ``RequestDeadlineReached``, when the task's ``RequestDeadline/current`` has passed before
    ///   the request (or its retry) was sent, or a rate-limit or retry wait would end after it: the
    ///   wait is abandoned at once, nothing is sent and nothing counts as a failure. A request
    ///   already sent is always answered.
    public func fetch<Value>(_ url: String, headers: [(name: String, value: String)] = [],
                             decode: (HTTPResponse) throws -> Value) async throws -> FetchOutcome<Value> {
        let place = Self.place(of: url)
        let host: String
        do {
            host = try Self.hostKey(of: url)
        } catch {
            return fail(error.description)
        }
        var retries = RetryStateMachine(policy: retryPolicy)
        var sawHTML = false
        // Why the last attempt could not reach the server (nil: it did, or was not sent).
        var lastCouldNotConnect: String?
        // The last attempt made no connection at all: its retry takes no token (nothing reached
        // the server; a timeout may have, so it waits for one).
        var retryNeedsNoToken = false
        let deadline = RequestDeadline.current
        while true {
            try Task.checkCancellation()
            if deadline?.hasPassed == true { throw RequestDeadlineReached(place: place) }
            if let blocked = await blockingQuota(host: host) { return fail("GET \(place): \(blocked)") }
            if let unreachable = unreachableHost { return fail("GET \(place): \(Self.unreachableMessage(unreachable))") }
            if !retryNeedsNoToken {
                // A token that would come after the deadline is not waited for; a host given up
                // while this request waited is not waited for any more.
                let reachability = self.reachability
                let acquired = try await rateLimiter.acquire(host: host, waitingAtMost: deadline?.remaining,
                                                             abandoned: { reachability.stop != nil })
                if let unreachable = unreachableHost { return fail("GET \(place): \(Self.unreachableMessage(unreachable))") }
                guard acquired, deadline?.hasPassed != true else { throw RequestDeadlineReached(place: place) }
                // A quota may have been saved, or the host given up, while this one waited.
                if let blocked = await blockingQuota(host: host) { return fail("GET \(place): \(blocked)") }
                if let unreachable = unreachableHost { return fail("GET \(place): \(Self.unreachableMessage(unreachable))") }
            }

            let attempt = try await send(url, headers: headers, host: host, deadline: deadline, decode: decode)
            lastCouldNotConnect = nil
            if case .unreached(let cause) = attempt.reach { lastCouldNotConnect = cause }
            retryNeedsNoToken = attempt.madeNoConnection
            let outcome: RetryOutcome
            var value: Value?
            var retryAfter: RetryAfter?
            switch attempt.result {
            case .decoded(let decoded):
                outcome = .success
                value = decoded
            case .retryable(let retryOutcome, let serverRetryAfter):
                outcome = retryOutcome
                retryAfter = serverRetryAfter
            case .html:
                outcome = .malformedBody
                sawHTML = true
            case .stop(let reason):
                return fail("GET \(place): \(reason)")
            }

            switch retries.next(after: outcome, now: now()) {
            case .succeed:
                guard let value else { return fail("GET \(place): unexpected \(outcome); no body to read") }
                return .value(value)
            case .permanentNotFound:
                return .notFound
            case .retry(let delay), .requeue(let delay):
                // A retry wait that would end after the deadline is abandoned, not slept.
                if let deadline, delay >= deadline.remaining { throw RequestDeadlineReached(place: place) }
                statistics.update { $0.retries += 1 }
                if delay > .zero {
                    try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
                }
            case .giveUp(let reason):
                if let cause = lastCouldNotConnect {
                    unreachableHostName.withLock { name in if name == nil { name = host } }
                    _ = reachability.gaveUpUnreachable(cause: cause)
                }
                if let retryAfter, retryAfter.delay(from: now()) > retryPolicy.rateLimited.maxRetryAfter {
                    // The server asked for a longer pause than the policy waits: keep the host
                    // blocked until then, in this run and (with a persistent store) the next.
                    await quotaStore.save(.retryAfter(retryAfter, host: host, now: now(), reason: "\(outcome)"))
                }
                let html = sawHTML ? " (the server answered 200 with an HTML page instead of JSON: a captive portal or "
                    + "a proxy's error page? check the network, then rerun with bookpipe enrich --failed)" : ""
                // Why no connection was made ("connection refused", "host name not resolved") first;
                // a timeout's reason already says it.
                let cause = retryNeedsNoToken ? lastCouldNotConnect.map { "\($0): " } ?? "" : ""
                return fail("GET \(place): \(cause)\(reason)\(html)")
            }
        }
    }

    /// What one attempt produced, and whether it reached the server.
    private struct Attempt<Value> {
        var result: AttemptResult<Value>
        var reach: AttemptReach
        /// No connection was made (``HTTPError/couldNotConnect(url:reason:method:)``).
        var madeNoConnection = false
    }

    /// Whether an attempt reached the server, as the fetcher acts on it.
    private enum AttemptReach {
        /// An answer came (or a connection was made).
        case reached
        /// No connection was made: `cause` in a few words.
        case unreached(cause: String)
        /// Nothing was sent.
        case notSent
    }

    /// What one attempt's answer (or failure) was.
    private enum AttemptResult<Value> {
        /// A 2xx body, decoded.
        case decoded(Value)
        /// Something the retry table decides about, with the server's `Retry-After`, if any.
        case retryable(RetryOutcome, retryAfter: RetryAfter?)
        /// Stop now with this reason (a daily quota, or an error retrying cannot help).
        case stop(String)
        /// A 2xx answer with an HTML page where data was expected: retried like a malformed body.
        case html
    }

    /// Sends one attempt, counts it, and tells the rate limiter what the host said.
    private func send<Value>(_ url: String, headers: [(name: String, value: String)], host: String,
                             deadline: RequestDeadline?,
                             decode: (HTTPResponse) throws -> Value) async throws -> Attempt<Value> {
        let started = ContinuousClock.now
        let response: HTTPResponse
        var request = HTTPRequest(.get, url, headers: headers)
        // Still waiting for a free connection when the deadline passes: not sent.
        request.deadline = deadline
        do {
            response = try await client.send(request)
        } catch let error as HTTPError {
            let latency = started.duration(to: .now)
            statistics.update {
                $0.requests += 1
                $0.totalLatency += latency
            }
            let reach: AttemptReach
            switch Reach(error: error) {
            case .reached:
                reachability.reached()
                reach = .reached
            case .couldNotConnect(let cause): reach = .unreached(cause: cause)
            case .notSent: reach = .notSent
            }
            var madeNoConnection = false
            if case .couldNotConnect = error { madeNoConnection = true }
            guard let outcome = error.retryOutcome else { return Attempt(result: .stop(error.description), reach: reach) }
            return Attempt(result: .retryable(outcome, retryAfter: nil), reach: reach, madeNoConnection: madeNoConnection)
        }
        reachability.reached()
        // CancellationError (and nothing else) propagates from the client.
        let latency = started.duration(to: .now)
        statistics.update {
            $0.requests += 1
            $0.totalLatency += latency
            if response.status == 429 { $0.rateLimited += 1 }
        }

        if let reason = DailyQuotaDetection.reason(in: response) {
            rateLimiter.record(.rateLimited(retryAfter: nil), host: host)
            let quota = HostQuota.dailyQuotaExhausted(host: host, now: now(), reason: reason)
            await quotaStore.save(quota)
            return Attempt(result: .stop(Self.blockedMessage(quota)), reach: .reached)
        }
        if response.status == 429 {
            // A pause longer than the policy waits becomes a quota instead of stalling every
            // request to the host inside the limiter.
            let pause = response.headers.retryAfter?.delay(from: now())
            let limiterPause = pause.flatMap { $0 <= retryPolicy.rateLimited.maxRetryAfter ? $0 : nil }
            rateLimiter.record(.rateLimited(retryAfter: limiterPause), host: host)
            // Every worker of a shared budget waits too: the Retry-After, else the first backoff.
            // (A longer pause is saved as a quota below, which every worker reads before sending.)
            await rateLimiter.pauseShared(host: host, for: limiterPause ?? retryPolicy.rateLimited.initialBackoff,
                                          reason: "HTTP 429 from \(host)")
        } else {
            rateLimiter.record(.success, host: host)
        }

        guard response.isSuccess else {
            return Attempt(result: .retryable(response.retryOutcome, retryAfter: response.headers.retryAfter), reach: .reached)
        }
        do {
            return Attempt(result: .decoded(try decode(response)), reach: .reached)
        } catch {
            return Attempt(result: Self.isHTML(response) ? .html : .retryable(.malformedBody, retryAfter: nil), reach: .reached)
        }
    }

    /// True when a body that did not decode is an HTML page (by its content type, or by its first
    /// bytes: `<!DOCTYPE` or `<html`).
    static func isHTML(_ response: HTTPResponse) -> Bool {
        if response.headers["Content-Type"]?.lowercased().contains("html") == true { return true }
        let start = response.body.prefix(512).drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0xEF
            || $0 == 0xBB || $0 == 0xBF }
        let head = String(decoding: start.prefix(9), as: UTF8.self).lowercased()
        return head.hasPrefix("<!doctype") || head.hasPrefix("<html")
    }

    /// The quota blocking `host` now, as a message, or `nil`.
    private func blockingQuota(host: String) async -> String? {
        guard let quota = await quotaStore.quota(forHost: host), quota.isBlocked(at: now()) else { return nil }
        return Self.blockedMessage(quota)
    }

    private func fail<Value>(_ reason: String) -> FetchOutcome<Value> {
        statistics.update { $0.failures += 1 }
        return .failed(reason: reason)
    }

    /// Why a fetch was not sent to a host given up as unreachable, and what to check.
    static func unreachableMessage(_ unreachable: UnreachableHost) -> String {
        "not sent: \(unreachable.host) could not be reached (\(unreachable.unreachable.cause)) for "
            + "\(unreachable.unreachable.inARow) lookups in a row, so it is not asked again in this run; "
            + "check the network and the source's base URL, then rerun with bookpipe enrich --failed"
    }

    static func blockedMessage(_ quota: HostQuota) -> String {
        "\(quota.host) quota exhausted until \(HTTPDate.format(quota.blockedUntil)) (\(quota.reason)); "
            + "bookpipe sends it nothing before then; rerun later with bookpipe enrich --failed"
    }

    /// The name hosts go by in the rate limiter and the quota store: the lower-case host name,
    /// followed by `:port` when the URL names a port.
    ///
    /// ```swift
    /// PolicyHTTPFetcher<ContinuousClock>.hostKey(of: "https://OpenLibrary.org/search.json")  // "openlibrary.org"
    /// PolicyHTTPFetcher<ContinuousClock>.hostKey(of: "http://127.0.0.1:8080/api/books")     // "127.0.0.1:8080"
    /// ```
    /// - Throws: ``HTTPError/invalidURL(_:reason:)`` when `url` has no host.
    public static func hostKey(of url: String) throws(HTTPError) -> String {
        guard let components = URLComponents(string: url), let host = components.host?.lowercased(),
              !host.isEmpty else {
            throw .invalidURL(url, reason: "the URL has no host")
        }
        return components.port.map { "\(host):\($0)" } ?? host
    }

    /// `scheme://host[:port]/path` of `url`, without user, query or fragment: where a failure
    /// happened, with no room for a secret.
    static func place(of url: String) -> String {
        var text = Substring(url)
        if let cut = text.firstIndex(where: { $0 == "?" || $0 == "#" }) { text = text[..<cut] }
        return URLRedaction.redact(String(text))
    }
}

extension PolicyHTTPFetcher where C == ContinuousClock {
    /// Creates a fetcher on the real clock with its own rate limiter.
    ///
    /// ```swift
    /// let fetcher = PolicyHTTPFetcher(client: client, rateLimit: .openLibrary, quotaStore: quotas)
    /// ```
    public convenience init(client: HTTPClient, rateLimit: RateLimit = .conservative,
                            retryPolicy: RetryPolicy = .default,
                            quotaStore: any HostQuotaStore = InMemoryHostQuotaStore(),
                            statistics: SourceStatistics = SourceStatistics()) {
        self.init(client: client, clock: ContinuousClock(), rateLimit: rateLimit, retryPolicy: retryPolicy,
                  quotaStore: quotaStore, statistics: statistics)
    }
}
