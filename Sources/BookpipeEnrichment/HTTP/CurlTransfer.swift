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
    let headers: [(name: String, value: String)]
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

    init(url: String, headers: [(name: String, value: String)], hostKey: String, maxBodyBytes: Int) {
        self.url = url
        self.headers = headers
        self.hostKey = hostKey
        self.maxBodyBytes = maxBodyBytes
        let size = Int(bookpipe_curl_error_size()) + 1
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
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
}
