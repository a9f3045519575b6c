import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

@Suite struct RecordStoryTests {
    @Test("Tells a record's story: raw fields by column, normalised forms, lookups with cached answers, candidates")
    func story() async throws {
        let (store, records) = try await ReportFixture.makeLibrary()
        try await store.registerSourceFile(SourceFileInfo(hash: "aaaa", path: "export.csv", format: "goodreads",
                                                          header: ["Title", "Author"], encoding: "utf-8", size: 1), runID: nil)
        let question = "title:\(TextFolding.key("The Dispossessed"))|author:\(AuthorNormalizer.key("Ursula K. Le Guin"))"
        try await store.cacheAnswers(source: "catalog", [(question: question, answerJSON: #"{"found":{"_0":[{"a":1},{"b":2}]}}"#)])
        let story = try await #require(try RecordStory.load(id: records[6].id, from: store))
        #expect(story.raw.map(\.column) == ["Title", "Author"] && story.raw.first?.value == "The Dispossessed")
        #expect(story.status == "needsCandidateSelection")
        #expect(story.candidates.map(\.score) == [75, 60] && story.candidates.first?.breakdown == ["title": 50, "author": 25])
        #expect(story.lookups.contains { $0.question == question && $0.source == "catalog" && $0.outcome == "found" && $0.candidates == 2 })
        #expect(story.provenance["title"] == "file")
        #expect(story.reviewHistory == [])
        #expect(story.text.contains("75  The Dispossessed"))
        let json = try #require(try JSONSerialization.jsonObject(with: story.json()) as? [String: Any])
        #expect(json["id"] as? String == records[6].id)
        #expect(try await RecordStory.load(id: "aaaa:999", from: store) == nil)
        // The report's duplicate findings, from this record's side.
        let first = try await #require(try RecordStory.load(id: records[0].id, from: store))
        #expect(first.duplicates.first { $0.kind == "same ISBN-13" }?.records == [records[1].id])
        #expect(first.text.contains("duplicates: same ISBN-13 as \(records[1].id)"))
        #expect(story.duplicates.isEmpty || !story.duplicates.contains { $0.records.contains(records[6].id) })
    }

    @Test("The review history comes from the review log: each decision with its time and the reviewed fields after, in text and JSON")
    func reviewHistory() async throws {
        let (store, records) = try await ReportFixture.makeLibrary()
        try await store.choose(id: records[6].id, candidate: 1, at: Date(timeIntervalSince1970: 1_700_000_000))
        let story = try await #require(try RecordStory.load(id: records[6].id, from: store))
        // What the decision changed, field by field (before → after), not the stored JSON.
        let entry = "2023-11-14T22:13:20Z choose: match none → \"/works/OL1W\"; status \"needsCandidateSelection\" → \"enriched\""
        #expect(story.reviewHistory == [entry])
        #expect(story.text.split(separator: "\n").contains { $0 == "review history: \(entry)" })
        let json = try #require(try JSONSerialization.jsonObject(with: story.json()) as? [String: Any])
        #expect(json["reviewHistory"] as? [String] == [entry])
        #expect(story.provenance["match"] == "person")
        // An edit after the choice makes the lookup stale: the change log says what it cleared.
        _ = try await store.edit(id: records[6].id, title: "The Left Hand of Darkness", authors: nil,
                                 at: Date(timeIntervalSince1970: 1_700_000_100))
        let edited = try await #require(try RecordStory.load(id: records[6].id, from: store))
        #expect(edited.changes.contains("2023-11-14T22:15:00Z match: /works/OL1W → none (cleared, from person)"), "\(edited.changes)")
        #expect(edited.text.contains("changes:\n  2023-11-14T22:15:00Z"))
    }

    @Test("Tells every field read (binding, review, tags included) with its provenance, and a scan detection's confidence")
    func everyFieldAndDetection() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        var read = ReportFixture.record(1, title: "Dune")
        read.binding = "Paperback"
        read.review = "Loved it."
        read.tags = ["sci-fi", "to-read"]
        var scanned = ReportFixture.record(2, title: "Scanned", fileHash: "bbbb", file: "scan.json")
        scanned.scan = ScanDetection(confidence: 0.42, boundingBox: BoundingBox(x: 0.1, y: 0.2, width: 0.05, height: 0.5),
                                     photoPath: "photos/shelf.jpg")
        try store.insert([read, scanned])
        let story = try await #require(try RecordStory.load(id: read.id, from: store))
        #expect(story.read.binding == "Paperback" && story.read.review == "Loved it." && story.read.tags == ["sci-fi", "to-read"])
        #expect(story.provenance["binding"] == "file" && story.provenance["review"] == "file" && story.provenance["tags"] == "file")
        #expect(!story.text.contains("scan detection"))
        let scan = try await #require(try RecordStory.load(id: scanned.id, from: store))
        #expect(scan.text.split(separator: "\n").contains(
            "scan detection: confidence 0.42, box x 0.1 y 0.2 width 0.05 height 0.5, photo photos/shelf.jpg"))
    }
}
