import Foundation
import BookpipePipeline

/// One header field of a response.
public struct HTTPHeader: Sendable, Hashable {
    /// The name as the server sent it.
    public var name: String
    /// The value, without surrounding spaces.
    public var value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The header fields of a response, in the order received; names compare case-insensitively.
///
/// After redirects, only the final response's headers are kept.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    /// All fields, in order.
    public private(set) var fields: [HTTPHeader]

    /// Creates headers from fields.
    public init(_ fields: [HTTPHeader] = []) { self.fields = fields }

    /// The first value of the field `name` (case-insensitive), or `nil`.
    public subscript(_ name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name.lowercased() == lowered }?.value
    }

    /// Every value of the field `name` (case-insensitive).
    public func values(for name: String) -> [String] {
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// `Retry-After`, parsed (seconds or HTTP date); `nil` when absent or unreadable.
    public var retryAfter: RetryAfter? { self["Retry-After"].flatMap(RetryAfter.init(headerValue:)) }
    /// `Content-Type`.
    public var contentType: String? { self["Content-Type"] }
    /// `Location` (present on redirects that were not followed).
    public var location: String? { self["Location"] }

    public func makeIterator() -> IndexingIterator<[HTTPHeader]> { fields.makeIterator() }

    mutating func append(_ header: HTTPHeader) { fields.append(header) }
    mutating func removeAll() { fields.removeAll() }
}

/// A complete HTTP response. Any status, including 404, 429 and 503, is a response, not an error.
public struct HTTPResponse: Sendable, CustomStringConvertible {
    /// The status code of the final response (after redirects).
    public var status: Int
    /// The final response's headers.
    public var headers: HTTPHeaders
    /// The body, decompressed.
    public var body: Data
    /// The URL asked for.
    public var requestedURL: String
    /// The URL that answered, after redirects.
    public var effectiveURL: String
    /// Redirects followed.
    public var redirectCount: Int
    /// Total time of the transfer (name lookup, connect, redirects, body), as libcurl measured it.
    public var totalTime: Duration
    /// New connections opened for this request (0 when a kept-alive connection was reused).
    public var newConnections: Int

    /// Creates a response (the client builds these; tests and sources may too).
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data(), requestedURL: String,
                effectiveURL: String? = nil, redirectCount: Int = 0, totalTime: Duration = .zero,
                newConnections: Int = 0) {
        self.status = status
        self.headers = headers
        self.body = body
        self.requestedURL = requestedURL
        self.effectiveURL = effectiveURL ?? requestedURL
        self.redirectCount = redirectCount
        self.totalTime = totalTime
        self.newConnections = newConnections
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// How ``RetryStateMachine`` should see this response: `.success` for 2xx, otherwise
    /// `.status(status, retryAfter:)` with `Retry-After` parsed.
    public var retryOutcome: RetryOutcome {
        isSuccess ? .success : .status(status, retryAfter: headers.retryAfter)
    }

    /// `HTTP 200 from https://openlibrary.org/… (1234 bytes, 0.123 s)`; API keys are redacted.
    public var description: String {
        "HTTP \(status) from \(URLRedaction.redact(effectiveURL)) (\(body.count) bytes, \(totalTime))"
    }
}
