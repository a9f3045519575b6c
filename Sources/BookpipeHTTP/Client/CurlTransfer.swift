internal import CCurl
import Foundation
import Synchronization

/// One request on its way through the curl thread.
///
/// `@unchecked Sendable`: ownership is handed over once. The caller creates the transfer and
/// sets ``continuation`` before putting it in the engine's inbox (under the inbox `Mutex`);
/// from then on only the curl thread touches the mutable fields. ``cancelled`` is an atomic
/// that any thread may set.
final class CurlTransfer: @unchecked Sendable {
    let url: String
    let method: HTTPRequest.Method
    let headers: [(name: String, value: String)]
    /// The request body, copied once; libcurl reads it from here (CURLOPT_POSTFIELDS).
    let requestBody: UnsafeMutableRawBufferPointer?
    /// nil: the configuration's request timeout; `.zero`: none.
    let timeout: Duration?
    /// Abort when no byte arrived for this long.
    let idleTimeout: Duration?
    /// Not started once this has passed (``HTTPRequest/deadline``).
    let deadline: RequestDeadline?
    /// Receives the body in pieces as they arrive (a 2xx answer only; other answers are kept in
    /// ``body``). Called on the curl thread: it must return quickly.
    let onBody: (@Sendable ([UInt8]) -> Void)?
    /// `scheme://host:port`: the unit of ``HTTPClientConfiguration/maxRequestsPerHost``.
    let hostKey: String
    let maxBodyBytes: Int
    let cancelled = Atomic<Bool>(false)

    // Set by the caller before hand-over.
    var continuation: CheckedContinuation<HTTPResponse, any Error>?

    // Curl thread only.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer: UnsafeMutablePointer<CChar>
    var body = Data()
    var responseHeaders = HTTPHeaders()
    var bodyTooLarge = false
    /// When the last byte (or the start) was seen, for ``idleTimeout``.
    var lastActivity = ContinuousClock.now
    /// Set when the transfer was aborted for ``idleTimeout``.
    var idleTimedOut = false
    /// Whether the status of a streamed answer was read (nil: not yet), and whether it is 2xx.
    var streamsBody: Bool?

    init(request: HTTPRequest, hostKey: String, maxBodyBytes: Int,
         onBody: (@Sendable ([UInt8]) -> Void)? = nil) {
        self.url = request.url
        self.method = request.method
        self.headers = request.headers
        self.timeout = request.timeout
        self.idleTimeout = request.idleTimeout
        self.deadline = request.deadline
        self.onBody = onBody
        if let body = request.body {
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, body.count), alignment: 1)
            body.withUnsafeBytes { copy.copyMemory(from: $0) }
            requestBody = UnsafeMutableRawBufferPointer(start: copy.baseAddress, count: body.count)
        } else {
            requestBody = nil
        }
        self.hostKey = hostKey
        self.maxBodyBytes = maxBodyBytes
        let size = Int(bookpipe_curl_error_size()) + 1
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        requestBody?.deallocate()
        errorBuffer.deallocate()
    }

    /// Resumes the waiting caller exactly once.
    func complete(_ result: Result<HTTPResponse, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }

    /// The message libcurl wrote for the last failure, or `fallback`.
    func errorMessage(fallback: String) -> String {
        let message = String(cString: errorBuffer)
        return message.isEmpty ? fallback : message
    }
}

/// C callbacks. Static members, not globals, so Swift 6 does not tie them to the main actor.
enum CurlCallbacks {
    /// CURLOPT_WRITEFUNCTION: appends body bytes; returning less than given aborts the transfer.
    static let write: curl_write_callback = { pointer, size, count, userData in
        let length = size * count
        guard let pointer, let userData else { return length }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userData).takeUnretainedValue()
        transfer.lastActivity = .now
        if let onBody = transfer.onBody {
            if transfer.streamsBody == nil {
                var status = 0
                if let easy = transfer.easy { _ = bookpipe_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) }
                transfer.streamsBody = (200..<300).contains(status)
            }
            if transfer.streamsBody == true {
                onBody(Array(UnsafeRawBufferPointer(start: pointer, count: length)))
                return length
            }
        }
        if transfer.body.count + length > transfer.maxBodyBytes {
            transfer.bodyTooLarge = true
            return 0
        }
        pointer.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.body.append($0, count: length) }
        return length
    }

    /// CURLOPT_HEADERFUNCTION: one call per header line; a status line starts a new response
    /// (redirects), so only the final response's headers remain.
    static let header: curl_write_callback = { pointer, size, count, userData in
        let length = size * count
        guard let pointer, let userData else { return length }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userData).takeUnretainedValue()
        let line = pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
        transfer.lastActivity = .now
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") {
            transfer.responseHeaders.removeAll()
        } else if let colon = trimmed.firstIndex(of: ":") {
            let name = String(trimmed[..<colon])
            let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            transfer.responseHeaders.append(HTTPHeader(name: name, value: value))
        }
        return length
    }

    /// CURLOPT_XFERINFOFUNCTION: aborts a transfer that was cancelled or has seen no byte for its
    /// idle timeout (returning non-zero makes libcurl end it with CURLE_ABORTED_BY_CALLBACK).
    static let progress: curl_xferinfo_callback = { userData, _, _, _, _ in
        guard let userData else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(userData).takeUnretainedValue()
        if transfer.cancelled.load(ordering: .acquiring) { return 1 }
        if let limit = transfer.idleTimeout, ContinuousClock.now - transfer.lastActivity >= limit {
            transfer.idleTimedOut = true
            return 1
        }
        return 0
    }
}
