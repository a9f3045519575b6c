import Foundation

/// What happened to one attempt of a request, as far as retrying is concerned.
public enum RetryOutcome: Sendable, Hashable, CustomStringConvertible {
    /// The request was answered with a usable body (any 2xx, or 304).
    case success
    /// The server answered with this HTTP status (and maybe a `Retry-After`).
    /// 2xx and 304 count as success, 404 and 410 as not found.
    case status(Int, retryAfter: RetryAfter?)
    /// The request timed out (connect or total timeout).
    case timeout
    /// The connection could not be made or was reset before a complete answer.
    case connectionError
    /// The body could not be used: malformed JSON, or cut off before its announced length.
    case malformedBody

    public var description: String {
        switch self {
        case .success: return "success"
        case .status(let code, let retryAfter):
            return "HTTP \(code)" + (retryAfter.map { " (Retry-After \($0))" } ?? "")
        case .timeout: return "timeout"
        case .connectionError: return "connection error"
        case .malformedBody: return "malformed body"
        }
    }
}

/// What to do next with a request, decided by ``RetryStateMachine``.
public enum RetryAction: Sendable, Hashable, CustomStringConvertible {
    /// Done: use the response.
    case succeed
    /// Send the same request again after this delay (the request keeps its place).
    case retry(after: Duration)
    /// Put the request back at the end of the queue; do not send it before this delay has passed.
    case requeue(after: Duration)
    /// Stop: the lookup failed for good. The reason is for the user (status, timeout, quota).
    /// A lookup that gave up is *failed*, never *not found*.
    case giveUp(reason: String)
    /// The server says the resource does not exist (404/410): a permanent answer, no retry.
    case permanentNotFound

    public var description: String {
        switch self {
        case .succeed: return "succeed"
        case .retry(let delay): return "retry after \(formatSeconds(delay))"
        case .requeue(let delay): return "requeue after \(formatSeconds(delay))"
        case .giveUp(let reason): return "give up: \(reason)"
        case .permanentNotFound: return "not found (permanent)"
        }
    }
}

/// Applies a ``RetryPolicy`` to the attempts of one request. Pure: no clock, no I/O.
///
/// Feed it each attempt's outcome; it counts retries per kind and returns the next action.
/// Keep the same machine with the request when it is requeued, so requeues are counted.
///
/// ```swift
/// var retries = RetryStateMachine(policy: .default)
/// retries.next(after: .status(429, retryAfter: nil), now: Date())  // .retry(after: 1 s)
/// retries.next(after: .status(429, retryAfter: .seconds(10)), now: Date())  // .retry(after: 10 s)
/// ```
public struct RetryStateMachine: Sendable, Equatable {
    /// The rules applied.
    public let policy: RetryPolicy
    /// Outcomes seen so far (= attempts made).
    public private(set) var attempts = 0
    /// Retries scheduled after a 429.
    public private(set) var rateLimitedRetries = 0
    /// Requeues scheduled after a 503-like answer or a malformed body.
    public private(set) var requeues = 0
    /// Timeouts and connection errors seen.
    public private(set) var transportFailures = 0
    /// Malformed bodies seen.
    public private(set) var malformedBodies = 0

    /// Creates a machine for a new request.
    public init(policy: RetryPolicy = .default) {
        self.policy = policy
    }

    /// Records the outcome of an attempt and returns what to do next.
    ///
    /// - Parameters:
    ///   - outcome: what the attempt produced.
    ///   - now: the current wall-clock time, used only to turn a `Retry-After` date into a delay.
    /// - Returns: the next action; after `.succeed`, `.giveUp` or `.permanentNotFound` the
    ///   request is finished.
    public mutating func next(after outcome: RetryOutcome, now: Date) -> RetryAction {
        attempts += 1
        switch outcome {
        case .success:
            return .succeed
        case .timeout:
            return transportFailure(kind: "timed out")
        case .connectionError:
            return transportFailure(kind: "could not connect or lost the connection")
        case .malformedBody:
            malformedBodies += 1
            return requeue(what: "the response body was malformed or cut off", retryAfter: nil, now: now)
        case .status(let code, let retryAfter):
            switch code {
            case 200..<300, 304:
                return .succeed
            case 404, 410:
                return .permanentNotFound
            case 429:
                return rateLimited(retryAfter: retryAfter, now: now)
            case 408:
                return transportFailure(kind: "got HTTP 408 (Request Timeout)")
            case 500, 502, 503, 504:
                return requeue(what: "HTTP \(code) (\(Self.reasonPhrase(code)))", retryAfter: retryAfter, now: now)
            default:
                return .giveUp(reason: "HTTP \(code) (\(Self.reasonPhrase(code))): not retried; "
                               + "check the request and the source's base URL")
            }
        }
    }

