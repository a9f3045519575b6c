/// The decisions of ``Reachability``, without a lock: when to stop asking a server that cannot be
/// reached. One rule for every client: the scan backend's uploads and each enrichment source.
///
/// **The rule.** An attempt *could not reach* the server when it failed before any answer came
/// (``Reach/couldNotConnect(cause:)``): no connection could be made (connection refused, host name
/// not resolved, no route, the TLS handshake failed) or it timed out. Every other outcome reached
/// it (``Reach/reached``): an answer with any status (200, 4xx, 429, 5xx, a body that cannot be
/// used) or a connection that was made and then lost. A unit of work (a photo, a lookup) *gave up
/// unreachable* when its last attempt was given up, after every retry, on an attempt that could
/// not reach the server.
///
/// Once ``givenUpInARowToStop`` units in a row gave up unreachable, with no attempt reaching the
/// server in between, the server is unreachable for the rest of the run: no new unit is started.
/// Units already in flight finish their own retries; what they report later changes nothing (the
/// decision is final, so what is left unsent does not depend on what arrives after it).
///
/// Only transport failures count: an answer of any kind is the unit's own outcome and never stops
/// the run. An attempt that reached the server starts the count again, so a server that drops some
/// requests but answers others is never given up on.
///
/// ```swift
/// var reachability = ReachabilityStateMachine(givenUpInARowToStop: 2)
/// reachability.gaveUpUnreachable(cause: "connection refused")   // nil: 1 in a row
/// reachability.reached()                                         // 0 in a row
/// reachability.gaveUpUnreachable(cause: "connection refused")   // nil: 1 in a row
/// reachability.gaveUpUnreachable(cause: "connection refused")   // Unreachable(inARow: 2, …): stop
/// ```
public struct ReachabilityStateMachine: Sendable, Hashable {
    /// Units in a row that gave up unreachable after which the server is given up (2 or more).
    public let givenUpInARowToStop: Int
    /// Units that gave up unreachable since the last attempt that reached the server.
    public private(set) var unreachableInARow = 0
    /// Why the server was given up; nil while it is still asked.
    public private(set) var stop: Unreachable?

    /// Creates the rule for a run.
    /// - Parameter givenUpInARowToStop: Units in a row that may give up unreachable before the
    ///   server is given up; at least 2, so one unlucky request never stops a run.
    public init(givenUpInARowToStop: Int) {
        self.givenUpInARowToStop = max(2, givenUpInARowToStop)
    }

    /// Records an attempt that reached the server (any answer, or a connection that was then
    /// lost): the count starts again. Changes nothing once the server is given up.
    public mutating func reached() {
        guard stop == nil else { return }
        unreachableInARow = 0
    }

    /// Records a unit given up because its last attempt could not reach the server.
    /// - Parameter cause: Why, in a few words ("connection refused", "timed out after 120.0 seconds").
    /// - Returns: the stop, exactly once: for the unit that made the server given up; nil
    ///   otherwise (before the rule is met, and after it).
    public mutating func gaveUpUnreachable(cause: String) -> Unreachable? {
        guard stop == nil else { return nil }
        unreachableInARow += 1
        guard unreachableInARow >= givenUpInARowToStop else { return nil }
        let decided = Unreachable(inARow: unreachableInARow, cause: cause)
        stop = decided
        return decided
    }
}

/// Why a server was given up: this many units of work in a row could not reach it.
public struct Unreachable: Sendable, Hashable {
    /// Units in a row (photos, lookups) given up because the server could not be reached.
    public var inARow: Int
    /// The last one's cause, in a few words ("connection refused", "host name not resolved",
    /// "timed out after 120.0 seconds").
    public var cause: String

    /// Creates a value.
    public init(inARow: Int, cause: String) {
        self.inARow = inARow
        self.cause = cause
    }
}

/// How one attempt went, as ``ReachabilityStateMachine``'s rule sees it.
public enum Reach: Sendable, Hashable {
    /// An answer came, with any status, or a connection was made and then lost: the server's
    /// address answers.
    case reached
    /// No connection could be made (``HTTPError/couldNotConnect(url:reason:method:)``: connection
    /// refused, host name not resolved, no route, TLS handshake failed) or the attempt timed out
    /// (``HTTPError/timedOut(url:limit:detail:method:)``).
    case couldNotConnect(cause: String)
    /// Nothing went out: the URL cannot be used, the client was shut down, the task was cancelled.
    case notSent

    /// How an attempt that failed with `error` went: the transport errors are classified here;
    /// any other error is ``notSent`` (a caller that throws errors for answers classifies those
    /// first, as the scan client does).
    ///
    /// ```swift
    /// Reach(error: HTTPError.couldNotConnect(url: url, reason: "connection refused", method: .get))
    /// // .couldNotConnect(cause: "connection refused")
    /// ```
    public init(error: any Error) {
        guard let error = error as? HTTPError else {
            self = .notSent
            return
        }
        switch error {
        case .couldNotConnect(_, let reason, _): self = .couldNotConnect(cause: reason)
        case .timedOut(_, let limit, _, _): self = .couldNotConnect(cause: "timed out after \(limit)")
        case .invalidURL, .shutDown: self = .notSent
        case .connectionFailed, .truncatedBody, .malformedResponse, .tooManyRedirects, .bodyTooLarge, .transferFailed:
            self = .reached
        }
    }
}

/// A host given up for the rest of a run, and why (``PolicyHTTPFetcher/unreachableHost``).
public struct UnreachableHost: Sendable, Hashable {
    /// The host key (`openlibrary.org`, `127.0.0.1:8080`; see ``PolicyHTTPFetcher/hostKey(of:)``).
    public var host: String
    /// How many lookups in a row could not reach it, and the last one's cause.
    public var unreachable: Unreachable

    /// Creates a value.
    public init(host: String, unreachable: Unreachable) {
        self.host = host
        self.unreachable = unreachable
    }
}
