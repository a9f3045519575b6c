import Foundation

/// The head of a request received by ``LoopbackHTTPServer``, as the handler sees it.
public struct HTTPRequestHead: Sendable, CustomStringConvertible {
    /// `GET`, `POST`, ...
    public var method: String
    /// The request target as sent: path and query (`/api/books?bibkeys=ISBN:1&format=json`).
    public var target: String
    /// The path part of ``target`` (`/api/books`).
    public var path: String
    /// The raw query (after `?`), if any.
    public var query: String?
    /// `HTTP/1.1` or `HTTP/1.0`.
    public var version: String
    /// Header fields in the order received.
    public var headers: [(name: String, value: String)]
    /// The body (requests with `Content-Length`).
    public var body: [UInt8]
    /// Which accepted connection carried the request (1 for the first connection).
    public var connectionID: Int
    /// The request's place in arrival order (1 for the first request).
    public var sequenceNumber: Int

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// Query items, percent-decoded (`+` is kept as is).
    public var queryItems: [(name: String, value: String)] {
        guard let query else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let raw = parts.count > 1 ? String(parts[1]) : ""
            return (name, raw.removingPercentEncoding ?? raw)
        }
    }

    /// The first value of query item `name`, percent-decoded.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    public var description: String { "\(method) \(target) (connection \(connectionID), #\(sequenceNumber))" }
}

/// What ``LoopbackHTTPServer`` does with one request: a response, possibly with a fault.
///
/// ```swift
/// let server = LoopbackHTTPServer { request in
///     switch request.path {
///     case "/busy": return .tooManyRequests(retryAfter: "10")
///     case "/slow": return .json("{}").withLatency(.milliseconds(50))
///     case "/hang": return .stall
///     default: return .notFound
///     }
/// }
/// ```
public struct ScriptedResponse: Sendable {
    /// A way to misbehave instead of (or while) answering.
    public enum Fault: Sendable, Equatable {
        /// Reset the connection (TCP RST) without answering.
        case resetConnection
        /// Close the connection cleanly without answering.
        case closeWithoutResponse
        /// Never answer; hold the connection until the client gives up or the server stops.
        case stall
        /// Announce the whole body in `Content-Length`, send only this many bytes, then close.
        case truncateBody(afterBytes: Int)
    }

    /// Status code.
    public var status: Int
    /// Header fields; `Content-Length` is added unless present.
    public var headers: [(name: String, value: String)]
    /// Body bytes.
    public var body: [UInt8]
    /// Server-side delay before answering (added latency).
    public var latency: Duration
    /// A fault to inject, if any.
    public var fault: Fault?
    /// Close the connection after this response (`Connection: close`).
    public var closesConnection: Bool
    /// A body written piece by piece while the connection stays open (server-sent events, for
    /// example); when set, ``body`` is ignored.
    public var streamedBody: StreamedBody?

    /// Creates a response.
    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                latency: Duration = .zero, fault: Fault? = nil, closesConnection: Bool = false,
                streamedBody: StreamedBody? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.latency = latency
        self.fault = fault
        self.closesConnection = closesConnection
        self.streamedBody = streamedBody
    }

    /// A response whose body `write` produces over time on the connection's thread (see
    /// ``StreamedBody``).
    public static func streaming(status: Int = 200, headers: [(name: String, value: String)] = [],
                                 framing: StreamedBody.Framing = .chunked,
                                 _ write: @escaping @Sendable (ResponseStream) -> StreamedBody.Ending)
        -> ScriptedResponse {
        ScriptedResponse(status: status, headers: headers,
                         streamedBody: StreamedBody(framing: framing, write: write))
    }

    /// A JSON body (`Content-Type: application/json`).
    public static func json(_ text: String, status: Int = 200) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    /// A JSON body read from a file (for example one of the shared fixtures).
    /// - Throws: the file system's error if the file cannot be read.
    public static func json(contentsOf url: URL, status: Int = 200) throws -> ScriptedResponse {
        ScriptedResponse(status: status, headers: [("Content-Type", "application/json")],
                         body: Array(try Data(contentsOf: url)))
    }

    /// A plain-text body.
    public static func text(_ text: String, status: Int = 200) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }

    /// A bare status with optional headers and a short text body naming the status.
    public static func status(_ code: Int, headers: [(name: String, value: String)] = []) -> ScriptedResponse {
        ScriptedResponse(status: code, headers: headers + [("Content-Type", "text/plain")],
                         body: Array("\(code) \(reasonPhrase(code))\n".utf8))
    }

    /// `404 Not Found`.
    public static var notFound: ScriptedResponse { .status(404) }

    /// `429 Too Many Requests`, with `Retry-After` if given (seconds or an HTTP date).
    public static func tooManyRequests(retryAfter: String? = nil) -> ScriptedResponse {
        .status(429, headers: retryAfter.map { [("Retry-After", $0)] } ?? [])
    }

    /// `503 Service Unavailable`, with `Retry-After` if given.
    public static func serviceUnavailable(retryAfter: String? = nil) -> ScriptedResponse {
        .status(503, headers: retryAfter.map { [("Retry-After", $0)] } ?? [])
    }

    /// A redirect (`302` by default) to `location` (absolute, or a path on this server).
    public static func redirect(to location: String, status: Int = 302) -> ScriptedResponse {
        .status(status, headers: [("Location", location)])
    }

    /// Resets the connection without answering.
    public static var resetConnection: ScriptedResponse { ScriptedResponse(fault: .resetConnection) }

    /// Never answers.
    public static var stall: ScriptedResponse { ScriptedResponse(fault: .stall) }

    /// Sends `body`'s full length in `Content-Length` but only `sending` bytes of it, then closes.
    public static func truncated(_ body: String, sending: Int) -> ScriptedResponse {
        ScriptedResponse(headers: [("Content-Type", "application/json")], body: Array(body.utf8),
                         fault: .truncateBody(afterBytes: sending))
    }

    /// A 200 whose JSON body is cut in the middle of an object (complete at the HTTP level).
    public static var malformedJSON: ScriptedResponse { .json(#"{"ISBN:9780140328721": {"title": "Fantastic Mr"#) }

    /// The same response, answered after `latency`.
    public func withLatency(_ latency: Duration) -> ScriptedResponse {
        var copy = self
        copy.latency = latency
        return copy
    }

    /// The same response with an extra header field.
    public func withHeader(_ name: String, _ value: String) -> ScriptedResponse {
        var copy = self
        copy.headers.append((name, value))
        return copy
    }

    static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status \(code)"
        }
    }
}

