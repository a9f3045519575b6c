import BookpipeCore
import BookpipeImaging
import BookpipeIngest
import BookpipePipeline
import BookpipeReview
import BookpipeStages
import BookpipeStore
import Foundation
import Testing

/// `review list` reads only the columns it shows; these tests hold it to what the full decode of
/// every record gave before, byte for byte, and check that the start-of-run photo cleanup finds
/// due copies with one query and leaves the library alone when none is due.
@Suite(.timeLimit(.minutes(5)))
struct ReviewListTests {
    /// A library with every kind of queue item: scan detections with and without box, confidence
    /// and photo (one scan's photo missing), a hostile title, an edited detection, and CSV rows
    /// (whose stored title and authors point at raw fields) turned into uncertain matches.
    static func mixedLibrary(_ fixture: ScanFixture) async throws -> ReviewQueue {
        try ReviewSheetTests.writeHostileScan(in: fixture)
        _ = try await fixture.importScan()
        let sample = try String(contentsOfFile: ScanFixture.sample, encoding: .utf8)
        try sample.write(toFile: fixture.folder + "/second.json", atomically: true, encoding: .utf8)
        let csv = fixture.folder + "/books.csv"
        try "Title,Author,ISBN\nDune,Frank Herbert,\n\"Left Hand, The\",\"Le Guin, Ursula K.\",\nIT,,\n\u{00C9}mile,Rousseau,\n"
            .write(toFile: csv, atomically: true, encoding: .utf8)
        let routing = try ReviewRouting(threshold: 0.6)
        let pipeline = Pipeline("mixed") {
            ReadScans(files: [fixture.folder + "/second.json"])
            RouteForReview(routing: routing)
            CopyScanPhotos()
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
        }
        let store = try LibraryStore(path: fixture.library)
        let resources = StageResources().adding(store)
        _ = try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: pipeline.name, resources: resources))
        let csvPipeline = Pipeline("csv") {
            ReadCSV(files: [csv])
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
        }
        _ = try await PipelineRunner().run(csvPipeline, context: StageContext(pipelineName: csvPipeline.name, resources: resources))
        var uncertain: [BookRecord] = []
        try await store.forEachRecord { record in
            guard record.scan == nil else { return }
            var record = record
            record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
                Candidate(workKey: "/works/OL1W", title: record.title, authors: record.authors, source: "openlibrary", score: 55),
            ])
            uncertain.append(record)
        }
        #expect(uncertain.count == 4)
        try await store.update(uncertain)
        let queue = ReviewQueue(store: store)
        let first = try #require(try await queue.list(kind: .scan).first)
        _ = try await queue.edit(id: first.id, title: "Edited </script>", authors: ["Someone"])
        return queue
    }

    /// The list as the full decode of every queued record gives it (the list before it read only
    /// its columns).
    static func decodedList(_ queue: ReviewQueue, kind: ReviewKind?) async throws -> [ReviewListEntry] {
        var entries: [ReviewListEntry] = []
        for item in try await queue.store.reviewQueue(kind: kind, limit: nil, offset: 0) {
            entries.append(ReviewListEntry(item, photoAvailable: try await queue.hasPhoto(item.record)))
        }
        return entries
    }

    @Test("review list read from its columns equals the full decode of every record, as values, text and JSON, for each kind")
    func listEqualsFullDecode() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        let queue = try await Self.mixedLibrary(fixture)
        for kind in [nil, ReviewKind.scan, .match] {
            let fast = try await queue.list(kind: kind)
            let decoded = try await Self.decodedList(queue, kind: kind)
            #expect(fast == decoded, "kind \(kind?.rawValue ?? "all")")
            #expect(ReviewQueue.text(fast) == ReviewQueue.text(decoded))
            #expect(ReviewQueue.jsonLines(fast) == ReviewQueue.jsonLines(decoded))
        }
        let all = try await queue.list()
        // 2 unsure detections of the hostile scan's photo, 1 with a missing photo, 3 of the sample, minus the edited one; 4 matches.
        #expect(all.filter { $0.kind == .scan }.count == 5)
        #expect(all.filter { $0.kind == .match }.map(\.title).sorted() == ["Dune", "IT", "Left Hand, The", "\u{00C9}mile"])
        #expect(all.contains { $0.title == ReviewSheetTests.hostileTitle && $0.photo && $0.boundingBox != nil })
        #expect(all.contains { $0.title == "Beloved" && !$0.photo && $0.boundingBox == nil })
        #expect(all.contains { $0.authors == ["Le Guin, Ursula K."] })
        #expect(all.contains { $0.title == "IT" && $0.kind == .match && $0.authors.isEmpty })

        // Photos deleted by hand: both paths say no photo.
        for name in try queue.photos.storedNames() { _ = try queue.photos.delete(named: name) }
        let listed = try await queue.list()
        #expect(listed == (try await Self.decodedList(queue, kind: nil)))
        #expect(try await queue.list().allSatisfy { !$0.photo })
    }

    @Test("The start-of-run cleanup writes nothing while each photo still has a detection to review, and deletes a copy once none has")
    func cleanupQueryFindsOnlyDueCopies() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        try ReviewSheetTests.writeHostileScan(in: fixture)
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let copies = try queue.photos.storedNames()
        #expect(copies.count == 1)
        // The first cleanup makes the scan-photo index (a library's first need of it); later ones only read.
        #expect(await queue.cleanUp().isEmpty)
        // A commit writes to the library's log (-wal); a read does not touch it.
        let version = { () throws -> [FileAttributeKey: Any] in
            try FileManager.default.attributesOfItem(atPath: fixture.library + "-wal")
        }
        let before = try version()[.modificationDate] as? Date
        #expect(await queue.cleanUp().isEmpty)
        #expect(try queue.photos.storedNames() == copies)
        #expect(try version()[.modificationDate] as? Date == before, "a cleanup with nothing due wrote to the library")

        // One of the two unsure detections of the photo reviewed: still one to go.
        let withPhoto = try await queue.list().filter { $0.photo }
        #expect(withPhoto.count == 2)
        try await queue.verify(ids: [withPhoto[0].id])
        #expect(try queue.photos.storedNames() == copies)
        // A copy nothing points at (an import killed before its records were stored) is not due.
        let orphan = String(repeating: "0", count: 64) + ".jpg"
        try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: queue.photos.folder + "/" + orphan))
        try await queue.verify(ids: [withPhoto[1].id])
        // Reviewed, not yet looked up: enrichment may still queue a match that needs the crop.
        #expect(try queue.photos.storedNames().sorted() == (copies + [orphan]).sorted())
        try await fixture.answerLookups(queue.store)
        #expect(await queue.cleanUp().isEmpty)
        #expect(try queue.photos.storedNames() == [orphan])
        let records = try await queue.store.records(ids: withPhoto.map(\.id))
        #expect(records.allSatisfy { $0.scan?.photoPath == nil && $0.scan?.boundingBox == nil })
        #expect(try await queue.store.records(ids: withPhoto.map(\.id)).count == 2)
    }
}