    private mutating func rateLimited(retryAfter: RetryAfter?, now: Date) -> RetryAction {
        let limit = policy.rateLimited
        let serverDelay = retryAfter?.delay(from: now)
        if let serverDelay, serverDelay > limit.maxRetryAfter {
            return .giveUp(reason: "HTTP 429 (Too Many Requests): the server asks to wait "
                           + "\(formatSeconds(serverDelay)) (Retry-After \(retryAfter.map(\.description) ?? "")), "
                           + "longer than the \(formatSeconds(limit.maxRetryAfter)) this policy waits; "
                           + "retry later (bookpipe enrich --failed)")
        }
        guard rateLimitedRetries < limit.maxRetries else {
            return .giveUp(reason: "HTTP 429 (Too Many Requests) after \(rateLimitedRetries) "
                           + "\(rateLimitedRetries == 1 ? "retry" : "retries"); lower the rate limit for this "
                           + "host or retry later (bookpipe enrich --failed)")
        }
        rateLimitedRetries += 1
        let backoff = policy.rateLimitedBackoff(beforeRetry: rateLimitedRetries)
        return .retry(after: max(backoff, serverDelay ?? .zero))
    }

    private mutating func requeue(what: String, retryAfter: RetryAfter?, now: Date) -> RetryAction {
        let rules = policy.unavailable
        let serverDelay = retryAfter?.delay(from: now)
        if let serverDelay, serverDelay > policy.rateLimited.maxRetryAfter {
            return .giveUp(reason: "\(what): the server asks to wait \(formatSeconds(serverDelay)), longer than "
                           + "the \(formatSeconds(policy.rateLimited.maxRetryAfter)) this policy waits; "
                           + "retry later (bookpipe enrich --failed)")
        }
        guard requeues < rules.maxRequeues else {
            return .giveUp(reason: "\(what) after \(requeues) \(requeues == 1 ? "requeue" : "requeues"); "
                           + "the source may be down, retry later (bookpipe enrich --failed)")
        }
        requeues += 1
        return .requeue(after: max(rules.requeueDelay, serverDelay ?? .zero))
    }

    private mutating func transportFailure(kind: String) -> RetryAction {
        transportFailures += 1
        guard transportFailures < policy.transport.maxAttempts else {
            return .giveUp(reason: "\(kind) on attempt \(transportFailures) of \(policy.transport.maxAttempts); "
                           + "check the network and the source's base URL, then retry (bookpipe enrich --failed)")
        }
        return .retry(after: policy.transport.retryDelay)
    }

    static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 410: return "Gone"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return code >= 500 ? "server error" : code >= 400 ? "client error" : "unexpected status"
        }
    }
}

extension RetryStateMachine {
    /// Runs `attempt` until the machine says stop, sleeping on `clock` between retries.
    ///
    /// `.retry(after:)` is waited out here; `.requeue(after:)` is returned to the caller, who
    /// puts the request back in its queue (keep this machine with it so requeues are counted).
    ///
    /// ```swift
    /// var retries = RetryStateMachine(policy: policy)
    /// let (action, response) = try await retries.perform(clock: clock, now: Date.init) {
    ///     let response = try? await client.get(url)
    ///     return (response?.retryOutcome ?? .connectionError, response)
    /// }
    /// ```
    /// - Parameters:
    ///   - clock: the clock to wait on (tests pass a ``ManualClock``).
    ///   - now: wall-clock time, used to read `Retry-After` dates.
    ///   - attempt: makes one attempt and returns its outcome and whatever the caller wants back.
    /// - Returns: the final action (`.succeed`, `.requeue`, `.giveUp` or `.permanentNotFound`)
    ///   and the value of the last attempt.
    /// - Throws: whatever `attempt` throws, and `CancellationError` if the task is cancelled
    ///   while waiting between attempts.
    public mutating func perform<C: Clock<Duration>, Value>(
        clock: C, now: () -> Date, attempt: () async throws -> (RetryOutcome, Value)
    ) async throws -> (action: RetryAction, value: Value) {
        while true {
            try Task.checkCancellation()
            let (outcome, value) = try await attempt()
            let action = next(after: outcome, now: now())
            guard case .retry(let delay) = action else { return (action, value) }
            if delay > .zero {
                try await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
            }
        }
    }
}
