import Testing
import Foundation
@testable import BookpipeCore

@Suite struct BookRecordTests {
    @Test("A record's id is the file hash and the data row, so reruns find it again")
    func stableID() {
        let origin = RecordOrigin(file: "a.csv", fileHash: "abcd", row: 7, line: 9)
        #expect(BookRecord(origin: origin).id == "abcd:7")
    }

    @Test("Adding the same finding twice keeps one")
    func findingsDeduplicated() {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "x", row: 1, line: 2))
        let finding = Finding(code: "isbn.invalid", severity: .warning, field: "ISBN", message: "bad")
        record.addFinding(finding)
        record.addFinding(finding)
        #expect(record.findings.count == 1)
    }

    @Test("What a run decided about a record travels on it but is never encoded, stored or compared")
    func thisRunMarks() throws {
        let plain = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "x", row: 1, line: 2), title: "Dune")
        var marked = plain
        marked.thisRun.chosenForLookup = true
        marked.thisRun.lookedUp = true
        #expect(marked == plain)
        #expect(marked.hashValue == plain.hashValue)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = try encoder.encode(marked)
        #expect(encoded == (try encoder.encode(plain)))
        #expect(!String(decoding: encoded, as: UTF8.self).contains("thisRun"))
        let decoded = try JSONDecoder().decode(BookRecord.self, from: encoded)
        #expect(!decoded.thisRun.lookedUp && !decoded.thisRun.chosenForLookup)
        #expect(decoded.title == "Dune" && decoded.id == "x:1")
    }

    @Test("A box with NaN, zero size or lying outside the photo is invalid", arguments: [
        (BoundingBox(x: .nan, y: 0, width: 0.1, height: 0.1), false),
        (BoundingBox(x: 0, y: 0, width: 0, height: 0.1), false),
        (BoundingBox(x: 1.2, y: 0, width: 0.1, height: 0.1), false),
        (BoundingBox(x: 0.1, y: 0.2, width: 0.3, height: 0.4), true),
    ])
    func boxValidity(box: BoundingBox, isValid: Bool) {
        #expect(box.isValid == isValid)
    }
}

@Suite struct WorkKeyTests {
    @Test("Only Open Library work keys are work keys; anything else is stored as no work key")
    func workKeys() {
        #expect(WorkKey.isWork("/works/OL45804W"))
        #expect(!WorkKey.isWork("/books/OL7353617M"))
        #expect(!WorkKey.isWork("googlebooks:zyTCAlFPjgYC"))
        #expect(!WorkKey.isWork("/works/"))
        #expect(!WorkKey.isWork(""))
        #expect(WorkKey.sanitized("/works/OL45804W") == "/works/OL45804W")
        #expect(WorkKey.sanitized("/books/OL7353617M") == "")
        #expect(WorkKey.sanitized(nil) == "")
    }

    @Test("Without a work key, a candidate is told apart by its edition, else by source and title; the accepted one is found by it")
    func identities() {
        let volume = Candidate(workKey: "", editionKey: "googlebooks:abc", title: "Dune", authors: [], year: 1965,
                               publisher: "Chilton", source: "googlebooks")
        let other = Candidate(workKey: "", editionKey: "googlebooks:def", title: "Dune", authors: [], source: "googlebooks")
        #expect(volume.identity == "googlebooks:abc")
        #expect(volume.identity != other.identity)
        #expect(Candidate(workKey: "", title: "Dune", authors: [], source: "catalog").identity == "catalog:Dune")
        #expect(Candidate(workKey: "/works/OL1W", editionKey: "/books/OL2M", title: "Dune", authors: [], source: "x").identity
                == "/works/OL1W")
        let result = EnrichmentResult(status: .enriched, match: Match(
            workKey: "", editionKey: "googlebooks:abc", title: "Dune", authors: [], score: 200, source: "googlebooks"),
            candidates: [other, volume])
        #expect(result.acceptedCandidate?.publisher == "Chilton")
        #expect(result.acceptedCandidate?.year == 1965)
    }
}

/// A work key is a `/works/…` key or null, never `""` (issue 23).
@Suite struct WorkKeyCodingTests {
    @Test("A match and a candidate without a work are written with \"workKey\": null and read back from null, a missing key or \"\"")
    func noWorkIsNull() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let match = Match(workKey: "", editionKey: "googlebooks:abc", title: "T", authors: ["A"], score: 150, source: "googlebooks")
        let matchText = String(decoding: try encoder.encode(match), as: UTF8.self)
        #expect(matchText == #"{"authors":["A"],"editionKey":"googlebooks:abc","score":150,"source":"googlebooks","title":"T","workKey":null}"#)
        var candidate = Candidate(workKey: "", editionKey: "googlebooks:abc", title: "T", authors: ["A"], source: "googlebooks")
        #expect(String(decoding: try encoder.encode(candidate), as: UTF8.self).contains(#""workKey":null"#))
        candidate.workKey = "/works/OL1W"
        candidate.otherEditions = ["googlebooks:def"]
        let text = String(decoding: try encoder.encode(candidate), as: UTF8.self)
        #expect(text.contains(#""otherEditions":["googlebooks:def"]"#) && text.contains(#""workKey":"\/works\/OL1W""#), "\(text)")
        #expect(try JSONDecoder().decode(Candidate.self, from: Data(text.utf8)) == candidate)
        for spelled in [#""workKey":null,"#, #""workKey":"","#, ""] {
            let json = #"{"authors":["A"],"#.appending(spelled) + #""score":150,"source":"googlebooks","title":"T"}"#
            #expect(try JSONDecoder().decode(Match.self, from: Data(json.utf8)).workKey == "", "\(json)")
        }
    }
}
