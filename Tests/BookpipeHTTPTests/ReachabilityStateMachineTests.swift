import BookpipeHTTP
import Testing

/// The rule that gives up a server that cannot be reached, pure: the test plays the attempts and
/// the units of work in the order they end.
@Suite struct ReachabilityStateMachineTests {
    /// What happened, in order: `r` an attempt that reached the server, `x` a unit given up unreachable.
    static func play(_ script: String, inARowToStop: Int) -> (machine: ReachabilityStateMachine, stops: [Int]) {
        var machine = ReachabilityStateMachine(givenUpInARowToStop: inARowToStop)
        var stops: [Int] = []
        for (position, step) in script.enumerated() {
            switch step {
            case "r": machine.reached()
            case "x": if machine.gaveUpUnreachable(cause: "connection refused") != nil { stops.append(position) }
            default: Issue.record("unknown step \(step)")
            }
        }
        return (machine, stops)
    }

    @Test("The server is given up on the N-th unit in a row given up unreachable, and that is said once",
          arguments: [(2, "xx", 1), (4, "xxxx", 3), (4, "xxxxxxx", 3), (3, "rxxrxxx", 6)])
    func stopsOnTheNthInARow(inARowToStop: Int, script: String, stopsAt: Int) {
        let (machine, stops) = Self.play(script, inARowToStop: inARowToStop)
        #expect(stops == [stopsAt])
        #expect(machine.stop == Unreachable(inARow: inARowToStop, cause: "connection refused"))
    }

    @Test("An attempt that reached the server between units given up unreachable starts the count again: no stop",
          arguments: ["xrxrxrxr", "xxxrxxxrxxx", "rrrxxxr"])
    func reachedAttemptResetsTheCount(script: String) {
        let (machine, stops) = Self.play(script, inARowToStop: 4)
        #expect(stops.isEmpty)
        #expect(machine.stop == nil)
        #expect(machine.unreachableInARow == script.reversed().prefix { $0 == "x" }.count)
    }

    @Test("The decision is final: attempts that reach the server after the stop change nothing")
    func stopIsFinal() {
        let (machine, stops) = Self.play("xxrrxx", inARowToStop: 2)
        #expect(stops == [1])
        #expect(machine.stop?.inARow == 2)
        #expect(machine.unreachableInARow == 2)
    }

    @Test("Fewer than 2 in a row never stops a run: one unlucky request is not a server that is down")
    func atLeastTwo() {
        #expect(ReachabilityStateMachine(givenUpInARowToStop: 1).givenUpInARowToStop == 2)
        let (machine, stops) = Self.play("x", inARowToStop: 1)
        #expect(stops.isEmpty && machine.stop == nil)
    }

    static let url = "https://openlibrary.org/api/books"

    @Test("Only attempts that got no connection (refused, not resolved, TLS) or timed out could not reach the server",
          arguments: [
            (HTTPError.couldNotConnect(url: url, reason: "connection refused", method: .get) as any Error,
             Reach.couldNotConnect(cause: "connection refused")),
            (HTTPError.couldNotConnect(url: url, reason: "host name not resolved", method: .get),
             .couldNotConnect(cause: "host name not resolved")),
            (HTTPError.couldNotConnect(url: url, reason: "TLS handshake failed: bad certificate", method: .get),
             .couldNotConnect(cause: "TLS handshake failed: bad certificate")),
            (HTTPError.timedOut(url: url, limit: .seconds(30), detail: "Operation timed out", method: .get),
             .couldNotConnect(cause: "timed out after 30.0 seconds")),
            (HTTPError.connectionFailed(url: url, reason: "Recv failure: Connection reset by peer", method: .get), .reached),
            (HTTPError.truncatedBody(url: url, received: 3, expected: 10, method: .get), .reached),
            (HTTPError.malformedResponse(url: url, reason: "weird", method: .get), .reached),
            (HTTPError.invalidURL(url, reason: "bad"), .notSent),
            (HTTPError.shutDown(url: url, method: .get), .notSent),
            (CancellationError(), .notSent),
          ] as [(any Error, Reach)])
    func classifiesFailures(error: any Error, expected: Reach) {
        #expect(Reach(error: error) == expected)
    }
}
