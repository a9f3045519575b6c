import BookpipeEnrichment
import BookpipeScan
import Testing

/// The rule that stops a scan run when the backend cannot be reached, pure: the test plays the
/// uploads and photos in the order they end.
@Suite struct BackendReachabilityStateMachineTests {
    /// What happened, in order: `u` an upload that reached the backend, `x` a photo given up unreachable.
    static func play(_ script: String, photosInARowToStop: Int)
        -> (machine: BackendReachabilityStateMachine, stops: [Int]) {
        var machine = BackendReachabilityStateMachine(photosInARowToStop: photosInARowToStop)
        var stops: [Int] = []
        for (position, step) in script.enumerated() {
            switch step {
            case "u": machine.uploadReachedBackend()
            case "x": if machine.photoGaveUp(cause: "connection refused") != nil { stops.append(position) }
            default: Issue.record("unknown step \(step)")
            }
        }
        return (machine, stops)
    }

    @Test("The run stops on the N-th photo in a row given up unreachable, and says so once",
          arguments: [(2, "xx", 1), (4, "xxxx", 3), (4, "xxxxxxx", 3), (3, "uxxuxxx", 6)])
    func stopsOnTheNthInARow(photosInARowToStop: Int, script: String, stopsAt: Int) {
        let (machine, stops) = Self.play(script, photosInARowToStop: photosInARowToStop)
        #expect(stops == [stopsAt])
        #expect(machine.stop == UnreachableBackend(photosInARow: photosInARowToStop, cause: "connection refused"))
    }

    @Test("An upload that reached the backend between photos given up unreachable starts the count again: no stop",
          arguments: ["xuxuxuxu", "xxxuxxxuxxx", "uuuxxxu"])
    func reachedUploadResetsTheCount(script: String) {
        let (machine, stops) = Self.play(script, photosInARowToStop: 4)
        #expect(stops.isEmpty)
        #expect(machine.stop == nil)
        #expect(machine.photosUnreachableInARow == script.reversed().prefix { $0 == "x" }.count)
    }

    @Test("The decision is final: uploads that reach the backend after the stop change nothing")
    func stopIsFinal() {
        let (machine, stops) = Self.play("xxuuxx", photosInARowToStop: 2)
        #expect(stops == [1])
        #expect(machine.stop?.photosInARow == 2)
        #expect(machine.photosUnreachableInARow == 2)
    }

    @Test("Fewer than 2 in a row never stops a run: one unlucky photo is not a backend that is down")
    func atLeastTwo() {
        #expect(BackendReachabilityStateMachine(photosInARowToStop: 1).photosInARowToStop == 2)
        #expect(ScanSettings(concurrency: 1).photosUnreachableInARowToStop == 2)
        #expect(ScanSettings(concurrency: 4).photosUnreachableInARowToStop == 4)
        #expect(ScanSettings(concurrency: 8).photosUnreachableInARowToStop == 8)
        let (machine, stops) = Self.play("x", photosInARowToStop: 1)
        #expect(stops.isEmpty && machine.stop == nil)
    }

    static let url = "http://127.0.0.1:9/v3/jobs/scans"

    @Test("Only uploads that got no connection or timed out could not reach the backend; an answer or a lost connection reached it",
          arguments: [
            (HTTPError.couldNotConnect(url: url, reason: "connection refused", method: .post) as any Error,
             UploadReach.couldNotReachBackend(cause: "connection refused")),
            (HTTPError.couldNotConnect(url: url, reason: "host name not resolved", method: .post),
             .couldNotReachBackend(cause: "host name not resolved")),
            (HTTPError.timedOut(url: url, limit: .seconds(120), detail: "Operation timed out", method: .post),
             .couldNotReachBackend(cause: "timed out after 120.0 seconds")),
            (HTTPError.connectionFailed(url: url, reason: "Recv failure: Connection reset by peer", method: .post), .reachedBackend),
            (HTTPError.truncatedBody(url: url, received: 3, expected: 10, method: .post), .reachedBackend),
            (HTTPError.malformedResponse(url: url, reason: "weird", method: .post), .reachedBackend),
            (ScanFailure.uploadRefused(status: 413, reason: "image too large"), .reachedBackend),
            (ScanFailure.badAnswer("HTTP 202 without a jobId"), .reachedBackend),
            (HTTPError.invalidURL(url, reason: "bad"), .notSent),
            (HTTPError.shutDown(url: url, method: .post), .notSent),
            (CancellationError(), .notSent),
          ] as [(any Error, UploadReach)])
    func classifiesUploadFailures(error: any Error, expected: UploadReach) {
        #expect(UploadReach(failure: error) == expected)
    }
}
