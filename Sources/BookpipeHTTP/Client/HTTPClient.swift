import Foundation

/// An HTTP client on libcurl's multi interface: one thread drives every transfer, callers `await`.
///
/// - Connections are kept alive and reused between requests to the same host.
/// - Compressed responses are requested and decoded (unless turned off).
/// - At most ``HTTPClientConfiguration/maxRequestsPerHost`` requests per host are in flight;
///   the rest wait in a first-in, first-out queue (queue time does not count toward timeouts);
///   one whose ``HTTPRequest/deadline`` passes while it waits is never sent.
/// - Redirects are followed (for example Open Library's `/isbn/{isbn}.json` → `/books/{id}.json`).
///
/// ```swift
/// let client = try HTTPClient(configuration: .init(
///     userAgent: HTTPClientConfiguration.userAgent(contact: "mailto:me@example.org")))
/// let response = try await client.get("https://openlibrary.org/isbn/9780140328721.json")
/// if response.status == 200 { decode(response.body) }
/// await client.shutdown()
/// ```
///
/// The client does no rate limiting and no retries: combine it with ``RateLimiter`` and
/// ``RetryStateMachine`` (``HTTPResponse/retryOutcome`` and ``HTTPError/retryOutcome`` feed the
/// latter). API keys in URLs never appear in its messages (see ``URLRedaction``).
///
/// Thread safety: `Sendable`; share one client between all tasks.
public final class HTTPClient: Sendable {
    /// The settings this client was created with.
    public let configuration: HTTPClientConfiguration
    private let engine: CurlEngine

    /// Creates a client and starts its curl thread.
    /// - Throws: ``HTTPError/transferFailed(url:code:detail:)`` if libcurl cannot be initialised.
    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) throws(HTTPError) {
        self.configuration = configuration
        engine = try CurlEngine(configuration: configuration)
    }

    deinit {
        engine.requestStop()
    }

    /// Sends a GET request and returns the response, whatever its status.
    ///
    /// - Parameters:
    ///   - url: an absolute `http` or `https` URL.
    ///   - headers: extra request headers (for example `Accept: application/json`).
    /// - Returns: the final response after redirects; 404, 429 and 503 are responses too.
    /// - Throws: ``HTTPError`` when no complete response arrived (timeout, connection failure,
    ///   cut-off body, ...). If the calling task is cancelled, the transfer is aborted at once
    ///   (its connection is closed) and `CancellationError` is thrown.
    public func get(_ url: String, headers: [(name: String, value: String)] = []) async throws -> HTTPResponse {
        try await send(HTTPRequest(.get, url, headers: headers))
    }

    /// Sends a request (GET, POST with a body, DELETE) and returns the response, whatever its status.
    ///
    /// - Parameter request: the method, URL, headers, body and time limits.
    /// - Returns: the final response after redirects; 4xx and 5xx answers are responses too.
    /// - Throws: ``HTTPError`` when no complete response arrived (timeout, idle timeout,
    ///   connection failure, ...). If the calling task is cancelled, the transfer is aborted at
    ///   once (its connection is closed) and `CancellationError` is thrown.
    ///   ``RequestDeadlineReached`` when the request's ``HTTPRequest/deadline`` passed while it
    ///   waited for a free connection (it was not sent).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await perform(request, onBody: nil)
    }

    /// Sends a request whose 2xx answer is read as it arrives (a server-sent event stream):
    /// `onBody` gets each piece of the body in order, and the returned response has an empty
    /// body. A non-2xx answer is not streamed: its body is in the returned response.
    ///
    /// ```swift
    /// var request = HTTPRequest(.get, streamURL, headers: [("Accept", "text/event-stream")])
    /// request.timeout = .zero                 // a stream has no total limit
    /// request.idleTimeout = .seconds(300)     // but fails after 5 minutes without a byte
    /// let response = try await client.stream(request) { bytes in parser.feed(bytes) }
    /// ```
    ///
    /// - Parameters:
    ///   - request: the request; set ``HTTPRequest/timeout`` to `.zero` for a long stream.
    ///   - onBody: called on the client's thread for every piece of a 2xx body; it must return
    ///     quickly (hand the bytes to an `AsyncStream`, for example) and never block.
    /// - Returns: the response (status and headers) once the server ended the body.
    /// - Throws: ``HTTPError`` when the transfer failed or stalled (``HTTPRequest/idleTimeout``);
    ///   `CancellationError` when the calling task was cancelled (the transfer is aborted at once).
    public func stream(_ request: HTTPRequest, onBody: @escaping @Sendable ([UInt8]) -> Void) async throws -> HTTPResponse {
        try await perform(request, onBody: onBody)
    }

    private func perform(_ request: HTTPRequest, onBody: (@Sendable ([UInt8]) -> Void)?) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let url = request.url
        let hostKey = try Self.hostKey(of: url)
        let transfer = CurlTransfer(request: request, hostKey: hostKey, maxBodyBytes: configuration.maxBodyBytes,
                                    onBody: onBody)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                transfer.continuation = continuation
                if !engine.submit(transfer) {
                    transfer.complete(.failure(HTTPError.shutDown(url: url, method: request.method)))
                }
            }
        } onCancel: {
            transfer.cancelled.store(true, ordering: .releasing)
            engine.wake()
        }
    }

    /// Sends a GET request to `url`; the same as the `String` variant.
    public func get(_ url: URL, headers: [(name: String, value: String)] = []) async throws -> HTTPResponse {
        try await get(url.absoluteString, headers: headers)
    }

    /// Stops the curl thread and suspends until it has ended (never blocks a thread). Requests
    /// still in flight or queued fail with ``HTTPError/shutDown(url:)``; later requests fail the
    /// same way. Safe to call more than once.
    public func shutdown() async {
        await engine.shutdown()
    }

    /// Asks the curl thread to stop and returns at once (requests fail as with ``shutdown()``);
    /// `deinit` does this. For places that cannot wait, such as a `defer`.
    public func close() {
        engine.requestStop()
    }

    /// `scheme://host:port` of an absolute http(s) URL.
    static func hostKey(of url: String) throws(HTTPError) -> String {
        guard let components = URLComponents(string: url) else {
            throw .invalidURL(url, reason: "not a valid URL")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidURL(url, reason: "only http and https URLs are supported")
        }
        guard let host = components.host?.lowercased(), !host.isEmpty else {
            throw .invalidURL(url, reason: "the URL has no host")
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
