import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Why the loopback server could not start.
public struct LoopbackServerError: Error, Sendable, CustomStringConvertible {
    /// The POSIX call that failed.
    public var call: String
    /// Its `errno`.
    public var code: Int32

    public var description: String {
        "LoopbackHTTPServer: \(call) failed: \(String(cString: strerror(code))) (errno \(code)). "
            + "Tests need a free port on 127.0.0.1; check that loopback networking is available."
    }
}

/// One request as ``LoopbackHTTPServer`` recorded it.
public struct RecordedRequest: Sendable, CustomStringConvertible {
    /// The request.
    public var head: HTTPRequestHead
    /// When its head had fully arrived, on the server's time source (by default the time
    /// since ``LoopbackHTTPServer/start()`` on the continuous clock).
    public var arrival: Duration

    public var description: String { "\(head) at \(arrival)" }
}

/// A real HTTP/1.1 server on 127.0.0.1 with a random port, for tests.
///
/// It speaks plain HTTP/1.1 over POSIX sockets with one thread per connection, keeps
/// connections alive, routes every request to a handler and records each request with its
/// arrival time. Request bodies may come with `Content-Length` or chunked, after an
/// `Expect: 100-continue` (answered at once). Faults (resets, stalls, truncated bodies, latency)
/// and bodies written over time (``StreamedBody``, for server-sent events) come from the
/// handler's ``ScriptedResponse``.
///
/// ```swift
/// let books = try TestFixtures.data("openlibrary-books-api-jscmd-data-bookwyrm.json")
/// let server = LoopbackHTTPServer { request in
///     request.path == "/api/books" ? ScriptedResponse(body: Array(books)) : .notFound
/// }
/// let port = try server.start()
/// defer { server.stop() }
/// // … point the client at server.baseURL …
/// #expect(server.requests.count == 1)
/// #expect(server.acceptedConnections == 1)
/// ```
///
/// Always call ``stop()``: the server's threads keep it alive until then.
///
/// Thread safety: all state is behind a `Mutex`; every member may be used from any thread.
public final class LoopbackHTTPServer: Sendable {
    private struct State {
        var listener: Int32 = -1
        var port: UInt16?
        var isStopping = false
        var openConnections: [Int32: Int] = [:]   // descriptor -> connection id
        var acceptedConnections = 0
        var requests: [RecordedRequest] = []
        var inFlight = 0
        var maxInFlight = 0
        var startInstant: ContinuousClock.Instant?
    }

    private let handler: @Sendable (HTTPRequestHead) -> ScriptedResponse
    private let timeSource: (@Sendable () -> Duration)?
    private let recordsRequestBodies: Bool
    private let state = Mutex(State())
    private let threads = DispatchGroup()

