import Foundation
import Synchronization

/// A local server that speaks Open Library's and Google Books' APIs from an in-memory set of
/// books, with configurable latency, a server-side rate limit and injected faults.
///
/// Endpoints, in the services' own formats (the same shapes as the shared fixtures):
///
/// | endpoint | answers |
/// |---|---|
/// | `GET /api/books?bibkeys=ISBN:…,…&format=json&jscmd=data` | an object keyed by each found bibkey exactly as sent (also `jscmd=details`/`viewapi`, and `format=js`) |
/// | `GET /search.json?title=&author=&q=&fields=&limit=&offset=` | `numFound`, `docs` (one per work); `isbn` and `edition_key` only when `fields` asks (or `*`) |
/// | `GET /isbn/{isbn}.json` | `302` to `/books/{OL…M}.json`; 404 `{"error": "notfound"}` when unknown |
/// | `GET /books/{OL…M}.json`, `GET /works/{OL…W}.json` | the edition and work records |
/// | `GET /books/v1/volumes?q=isbn:…` / `q=intitle:…+inauthor:…&maxResults=&startIndex=&key=` | `kind`, `totalItems`, `items` (left out when nothing matched); `maxResults` > 40 is a 400 |
/// | `GET /books/v1/volumes/{id}` | one volume |
///
/// Every request is logged (path, query, arrival time, what was answered). Before routing, a
/// request goes through, in order: the rate limit (a token bucket per service; a request over
/// the limit gets `429` with `Retry-After` and counts as a violation), the fault script (faults
/// queued for the next requests), the random faults (a seeded rate), and canned responses (for
/// example a fixture file served verbatim for one path).
///
/// ```swift
/// let services = FakeBookServices(books: FakeBook.generated(count: 1_500),
///                                 configuration: .init(latency: .milliseconds(50),
///                                                      rateLimit: .init(requestsPerSecond: 5)))
/// try services.start()
/// defer { services.stop() }
/// services.injectFaults([.tooManyRequests(retryAfter: "2"), .serviceUnavailable(retryAfter: nil)])
/// // point --openlibrary-url and --googlebooks-url at services.baseURL …
/// #expect(services.rateLimitViolations == 0)
/// ```
///
/// Connections are served by one thread each (``LoopbackHTTPServer``), so slow answers and
/// stalls do not hold up other clients. Always call ``stop()``.
///
/// Thread safety: all state is behind a `Mutex`; every member may be used from any thread.
public final class FakeBookServices: Sendable {
    /// A way to answer a request badly.
    public enum Fault: Sendable, Hashable, CustomStringConvertible {
        /// `429 Too Many Requests`, with `Retry-After` (seconds or an HTTP date) when given.
        case tooManyRequests(retryAfter: String?)
        /// `503 Service Unavailable`, with `Retry-After` when given.
        case serviceUnavailable(retryAfter: String?)
        /// `404 Not Found`.
        case notFound
        /// Any other status, with a short text body.
        case status(Int)
        /// Reset the connection (TCP RST) without answering.
        case resetConnection
        /// Never answer (the client's timeout fires).
        case stall
        /// Announce the whole body in `Content-Length` but send only half of it, then close.
        case truncatedBody
        /// A complete `200` whose JSON body is cut in half.
        case malformedJSON
        /// Google's `429` saying the daily quota ("Queries per day") is used up.
        case googleDailyQuota
        /// A `200` with an HTML page instead of JSON: a captive portal's sign-in page, or a proxy's
        /// error page.
        case htmlPage

        public var description: String {
            switch self {
            case .tooManyRequests(let retryAfter): return "429" + (retryAfter.map { " (Retry-After \($0))" } ?? "")
            case .serviceUnavailable(let retryAfter): return "503" + (retryAfter.map { " (Retry-After \($0))" } ?? "")
            case .notFound: return "404"
            case .status(let code): return "\(code)"
            case .resetConnection: return "connection reset"
            case .stall: return "stall"
            case .truncatedBody: return "truncated body"
            case .malformedJSON: return "malformed JSON"
            case .googleDailyQuota: return "Google daily quota"
            case .htmlPage: return "HTML page"
            }
        }
    }

