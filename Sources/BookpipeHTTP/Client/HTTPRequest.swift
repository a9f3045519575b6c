/// A request for ``HTTPClient/send(_:)`` and ``HTTPClient/stream(_:onBody:)``: method, URL,
/// headers, an optional body, and the time limits that differ from the client's configuration.
///
/// ```swift
/// var upload = HTTPRequest(.post, "http://127.0.0.1:8080/v3/jobs/scans")
/// upload.headers = [("Content-Type", form.contentType), ("Accept", "application/json")]
/// upload.body = form.encoded()
/// let response = try await client.send(upload)
/// ```
public struct HTTPRequest: Sendable {
    /// The request methods bookpipe sends.
    public enum Method: String, Sendable, Hashable {
        /// `GET`.
        case get = "GET"
        /// `POST` (with ``HTTPRequest/body``).
        case post = "POST"
        /// `DELETE`.
        case delete = "DELETE"
    }

    /// The method.
    public var method: Method
    /// An absolute `http` or `https` URL.
    public var url: String
    /// Extra request headers, in order.
    public var headers: [(name: String, value: String)]
    /// The body sent with the request (`POST`); nil sends none.
    public var body: [UInt8]?
    /// The longest time for the whole request; nil: the client's
    /// ``HTTPClientConfiguration/requestTimeout``; `.zero`: no limit (an event stream).
    public var timeout: Duration?
    /// Fails the request with ``HTTPError/timedOut(url:limit:detail:)`` when no byte arrives for
    /// this long (any byte counts, a heartbeat too); nil: no such limit. Checked at least
    /// once a second.
    public var idleTimeout: Duration?
    /// A request still waiting behind ``HTTPClientConfiguration/maxRequestsPerHost`` when this
    /// deadline passes is never sent: it fails with ``RequestDeadlineReached``. Nil: no deadline.
    public var deadline: RequestDeadline?

    /// Creates a request.
    /// - Parameters:
    ///   - method: The method.
    ///   - url: An absolute http(s) URL.
    ///   - headers: Extra request headers.
    ///   - body: The body to send, if any.
    public init(_ method: Method, _ url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