    /// Creates a server; call ``start()`` to listen.
    /// - Parameters:
    ///   - timeSource: what ``RecordedRequest/arrival`` is measured with; by default the time
    ///     since ``start()`` on the continuous clock. Pass `{ clock.now.offset }` to record
    ///     arrivals on a manual clock.
    ///   - recordsRequestBodies: whether ``requests`` keep each request's body (the handler always
    ///     gets it); `false` keeps a server that receives many large uploads small.
    ///   - handler: decides the answer to each request; called on a connection thread.
    public init(timeSource: (@Sendable () -> Duration)? = nil, recordsRequestBodies: Bool = true,
                handler: @escaping @Sendable (HTTPRequestHead) -> ScriptedResponse) {
        self.timeSource = timeSource
        self.recordsRequestBodies = recordsRequestBodies
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// Starts listening on 127.0.0.1 on a free port (or on `port` when it is not 0).
    /// - Returns: the port.
    /// - Throws: ``LoopbackServerError`` if the socket cannot be set up (or `port` is taken).
    ///   Calling `start()` on a running server returns its port.
    @discardableResult
    public func start(port requestedPort: UInt16 = 0) throws(LoopbackServerError) -> UInt16 {
        if let port = state.withLock({ $0.port }) { return port }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw LoopbackServerError(call: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requestedPort.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(listener)
            throw LoopbackServerError(call: "bind(127.0.0.1:\(requestedPort))", code: code)
        }
        guard listen(listener, 128) == 0 else {
            let code = errno
            close(listener)
            throw LoopbackServerError(call: "listen", code: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(listener)
            throw LoopbackServerError(call: "getsockname", code: code)
        }
        let port = UInt16(bigEndian: address.sin_port)
        state.withLock {
            $0.listener = listener
            $0.port = port
            $0.startInstant = .now
        }
        spawn { [self] in acceptLoop(listener) }
        return port
    }

    /// The port, once started.
    public var port: UInt16? { state.withLock { $0.port } }

    /// `http://127.0.0.1:<port>`, once started (empty before).
    public var baseURL: String { port.map { "http://127.0.0.1:\($0)" } ?? "" }

    /// Every request received so far, in arrival order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Connections accepted so far (a client that reuses connections keeps this low).
    public var acceptedConnections: Int { state.withLock { $0.acceptedConnections } }

    /// Connections open right now.
    public var openConnectionCount: Int { state.withLock { $0.openConnections.count } }

    /// The most requests that were being handled at the same moment.
    public var maxConcurrentRequests: Int { state.withLock { $0.maxInFlight } }

    /// Forgets recorded requests and resets the counters (connections stay open).
    public func resetRecords() {
        state.withLock {
            $0.requests.removeAll()
            $0.acceptedConnections = 0
            $0.maxInFlight = $0.inFlight
        }
    }

    /// Stops listening, closes every connection (stalled ones included) and waits for the
    /// server's threads to end. Safe to call more than once.
    public func stop() {
        let wasRunning = state.withLock { state -> Bool in
            guard state.port != nil, !state.isStopping else { return false }
            state.isStopping = true
            if state.listener >= 0 { shutdown(state.listener, Int32(SHUT_RDWR)) }
            for connection in state.openConnections.keys { shutdown(connection, Int32(SHUT_RDWR)) }
            return true
        }
        guard wasRunning else { return }
        _ = threads.wait(timeout: .now() + 10)
        state.withLock { state in
            if state.listener >= 0 { close(state.listener) }
            state.listener = -1
        }
    }

    // MARK: - Threads

    private func spawn(_ body: @escaping @Sendable () -> Void) {
        threads.enter()
        let group = threads
        let thread = Thread {
            body()
            group.leave()
        }
        thread.name = "loopback-http"
        thread.start()
    }

    private var isStopping: Bool { state.withLock { $0.isStopping } }

    private func acceptLoop(_ listener: Int32) {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return   // the listener was shut down
            }
            var noDelay: Int32 = 1
            setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let connectionID = state.withLock { state -> Int? in
                guard !state.isStopping else { return nil }
                state.acceptedConnections += 1
                state.openConnections[connection] = state.acceptedConnections
                return state.acceptedConnections
            }
            guard let connectionID else {
                close(connection)
                return
            }
            spawn { [self] in serve(connection, id: connectionID) }
        }
    }

