import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

/// What a person's review decision means for enrichment, on real SQLite files (issue 12, item 5:
/// "fields a person edited are never overwritten by later enrichment"): an edit of title or authors
/// makes the old lookup stale and the record is matched again from the edited values; a match a
/// person chose is never replaced.
@Suite struct ReviewEditStoreTests {
    func temporaryLibrary() throws -> LibraryStore {
        try LibraryStore(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("review-edit-\(UUID().uuidString).sqlite").path)
    }

    /// A detection as the vision model read it, normalised as an import does.
    func detection(_ row: Int, title: String, authors: [String]) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "scan.json", fileHash: "5ca0", row: row, line: row * 10,
                                                     format: "scan", rawFields: ["{}"], scan: "scan.json"),
                                title: title, authors: authors, reviewStatus: .needsReview)
        record.scan = ScanDetection(confidence: 0.31, boundingBox: nil, photoPath: nil)
        Normalizer.normalize(&record, currentYear: 2026)
        return record
    }

    func match(_ work: String, _ title: String, _ authors: [String], source: String = "openlibrary") -> Match {
        Match(workKey: work, editionKey: nil, title: title, authors: authors, score: 150, source: source)
    }

    func candidate(_ work: String, _ title: String, _ authors: [String], score: Int) -> Candidate {
        Candidate(workKey: work, title: title, authors: authors, source: "openlibrary", score: score)
    }

    /// `record` as the enrichment step hands it to the store: matched to `match`.
    func answered(_ record: BookRecord, _ match: Match) -> BookRecord {
        var record = record
        record.enrichment = EnrichmentResult(status: .enriched, match: match, candidates: [
            Candidate(workKey: match.workKey, title: match.title, authors: match.authors, source: match.source,
                      score: match.score)])
        return record
    }

    func key(_ store: LibraryStore, _ id: String) throws -> Int64 {
        try store.read("key") { db in try #require(try store.reviewKey(id: id, db: db)) }
    }

    static let leftHand = (work: "/works/OL900065W", title: "The Left Hand of Darkness", authors: ["Ursula K. Le Guin"])
    static let it = (work: "/works/OL900014W", title: "It", authors: ["Stephen King"])
    static let everyStatus = EnrichmentSelection(statuses: RecordStatus.allCases, repairsWorkKeys: false)

    @Test("An edit of title and authors clears the match found from the misread title: pending, no candidates, no finding about the old values, the change logged as cleared by the person")
    func editClearsTheStaleLookup() async throws {
        let store = try temporaryLibrary()
        var misread = detection(11, title: "THE LEFT HAND OF DARKNESS", authors: ["URSULA K. LE GUIN"])
        misread.addFinding(Finding(code: "scan.title-not-text", severity: .info, field: "title", message: "old title"))
        misread.addFinding(Finding(code: "scan.low-confidence", severity: .info, field: "confidence", message: "0.31"))
        try store.insert([misread])
        var matched = answered(misread, match(Self.leftHand.work, Self.leftHand.title, Self.leftHand.authors))
        matched.addFinding(Finding(code: "enrich.match-moved", severity: .warning, field: "match", message: "old match"))
        _ = try await store.saveEnrichment([matched], runID: nil)
        #expect(try store.records(ids: [misread.id]).first?.status == .enriched)

        let time = Date(timeIntervalSince1970: 1_800_000_000)
        let edited = try await store.edit(id: misread.id, title: "It", authors: ["Stephen King"], at: time)
        let stored = try #require(try store.records(ids: [misread.id]).first)
        #expect(stored == edited)
        #expect(stored.title == "It" && stored.authors == ["Stephen King"] && stored.reviewStatus == .userEdited)
        #expect(stored.status == .pending && stored.enrichment == nil, "the match of the misread title is not current")
        // Normalised again from the edited values, as an import does: enrichment searches with these.
        #expect(stored.normalized?.searchTitle == "It" && stored.normalized?.titleKey == "it")
        #expect(stored.normalized?.authors == ["Stephen King"] && stored.normalized?.authorKeys == [AuthorNormalizer.key("Stephen King")])
        #expect(stored.findings.map(\.code) == ["scan.low-confidence"], "findings about the replaced title and the old match are gone")
        // Never silent: the change log keeps what the edit cleared, the person as its source.
        let log = try store.recordChanges(recordID: misread.id)
        #expect(log == [
            RecordChange(recordID: misread.id, field: "status", old: "enriched", new: "pending", source: "person", changedAt: time),
            RecordChange(recordID: misread.id, field: "match", old: Self.leftHand.work, new: nil, kind: .cleared,
                         source: "person", changedAt: time),
        ])
        // A plain `bookpipe enrich` (pending) asks it again; nobody is asked to review it.
        #expect(try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending])) == [try key(store, misread.id)])
        #expect(try store.reviewQueueCount() == 0)
        #expect(try store.counts().byStatus == [.pending: 1])
        #expect(try await store.provenance(of: stored) == ["title": "person", "authors": "person"])
        #expect(try store.reviewActions().map(\.after).first?.contains("\"status\":\"pending\"") == true)
    }

    @Test("Enrichment of an edited record is saved: matched from the person's title and authors, which stay the person's; provenance title/authors person, match the source")
    func editedRecordIsEnrichedAgain() async throws {
        let store = try temporaryLibrary()
        let misread = detection(11, title: "THE LEFT HAND OF DARKNESS", authors: ["URSULA K. LE GUIN"])
        try store.insert([misread])
        _ = try await store.saveEnrichment([answered(misread, match(Self.leftHand.work, Self.leftHand.title,
                                                                     Self.leftHand.authors))], runID: nil)
        try await store.edit(id: misread.id, title: "It", authors: ["Stephen King"])

        // What `bookpipe enrich` reads is the edited record; its answer names "It".
        let asked = try #require(try store.records(ids: [misread.id]).first)
        let answer = answered(asked, match(Self.it.work, Self.it.title, Self.it.authors, source: "catalog"))
        #expect(try await store.saveEnrichment([answer], runID: nil).isEmpty, "a first answer for the edited values")
        let stored = try #require(try store.records(ids: [misread.id]).first)
        #expect(stored.status == .enriched && stored.enrichment?.match?.workKey == Self.it.work)
        #expect(stored.title == "It" && stored.authors == ["Stephen King"] && stored.reviewStatus == .userEdited)
        #expect(try await store.provenance(of: stored) == ["title": "person", "authors": "person", "match": "catalog"])
        #expect(Set(try store.recordEdits(id: misread.id).map(\.field)) == ["title", "authors"])
        // `enrich --all` asks it again (from the person's values); a later answer moves it like any record's.
        #expect(try store.enrichmentQueue(Self.everyStatus).contains(try key(store, misread.id)))
        let moved = try await store.saveEnrichment([answered(stored, match("/works/OL2W", "It", ["Stephen King"]))], runID: nil)
        #expect(moved.map(\.kind) == [.moved])
        #expect(try store.records(ids: [misread.id]).first?.title == "It")
    }

    @Test("An answer to the misread title that lands after the edit (the run asked before it) is dropped: the record stays pending for the next run")
    func answerToTheOldTitleIsDropped() async throws {
        let store = try temporaryLibrary()
        let misread = detection(11, title: "THE LEFT HAND OF DARKNESS", authors: ["URSULA K. LE GUIN"])
        try store.insert([misread])
        // The run read the record, then the person edited it, then the run's answer arrived.
        try await store.edit(id: misread.id, title: "It", authors: ["Stephen King"])
        let late = answered(misread, match(Self.leftHand.work, Self.leftHand.title, Self.leftHand.authors))
        #expect(try await store.saveEnrichment([late], runID: nil).isEmpty)
        let stored = try #require(try store.records(ids: [misread.id]).first)
        #expect(stored.status == .pending && stored.enrichment == nil && stored.title == "It")
        #expect(try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending])) == [try key(store, misread.id)])
    }

    @Test("A match a person chose is never replaced by enrichment (enrich --all included) and is not asked again; none stays none")
    func chosenMatchIsKept() async throws {
        let store = try temporaryLibrary()
        let unsure = detection(12, title: "GOOD OMENS", authors: ["GAIMAN PRATCHETT"])
        let other = detection(13, title: "PIRANESI", authors: ["SUSANNA CLARKE"])
        try store.insert([unsure, other])
        var uncertain = [unsure, other]
        for index in uncertain.indices {
            uncertain[index].enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
                candidate("/works/OL1W", "Good Omens", ["Neil Gaiman", "Terry Pratchett"], score: 80),
                candidate("/works/OL2W", "Good Omens (TV tie-in)", ["Neil Gaiman"], score: 70),
            ])
        }
        _ = try await store.saveEnrichment(uncertain, runID: nil)
        #expect(try store.reviewQueueCount(kind: .match) == 2)
        try await store.choose(id: unsure.id, candidate: 2)
        try await store.chooseNone(id: other.id)

        let queue = Set(try store.enrichmentQueue(Self.everyStatus))
        let decided: Set = [try key(store, unsure.id), try key(store, other.id)]
        #expect(queue.isDisjoint(with: decided), "enrich --all does not ask what a person decided")
        // Even an answer that reaches the store (a run that read them before the choice) is not saved.
        let answers = try store.records(ids: [unsure.id, other.id]).map {
            answered($0, match("/works/OL1W", "Good Omens", ["Neil Gaiman", "Terry Pratchett"]))
        }
        #expect(try await store.saveEnrichment(answers, runID: nil).isEmpty)
        let stored = try store.records(ids: [unsure.id, other.id])
        #expect(stored[0].status == .enriched && stored[0].enrichment?.match?.workKey == "/works/OL2W")
        #expect(stored[1].status == .notFound && stored[1].enrichment?.match == nil)
        #expect(try await store.provenance(of: stored[0])["match"] == "person")
        #expect(try await store.provenance(of: stored[1])["match"] == "person")
    }

    @Test("An edit after a choice releases the chosen match (chosen for the old title): looked up again, the match then the source's")
    func editReleasesAnEarlierChoice() async throws {
        let store = try temporaryLibrary()
        let unsure = detection(12, title: "GOOD OMENS", authors: ["GAIMAN PRATCHETT"])
        try store.insert([unsure])
        var uncertain = unsure
        uncertain.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            candidate("/works/OL1W", "Good Omens", ["Neil Gaiman", "Terry Pratchett"], score: 80)])
        _ = try await store.saveEnrichment([uncertain], runID: nil)
        try await store.choose(id: unsure.id, candidate: 1)
        #expect(Set(try store.recordEdits(id: unsure.id).map(\.field)) == ["match"])

        try await store.edit(id: unsure.id, title: "Good Omens", authors: ["Neil Gaiman", "Terry Pratchett"])
        #expect(Set(try store.recordEdits(id: unsure.id).map(\.field)) == ["title", "authors"])
        let recordKey = try key(store, unsure.id)
        let locks = try store.read("locks") { db in
            try String.fetchOne(db, sql: "SELECT locked_fields FROM records WHERE key = ?", arguments: [recordKey])
        }
        #expect(locks == #"["authors","title"]"#)
        #expect(try store.enrichmentQueue(EnrichmentSelection(statuses: [.pending])) == [try key(store, unsure.id)])
        let asked = try #require(try store.records(ids: [unsure.id]).first)
        _ = try await store.saveEnrichment([answered(asked, match("/works/OL1W", "Good Omens",
                                                                   ["Neil Gaiman", "Terry Pratchett"]))], runID: nil)
        let stored = try #require(try store.records(ids: [unsure.id]).first)
        #expect(stored.status == .enriched && stored.reviewStatus == .userEdited)
        #expect(try await store.provenance(of: stored) == ["title": "person", "authors": "person", "match": "openlibrary"])
    }

    @Test("An edit that types the stored title again asks nothing new: the match, a chosen one included, stays")
    func unchangedEditKeepsTheLookup() async throws {
        let store = try temporaryLibrary()
        let right = detection(3, title: "It", authors: ["Stephen King"])
        try store.insert([right])
        _ = try await store.saveEnrichment([answered(right, match(Self.it.work, Self.it.title, Self.it.authors))], runID: nil)
        let edited = try await store.edit(id: right.id, title: "It", authors: nil)
        #expect(edited.reviewStatus == .userEdited && edited.status == .enriched)
        #expect(edited.enrichment?.match?.workKey == Self.it.work)
        #expect(try store.recordChanges(recordID: right.id).isEmpty)

        let unsure = detection(12, title: "Good Omens", authors: ["Neil Gaiman"])
        try store.insert([unsure])
        var uncertain = unsure
        uncertain.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            candidate("/works/OL1W", "Good Omens", ["Neil Gaiman", "Terry Pratchett"], score: 80)])
        _ = try await store.saveEnrichment([uncertain], runID: nil)
        try await store.choose(id: unsure.id, candidate: 1)
        let retyped = try await store.edit(id: unsure.id, title: nil, authors: ["Neil Gaiman"])
        #expect(retyped.status == .enriched && retyped.enrichment?.match?.workKey == "/works/OL1W")
        #expect(try await store.provenance(of: retyped) == ["title": "file", "authors": "person", "match": "person"])
    }
}
