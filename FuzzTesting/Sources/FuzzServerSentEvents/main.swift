// Fuzz target: the server-sent event parser of `bookpipe scan`. The same bytes fed whole and fed
// in pieces cut at boundaries taken from the input must give the same events, the same last
// event id, reconnection time and comment count. A second connection started after any piece
// must begin from nothing but the last event id and the reconnection time.
import BookpipeScan

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerSentEvents(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard input.count >= 2 else { return 0 }
    // The first two bytes seed the chunk sizes; the rest is the stream.
    var seed = UInt32(input[0]) << 8 | UInt32(input[1])
    let stream = Array(input.dropFirst(2))

    var whole = ServerSentEventParser()
    let expected = whole.feed(stream)

    var pieces = ServerSentEventParser()
    var events: [ServerSentEvent] = []
    var offset = 0
    while offset < stream.count {
        seed = seed &* 1_103_515_245 &+ 12_345
        let size = 1 + Int((seed >> 16) % 17)
        let end = min(stream.count, offset + size)
        events += pieces.feed(stream[offset..<end])
        offset = end
    }
    precondition(events == expected, "events differ when the stream is fed in pieces")
    precondition(pieces.lastEventID == whole.lastEventID, "last event id differs when fed in pieces")
    precondition(pieces.reconnectionTime == whole.reconnectionTime, "reconnection time differs when fed in pieces")
    precondition(pieces.comments == whole.comments, "comment count differs when fed in pieces")

    // A new connection after the stream: the same bytes again give the same events, with ids
    // starting from the last one dispatched (nothing of a cut event carries over).
    var again = whole
    again.startNewConnection()
    var fresh = ServerSentEventParser(lastEventID: whole.lastEventID)
    precondition(again.feed(stream) == fresh.feed(stream), "a new connection kept more than the last event id")
    return 0
}
