import BookpipeCore
import BookpipeImaging
import BookpipeIngest
import BookpipeLibrary
import BookpipePipeline
import BookpipeReview
import BookpipeStages
import BookpipeStore
import Foundation
import Testing

/// A scan folder with the sample scan (`samples/shelf-scan/scan.json`) and a real 400×300 JPEG
/// as its photo, and a library file beside it.
struct ScanFixture {
    let folder: String
    let library: String
    var scan: String { folder + "/scan.json" }
    var photo: String { folder + "/shelf.jpg" }

    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../samples/shelf-scan/scan.json").standardized.path

    init() throws {
        folder = NSTemporaryDirectory() + "bookpipe-review-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        library = folder + "/library.sqlite"
        try FileManager.default.copyItem(atPath: Self.sample, toPath: folder + "/scan.json")
        var pixels = [UInt8](repeating: 0, count: 400 * 300 * 3)
        for index in pixels.indices { pixels[index] = UInt8(truncatingIfNeeded: index / 3 % 400) }
        let jpeg = try JPEGEncoder(quality: 90).encode(try PixelBuffer(width: 400, height: 300, bytes: pixels))
        try Data(jpeg).write(to: URL(fileURLWithPath: folder + "/shelf.jpg"))
    }

    /// Imports the scan without enrichment, as `bookpipe import-scan --no-enrich` does.
    func importScan(threshold: Double = 0.60) async throws -> RunReport {
        let routing = try ReviewRouting(threshold: threshold)
        let pipeline = Pipeline("scan-import") {
            ReadScans(files: [scan])
            RouteForReview(routing: routing)
            CopyScanPhotos()
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
        }
        let resources = StageResources().adding(try LibraryStore(path: library))
        return try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: pipeline.name, resources: resources))
    }

    /// Answers every pending lookup of the scan's records `notFound`, as an `enrich` run that finds
    /// nothing would: none of them can come back to the queue as a match, so the photo copy may go
    /// once they are reviewed. Returns how many were answered.
    @discardableResult
    func answerLookups(_ store: any Library) async throws -> Int {
        var pending: [BookRecord] = []
        try await store.forEachRecord(where: .pending) { pending.append($0) }
        for index in pending.indices { pending[index].enrichment = EnrichmentResult(status: .notFound) }
        _ = try await store.saveEnrichment(pending, runID: nil, at: Date(), owner: nil)
        return pending.count
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }
}

@Suite(.timeLimit(.minutes(5)))
struct ReviewQueueTests {
    @Test("A scan import queues the detections below 0.60 (0.60 itself and a missing confidence are verified) and points them at one managed photo copy")
    func importQueuesUnsureDetections() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let entries = try await queue.list()
        #expect(entries.map(\.confidence) == [0.31, 0.42, 0.58])
        #expect(entries.map(\.title) == ["The Left Hand of Darkness", "STATION ELEVEN", "IT"])
        #expect(entries.allSatisfy { $0.photo && $0.kind == .scan })
        #expect(try await queue.store.reviewQueueCount(kind: .match) == 0)
        let copies = try queue.photos.storedNames()
        #expect(copies.count == 1)
        #expect(queue.store.location == fixture.library)
        let all = try await queue.store.records(ids: (1...12).map { "\(entries[0].id.split(separator: ":")[0]):\($0)" })
        #expect(all.count == 12)
        #expect(all.allSatisfy { $0.scan?.photoPath?.hasSuffix("/" + copies[0]) == true })
        #expect(all.first { $0.scan?.confidence == 0.6 }?.reviewStatus == .verified)
        #expect(all.first { $0.scan != nil && $0.scan?.confidence == nil }?.reviewStatus == .verified)

