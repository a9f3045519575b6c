import BookpipeHTTP
import BookpipePipeline
import Foundation

/// A job the backend accepted: its id and where its events stream from (already resolved).
public struct ScanJobHandle: Sendable, Hashable {
    /// The backend's job id.
    public var jobID: String
    /// The absolute URL of the job's event stream.
    public var streamURL: String
}

/// What the backend answered to an upload.
public enum ScanUploadAnswer: Sendable, Hashable {
    /// `202 Accepted`: the job was created.
    case accepted(ScanJobHandle)
    /// `429`: the daily or per-minute limit is hit; wait `retryAfter` (nil: the header was absent
    /// or unreadable).
    case rateLimited(retryAfter: RetryAfter?)
    /// A 5xx: the backend's own failure (worth retrying).
    case serverError(status: Int, reason: String)
}

/// The client side of the vision backend's scan protocol, on bookpipe's libcurl ``HTTPClient``:
///
/// - `POST {base}/v3/jobs/scans`: the prepared photo as the `image` part of a
///   `multipart/form-data` body, `X-AI-Provider`, `Accept: application/json`; a `202` names the
///   job and its `streamUrl` (resolved against the base URL as RFC 3986 says).
/// - `GET {streamUrl}`, `Accept: text/event-stream` (`Last-Event-ID` when resuming): the job's
///   server-sent events, read as they arrive.
/// - `DELETE {base}/v3/jobs/scans/{jobId}/cleanup` once the job is over.
///
/// It sends each request once; retries, pauses and fallbacks are ``ScanJobRunner``'s.
public struct ScanBackendClient: Sendable {
    /// The backend's base URL (`http://127.0.0.1:8080` or `https://host/prefix`).
    public let baseURL: String
    /// How long a stream may stay silent (no byte, heartbeats included) before the job has
    /// timed out: 5 minutes unless a test says otherwise.
    public var streamIdleTimeout: Duration
    private let http: HTTPClient

    /// Creates a client.
    /// - Parameters:
    ///   - baseURL: The backend's base URL.
    ///   - http: The HTTP client to send with (allow enough requests per host for every stream
    ///     and upload in flight).
    ///   - streamIdleTimeout: The silence after which a job has timed out.
    public init(baseURL: String, http: HTTPClient, streamIdleTimeout: Duration = .seconds(300)) {
        self.baseURL = baseURL
        self.http = http
        self.streamIdleTimeout = streamIdleTimeout
    }

    /// `{base}/v3/jobs/scans`.
    var jobsURL: String {
        (baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL) + "/v3/jobs/scans"
    }

    /// Uploads a prepared photo and returns the backend's answer.
    /// - Parameters:
    ///   - jpeg: The prepared JPEG.
    ///   - filename: The photo's file name, sent as the part's `filename`.
    ///   - provider: The provider (`X-AI-Provider`).
    /// - Returns: accepted, rate limited, or a server error.
    /// - Throws: ``ScanFailure/uploadRefused(status:reason:)`` for a 4xx other than 429,
    ///   ``ScanFailure/badAnswer(_:)`` for a 2xx that is not a usable job, ``HTTPError`` when
    ///   no answer arrived, `CancellationError`.
    public func upload(_ jpeg: [UInt8], filename: String, provider: ScanProvider) async throws -> ScanUploadAnswer {
        var form = MultipartFormData()
        form.appendFile(name: "image", filename: filename, contentType: "image/jpeg", bytes: jpeg)
        let request = HTTPRequest(.post, jobsURL, headers: [("Content-Type", form.contentType), ("Accept", "application/json"),
                                                            ("X-AI-Provider", provider.rawValue)],
                                  body: form.encoded())
        let response = try await http.send(request)
        switch response.status {
        case 200..<300:
            return .accepted(try job(from: response))
        case 429:
            return .rateLimited(retryAfter: response.headers.retryAfter)
        case 500..<600:
            return .serverError(status: response.status, reason: Self.errorText(response))
        default:
            throw ScanFailure.uploadRefused(status: response.status, reason: Self.errorText(response))
        }
    }

