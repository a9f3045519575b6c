import BookpipePipeline
import Foundation

/// Holds new uploads to one backend back while it is rate limited.
///
/// After a `429`, no upload is sent until its `Retry-After` has passed (1 s when it gave none);
/// then exactly one upload goes as a probe while the others wait for its answer: accepted (or
/// any answer but 429) opens the gate again, another 429 pauses it again. A pause longer than
/// ``longestWait`` is not waited out: uploads fail with ``ScanFailure/rateLimitedTooLong(_:)``.
///
/// Time is wall-clock (`ContinuousClock`); waiting suspends, it never blocks a thread.
public actor UploadGate {
    /// A permission to send one upload.
    public struct Permit: Sendable {
        /// True when this upload is the one probe sent after a pause.
        public let isProbe: Bool
    }

    /// The longest pause waited out.
    public let longestWait: Duration
    /// The pause after a 429 without a usable `Retry-After`.
    public let defaultPause: Duration
    private var pausedUntil: ContinuousClock.Instant?
    private var pausedUntilDate: Date?
    private var probeInFlight = false
    /// 429 answers seen so far.
    public private(set) var rateLimitedCount = 0

    /// Creates an open gate.
    /// - Parameters:
    ///   - longestWait: The longest `Retry-After` waited out (default 15 minutes).
    ///   - defaultPause: The pause after a 429 without `Retry-After` (default 1 s).
    public init(longestWait: Duration = .seconds(900), defaultPause: Duration = .seconds(1)) {
        self.longestWait = longestWait
        self.defaultPause = defaultPause
    }

    /// Waits until an upload may be sent.
    /// - Returns: the permit; hand it back with ``finished(_:rateLimited:)``.
    /// - Throws: ``ScanFailure/rateLimitedTooLong(_:)`` when the pause is longer than
    ///   ``longestWait``; `CancellationError` when cancelled while waiting.
    public func acquire() async throws -> Permit {
        while true {
            try Task.checkCancellation()
            guard let until = pausedUntil else { return Permit(isProbe: false) }
            let now = ContinuousClock.now
            if until - now > longestWait {
                let when = pausedUntilDate.map { " (until \(HTTPDate.format($0)))" } ?? ""
                throw ScanFailure.rateLimitedTooLong("it asked to wait \(until - now)\(when), longer than \(longestWait)")
            }
            if now >= until && !probeInFlight {
                probeInFlight = true
                return Permit(isProbe: true)
            }
            // Wait for the pause to end, or for the probe's answer.
            let wait = now >= until ? Duration.milliseconds(20) : min(until - now, .milliseconds(250))
            try await Task.sleep(for: wait)
        }
    }

    /// Hands a permit back with what the upload got.
    /// - Parameters:
    ///   - permit: The permit from ``acquire()``.
    ///   - rateLimited: The answer was a 429 (with this `Retry-After`, if readable); nil: any other outcome.
    public func finished(_ permit: Permit, rateLimited: RetryAfter??) {
        if permit.isProbe { probeInFlight = false }
        guard let retryAfter = rateLimited else {
            if permit.isProbe {
                pausedUntil = nil
                pausedUntilDate = nil
            }
            return
        }
        rateLimitedCount += 1
        let pause = retryAfter?.delay(from: Date()) ?? defaultPause
        let until = ContinuousClock.now + pause
        if pausedUntil.map({ until > $0 }) ?? true {
            pausedUntil = until
            pausedUntilDate = Date().addingTimeInterval(Double(pause.components.seconds))
        }
    }
}
