import BookpipeHTTP

/// Why a scan job attempt failed; the description names the cause in words a person can act on
/// (the photo's name is added by whoever reports it).
public enum ScanFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The backend refused the upload for good (413 too large, 400 unreadable image, other 4xx).
    case uploadRefused(status: Int, reason: String)
    /// The upload failed with a 5xx or a transport error after every retry.
    case uploadFailed(attempts: Int, lastError: String)
    /// The backend is rate limited for longer than the run waits.
    case rateLimitedTooLong(String)
    /// The backend's answer to the upload is not what the protocol says (not JSON, no `jobId`).
    case badAnswer(String)
    /// An event of the job's stream is not what the protocol says.
    case badEvent(String)
    /// The job sent an `error` event.
    case jobFailed(code: String, message: String)
    /// No byte arrived on the job's stream for the idle limit.
    case streamTimedOut(Duration)
    /// The stream broke again and again (or answered with an error status).
    case streamLost(String)
    /// The job ran for the longest a job may (``ScanSettings/longestJob``) without completing.
    case jobTooLong(Duration)

    public var description: String {
        switch self {
        case .uploadRefused(let status, let reason):
            return "the backend refused the upload (HTTP \(status)\(reason.isEmpty ? "" : ": \(reason)"))"
        case .uploadFailed(let attempts, let lastError):
            return "the upload failed \(attempts) times (last: \(lastError))"
        case .rateLimitedTooLong(let detail):
            return "the backend is rate limited: \(detail); run the same command again later"
        case .badAnswer(let detail):
            return "the backend's answer to the upload cannot be used: \(detail)"
        case .badEvent(let detail):
            return "the job's stream sent an unusable event: \(detail)"
        case .jobFailed(let code, let message):
            return "the job failed on the backend (\(code): \(message))"
        case .streamTimedOut(let limit):
            return "the job's stream sent nothing for \(limit) (not even a heartbeat); the job timed out"
        case .streamLost(let detail):
            return "the job's stream was lost: \(detail)"
        case .jobTooLong(let limit):
            return "the job did not complete within \(limit) of its upload (its stream stayed open); given up"
        }
    }
}
