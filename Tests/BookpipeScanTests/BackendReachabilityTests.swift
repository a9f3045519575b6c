import BookpipeHTTP
import BookpipeScan
import Testing

/// The scan run's use of BookpipeHTTP's reachability rule: photos are the units counted, and the
/// client's answers (``ScanFailure``) reached the backend.
@Suite struct BackendReachabilityTests {
    @Test("The run stops on the N-th photo in a row given up unreachable, once; an upload that reached the backend resets the count")
    func countsPhotos() {
        let reachability = BackendReachability(photosInARowToStop: 3)
        #expect(reachability.photoGaveUp(cause: "connection refused") == nil)
        #expect(reachability.photoGaveUp(cause: "connection refused") == nil)
        reachability.record(.reachedBackend)
        #expect(reachability.photosUnreachableInARow == 0)
        reachability.record(.couldNotReachBackend(cause: "connection refused"))
        #expect(reachability.photoGaveUp(cause: "connection refused") == nil)
        #expect(reachability.photoGaveUp(cause: "connection refused") == nil)
        #expect(reachability.photoGaveUp(cause: "connection refused") == UnreachableBackend(inARow: 3, cause: "connection refused"))
        #expect(reachability.photoGaveUp(cause: "connection refused") == nil)
        #expect(reachability.stop == UnreachableBackend(inARow: 3, cause: "connection refused"))
    }

    @Test("Fewer than 2 in a row never stops a run: one unlucky photo is not a backend that is down")
    func atLeastTwo() {
        #expect(BackendReachability(photosInARowToStop: 1).photosInARowToStop == 2)
        #expect(ScanSettings(concurrency: 1).photosUnreachableInARowToStop == 2)
        #expect(ScanSettings(concurrency: 4).photosUnreachableInARowToStop == 4)
        #expect(ScanSettings(concurrency: 8).photosUnreachableInARowToStop == 8)
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
