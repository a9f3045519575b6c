import Synchronization

/// Waits, per host, until a request may be sent: ``RateLimiterStateMachine`` plus a clock.
///
/// Share one limiter between all tasks that talk to the same hosts.
///
/// ```swift
/// let limiter = RateLimiter(clock: ContinuousClock(), limits: ["openlibrary.org": .openLibrary])
/// try await limiter.acquire(host: "openlibrary.org")
/// let response = try await client.get(url)
/// limiter.record(response.status == 429 ? .rateLimited(retryAfter: nil) : .success, host: "openlibrary.org")
/// ```
///
/// Thread safety: the state machine lives in a `Mutex`; waiting happens outside the lock.
///
/// With a ``SharedRateBudget`` (a library several processes work on), a request that this
/// process's bucket lets go also takes a token of the host's shared bucket, waiting as long as
/// the shared budget says: the configured rate then holds for every worker together.
public final class RateLimiter<C: Clock<Duration>>: Sendable {
    private let clock: C
    private let state: Mutex<RateLimiterStateMachine<C.Instant>>
    /// The budget shared with other processes, if any.
    public let shared: (any SharedRateBudget)?

    /// Creates a limiter on `clock`.
    /// - Parameters:
    ///   - clock: the clock to wait on (tests pass a ``ManualClock``).
    ///   - limits: rules by host name (compared case-insensitively).
    ///   - defaultLimit: the rule for other hosts.
    ///   - shared: the rate budget shared with other processes (nil: this process's buckets only).
    public init(clock: C, limits: [String: RateLimit] = [:], defaultLimit: RateLimit = .conservative,
                shared: (any SharedRateBudget)? = nil) {
        self.clock = clock
        self.shared = shared
        state = Mutex(RateLimiterStateMachine(limits: limits, defaultLimit: defaultLimit))
    }

    /// Suspends until a request to `host` may be sent, and takes its token.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting; no token is taken then.
    public func acquire(host: String) async throws {
        _ = try await acquire(host: host, waitingAtMost: nil)
    }

    /// Suspends until a request to `host` may be sent and takes its token, unless that would mean
    /// waiting longer than `longest` from now (a run's deadline): then it returns false at once,
    /// without waiting and without a token.
    ///
    /// - Parameters:
    ///   - longest: the longest wait allowed; nil: no limit.
    ///   - abandoned: asked before each try for a token (so after each wait): once it says true,
    ///     the wait ends without a token (a host given up while requests waited for it).
    /// - Returns: true when a token was taken; false when the wait would end too late, or was
    ///   abandoned.
    /// - Throws: `CancellationError` if the task is cancelled while waiting; no token is taken then.
    public func acquire(host: String, waitingAtMost longest: Duration?,
                        abandoned: (@Sendable () -> Bool)? = nil) async throws -> Bool {
        let latest = longest.map { clock.now.advanced(by: $0) }
        while true {
            try Task.checkCancellation()
            if abandoned?() == true { return false }
            let now = clock.now
            let action = state.withLock { $0.acquire(host: host, now: now) }
            switch action {
            case .send:
                guard let shared else { return true }
                return try await acquireShared(shared, host: host, latest: latest, abandoned: abandoned)
            case .wait(let until):
                if let latest, latest < until { return false }
                try await clock.sleep(until: until, tolerance: nil)
            }
        }
    }

    /// Takes a token of the host's shared bucket, waiting as the budget says (see ``acquire(host:waitingAtMost:abandoned:)``).
    /// A budget that cannot be reached is asked again after one interval of the host's rate: no
    /// request goes without its token.
    private func acquireShared(_ shared: any SharedRateBudget, host: String, latest: C.Instant?,
                               abandoned: (@Sendable () -> Bool)?) async throws -> Bool {
        let limit = state.withLock { $0.bucket(host: host).limit }
        while true {
            try Task.checkCancellation()
            if abandoned?() == true { return false }
            let wait: Duration
            do {
                wait = try await shared.take(host: host, limit: limit)
            } catch let error as CancellationError {
                throw error
            } catch {
                wait = .nanoseconds(Int64(1e9 / limit.requestsPerSecond))
            }
            guard wait > .zero else { return true }
            let until = clock.now.advanced(by: wait)
            if let latest, latest < until { return false }
            try await clock.sleep(until: until, tolerance: nil)
        }
    }

    /// Pauses every process's requests to `host` for `duration` through the shared budget (a
    /// 429's `Retry-After`); nothing without one (this process's bucket already paused on
    /// ``record(_:host:)``).
    public func pauseShared(host: String, for duration: Duration, reason: String) async {
        guard let shared, duration > .zero else { return }
        await shared.pause(host: host, for: duration, reason: reason)
    }

    /// Tells the limiter what a response from `host` said (success, 429, announced limit).
    public func record(_ feedback: RateLimitFeedback, host: String) {
        let now = clock.now
        state.withLock { $0.record(feedback, host: host, now: now) }
    }

    /// The bucket of `host` as it stands: current rate, ceiling, 429 count.
    public func bucket(host: String) -> TokenBucket<C.Instant> {
        state.withLock { $0.bucket(host: host) }
    }
}

extension RateLimiter where C == ContinuousClock {
    /// Creates a limiter on the real (continuous) clock.
    public convenience init(limits: [String: RateLimit] = [:], defaultLimit: RateLimit = .conservative) {
        self.init(clock: ContinuousClock(), limits: limits, defaultLimit: defaultLimit)
    }
}
