import BookpipePipeline

/// Why an HTTP request produced no response. An answer with any status (404, 429, 503) is an
/// ``HTTPResponse``, not an error. Messages name the request's method and URL (API keys
/// redacted): `POST http://127.0.0.1:8080/v3/jobs/scans timed out (limit 120 seconds): …`.
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL could not be used (not http/https, or malformed).
    case invalidURL(String, reason: String)
    /// The connect or total timeout passed.
    case timedOut(url: String, limit: Duration, detail: String, method: HTTPRequest.Method)
    /// No connection could be made: the host name was not resolved, the connection was refused
    /// or could not be routed, or the TLS handshake failed. `reason` says which in a few words
    /// ("connection refused", "host name not resolved", "TLS handshake failed: …"). Nothing
    /// reached the server.
    case couldNotConnect(url: String, reason: String, method: HTTPRequest.Method)
    /// A connection was made but lost (reset, closed) before a complete answer arrived.
    case connectionFailed(url: String, reason: String, method: HTTPRequest.Method)
    /// The connection closed before the body announced by `Content-Length` was complete.
    case truncatedBody(url: String, received: Int, expected: Int?, method: HTTPRequest.Method)
    /// The server's answer was not valid HTTP, or its compressed body could not be decoded.
    case malformedResponse(url: String, reason: String, method: HTTPRequest.Method)
    /// More redirects than allowed.
    case tooManyRedirects(url: String, limit: Int, method: HTTPRequest.Method)
    /// The body was larger than ``HTTPClientConfiguration/maxBodyBytes``.
    case bodyTooLarge(url: String, limit: Int, method: HTTPRequest.Method)
    /// The client was shut down before the request finished.
    case shutDown(url: String, method: HTTPRequest.Method)
    /// Any other libcurl failure, with its code and message.
    case transferFailed(url: String, code: Int, detail: String, method: HTTPRequest.Method)

    public var description: String {
        switch self {
        case .invalidURL(let url, let reason):
            return "Cannot request \(URLRedaction.redact(url)): \(reason). "
                + "Check the source's base URL (--openlibrary-url, --googlebooks-url)."
        case .timedOut(let url, let limit, let detail, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)) timed out (limit \(limit)): \(detail). "
                + "The server is slow or unreachable; retry later or raise the timeout in the pipeline file."
        case .couldNotConnect(let url, let reason, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)) failed: could not connect (\(reason)). "
                + (method == .get ? "Check the network and the source's base URL, then retry (bookpipe enrich --failed)."
                                  : "Check the network and the server's URL, then retry.")
        case .connectionFailed(let url, let reason, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)) failed: the connection was lost before a complete answer (\(reason)). "
                + (method == .get ? "Check the network and the source's base URL, then retry (bookpipe enrich --failed)."
                                  : "Check the network and the server's URL, then retry.")
        case .truncatedBody(let url, let received, let expected, let method):
            let of = expected.map { " of \($0)" } ?? ""
            return "\(method.rawValue) \(URLRedaction.redact(url)): the response body was cut off after \(received)\(of) bytes "
                + "(the server closed the connection early). It will be retried like a 503."
        case .malformedResponse(let url, let reason, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)): the server's answer could not be read (\(reason)). "
                + "It will be retried like a 503; if it persists, check the source's base URL."
        case .tooManyRedirects(let url, let limit, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)) was redirected more than \(limit) times. "
                + "Check the source's base URL; the server may be misconfigured."
        case .bodyTooLarge(let url, let limit, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)): the response body is larger than \(limit) bytes, "
                + "so it was not read. Check the request (a batch may be too large)."
        case .shutDown(let url, let method):
            return "\(method.rawValue) \(URLRedaction.redact(url)) was not completed: the HTTP client was shut down first. "
                + "Keep the client alive until every request has finished."
        case .transferFailed(let url, let code, let detail, let method):
            if url.isEmpty { return "The HTTP client could not start (libcurl error \(code): \(detail))." }
            return "\(method.rawValue) \(URLRedaction.redact(url)) failed (libcurl error \(code): \(detail)). Retry later."
        }
    }

    /// How ``RetryStateMachine`` should see this error: `.timeout`, `.connectionError` or
    /// `.malformedBody`; `nil` when retrying cannot help (bad URL, redirect loop, body too
    /// large, client shut down) and the lookup should fail at once.
    public var retryOutcome: RetryOutcome? {
        switch self {
        case .timedOut: return .timeout
        case .couldNotConnect, .connectionFailed: return .connectionError
        case .truncatedBody, .malformedResponse: return .malformedBody
        case .transferFailed: return .connectionError
        case .invalidURL, .tooManyRedirects, .bodyTooLarge, .shutDown: return nil
        }
    }
}