    /// Closes connection `id` once; the descriptor number may already belong to a newer connection.
    private func closeConnection(_ connection: Int32, id: Int, reset: Bool = false) {
        state.withLock { state in
            guard state.openConnections[connection] == id else { return }
            state.openConnections[connection] = nil
            if reset {
                var option = linger(l_onoff: 1, l_linger: 0)
                setsockopt(connection, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            }
            close(connection)
        }
    }

    private func serve(_ connection: Int32, id connectionID: Int) {
        var buffer: [UInt8] = []
        defer { closeConnection(connection, id: connectionID) }
        while !isStopping {
            guard let (head, consumed) = readRequest(connection, buffer: &buffer, connectionID: connectionID) else { return }
            buffer.removeFirst(consumed)
            let recorded = state.withLock { state -> HTTPRequestHead in
                var numbered = head
                numbered.sequenceNumber = state.requests.count + 1
                let arrival = timeSource?() ?? (state.startInstant.map { $0.duration(to: .now) } ?? .zero)
                var kept = numbered
                if !recordsRequestBodies { kept.body = [] }
                state.requests.append(RecordedRequest(head: kept, arrival: arrival))
                state.inFlight += 1
                state.maxInFlight = max(state.maxInFlight, state.inFlight)
                return numbered
            }
            let response = handler(recorded)
            let keepOpen = respond(response, to: recorded, on: connection)
            state.withLock { $0.inFlight -= 1 }
            if !keepOpen { return }
        }
    }

    /// Sends `response` (or its fault); returns whether the connection stays open.
    private func respond(_ response: ScriptedResponse, to request: HTTPRequestHead, on connection: Int32) -> Bool {
        let connectionID = request.connectionID
        if response.latency > .zero, !wait(response.latency, watching: connection) { return false }
        switch response.fault {
        case .resetConnection?:
            closeConnection(connection, id: connectionID, reset: true)
            return false
        case .closeWithoutResponse?:
            return false
        case .stall?:
            _ = wait(nil, watching: connection)
            return false
        case .truncateBody(let sent)?:
            let bytes = encode(response, request: request, closing: true)
            let cut = bytes.count - response.body.count + max(0, min(sent, response.body.count - 1))
            _ = sendAll(connection, Array(bytes.prefix(cut)))
            return false
        case nil:
            let closing = response.closesConnection || wantsClose(request)
            if let streamed = response.streamedBody {
                return stream(streamed, response: response, request: request, on: connection, closing: closing)
            }
            guard sendAll(connection, encode(response, request: request, closing: closing)) else { return false }
            return !closing
        }
    }

    /// Sends the head, lets `streamed` write the body, then ends it; returns whether the
    /// connection stays open.
    private func stream(_ streamed: StreamedBody, response: ScriptedResponse, request: HTTPRequestHead,
                        on connection: Int32, closing: Bool) -> Bool {
        let chunked = streamed.framing == .chunked
        var head = "HTTP/1.1 \(response.status) \(ScriptedResponse.reasonPhrase(response.status))\r\n"
        for (name, value) in response.headers
        where !["content-length", "transfer-encoding"].contains(name.lowercased()) {
            head += "\(name): \(value)\r\n"
        }
        if chunked { head += "Transfer-Encoding: chunked\r\n" }
        if closing || !chunked { head += "Connection: close\r\n" }
        head += "\r\n"
        guard sendAll(connection, Array(head.utf8)) else { return false }
        if request.method == "HEAD" { return !(closing || !chunked) }
        let writer = ResponseStream(
            send: { [self] bytes in
                guard !isStopping else { return false }
                guard chunked else { return sendAll(connection, bytes) }
                return sendAll(connection, Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10])
            },
            wait: { [self] duration in wait(duration, watching: connection) })
        switch streamed.write(writer) {
        case .dropped:
            return false
        case .reset:
            closeConnection(connection, id: request.connectionID, reset: true)
            return false
        case .finished:
            guard chunked else { return false }
            guard sendAll(connection, Array("0\r\n\r\n".utf8)) else { return false }
            return !closing
        }
    }

    private func wantsClose(_ request: HTTPRequestHead) -> Bool {
        let connectionHeader = request.header("Connection")?.lowercased() ?? ""
        if connectionHeader.contains("close") { return true }
        return request.version == "HTTP/1.0" && !connectionHeader.contains("keep-alive")
    }