/// A response body that is written while the response is under way, for example a stream of
/// server-sent events.
///
/// ``LoopbackHTTPServer`` sends the head, then calls ``write`` on the connection's thread with a
/// ``ResponseStream``. With ``Framing-swift.enum/chunked`` every ``ResponseStream/write(_:)-([UInt8])``
/// is one chunk and the terminating chunk follows a ``Ending-swift.enum/finished`` body, so the
/// connection can be reused; with ``Framing-swift.enum/untilClose`` the body ends when the
/// server closes the connection. A ``Ending-swift.enum/dropped`` body ends with the connection
/// closed and no terminating chunk, which a client sees as a cut transfer (or, under
/// ``Framing-swift.enum/untilClose``, as the body's end); a ``Ending-swift.enum/reset`` one ends
/// with the connection reset.
public struct StreamedBody: Sendable {
    /// How the body's end is marked.
    public enum Framing: Sendable, Equatable {
        /// `Transfer-Encoding: chunked`.
        case chunked
        /// No length: the body ends when the connection closes (`Connection: close`).
        case untilClose
    }

    /// How a streamed body ended.
    public enum Ending: Sendable, Equatable {
        /// Completely written: terminate it properly.
        case finished
        /// Cut off: close the connection without terminating the body (a FIN).
        case dropped
        /// Cut off: reset the connection (a TCP RST) without terminating the body.
        case reset
    }

    /// How the body's end is marked.
    public var framing: Framing
    /// Writes the body; called once on the connection's thread.
    public var write: @Sendable (ResponseStream) -> Ending

    /// Creates a streamed body.
    public init(framing: Framing = .chunked, write: @escaping @Sendable (ResponseStream) -> Ending) {
        self.framing = framing
        self.write = write
    }
}

/// The writing end of a ``StreamedBody``, valid only during its `write` call.
///
/// Every call reports whether the client is still there: once one returns `false` (the client
/// closed the connection or the server is stopping) the body should return.
public struct ResponseStream {
    private let sendBytes: ([UInt8]) -> Bool
    private let waitFor: (Duration?) -> Bool

    init(send: @escaping ([UInt8]) -> Bool, wait: @escaping (Duration?) -> Bool) {
        self.sendBytes = send
        self.waitFor = wait
    }

    /// Sends `bytes` now (one chunk under chunked framing; an empty array sends nothing).
    /// - Returns: whether they were sent.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        bytes.isEmpty ? true : sendBytes(bytes)
    }

    /// Sends `text` as UTF-8 now.
    /// - Returns: whether it was sent.
    @discardableResult
    public func write(_ text: String) -> Bool {
        write(Array(text.utf8))
    }

    /// Waits `duration` without sending anything.
    /// - Returns: `true` if the whole duration passed, `false` if the client closed the
    ///   connection or the server is stopping.
    public func pause(for duration: Duration) -> Bool {
        duration <= .zero ? true : waitFor(duration)
    }

    /// Sends nothing until the client closes the connection or the server stops.
    public func holdUntilClosed() {
        _ = waitFor(nil)
    }
}