    /// Which of the two services a path belongs to.
    public enum Service: String, Sendable, Hashable, CaseIterable {
        /// `/api/books`, `/search.json`, `/isbn/…`, `/books/…`, `/works/…`.
        case openLibrary
        /// `/books/v1/…`.
        case googleBooks

        /// The service of `path`.
        public init(path: String) {
            self = path.hasPrefix("/books/v1/") || path == "/books/v1" ? .googleBooks : .openLibrary
        }
    }

    /// The server-side rate limit: one token bucket per service (Open Library and Google Books
    /// are different hosts in reality, so each has its own budget).
    public struct RateLimit: Sendable, Hashable {
        /// Requests per second allowed.
        public var requestsPerSecond: Double
        /// Requests that may arrive back to back after a quiet period.
        public var burst: Int
        /// Slack for scheduling and network jitter: a request this much earlier than its due
        /// time still passes. It never raises the long-run rate: a client that keeps sending
        /// faster than ``requestsPerSecond`` runs out of slack and is refused.
        public var tolerance: Duration

        /// Creates a limit.
        ///
        /// - Parameters:
        ///   - requestsPerSecond: the rate allowed.
        ///   - burst: requests allowed back to back after a quiet period (default 1).
        ///   - tolerance: jitter allowed; by default half the interval between requests (100 ms
        ///     at 5 requests per second), so a client that paces itself at exactly the rate on a
        ///     busy machine is not refused for a late packet followed by a punctual one.
        public init(requestsPerSecond: Double, burst: Int = 1, tolerance: Duration? = nil) {
            self.requestsPerSecond = max(0.001, requestsPerSecond)
            self.burst = max(1, burst)
            self.tolerance = tolerance ?? .seconds(0.5 / self.requestsPerSecond)
        }
    }

    /// How the server behaves; change it at any time with ``configuration``.
    public struct Configuration: Sendable {
        /// Delay before every answer (not before a stall).
        public var latency: Duration
        /// The server-side rate limit, applied to each service separately; `nil` for none.
        public var rateLimit: RateLimit?
        /// When set, Google endpoints answer `400` ("API key not valid") unless `key=` is this.
        public var googleAPIKey: String?
        /// Google Books' own rate limit, when it differs from ``rateLimit`` (Open Library 3/s and
        /// Google 1/s are two budgets).
        public var googleBooksRateLimit: RateLimit?
        /// The share of books Open Library knows (0...1; default all). The others are absent from
        /// its Books API and search, chosen by edition key (the same books every run), so a
        /// chain's later source (Google Books) has rows to answer.
        public var openLibraryCoverage: Double

        /// Creates a configuration.
        public init(latency: Duration = .zero, rateLimit: RateLimit? = nil, googleAPIKey: String? = nil,
                    googleBooksRateLimit: RateLimit? = nil, openLibraryCoverage: Double = 1) {
            self.latency = latency
            self.rateLimit = rateLimit
            self.googleAPIKey = googleAPIKey
            self.googleBooksRateLimit = googleBooksRateLimit
            self.openLibraryCoverage = min(1, max(0, openLibraryCoverage))
        }

        /// The rate limit of `service`.
        public func rateLimit(of service: Service) -> RateLimit? {
            service == .googleBooks ? googleBooksRateLimit ?? rateLimit : rateLimit
        }

        /// True when Open Library knows `book` (see ``openLibraryCoverage``).
        public func openLibraryKnows(_ book: FakeBook) -> Bool {
            openLibraryCoverage >= 1 || Double(FakeBook.hash(book.editionKey) % 1000) < openLibraryCoverage * 1000
        }
    }

    /// What the server answered to a logged request.
    public enum Answer: Sendable, Hashable, CustomStringConvertible {
        /// An answer with this status from the routes (or a canned response).
        case status(Int)
        /// A `429` from the server-side rate limit.
        case rateLimited
        /// An injected fault.
        case fault(Fault)

        public var description: String {
            switch self {
            case .status(let code): return "\(code)"
            case .rateLimited: return "429 (rate limit)"
            case .fault(let fault): return "fault: \(fault)"
            }
        }
    }

