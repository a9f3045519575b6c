import BookpipeCore
import BookpipeScan
import Testing

@Suite struct ScanBackendEventTests {
    private func decode(_ type: String, _ data: String) throws(ScanFailure) -> ScanBackendEvent {
        try ScanBackendEvent(ServerSentEvent(type: type, data: data, lastEventID: "4"))
    }

    @Test("A result keeps its JSON as sent; its fields are judged by the detection rules, not here")
    func result() throws {
        let json = #"{"title":"DUNE","author":null,"isbn":"9780441172719","confidence":0.42,"boundingBox":{"x":0.1,"y":0.2,"width":0.05,"height":0.6}}"#
        guard case .result(let detection) = try decode("result", json) else { Issue.record("not a result"); return }
        #expect(detection.title == "DUNE")
        #expect(detection.json == json)
        // A bad confidence no longer fails the event (it used to drop the detection): the record
        // keeps it for review, as a scan file's detection does (ScanDetectionRulesTests).
        guard case .result(let odd) = try decode("result", #"{"title":"Emma","confidence":1.7}"#) else {
            Issue.record("not a result")
            return
        }
        #expect(odd.title == "Emma")
        guard case .result(let untitled) = try decode("result", #"{"author":"X"}"#) else { Issue.record("not a result"); return }
        #expect(untitled.title == nil)
    }

    @Test("The numbers 0 and 1 are numbers, not booleans: a job of 0 or 1 books completes")
    func zeroAndOne() throws {
        #expect(try decode("complete", #"{"jobId":"j","books":0}"#) == .complete(books: 0))
        #expect(try decode("complete", #"{"jobId":"j","books":1}"#) == .complete(books: 1))
        #expect(throws: ScanFailure.self) { try decode("complete", #"{"jobId":"j","books":true}"#) }
    }

    @Test("A result that is not a JSON object fails with a message quoting what came")
    func invalidJSON() {
        do {
            _ = try decode("result", "{\"title\": ")
            Issue.record("no error")
        } catch {
            #expect(error.description == #"the job's stream sent an unusable event: the result event (id 4) is not a JSON object: "{"title": ""#)
        }
        #expect(throws: ScanFailure.self) { try decode("result", "[1, 2]") }
    }

    @Test("progress, complete and error events are read; unknown ones are passed over")
    func otherEvents() throws {
        #expect(try decode("progress", #"{"stage":"reading","progress":0.5,"message":"m"}"#)
                == .progress(stage: "reading", progress: 0.5, message: "m"))
        #expect(try decode("complete", #"{"jobId":"j","books":3}"#) == .complete(books: 3))
        #expect(try decode("error", #"{"code":"E_MODEL","message":"model down"}"#) == .failed(code: "E_MODEL", message: "model down"))
        #expect(try decode("ping", "x") == .other(type: "ping"))
        #expect(throws: ScanFailure.self) { try decode("complete", #"{"jobId":"j"}"#) }
    }
}
