import BookpipeCore
import BookpipeScan
import Testing

@Suite struct ScanBackendEventTests {
    private func decode(_ type: String, _ data: String) throws(ScanFailure) -> ScanBackendEvent {
        try ScanBackendEvent(ServerSentEvent(type: type, data: data, lastEventID: "4"))
    }

    @Test("A result is read with its title, author, ISBN, confidence and box")
    func result() throws {
        let event = try decode("result", #"{"title":"DUNE","author":null,"isbn":"9780441172719","confidence":0.42,"boundingBox":{"x":0.1,"y":0.2,"width":0.05,"height":0.6}}"#)
        guard case .result(let detection) = event else { Issue.record("not a result: \(event)"); return }
        #expect(detection.title == "DUNE")
        #expect(detection.author == nil)
        #expect(detection.isbn == "9780441172719")
        #expect(detection.confidence == 0.42)
        #expect(detection.boundingBox == BoundingBox(x: 0.1, y: 0.2, width: 0.05, height: 0.6))
    }

    @Test("A missing confidence and box stay missing; nothing is made up")
    func missingValues() throws {
        guard case .result(let detection) = try decode("result", #"{"title":"Emma"}"#) else { Issue.record("not a result"); return }
        #expect(detection.confidence == nil)
        #expect(detection.boundingBox == nil)
    }

    @Test("A confidence outside 0…1, or not a number, fails the event; it is never clamped",
          arguments: ["1.7", "-0.2", "\"0.9\"", "true"])
    func badConfidence(value: String) {
        #expect(throws: ScanFailure.self) { try decode("result", #"{"title":"Emma","confidence":\#(value)}"#) }
    }

    @Test("The numbers 0 and 1 are numbers, not booleans: a job of 0 or 1 books completes, a confidence of 0 or 1 is read")
    func zeroAndOne() throws {
        #expect(try decode("complete", #"{"jobId":"j","books":0}"#) == .complete(books: 0))
        #expect(try decode("complete", #"{"jobId":"j","books":1}"#) == .complete(books: 1))
        for value in [0, 1] {
            guard case .result(let detection) = try decode("result", #"{"title":"Emma","confidence":\#(value)}"#) else {
                Issue.record("not a result")
                continue
            }
            #expect(detection.confidence == Double(value))
        }
        #expect(throws: ScanFailure.self) { try decode("complete", #"{"jobId":"j","books":true}"#) }
    }

    @Test("Invalid JSON and a result without a title fail with a message quoting what came")
    func invalidJSON() {
        do {
            _ = try decode("result", "{\"title\": ")
            Issue.record("no error")
        } catch {
            #expect(error.description == #"the job's stream sent an unusable event: the result event (id 4) is not a JSON object: "{"title": ""#)
        }
        #expect(throws: ScanFailure.self) { try decode("result", #"{"author":"X"}"#) }
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