    /// One request, as the server logged it.
    public struct LoggedRequest: Sendable, CustomStringConvertible {
        /// The path (`/api/books`).
        public var path: String
        /// The raw query, after `?`.
        public var query: String?
        /// Query parameters, form-decoded (`+` is a space), in order.
        public var parameters: [(name: String, value: String)]
        /// When the request arrived, on the server's time source.
        public var arrival: Duration
        /// What was answered.
        public var answer: Answer
        /// The request's number in arrival order (1 for the first).
        public var sequenceNumber: Int
        /// The client's `User-Agent` (bookpipe names its `--contact` there), if it sent one.
        public var userAgent: String? = nil

        /// The service the path belongs to.
        public var service: Service { Service(path: path) }

        /// The first value of parameter `name`.
        public func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }

        public var description: String { "\(path)\(query.map { "?\($0)" } ?? "") at \(arrival): \(answer)" }
    }

    private struct ScriptedFault {
        var fault: Fault
        var pathPrefix: String?
    }

    private struct RandomFaults {
        var rate: Double
        var faults: [Fault]
        var pathPrefix: String?
        var generator: SplitMix64
    }

    private struct State {
        var catalog: FakeCatalog
        var configuration: Configuration
        var script: [ScriptedFault] = []
        var random: RandomFaults?
        var canned: [String: ScriptedResponse] = [:]
        var log: [LoggedRequest] = []
        var violations = 0
        var nextSequenceNumber = 1
        /// Requests whose `User-Agent` contains `text` are held unanswered once `after` of them were
        /// let through (``holdRequests(fromUserAgentContaining:afterLettingThrough:)``); `passed` counts those.
        var held: (text: String, after: Int, passed: Int)?
        /// Per service, the rate limit's theoretical arrival time (GCRA): when the next request is due.
        var dueTimes: [Service: Duration] = [:]
    }

    /// The HTTP server underneath (connection counts, concurrency).
    public let server: LoopbackHTTPServer
    private let handler: Handler

    /// Creates the services; call ``start()`` to listen.
    ///
    /// - Parameters:
    ///   - books: the books the services know.
    ///   - configuration: latency, rate limit, API key.
    ///   - timeSource: what arrival times and the rate limit are measured with; by default the
    ///     time since this initialiser on the continuous clock. Pass `{ clock.now.offset }` to
    ///     use a ``ManualClock``.
    public init(books: [FakeBook] = [], configuration: Configuration = Configuration(),
                timeSource: (@Sendable () -> Duration)? = nil) {
        let origin = ContinuousClock.now
        let now = timeSource ?? { origin.duration(to: .now) }
        // The server holds the handler, not `self`, so it does not keep the services alive.
        let handler = Handler(state: State(catalog: FakeCatalog(books: books), configuration: configuration), now: now)
        self.handler = handler
        server = LoopbackHTTPServer(timeSource: now) { request in handler.respond(to: request) }
    }

    deinit {
        server.stop()
    }

    /// Starts listening on 127.0.0.1 on a free port.
    /// - Returns: the port.
    /// - Throws: ``LoopbackServerError`` when the socket cannot be set up.
    @discardableResult
    public func start() throws(LoopbackServerError) -> UInt16 { try server.start() }

    /// Stops the server, releasing stalled requests. Safe to call more than once.
    public func stop() { server.stop() }

    /// `http://127.0.0.1:<port>` once started: the base URL of both services.
    public var baseURL: String { server.baseURL }

    /// The books the services know.
    public var books: [FakeBook] { handler.state.withLock { $0.catalog.books } }

    /// Adds books.
    public func add(_ books: [FakeBook]) {
        handler.state.withLock { $0.catalog.add(books) }
    }

    /// The current configuration; setting it takes effect for the next request.
    public var configuration: Configuration {
        get { handler.state.withLock { $0.configuration } }
        set {
            handler.state.withLock { state in
                if newValue.rateLimit != state.configuration.rateLimit
                    || newValue.googleBooksRateLimit != state.configuration.googleBooksRateLimit {
                    state.dueTimes.removeAll()
                }
                state.configuration = newValue
            }
        }
    }

    /// Makes the next requests fail with `faults`, one each, in order.
    ///
    /// - Parameters:
    ///   - faults: the faults, for the next `faults.count` requests.
    ///   - pathPrefix: only requests whose path starts with this take a fault (others pass).
    public func injectFaults(_ faults: [Fault], pathPrefix: String? = nil) {
        handler.state.withLock { $0.script += faults.map { ScriptedFault(fault: $0, pathPrefix: pathPrefix) } }
    }

    /// Makes a share of requests fail, drawn from `faults` with a seeded generator, so a run
    /// can be repeated exactly (given the same request order).
    ///
    /// - Parameters:
    ///   - rate: the share of requests that get a fault (0...1).
    ///   - seed: the generator's seed.
    ///   - faults: the faults to draw from (uniformly).
    ///   - pathPrefix: only requests whose path starts with this can get a fault.
    public func setRandomFaults(rate: Double, seed: UInt64, faults: [Fault], pathPrefix: String? = nil) {
        handler.state.withLock {
            $0.random = faults.isEmpty ? nil : RandomFaults(rate: min(1, max(0, rate)), faults: faults,
                                                            pathPrefix: pathPrefix, generator: SplitMix64(seed: seed))
        }
    }

    /// Removes scripted and random faults.
    public func clearFaults() {
        handler.state.withLock {
            $0.script.removeAll()
            $0.random = nil
        }
    }

    /// Holds requests whose `User-Agent` contains `text` unanswered (a stall that lasts until the
    /// client gives up or the server stops), once `count` of them have been let through, whatever
    /// the other faults say; the rate limit still counts them. Lets a test freeze one client of
    /// several (one worker among others) at a known point of its work, decided by the server
    /// itself, for example before killing it. `nil` stops holding.
    public func holdRequests(fromUserAgentContaining text: String?, afterLettingThrough count: Int = 0) {
        handler.state.withLock { $0.held = text.map { ($0, max(0, count), 0) } }
    }

    /// Faults still waiting in the script.
    public var pendingFaultCount: Int { handler.state.withLock { $0.script.count } }

    /// Answers every request for `path` with `response` (after the rate limit and faults),
    /// for example a fixture file served verbatim; `nil` removes it.
    public func setResponse(_ response: ScriptedResponse?, forPath path: String) {
        handler.state.withLock { $0.canned[path] = response }
    }

    /// Every request so far, in arrival order.
    public var requestLog: [LoggedRequest] { handler.state.withLock { $0.log } }

    /// Requests refused by the server-side rate limit so far.
    public var rateLimitViolations: Int { handler.state.withLock { $0.violations } }

    /// Forgets the log and the violation count.
    public func resetLog() {
        handler.state.withLock {
            $0.log.removeAll()
            $0.violations = 0
        }
    }

    // MARK: - Handling

    private enum Decision {
        case rateLimited(retryAfter: Int)
        case answer(fault: Fault?, canned: ScriptedResponse?)
    }

    /// Holds the state and decides and builds answers (the server's handler calls it).
    private final class Handler: Sendable {
        let state: Mutex<State>
        let now: @Sendable () -> Duration

        init(state: State, now: @escaping @Sendable () -> Duration) {
            self.state = Mutex(state)
            self.now = now
        }

        func respond(to request: HTTPRequestHead) -> ScriptedResponse {
            let arrival = now()
            let parameters = FakeCatalog.formDecode(request.query)
            let (decision, catalog, configuration, sequenceNumber) = state.withLock { state in
                let decision: Decision
                if let limited = Self.takeToken(&state, service: Service(path: request.path), at: arrival) {
                    decision = limited
                } else if let held = state.held, request.header("User-Agent")?.contains(held.text) == true,
                          held.passed >= held.after {
                    decision = .answer(fault: .stall, canned: nil)
                } else {
                    if let held = state.held, request.header("User-Agent")?.contains(held.text) == true {
                        state.held?.passed += 1
                    }
                    decision = .answer(fault: Self.nextFault(&state, path: request.path), canned: state.canned[request.path])
                }
                let answer: Answer
                switch decision {
                case .rateLimited: answer = .rateLimited
                case .answer(let fault?, _): answer = .fault(fault)
                case .answer(nil, _): answer = .status(0)
                }
                let number = state.nextSequenceNumber
                state.nextSequenceNumber += 1
                state.log.append(LoggedRequest(path: request.path, query: request.query, parameters: parameters,
                                               arrival: arrival, answer: answer, sequenceNumber: number,
                                               userAgent: request.header("User-Agent")))
                return (decision, state.catalog, state.configuration, number)
            }

            var response: ScriptedResponse
            switch decision {
            case .rateLimited(let retryAfter):
                response = .status(429, headers: [("Retry-After", String(retryAfter))])
            case .answer(let fault, let canned):
                let routed = canned ?? catalog.route(request.path, parameters: parameters, configuration: configuration)
                response = Self.apply(fault, to: routed)
                if fault == nil {
                    let status = response.status
                    state.withLock { state in
                        if let index = state.log.lastIndex(where: { $0.sequenceNumber == sequenceNumber }) {
                            state.log[index].answer = .status(status)
                        }
                    }
                }
            }
            if response.fault != .stall { response.latency = configuration.latency }
            return response
        }

        /// Applies the rate limit as a generic cell rate algorithm (a token bucket in another
        /// form): a request passes unless it arrives earlier than its due time allows (minus
        /// the burst and the tolerance); returns the 429 decision when it is too early.
        private static func takeToken(_ state: inout State, service: Service, at now: Duration) -> Decision? {
            guard let limit = state.configuration.rateLimit(of: service) else { return nil }
            let interval = Duration.seconds(1 / limit.requestsPerSecond)
            let due = state.dueTimes[service] ?? now
            let earliest = due - interval * (limit.burst - 1)
            if now >= earliest - limit.tolerance {
                state.dueTimes[service] = max(due, now) + interval
                return nil
            }
            state.violations += 1
            return .rateLimited(retryAfter: max(1, Int((earliest - now).seconds.rounded(.up))))
        }

        private static func nextFault(_ state: inout State, path: String) -> Fault? {
            if let index = state.script.firstIndex(where: { $0.pathPrefix.map(path.hasPrefix) ?? true }) {
                return state.script.remove(at: index).fault
            }
            guard var random = state.random, random.pathPrefix.map(path.hasPrefix) ?? true else { return nil }
            defer { state.random = random }
            let draw = Double(random.generator.next() >> 11) / Double(1 << 53)
            guard draw < random.rate else { return nil }
            return random.faults[Int(random.generator.next() % UInt64(random.faults.count))]
        }

        private static func apply(_ fault: Fault?, to routed: ScriptedResponse) -> ScriptedResponse {
            guard let fault else { return routed }
            switch fault {
            case .tooManyRequests(let retryAfter): return .tooManyRequests(retryAfter: retryAfter)
            case .serviceUnavailable(let retryAfter): return .serviceUnavailable(retryAfter: retryAfter)
            case .notFound: return .notFound
            case .status(let code): return .status(code)
            case .resetConnection: return .resetConnection
            case .stall: return .stall
            case .truncatedBody:
                var response = routed
                response.fault = .truncateBody(afterBytes: routed.body.count / 2)
                return response
            case .htmlPage:
                return ScriptedResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array("""
                    <!DOCTYPE html>
                    <html><head><title>Sign in to Hotel Wi-Fi</title></head>
                    <body><h1>Welcome</h1><p>Please accept the terms to continue.</p></body></html>
                    """.utf8))
            case .malformedJSON:
                var response = routed
                response.status = 200
                response.body = routed.body.count > 1 ? Array(routed.body.prefix(routed.body.count / 2)) : Array("{".utf8)
                return response
            case .googleDailyQuota:
                return FakeCatalog.googleError(
                    code: 429, status: "RESOURCE_EXHAUSTED", reason: "rateLimitExceeded",
                    message: "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service "
                        + "'books.googleapis.com' for consumer 'project_number:000000000000'.",
                    details: [["@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
                               "domain": "googleapis.com",
                               "metadata": ["quota_limit": "defaultPerDayPerProject",
                                            "quota_metric": "books.googleapis.com/default",
                                            "service": "books.googleapis.com", "quota_location": "global",
                                            "consumer": "projects/000000000000", "quota_limit_value": "1000"]]])
            }
        }
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
