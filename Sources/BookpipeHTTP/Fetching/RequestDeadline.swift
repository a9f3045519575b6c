/// The time after which no request may be sent any more (an enrichment run's `--until`,
/// `--max-duration`), as the lookups below ``Enricher/enrich(_:stoppingAt:)`` see it.
///
/// ``PolicyHTTPFetcher`` reads it from the task (``current``): once no time is left it sends
/// nothing and throws ``RequestDeadlineReached``; a rate-limit wait or a retry wait that would end
/// after the deadline is abandoned at once instead of slept. A request already sent is answered
/// and its answer kept, so a run overruns its deadline by at most one request per source.
///
/// The deadline is a function giving the time left, so it may run on any clock (the injected one
/// of the run, a ``ManualClock`` in tests) while the fetcher waits on its own.
///
/// ```swift
/// let deadline = RequestDeadline { end - clock.now }     // zero or less: passed
/// let batch = try await enricher.enrich(records, stoppingAt: deadline)
/// ```
public struct RequestDeadline: Sendable {
    private let timeLeft: @Sendable () -> Duration

    /// A deadline whose time left `remaining` gives (zero or less once it has passed).
    public init(remaining: @escaping @Sendable () -> Duration) {
        self.timeLeft = remaining
    }

    /// Time left before the deadline (zero once it has passed).
    public var remaining: Duration { max(.zero, timeLeft()) }

    /// True once the deadline has passed.
    public var hasPassed: Bool { timeLeft() <= .zero }

    /// The deadline of the lookups the current task runs (set by ``Enricher/enrich(_:stoppingAt:)``
    /// for its child tasks); nil: none.
    @TaskLocal public static var current: RequestDeadline?
}

/// Thrown by ``PolicyHTTPFetcher/fetch(_:headers:decode:)`` when the deadline of the current task
/// (``RequestDeadline/current``) has passed, or would pass during a wait, before the request was
/// sent. Nothing is recorded about the lookup: it was not made, neither failed nor answered.
public struct RequestDeadlineReached: Error, Sendable, CustomStringConvertible {
    /// Where the request would have gone (`scheme://host/path`, no query).
    public var place: String

    /// Creates the error.
    public init(place: String) { self.place = place }

    public var description: String { "GET \(place): not sent, the run's deadline has passed" }
}
