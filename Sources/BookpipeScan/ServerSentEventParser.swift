/// One event of a server-sent event stream.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type (`event:`); `message` when the event named none.
    public var type: String
    /// The data: every `data:` line of the event, joined with line feeds.
    public var data: String
    /// The stream's last event id when the event was dispatched (`id:` of this or an earlier
    /// event); empty when none was set.
    public var lastEventID: String

    /// Creates an event.
    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}

/// Reads a `text/event-stream` body as the WHATWG HTML standard's "event stream interpretation"
/// says, fed with bytes as they arrive (a chunk may end anywhere, even inside a character or
/// between a CR and its LF).
///
/// - A UTF-8 byte order mark at the very start is skipped; lines end with CRLF, LF or CR.
/// - `event:` sets the type, `data:` lines are joined with line feeds, `id:` sets the last event
///   id (unless it holds U+0000), `retry:` with digits only sets ``reconnectionTime``; one space
///   after the colon is removed; a line without a colon is a field with an empty value; unknown
///   fields are ignored.
/// - A line starting with `:` is a comment (servers send them as heartbeats): counted in
///   ``comments``, otherwise ignored.
/// - A blank line dispatches the event; an event without data is not dispatched (its `id:`
///   still counts). An `id:` becomes ``lastEventID`` only when its event is dispatched, so the id
///   of an event cut off by the end of a connection is never sent as `Last-Event-ID`.
/// - Each connection is a new stream: call ``startNewConnection(resumingFrom:)`` before feeding
///   the bytes of the next one. What was left of the last connection (a partial line, an event
///   not yet ended by a blank line) is discarded; only ``lastEventID`` and
///   ``reconnectionTime`` carry over.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = parser.feed(Array("event: result\ndata: {\"title\": \"Dune\"}\nid: 1\n\n".utf8))
/// // [ServerSentEvent(type: "result", data: "{\"title\": \"Dune\"}", lastEventID: "1")]
/// ```
public struct ServerSentEventParser: Sendable {
    /// The id of the last event dispatched (an `id:` of that event or an earlier one), sent as
    /// `Last-Event-ID` when reconnecting; empty: none.
    public private(set) var lastEventID = ""
    /// The reconnection time the server asked for with `retry:`, if any.
    public private(set) var reconnectionTime: Duration?
    /// Comment lines read so far (heartbeats).
    public private(set) var comments = 0

    private var line: [UInt8] = []
    /// The `id:` read for the event being parsed (the standard's "last event ID buffer"); it
    /// becomes ``lastEventID`` when that event is dispatched.
    private var pendingEventID = ""
    private var eventType = ""
    private var data = ""
    private var hasData = false
    private var isAtStart = true
    private var startBytes: [UInt8] = []
    private var lastWasCR = false

    /// Creates a parser for a new stream.
    /// - Parameter lastEventID: the id the stream resumes from (kept until an `id:` changes it).
    public init(lastEventID: String = "") {
        self.lastEventID = lastEventID
        self.pendingEventID = lastEventID
    }

    /// Starts reading a new connection's stream: the partial line and the event not yet
    /// dispatched are discarded (the end of a connection never completes an event), the byte
    /// order mark is looked for again, and only ``lastEventID`` (or `lastEventID` when given: the
    /// event a caller wants to resume after), ``reconnectionTime`` and ``comments`` are kept.
    /// - Parameter lastEventID: the id to resume from instead of the last one dispatched; nil:
    ///   keep ``lastEventID``.
    public mutating func startNewConnection(resumingFrom lastEventID: String? = nil) {
        if let lastEventID { self.lastEventID = lastEventID }
        pendingEventID = self.lastEventID
        line.removeAll(keepingCapacity: true)
        eventType = ""
        data = ""
        hasData = false
        isAtStart = true
        startBytes = []
        lastWasCR = false
    }

    /// Reads more bytes of the stream.
    /// - Parameter bytes: the next bytes, as received.
    /// - Returns: the events completed by these bytes, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if isAtStart {
                // Skip one UTF-8 byte order mark (EF BB BF) at the very start.
                startBytes.append(byte)
                let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
                if startBytes.count <= 3, startBytes == Array(bom.prefix(startBytes.count)) {
                    if startBytes.count == 3 { isAtStart = false; startBytes = [] }
                    continue
                }
                isAtStart = false
                let pending = startBytes
                startBytes = []
                for pendingByte in pending { take(pendingByte, into: &events) }
                continue
            }
            take(byte, into: &events)
        }
        return events
    }

    private mutating func take(_ byte: UInt8, into events: inout [ServerSentEvent]) {
        switch byte {
        case 0x0A where lastWasCR:
            lastWasCR = false  // the LF of a CRLF
        case 0x0A, 0x0D:
            lastWasCR = byte == 0x0D
            endLine(into: &events)
        default:
            lastWasCR = false
            line.append(byte)
        }
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            dispatch(into: &events)
            return
        }
        if line[0] == UInt8(ascii: ":") {
            comments += 1
            return
        }
        let field: String
        var value: String
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: line[..<colon], as: UTF8.self)
            var start = colon + 1
            if start < line.count, line[start] == UInt8(ascii: " ") { start += 1 }
            value = String(decoding: line[start...], as: UTF8.self)
        } else {
            field = String(decoding: line, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event":
            eventType = value
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id":
            if !value.unicodeScalars.contains("\u{0}") { pendingEventID = value }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int64(value) {
                reconnectionTime = .milliseconds(milliseconds)
            }
            value = ""
        default:
            break
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        lastEventID = pendingEventID
        defer {
            eventType = ""
            data = ""
            hasData = false
        }
        guard hasData else { return }
        events.append(ServerSentEvent(type: eventType.isEmpty ? "message" : eventType, data: data,
                                      lastEventID: lastEventID))
    }
}
