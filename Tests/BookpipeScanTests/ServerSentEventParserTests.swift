import BookpipeScan
import Testing

@Suite struct ServerSentEventParserTests {
    private func parse(_ text: String, chunkSize: Int = .max) -> (events: [ServerSentEvent], parser: ServerSentEventParser) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + max(1, min(chunkSize, bytes.count)))
            events += parser.feed(bytes[start..<end])
            start = end
        }
        return (events, parser)
    }

    @Test("An event's type, data and id are read; a blank line dispatches it")
    func readsOneEvent() {
        let (events, parser) = parse("event: result\ndata: {\"title\": \"Dune\"}\nid: 7\n\n")
        #expect(events == [ServerSentEvent(type: "result", data: "{\"title\": \"Dune\"}", lastEventID: "7")])
        #expect(parser.lastEventID == "7")
    }

    @Test("Several data lines are joined with line feeds", arguments: [Int.max, 1, 3])
    func joinsDataLines(chunkSize: Int) {
        let (events, _) = parse("data: {\"title\":\ndata:  \"Dune\"}\ndata\n\n", chunkSize: chunkSize)
        #expect(events.map(\.data) == ["{\"title\":\n \"Dune\"}\n"])
        #expect(events.map(\.type) == ["message"])
    }

    @Test("CRLF, LF and CR all end lines, also when a CRLF is split between chunks", arguments: [Int.max, 1, 2, 5])
    func lineEndings(chunkSize: Int) {
        let (events, _) = parse("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\revent: c\ndata: 3\n\n", chunkSize: chunkSize)
        #expect(events.map(\.type) == ["a", "b", "c"])
        #expect(events.map(\.data) == ["1", "2", "3"])
    }

    @Test("Comment lines are heartbeats: counted, never events")
    func comments() {
        let (events, parser) = parse(": heartbeat\n\n:\ndata: x\n\n")
        #expect(events.map(\.data) == ["x"])
        #expect(parser.comments == 2)
    }

    @Test("A leading byte order mark is skipped once; a second one is data")
    func byteOrderMark() {
        let (events, _) = parse("\u{FEFF}data: a\n\n", chunkSize: 1)
        #expect(events.map(\.data) == ["a"])
        let (second, _) = parse("\u{FEFF}\u{FEFF}data: a\n\n")
        #expect(second.isEmpty)  // the field name is "\u{FEFF}data", an unknown field
    }

    @Test("retry with digits sets the reconnection time; anything else is ignored")
    func retry() {
        #expect(parse("retry: 1500\n\n").parser.reconnectionTime == .milliseconds(1500))
        #expect(parse("retry: 1.5\n\n").parser.reconnectionTime == nil)
    }

    @Test("An event without data is not dispatched, but its id counts; an id with NUL is ignored")
    func idWithoutData() {
        let (events, parser) = parse("id: 3\n\nid: 4\u{0}\n\ndata: x\n\n")
        #expect(events == [ServerSentEvent(data: "x", lastEventID: "3")])
        #expect(parser.lastEventID == "3")
    }

    @Test("A field without a colon has an empty value; only one space after the colon is removed")
    func fieldShapes() {
        let (events, _) = parse("data\ndata:  two spaces\n\n")
        #expect(events.map(\.data) == ["\n two spaces"])
    }

    @Test("An unfinished event at the end of the stream is not dispatched")
    func unfinishedEvent() {
        #expect(parse("data: cut").events.isEmpty)
        #expect(parse("data: cut\n").events.isEmpty)
    }

    @Test("An id becomes the last event id only when its event is dispatched: the id of an event cut off is never resumed from")
    func idCountsOnDispatch() {
        let (events, parser) = parse("event: result\nid: 1\ndata: {}\n\nevent: result\nid: 2\ndata: {\"ti")
        #expect(events.map(\.lastEventID) == ["1"])
        #expect(parser.lastEventID == "1")
    }

    @Test("A new connection discards the event the last one cut off; only the last event id and the reconnection time carry over")
    func newConnectionDiscardsTheCutEvent() {
        var parser = ServerSentEventParser()
        let first = parser.feed(Array("retry: 300\nevent: result\nid: 1\ndata: {\"title\":\"A\"}\n\nevent: result\nid: 2\ndata: {\"title\":\"Die Verwandlung\",\"author\":\"Franz Ka".utf8))
        #expect(first.map(\.data) == [#"{"title":"A"}"#])
        parser.startNewConnection()
        #expect(parser.lastEventID == "1")
        let second = parser.feed(Array("\u{FEFF}retry: 300\n\nevent: result\nid: 2\ndata: {\"title\":\"Die Verwandlung\"}\n\n".utf8))
        #expect(second == [ServerSentEvent(type: "result", data: #"{"title":"Die Verwandlung"}"#, lastEventID: "2")])
        #expect(parser.reconnectionTime == .milliseconds(300))
    }

    @Test("A new connection can resume from an earlier id than the last one dispatched")
    func resumeFromEarlierID() {
        var parser = ServerSentEventParser()
        _ = parser.feed(Array("id: 1\ndata: a\n\nid: 2\ndata: b\n\n".utf8))
        parser.startNewConnection(resumingFrom: "1")
        #expect(parser.lastEventID == "1")
        #expect(parser.feed(Array("data: c\n\n".utf8)) == [ServerSentEvent(data: "c", lastEventID: "1")])
    }
}
