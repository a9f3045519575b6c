import Foundation

/// Settings of an ``HTTPClient``. Every value has a sensible default; sources override what they need.
///
/// ```swift
/// var configuration = HTTPClientConfiguration()
/// configuration.userAgent = HTTPClientConfiguration.userAgent(contact: "mailto:me@example.org")
/// configuration.maxRequestsPerHost = 2
/// let client = try HTTPClient(configuration: configuration)
/// ```
public struct HTTPClientConfiguration: Sendable, Equatable {
    /// The bookpipe version named in the default `User-Agent`.
    public static let bookpipeVersion = "0.1.0"

    /// The `User-Agent` header. Open Library blocks anonymous bulk clients, so it names bookpipe,
    /// its version and (ideally) a contact: see ``userAgent(version:contact:)``.
    public var userAgent: String
    /// Longest time to establish a connection (default 10 s).
    public var connectTimeout: Duration
    /// Longest time for a whole request, connect and redirects included (default 30 s).
    /// Time spent queued behind ``maxRequestsPerHost`` does not count.
    public var requestTimeout: Duration
    /// Requests in flight to one host (scheme, host, port) at a time; more wait in a queue
    /// (default 2). Also caps the connections kept open to the host.
    public var maxRequestsPerHost: Int
    /// Redirects followed (for example `/isbn/{isbn}.json` → `/books/{id}.json`); default 5.
    public var maxRedirects: Int
    /// A body larger than this fails with ``HTTPError/bodyTooLarge(url:limit:)`` (default 32 MiB).
    public var maxBodyBytes: Int
    /// Ask for gzip/deflate/br responses and decode them (`Accept-Encoding`; default true).
    public var acceptsCompressedResponses: Bool

    /// Creates a configuration; every argument defaults to the documented value.
    public init(userAgent: String = HTTPClientConfiguration.userAgent(),
                connectTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(30),
                maxRequestsPerHost: Int = 2, maxRedirects: Int = 5, maxBodyBytes: Int = 32 << 20,
                acceptsCompressedResponses: Bool = true) {
        self.userAgent = userAgent
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxRequestsPerHost = maxRequestsPerHost
        self.maxRedirects = maxRedirects
        self.maxBodyBytes = maxBodyBytes
        self.acceptsCompressedResponses = acceptsCompressedResponses
    }

    /// The `User-Agent` bookpipe sends: `bookpipe/<version> (+<contact>)`, or
    /// `bookpipe/<version>` without a contact.
    ///
    /// ```swift
    /// HTTPClientConfiguration.userAgent(contact: "mailto:me@example.org")
    /// // "bookpipe/0.1.0 (+mailto:me@example.org)"
    /// ```
    public static func userAgent(version: String = bookpipeVersion, contact: String? = nil) -> String {
        // No line breaks or control characters (header injection), no parentheses (the comment's delimiters).
        let cleanContact = contact?.filter { character in
            !character.isNewline && character != "(" && character != ")"
                && !character.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }.trimmingCharacters(in: .whitespaces)
        guard let cleanContact, !cleanContact.isEmpty else { return "bookpipe/\(version)" }
        return "bookpipe/\(version) (+\(cleanContact))"
    }
}

extension Duration {
    /// Whole milliseconds, at least 1 for any positive duration (libcurl treats 0 as "no limit").
    var curlMilliseconds: Int {
        let parts = components
        let milliseconds = parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000
        if milliseconds <= 0 { return parts.seconds > 0 || parts.attoseconds > 0 ? 1 : 0 }
        return Int(clamping: milliseconds)
    }
}
