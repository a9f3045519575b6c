import BookpipeScan
import PropertyBased
import Testing

/// The event-stream parser's result does not depend on where the network cut the bytes (issue 24).
@Suite struct ServerSentEventParserPropertyTests {
    /// Lines and line ends streams are made of: fields, comments, blank lines, a BOM, CR, LF,
    /// CRLF, multi-byte text.
    static let pieces = [
        "event: result", "event: progress", "data: {\"title\":\"Die Verwandlung\"}", "data:", "data", "data:  x",
        "id: 7", "id: 8", "id", "retry: 300", "retry: x", ": heartbeat", ":", "\n", "\n", "\r\n", "\r", "\r\n\r\n",
        "\n\n", "\u{FEFF}", "ü", "日本", "📚", "field: value",
    ]
    static let streams = Gen<String?>.element(of: pieces).map { $0 ?? "" }.array(of: 0...40).map { Array($0.joined().utf8) }
    static let cuts = Gen.int(in: 1...9).array(of: 1...40)

    static func feed(_ bytes: [UInt8], cutEvery sizes: [Int]) -> (events: [ServerSentEvent], parser: ServerSentEventParser) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        var offset = 0
        var index = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + sizes[index % sizes.count])
            events += parser.feed(bytes[offset..<end])
            offset = end
            index += 1
        }
        return (events, parser)
    }

    @Test("The same bytes cut into any pieces give the same events, last event id, reconnection time and comments")
    func chunkingDoesNotMatter() async {
        await propertyCheck(count: 1000, input: Self.streams, Self.cuts) { bytes, sizes in
            let whole = Self.feed(bytes, cutEvery: [max(1, bytes.count)])
            let pieces = Self.feed(bytes, cutEvery: sizes)
            #expect(pieces.events == whole.events)
            #expect(pieces.parser.lastEventID == whole.parser.lastEventID)
            #expect(pieces.parser.reconnectionTime == whole.parser.reconnectionTime)
            #expect(pieces.parser.comments == whole.parser.comments)
        }
    }

    @Test("A connection cut anywhere, then a new one: the events are those of the first connection's finished events and the second's, nothing glued")
    func cutConnectionsDoNotGlue() async {
        await propertyCheck(count: 1000, input: Self.streams, Self.streams, Gen.int(in: 0...400)) { first, second, cut in
            let cutFirst = Array(first.prefix(cut))
            var parser = ServerSentEventParser()
            let before = parser.feed(cutFirst)
            let lastID = parser.lastEventID
            parser.startNewConnection()
            let after = parser.feed(second)
            var fresh = ServerSentEventParser(lastEventID: lastID)
            #expect(after == fresh.feed(second))
            #expect(before == Self.feed(cutFirst, cutEvery: [1]).events)
        }
    }
}