    private func job(from response: HTTPResponse) throws(ScanFailure) -> ScanJobHandle {
        let parsed = try? JSONSerialization.jsonObject(with: response.body)
        guard let object = parsed as? [String: Any] else {
            throw .badAnswer("HTTP \(response.status) with a body that is not a JSON object "
                             + ScanBackendEvent.excerpt(response.bodyText))
        }
        guard let jobID = object["jobId"] as? String, !jobID.isEmpty else {
            throw .badAnswer("HTTP \(response.status) without a jobId")
        }
        guard let stream = object["streamUrl"] as? String, !stream.isEmpty else {
            throw .badAnswer("HTTP \(response.status) for job \(jobID) without a streamUrl")
        }
        let resolved = URLReference.resolve(stream, against: baseURL)
        guard resolved.hasPrefix("http://") || resolved.hasPrefix("https://") else {
            throw .badAnswer("the streamUrl \(ScanBackendEvent.excerpt(stream)) of job \(jobID) is not an http(s) URL")
        }
        return ScanJobHandle(jobID: jobID, streamURL: resolved)
    }

    /// The `error` of a JSON error body, or a short excerpt of the body.
    static func errorText(_ response: HTTPResponse) -> String {
        if let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] {
            if let error = object["error"] as? String { return error }
            if let error = object["error"] as? [String: Any], let message = error["message"] as? String { return message }
        }
        let text = response.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? "" : ScanBackendEvent.excerpt(text)
    }

    /// One connection to a job's event stream: hands every parsed event to `onEvent` as it
    /// arrives, until the server ends the stream or `onEvent` returns false.
    /// - Parameters:
    ///   - job: The job.
    ///   - parser: The stream's parser: this connection starts a new parse with it
    ///     (``ServerSentEventParser/startNewConnection(resumingFrom:)``), so nothing of an event
    ///     an earlier connection cut off is read again; its last event id is sent as
    ///     `Last-Event-ID`, and it is updated as bytes arrive, so a reconnect resumes after the
    ///     last event this connection dispatched.
    ///   - giveUp: Asked as each piece of the stream arrives (heartbeats included); true stops
    ///     reading, as `onEvent` returning false does.
    ///   - onEvent: Called for each event in order; return false to stop reading.
    /// - Returns: the stream's HTTP status (200 when reading was stopped).
    /// - Throws: ``HTTPError`` (``HTTPError/timedOut(url:limit:detail:)`` after
    ///   ``streamIdleTimeout`` of silence), what `onEvent` throws, `CancellationError`.
    public func follow(_ job: ScanJobHandle, parser: inout ServerSentEventParser, giveUp: () -> Bool = { false },
                       onEvent: (ServerSentEvent) async throws -> Bool) async throws -> Int {
        parser.startNewConnection()
        var headers: [(name: String, value: String)] = [("Accept", "text/event-stream"), ("Cache-Control", "no-cache")]
        if !parser.lastEventID.isEmpty { headers.append(("Last-Event-ID", parser.lastEventID)) }
        var request = HTTPRequest(.get, job.streamURL, headers: headers)
        request.timeout = .zero
        request.idleTimeout = streamIdleTimeout
        let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
        let http = self.http
        let streamRequest = request
        return try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                defer { continuation.finish() }
                let response = try await http.stream(streamRequest) { continuation.yield($0) }
                return response.status
            }
            var stopped = false
            reading: for await chunk in chunks {
                if giveUp() {
                    stopped = true
                    break reading
                }
                for event in parser.feed(chunk) {
                    if try await !onEvent(event) {
                        stopped = true
                        break reading
                    }
                }
            }
            if stopped {
                group.cancelAll()
                _ = try? await group.next()
                return 200
            }
            return try await group.next() ?? 0
        }
    }

    /// Asks the backend to clean a finished job up. Never throws: a failure is returned as text
    /// for the log (it never fails the photo).
    /// - Parameter jobID: The job.
    /// - Returns: nil when the backend answered 2xx (or 404: nothing left to clean), otherwise why not.
    public func cleanUp(jobID: String) async -> String? {
        let escaped = jobID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/")))
            ?? jobID
        var request = HTTPRequest(.delete, "\(jobsURL)/\(escaped)/cleanup")
        request.timeout = .seconds(10)
        do {
            let response = try await http.send(request)
            return response.isSuccess || response.status == 404 ? nil : "cleanup of job \(jobID): HTTP \(response.status)"
        } catch {
            return "cleanup of job \(jobID): \(error)"
        }
    }
}