    private func encode(_ response: ScriptedResponse, request: HTTPRequestHead, closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(ScriptedResponse.reasonPhrase(response.status))\r\n"
        var hasLength = false
        for (name, value) in response.headers {
            if name.lowercased() == "content-length" { hasLength = true }
            head += "\(name): \(value)\r\n"
        }
        if !hasLength { head += "Content-Length: \(response.body.count)\r\n" }
        if closing { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + (request.method == "HEAD" ? [] : response.body)
    }

    private func sendAll(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Waits `duration` (or forever when `nil`) unless the server stops or the client closes.
    /// Returns `true` if the full duration passed.
    private func wait(_ duration: Duration?, watching connection: Int32) -> Bool {
        let deadline = duration.map { ContinuousClock.now.advanced(by: $0) }
        while !isStopping {
            var timeout: Int32 = 50
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return true }
                let (seconds, attoseconds) = left.components
                timeout = Int32(min(50, seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
            }
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeout)
            if ready > 0 {
                // Readable during a wait: either more pipelined data (leave it) or a close.
                var probe: UInt8 = 0
                let peeked = recv(connection, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                if peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return false }
                if descriptor.revents & Int16(POLLHUP | POLLERR) != 0 { return false }
                if duration == nil { return false }   // a stalled request's client sent more: give up on it
            }
        }
        return false
    }

    /// Reads one request head (and body, if any) from `connection`.
    private func readRequest(_ connection: Int32, buffer: inout [UInt8], connectionID: Int)
        -> (HTTPRequestHead, consumed: Int)? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var chunk = [UInt8](repeating: 0, count: 65_536)
        func receiveMore() -> Bool {
            while true {
                let count = recv(connection, &chunk, chunk.count, 0)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                buffer.append(contentsOf: chunk[..<count])
                return true
            }
        }
        while true {
            if let end = buffer.firstRange(of: terminator) {
                guard var head = Self.parseHead(Array(buffer[..<end.lowerBound]), connectionID: connectionID)
                else { return nil }
                let bodyStart = end.upperBound
                let isChunked = head.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
                let length = isChunked ? 0 : Int(head.header("Content-Length") ?? "0") ?? 0
                if (isChunked || length > 0), buffer.count == bodyStart,
                   head.header("Expect")?.lowercased() == "100-continue" {
                    guard sendAll(connection, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return nil }
                }
                if isChunked {
                    while true {
                        switch Self.decodeChunkedBody(buffer, from: bodyStart) {
                        case .complete(let body, let end):
                            head.body = body
                            return (head, end)
                        case .malformed:
                            return nil
                        case .incomplete:
                            guard receiveMore() else { return nil }
                        }
                    }
                }
                while buffer.count < bodyStart + length {
                    guard receiveMore() else { return nil }
                }
                head.body = Array(buffer[bodyStart..<(bodyStart + length)])
                return (head, bodyStart + length)
            }
            guard receiveMore() else { return nil }
            if buffer.count > 1 << 20, buffer.firstRange(of: terminator) == nil {
                return nil   // no sane test request has a 1 MiB head
            }
        }
    }

    enum ChunkedBody: Equatable {
        case complete(body: [UInt8], end: Int)
        case incomplete
        case malformed
    }

    /// Decodes a `Transfer-Encoding: chunked` body that starts at `start` (chunk extensions and
    /// trailer fields are skipped).
    static func decodeChunkedBody(_ buffer: [UInt8], from start: Int) -> ChunkedBody {
        let lineEnd: [UInt8] = [13, 10]
        var body: [UInt8] = []
        var position = start
        while true {
            guard let sizeLineEnd = buffer[position...].firstRange(of: lineEnd) else { return .incomplete }
            let sizeText = String(decoding: buffer[position..<sizeLineEnd.lowerBound], as: UTF8.self)
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { return .malformed }
            position = sizeLineEnd.upperBound
            if size == 0 {
                // Trailer fields, then an empty line.
                while true {
                    guard let trailerEnd = buffer[position...].firstRange(of: lineEnd) else { return .incomplete }
                    let isEmptyLine = trailerEnd.lowerBound == position
                    position = trailerEnd.upperBound
                    if isEmptyLine { return .complete(body: body, end: position) }
                }
            }
            guard buffer.count >= position + size + 2 else { return .incomplete }
            body.append(contentsOf: buffer[position..<(position + size)])
            guard buffer[position + size] == 13, buffer[position + size + 1] == 10 else { return .malformed }
            position += size + 2
        }
    }

    static func parseHead(_ bytes: [UInt8], connectionID: Int) -> HTTPRequestHead? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        let target = String(requestLine[1])
        let path: String
        let query: String?
        if let question = target.firstIndex(of: "?") {
            path = String(target[..<question])
            query = String(target[target.index(after: question)...])
        } else {
            path = target
            query = nil
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return HTTPRequestHead(method: String(requestLine[0]), target: target, path: path, query: query,
                               version: String(requestLine[2]), headers: headers, body: [],
                               connectionID: connectionID, sequenceNumber: 0)
    }
}
