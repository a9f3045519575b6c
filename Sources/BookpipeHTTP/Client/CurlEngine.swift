internal import CCurl
import Foundation
import Synchronization

/// The libcurl multi handle and the one thread that drives every transfer.
///
/// Callers hand transfers over through ``inbox`` (a `Mutex`) and wake the thread with
/// `curl_multi_wakeup`; the thread owns the multi handle, the easy handles, the per-host
/// queues and the active transfers, and resumes each caller's continuation when its transfer
/// ends. After ``Inbox/isStopped`` is set (under the lock) nobody calls `curl_multi_wakeup`
/// again, so the thread may clean up the multi handle.
final class CurlEngine: Sendable {
    struct Inbox {
        var incoming: [CurlTransfer] = []
        var stopRequested = false
        var isStopped = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private static let globalInit: Int = Int(bookpipe_curl_global_init_all().rawValue)

    /// `CURLM*`; only the curl thread uses it, except `curl_multi_wakeup`, which libcurl allows
    /// from any thread and which is only called under the inbox lock before the handle is freed.
    nonisolated(unsafe) private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let configuration: HTTPClientConfiguration

    init(configuration: HTTPClientConfiguration) throws(HTTPError) {
        guard Self.globalInit == Int(CURLE_OK.rawValue) else {
            throw .transferFailed(url: "", code: Self.globalInit,
                                  detail: "curl_global_init failed; libcurl cannot be used in this process", method: .get)
        }
        guard let multi = curl_multi_init() else {
            throw .transferFailed(url: "", code: -1, detail: "curl_multi_init returned NULL (out of memory?)", method: .get)
        }
        self.multi = multi
        self.configuration = configuration
        let perHost = max(1, configuration.maxRequestsPerHost)
        _ = bookpipe_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, perHost)
        _ = bookpipe_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(16, perHost * 8))
        let thread = Thread { [self] in run() }
        thread.name = "bookpipe-curl"
        thread.start()
    }

    /// Hands `transfer` to the curl thread. Returns `false` if the engine has stopped.
    func submit(_ transfer: CurlTransfer) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.isStopped, !inbox.stopRequested else { return false }
            inbox.incoming.append(transfer)
            curl_multi_wakeup(multi)
            return true
        }
    }

    /// Wakes the curl thread (for example to notice a cancellation).
    func wake() {
        inbox.withLock { inbox in
            if !inbox.isStopped { curl_multi_wakeup(multi) }
        }
    }

    /// Asks the thread to stop, failing unfinished requests with ``HTTPError/shutDown(url:)``;
    /// returns at once. Safe to call more than once.
    func requestStop() {
        inbox.withLock { inbox in
            guard !inbox.stopRequested else { return }
            inbox.stopRequested = true
            if !inbox.isStopped { curl_multi_wakeup(multi) }
        }
    }

    /// Stops the thread like ``requestStop()`` and suspends (never blocks) until it has ended.
    func shutdown() async {
        requestStop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasStopped = inbox.withLock { inbox -> Bool in
                if inbox.isStopped { return true }
                inbox.stopWaiters.append(continuation)
                return false
            }
            if hasStopped { continuation.resume() }
        }
    }

    // MARK: - The curl thread

    private func run() {
        var loop = LoopState()
        while true {
            let (incoming, stop) = inbox.withLock { inbox -> ([CurlTransfer], Bool) in
                defer { inbox.incoming.removeAll() }
                return (inbox.incoming, inbox.stopRequested)
            }
            for transfer in incoming { loop.waiting[transfer.hostKey, default: []].append(transfer) }
            if stop { break }
            reapCancelled(&loop)
            startWaiting(&loop)
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            if finishDone(&loop) { continue }   // free slots: start queued transfers before waiting
            var descriptors: Int32 = 0
            _ = curl_multi_poll(multi, nil, 0, 1000, &descriptors)
        }
        let leftover = inbox.withLock { inbox -> [CurlTransfer] in
            inbox.isStopped = true
            defer { inbox.incoming.removeAll() }
            return inbox.incoming
        }
        for transfer in leftover { loop.waiting[transfer.hostKey, default: []].append(transfer) }
        for (_, transfer) in loop.active {
            if let easy = transfer.easy { curl_multi_remove_handle(multi, easy); curl_easy_cleanup(easy) }
            transfer.easy = nil
            transfer.complete(.failure(HTTPError.shutDown(url: transfer.url, method: transfer.method)))
        }
        for transfer in loop.waiting.values.joined() {
            transfer.complete(.failure(HTTPError.shutDown(url: transfer.url, method: transfer.method)))
        }
        for easy in loop.idleHandles { curl_easy_cleanup(easy) }
        curl_multi_cleanup(multi)
        let waiters = inbox.withLock { inbox -> [CheckedContinuation<Void, Never>] in
            defer { inbox.stopWaiters = [] }
            return inbox.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private struct LoopState {
        var waiting: [String: [CurlTransfer]] = [:]
        var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        var activePerHost: [String: Int] = [:]
        var idleHandles: [UnsafeMutableRawPointer] = []
    }

    private func reapCancelled(_ loop: inout LoopState) {
        for (easy, transfer) in loop.active where transfer.cancelled.load(ordering: .acquiring) {
            retire(easy, of: transfer, in: &loop)
            transfer.complete(.failure(CancellationError()))
        }
        for host in Array(loop.waiting.keys) {
            guard let queue = loop.waiting[host], queue.contains(where: { $0.cancelled.load(ordering: .acquiring) })
            else { continue }
            var kept: [CurlTransfer] = []
            for transfer in queue {
                if transfer.cancelled.load(ordering: .acquiring) {
                    transfer.complete(.failure(CancellationError()))
                } else {
                    kept.append(transfer)
                }
            }
            loop.waiting[host] = kept.isEmpty ? nil : kept
        }
    }

    private func startWaiting(_ loop: inout LoopState) {
        let limit = max(1, configuration.maxRequestsPerHost)
        for host in Array(loop.waiting.keys) {
            while loop.activePerHost[host, default: 0] < limit, var queue = loop.waiting[host], !queue.isEmpty {
                let transfer = queue.removeFirst()
                loop.waiting[host] = queue.isEmpty ? nil : queue
                if transfer.deadline?.hasPassed == true {
                    // Waited for a free connection past its deadline: not sent at all.
                    transfer.complete(.failure(RequestDeadlineReached(place: PolicyHTTPFetcher<ContinuousClock>.place(of: transfer.url))))
                    continue
                }
                start(transfer, in: &loop)
            }
        }
    }

    private func start(_ transfer: CurlTransfer, in loop: inout LoopState) {
        let easy: UnsafeMutableRawPointer
        if let reused = loop.idleHandles.popLast() {
            curl_easy_reset(reused)
            easy = reused
        } else if let fresh = curl_easy_init() {
            easy = fresh
        } else {
            transfer.complete(.failure(HTTPError.transferFailed(url: transfer.url, code: -1,
                                                                detail: "curl_easy_init returned NULL (out of memory?)",
                                                                method: transfer.method)))
            return
        }
        if let failure = configure(easy, for: transfer) {
            loop.idleHandles.append(easy)
            transfer.complete(.failure(failure))
            return
        }
        transfer.easy = easy
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            transfer.easy = nil
            loop.idleHandles.append(easy)
            let detail = String(cString: curl_multi_strerror(added))
            transfer.complete(.failure(HTTPError.transferFailed(url: transfer.url, code: Int(added.rawValue), detail: detail,
                                                                method: transfer.method)))
            return
        }
        loop.active[easy] = transfer
        loop.activePerHost[transfer.hostKey, default: 0] += 1
    }

    /// Sets every option of one transfer; returns an error if libcurl refused one.
    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: CurlTransfer) -> HTTPError? {
        let userData = Unmanaged.passUnretained(transfer).toOpaque()
        var codes: [CURLcode] = []
        codes.append(bookpipe_curl_setopt_str(easy, CURLOPT_URL, transfer.url))
        codes.append(bookpipe_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        codes.append(bookpipe_curl_setopt_str(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
        codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_MAXREDIRS, max(0, configuration.maxRedirects)))
        codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.curlMilliseconds))
        let timeout = transfer.timeout ?? configuration.requestTimeout
        codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeout.curlMilliseconds))
        switch transfer.method {
        case .get:
            break
        case .post:
            codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_POST, 1))
        case .delete:
            codes.append(bookpipe_curl_setopt_str(easy, CURLOPT_CUSTOMREQUEST, "DELETE"))
        }
        if let body = transfer.requestBody {
            codes.append(bookpipe_curl_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
            codes.append(bookpipe_curl_setopt_ptr(easy, CURLOPT_POSTFIELDS, body.baseAddress))
        }
        if transfer.idleTimeout != nil {
            transfer.lastActivity = .now
            codes.append(bookpipe_curl_setopt_xferinfo_callback(easy, CurlCallbacks.progress))
            codes.append(bookpipe_curl_setopt_ptr(easy, CURLOPT_XFERINFODATA, userData))
            codes.append(bookpipe_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0))
        }
        codes.append(bookpipe_curl_setopt_str(easy, CURLOPT_USERAGENT, configuration.userAgent))
        if configuration.acceptsCompressedResponses {
            codes.append(bookpipe_curl_setopt_str(easy, CURLOPT_ACCEPT_ENCODING, ""))  // every encoding libcurl decodes
        }
        codes.append(bookpipe_curl_setopt_error_buffer(easy, transfer.errorBuffer))
        codes.append(bookpipe_curl_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, CurlCallbacks.write))
        codes.append(bookpipe_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, userData))
        codes.append(bookpipe_curl_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, CurlCallbacks.header))
        codes.append(bookpipe_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, userData))
        if !transfer.headers.isEmpty {
            var list: UnsafeMutablePointer<curl_slist>?
            for header in transfer.headers {
                guard let appended = curl_slist_append(list, "\(header.name): \(header.value)") else { break }
                list = appended
            }
            transfer.headerList = list
            codes.append(bookpipe_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list))
        }
        guard let failed = codes.first(where: { $0 != CURLE_OK }) else { return nil }
        return .invalidURL(transfer.url, reason: String(cString: curl_easy_strerror(failed)))
    }

    /// Completes every transfer libcurl reports as done; returns whether any finished.
    private func finishDone(_ loop: inout LoopState) -> Bool {
        var finishedAny = false
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = loop.active[easy] else { continue }
            let code = message.pointee.data.result
            let result = outcome(of: transfer, easy: easy, code: code)
            retire(easy, of: transfer, in: &loop)
            transfer.complete(result)
            finishedAny = true
        }
        return finishedAny
    }

    /// Removes a transfer's handle from the multi handle and keeps the handle for reuse.
    private func retire(_ easy: UnsafeMutableRawPointer, of transfer: CurlTransfer, in loop: inout LoopState) {
        curl_multi_remove_handle(multi, easy)
        loop.active[easy] = nil
        loop.activePerHost[transfer.hostKey, default: 1] -= 1
        if loop.activePerHost[transfer.hostKey] == 0 { loop.activePerHost[transfer.hostKey] = nil }
        transfer.easy = nil
        if loop.idleHandles.count < 64 { loop.idleHandles.append(easy) } else { curl_easy_cleanup(easy) }
    }

    private func outcome(of transfer: CurlTransfer, easy: UnsafeMutableRawPointer, code: CURLcode)
        -> Result<HTTPResponse, any Error> {
        let url = transfer.url, method = transfer.method
        let detail = transfer.errorMessage(fallback: String(cString: curl_easy_strerror(code)))
        switch code {
        case CURLE_OK:
            var status = 0
            _ = bookpipe_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            var effective: UnsafeMutablePointer<CChar>?
            _ = bookpipe_curl_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
            var redirects = 0
            _ = bookpipe_curl_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &redirects)
            var connects = 0
            _ = bookpipe_curl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
            var microseconds: curl_off_t = 0
            _ = bookpipe_curl_getinfo_off_t(easy, CURLINFO_TOTAL_TIME_T, &microseconds)
            return .success(HTTPResponse(
                status: status, headers: transfer.responseHeaders, body: transfer.body, requestedURL: url,
                effectiveURL: effective.map { String(cString: $0) } ?? url, redirectCount: redirects,
                totalTime: .microseconds(microseconds), newConnections: connects))
        case CURLE_ABORTED_BY_CALLBACK where transfer.idleTimedOut:
            let limit = transfer.idleTimeout ?? .zero
            return .failure(HTTPError.timedOut(url: url, limit: limit, detail: "no byte arrived for \(limit)", method: method))
        case CURLE_ABORTED_BY_CALLBACK where transfer.cancelled.load(ordering: .acquiring):
            return .failure(CancellationError())
        case CURLE_OPERATION_TIMEDOUT:
            var connectMicroseconds: curl_off_t = 0
            _ = bookpipe_curl_getinfo_off_t(easy, CURLINFO_CONNECT_TIME_T, &connectMicroseconds)
            let limit = connectMicroseconds == 0 ? min(configuration.connectTimeout, configuration.requestTimeout)
                                                 : configuration.requestTimeout
            return .failure(HTTPError.timedOut(url: url, limit: limit, detail: detail, method: method))
        case CURLE_COULDNT_RESOLVE_HOST:
            return .failure(HTTPError.couldNotConnect(url: url, reason: "host name not resolved", method: method))
        case CURLE_COULDNT_RESOLVE_PROXY:
            return .failure(HTTPError.couldNotConnect(url: url, reason: "proxy name not resolved", method: method))
        case CURLE_COULDNT_CONNECT:
            // The system's reason ("connection refused", "no route to host") says more than curl's.
            var systemError = 0
            _ = bookpipe_curl_getinfo_long(easy, CURLINFO_OS_ERRNO, &systemError)
            let reason = systemError == 0 ? detail : String(cString: strerror(Int32(systemError))).lowercased()
            return .failure(HTTPError.couldNotConnect(url: url, reason: reason, method: method))
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION:
            // No TLS session: nothing was asked of the server, as with a refused connection.
            return .failure(HTTPError.couldNotConnect(url: url, reason: "TLS handshake failed: \(detail)", method: method))
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING:
            return .failure(HTTPError.connectionFailed(url: url, reason: detail, method: method))
        case CURLE_PARTIAL_FILE:
            var expected: curl_off_t = -1
            _ = bookpipe_curl_getinfo_off_t(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected)
            return .failure(HTTPError.truncatedBody(url: url, received: transfer.body.count,
                                                    expected: expected >= 0 ? Int(expected) : nil, method: method))
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            return .failure(HTTPError.malformedResponse(url: url, reason: detail, method: method))
        case CURLE_TOO_MANY_REDIRECTS:
            return .failure(HTTPError.tooManyRedirects(url: url, limit: configuration.maxRedirects, method: method))
        case CURLE_WRITE_ERROR where transfer.bodyTooLarge:
            return .failure(HTTPError.bodyTooLarge(url: url, limit: transfer.maxBodyBytes, method: method))
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .failure(HTTPError.invalidURL(url, reason: detail))
        default:
            return .failure(HTTPError.transferFailed(url: url, code: Int(code.rawValue), detail: detail, method: method))
        }
    }
}