        // A rerun duplicates nothing; a higher threshold applies to new files only.
        _ = try await fixture.importScan(threshold: 0.9)
        #expect(try await queue.store.counts().records == 12)
        #expect(try await queue.list().count == 3)
    }

    @Test("An UPPER CASE spine title and author normalise to the same comparison keys as the mixed-case forms")
    func upperCaseSpinesNormalise() {
        var spine = BookRecord(origin: RecordOrigin(file: "s.json", fileHash: "a", row: 1, line: 1))
        spine.title = "STATION ELEVEN"
        spine.authors = ["EMILY ST. JOHN MANDEL"]
        var book = BookRecord(origin: RecordOrigin(file: "b.csv", fileHash: "b", row: 1, line: 2))
        book.title = "Station Eleven"
        book.authors = ["Emily St. John Mandel"]
        Normalizer.normalize(&spine, currentYear: 2026)
        Normalizer.normalize(&book, currentYear: 2026)
        #expect(spine.normalized?.titleKey == book.normalized?.titleKey)
        #expect(spine.normalized?.authorKeys == book.normalized?.authorKeys)
        #expect(spine.normalized?.titleKey.isEmpty == false)
    }

    @Test("An edit locks title and authors: later enrichment leaves the record alone, and provenance says person")
    func editLocksFields() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let id = try await #require(try queue.list().first { $0.title == "STATION ELEVEN" }).id
        let (edited, _) = try await queue.edit(id: id, title: "Station Eleven", authors: ["Emily St. John Mandel"])
        #expect(edited.reviewStatus == .userEdited)
        #expect(try await queue.store.provenance(of: edited) == ["title": "person", "authors": "person"])
        var late = try await #require(try queue.store.records(ids: [id]).first)
        late.title = "Wrong Title"
        late.enrichment = EnrichmentResult(status: .enriched, match: Match(
            workKey: "/works/OL1W", editionKey: nil, title: "Wrong", authors: ["Nobody"], score: 90, source: "openlibrary"))
        _ = try await queue.store.saveEnrichment([late], runID: nil)
        let stored = try await #require(try queue.store.records(ids: [id]).first)
        #expect(stored.title == "Station Eleven")
        #expect(stored.enrichment?.match == nil)
        #expect(stored.status == .pending)
        let edits = try await queue.store.recordEdits(id: id)
        #expect(edits.map(\.field) == ["authors", "title"])
        #expect(edits.allSatisfy { $0.locked && $0.editedBy == "person" })
        #expect(try await queue.list().contains { $0.id == id } == false)
    }

    @Test("Verify, choose and choose-none log before and after; an unknown id or candidate writes nothing")
    func decisionsAreLogged() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let ids = try await queue.list().map(\.id)
        await #expect(throws: ReviewError.unknownID("nope:1")) { try await queue.verify(ids: [ids[0], "nope:1"]) }
        #expect(try await queue.store.reviewActions().isEmpty)
        #expect(try await queue.list().count == 3)

        // Make the first one an uncertain match with two candidates.
        var record = try await #require(try queue.store.records(ids: [ids[0]]).first)
        record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL1W", title: "The Left Hand of Darkness", authors: ["Ursula K. Le Guin"],
                      source: "openlibrary", score: 55, breakdown: ["title": 40, "author": 15]),
            Candidate(workKey: "/works/OL2W", title: "The Dispossessed", authors: ["Ursula K. Le Guin"],
                      source: "openlibrary", score: 30),
        ])
        try await queue.store.update([record])
        #expect(try await queue.store.reviewQueueCount(kind: .match) == 1)
        await #expect(throws: ReviewError.noSuchCandidate(id: ids[0], number: 3, count: 2)) {
            try await queue.choose(id: ids[0], candidate: 3)
        }
        let shown = try await queue.show(id: ids[0]).joined(separator: "\n")
        #expect(shown.contains("1. The Left Hand of Darkness — Ursula K. Le Guin  score 55 [author 15, title 40]"))
        let (chosen, _) = try await queue.choose(id: ids[0], candidate: 1)
        #expect(chosen.status == .enriched && chosen.enrichment?.match?.workKey == "/works/OL1W")
        #expect(chosen.reviewStatus == .verified)
        let (none, _) = try await queue.choose(id: ids[1], candidate: nil)
        #expect(none.status == .notFound)
        try await queue.verify(ids: [ids[2]])
        let actions = try await queue.store.reviewActions()
        #expect(actions.map(\.action) == ["choose", "choose-none", "verify"])
        #expect(actions[0].before.contains("\"status\":\"needsCandidateSelection\""))
        #expect(actions[0].after.contains("\"match\":\"\\/works\\/OL1W\"") || actions[0].after.contains("\"match\":\"/works/OL1W\""))
        #expect(try await queue.list().isEmpty)
    }

    @Test("verify refuses an uncertain match (nothing accepted, nothing written, choose named); an unsure detection that is also an uncertain match is verified and stays queued as a match")
    func verifyOfUncertainMatch() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let ids = try await queue.list().map(\.id)
        var records = try await queue.store.records(ids: [ids[0], ids[1]])
        let candidates = [
            Candidate(workKey: "/works/OL1W", title: "Station Eleven", authors: ["Emily St. John Mandel"], source: "openlibrary", score: 55),
            Candidate(workKey: "/works/OL2W", title: "Eleven", authors: ["Someone"], source: "openlibrary", score: 40),
        ]
        for index in records.indices {
            records[index].enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: candidates)
        }
        // The first one: only an uncertain match (a person already checked the detection).
        records[0].reviewStatus = .verified
        try await queue.store.update(records)
        let match = records[0].id, both = records[1].id
        #expect(try await queue.list(kind: .match).map(\.id).sorted() == [match, both].sorted())

        await #expect(throws: ReviewError.uncertainMatch(id: match, candidates: 2)) {
            try await queue.verify(ids: [both, match])
        }
        #expect(try await queue.store.reviewActions().isEmpty, "a refused verify wrote something")
        let message = ReviewError.uncertainMatch(id: match, candidates: 2).description
        #expect(message.contains("bookpipe review choose \(match) N") && message.contains("--none") && message.contains("Nothing was changed"))

        let notes = try await queue.verify(ids: [both])
        #expect(notes.contains { $0.contains("\(both) stays in the queue as an uncertain match") })
        let stored = try await #require(try queue.store.records(ids: [both]).first)
        #expect(stored.reviewStatus == .verified && stored.status == .needsCandidateSelection)
        #expect(try await queue.list(kind: .match).contains { $0.id == both })
        #expect(try await queue.list(kind: .scan).contains { $0.id == both } == false)
        let (chosen, _) = try await queue.choose(id: both, candidate: 1)
        #expect(chosen.enrichment?.match?.workKey == "/works/OL1W")
        #expect(try await queue.list().contains { $0.id == both } == false)
        // The chosen match is locked: a later enrichment (enrich --all saves through here) leaves it.
        var later = chosen
        later.enrichment = EnrichmentResult(status: .enriched, match: Match(
            workKey: "/works/OL9W", editionKey: nil, title: "Other", authors: ["Nobody"], score: 200, source: "googlebooks"))
        _ = try await queue.store.saveEnrichment([later], runID: nil)
        #expect(try await queue.store.records(ids: [both]).first?.enrichment?.match?.workKey == "/works/OL1W")
    }

    @Test("review show writes the spine crop as JPEG; no box gives the whole photo; no photo says text only")
    func showWritesCrops() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let entries = try await queue.list()
        let boxed = try #require(entries.first { $0.title == "STATION ELEVEN" })
        let crop = fixture.folder + "/crop.jpg"
        let lines = try await queue.show(id: boxed.id, cropPath: crop)
        let header = try ImageDecoder().header(of: try FileIO.read(crop), file: crop)
        // Box 0.049 × 0.81 of 400 × 300: about 20 × 243.
        #expect(abs(header.width - 20) <= 1 && abs(header.height - 243) <= 1, "\(header.width)x\(header.height)")
        #expect(lines.contains { $0.contains("crop:") && $0.contains(crop) })
        let unboxed = try #require(entries.first { $0.boundingBox == nil })
        _ = try await queue.show(id: unboxed.id, cropPath: crop)
        let whole = try ImageDecoder().header(of: try FileIO.read(crop), file: crop)
        #expect(whole.width == 400 && whole.height == 300)
        let name = try #require(try queue.photos.storedNames().first)
        _ = try queue.photos.delete(named: name)
        let textOnly = try await queue.show(id: boxed.id, cropPath: fixture.folder + "/none.jpg")
        #expect(textOnly.last == "  crop:       not written: the photo's copy \(queue.photos.folder)/\(name) is missing from the "
                + "library's photos; review is text only", "\(textOnly)")
        #expect(!FileManager.default.fileExists(atPath: fixture.folder + "/none.jpg"))
    }

    @Test("review show and the sheet say a confidence was invalid, with the value as given, instead of 'none given'")
    func invalidConfidenceShown() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        try Data(#"{"photo": "shelf.jpg", "detections": [{"title": "Dune", "confidence": 1.7}, {"title": "Emma", "confidence": "0.9"}, {"title": "It"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: fixture.scan))
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let entries = try await queue.list()
        func shown(_ title: String) async throws -> [String] {
            try await queue.show(id: try #require(entries.first { $0.title == title }).id).filter { $0.hasPrefix("  confidence:") }
        }
        #expect(try await shown("Dune") == ["  confidence: invalid: it is 1.7, outside 0…1 (not used, never clamped)"])
        #expect(try await shown("Emma") == [#"  confidence: invalid: it is the text "0.9", not a number (not used, never clamped)"#])
        // No confidence at all is still "none given" (and verified, so not queued: checked on the record).
        let hash = try #require(entries.first?.id.split(separator: ":").first)
        let it = try await #require(try queue.store.records(ids: ["\(hash):3"]).first)
        #expect(it.title == "It" && ReviewQueue.invalidConfidence(of: it) == nil)
        let items = try await ReviewSheet(queue: queue, libraryPath: "library.sqlite").items()
        #expect(items.first { $0.title == "Dune" }?.invalidConfidence == "invalid: it is 1.7, outside 0…1 (not used, never clamped)")
        let html = try ReviewSheet(queue: queue, libraryPath: "library.sqlite").html(items)
        #expect(html.contains("<dd class=\"low\">invalid: it is 1.7, outside 0…1 (not used, never clamped)</dd>"))
        #expect(!html.contains("none given"))
    }

    @Test("Why an item has no photo is told apart: refused at import, none named, deleted after review, copy missing, not a scan")
    func photoAbsenceReasons() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        let scan: [String: Any] = [
            "format": "bookshelf-scan", "version": 1,
            "scans": [
                ["scanId": "kept", "originalImagePath": "shelf.jpg", "books": [["title": "Dune", "confidence": 0.2]]],
                ["scanId": "refused", "originalImagePath": "../outside.jpg", "books": [["title": "Emma", "confidence": 0.2]]],
                ["scanId": "unnamed", "books": [["title": "Beloved", "confidence": 0.2]]],
            ],
        ]
        try JSONSerialization.data(withJSONObject: scan).write(to: URL(fileURLWithPath: fixture.scan))
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        func record(_ title: String) async throws -> BookRecord {
            let id = try #require(try await queue.list().first { $0.title == title }?.id)
            return try #require(try await queue.store.records(ids: [id]).first)
        }
        #expect(await queue.photoAbsence(of: try await record("Dune")) == nil)
        let refused = try #require(await queue.photoAbsence(of: try await record("Emma")))
        #expect(refused.hasPrefix("the photo was refused at import (") && refused.contains("\"refused\""), "\(refused)")
        #expect(await queue.photoAbsence(of: try await record("Beloved")) == "the scan named no photo")
        let shown = try await queue.show(id: try record("Beloved").id).joined(separator: "\n")
        #expect(shown.contains("  photo:      none: the scan named no photo; review is text only"), "\(shown)")
        let csvRow = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "a", row: 1, line: 2), title: "X", authors: [])
        #expect(await queue.photoAbsence(of: csvRow) == "not a scan detection, so there is no photo")
        // Reviewed: the copy is deleted and the detection's path cleared.
        let dune = try await record("Dune")
        try await fixture.answerLookups(queue.store)
        try await queue.verify(ids: [dune.id])
        let reviewed = try await #require(try queue.store.records(ids: [dune.id]).first)
        #expect(await queue.photoAbsence(of: reviewed) == "the photo's copy was deleted once every detection from it was reviewed and looked up")
    }

    @Test("review show of an item whose photo copy cannot be decoded shows the fields and says why in one line; no crop file is written")
    func showWithUndecodableCopy() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        // The copy cut off on disk (as a library imported before cut-off photos were refused may hold).
        let name = try #require(try queue.photos.storedNames().first)
        let copyPath = queue.photos.folder + "/" + name
        let copy = try FileIO.read(copyPath)
        try FileIO.write(Array(copy.prefix(copy.count / 3)), to: copyPath)
        let entry = try await #require(try queue.list().first { $0.title == "STATION ELEVEN" })
        let crop = fixture.folder + "/crop.jpg"
        let lines = try await queue.show(id: entry.id, cropPath: crop)
        #expect(lines.contains("  title:      STATION ELEVEN  [from file]"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("  confidence: 0.42") })
        let cropLines = lines.filter { $0.hasPrefix("  crop:") }
        #expect(cropLines == ["  crop:       not written: the photo's copy \(copyPath) is cut off (Premature end of JPEG file); review is text only"],
                "\(lines)")
        #expect(!FileManager.default.fileExists(atPath: crop))
    }

    @Test("The managed copy is the photo re-encoded with restart markers: the same pixels, the same crops, stored once under the photo's name")
    func managedCopyHasRowRestarts() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let original = try FileIO.read(fixture.photo)
        let name = try #require(try queue.photos.storedNames().first)
        let copy = try FileIO.read(queue.photos.folder + "/" + name)
        #expect(copy != original)
        #expect(copy.indices.dropLast().contains { copy[$0] == 0xFF && copy[$0 + 1] == 0xDD }, "no DRI segment")
        #expect(try ImageDecoder().decode(copy, file: "copy") == (try ImageDecoder().decode(original, file: "original")))
        let entry = try await #require(try queue.list().first { $0.boundingBox != nil })
        let record = try await #require(try queue.store.records(ids: [entry.id]).first)
        let fromQueue = try #require(try await queue.crop(of: record))
        let box = try #require(entry.boundingBox)
        let fromOriginal = try SpineCropper().crops(photo: original, file: "original", boxes: [
            NormalizedBox(x: box.x, y: box.y, width: box.width, height: box.height)], maxEdge: 800)
        #expect(fromQueue.jpeg == fromOriginal.first?.jpeg)
        // The same photo again (another scan file) finds the re-encoded copy and writes nothing.
        let again = try queue.photos.store(photoAt: fixture.photo, scanFolder: fixture.folder, scan: "again",
                                           prepare: { _, _ in Issue.record("re-encoded again"); return [] }) { _, _ in }
        #expect(again.wasAlreadyStored && again.name == name && again.byteCount == copy.count)
        #expect(try queue.photos.storedNames() == [name])
    }

    @Test("Once every detection of a photo is reviewed its managed copy is deleted and paths and boxes cleared; the original stays")
    func cleanupAfterReview() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let ids = try await queue.list().map(\.id)
        try await queue.verify(ids: Array(ids.dropLast()))
        #expect(try queue.photos.storedNames().count == 1)
        let (_, warnings) = try await queue.edit(id: ids.last!, title: "It", authors: nil)
        #expect(warnings.isEmpty)
        // Every detection reviewed, but none looked up yet: `enrich` may queue a match for one of
        // them, which needs the crop. The copy stays until their lookups are answered.
        #expect(try queue.photos.storedNames().count == 1)
        #expect(try await fixture.answerLookups(queue.store) == 12)
        #expect(await queue.cleanUp().isEmpty)
        #expect(try queue.photos.storedNames().isEmpty)
        #expect(FileManager.default.fileExists(atPath: fixture.photo))
        let hash = ids[0].split(separator: ":")[0]
        let records = try await queue.store.records(ids: (1...12).map { "\(hash):\($0)" })
        #expect(records.allSatisfy { $0.scan?.photoPath == nil && $0.scan?.boundingBox == nil })
        #expect(try await queue.list().isEmpty)
    }

    @Test("Importing a fully reviewed scan again copies no photo (no record would name it); a copy that queued detections still name is put back")
    func rerunCopiesOnlyNeededPhotos() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let name = try #require(try queue.photos.storedNames().first)
        // A queued detection still names the copy: a rerun puts a lost copy back.
        _ = try queue.photos.delete(named: name)
        _ = try await fixture.importScan()
        #expect(try queue.photos.storedNames() == [name])
        #expect(try await queue.list().allSatisfy(\.photo))

        _ = try await queue.verifyAll()
        #expect(try queue.photos.storedNames() == [name], "deleted before the lookups were answered")
        try await fixture.answerLookups(queue.store)
        #expect(await queue.cleanUp().isEmpty)
        #expect(try queue.photos.storedNames().isEmpty)
        let report = try await fixture.importScan()
        #expect(report.events.contains { if case .inputStored(let stored) = $0 { stored.wasAlreadyImported } else { false } })
        #expect(try queue.photos.storedNames().isEmpty, "a copy no record names was left behind")
        #expect(await queue.cleanUp().isEmpty)
        let hash = try await #require(try queue.store.reviewActions().first?.recordID.split(separator: ":").first)
        let records = try await queue.store.records(ids: (1...12).map { "\(hash):\($0)" })
        #expect(records.count == 12 && records.allSatisfy { $0.scan?.photoPath == nil })
    }

    @Test("A failed delete is reported and retried at the next cleanup")
    func failedDeleteIsRetried() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        // The copy's name taken by a folder: unlink fails (EISDIR), for root too.
        let name = try #require(try queue.photos.storedNames().first)
        let path = queue.photos.folder + "/" + name
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
        try await fixture.answerLookups(queue.store)
        let warnings = try await queue.verify(ids: try queue.list().map(\.id))
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("the next run tries again") == true)
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
        #expect(await queue.cleanUp().isEmpty)
        #expect(try queue.photos.storedNames().isEmpty)
    }

    @Test("review list --json is one object a line with exactly the documented keys, nulls included")
    func listJSONKeys() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let lines = ReviewQueue.jsonLines(try await queue.list())
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(lines.allSatisfy { !$0.contains("\n") })
        #expect(objects.count == 3)
        for object in objects {
            #expect(Set(object.keys) == ["id", "kind", "title", "authors", "confidence", "photo", "boundingBox", "createdAt"])
        }
        #expect(objects[0]["boundingBox"] is NSNull)
        #expect(objects[1]["kind"] as? String == "scan")
    }
}
