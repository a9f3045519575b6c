import BookpipeCore
import BookpipeLibrary
import Foundation
import Testing

/// The product's rules over values, with no database: what a review decision changes, what a
/// re-enrichment may overwrite.
@Suite struct LibraryRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(status: RecordStatus? = .enriched, match: String? = "/works/OL1W") -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "f", row: 1, line: 2, format: "generic", rawFields: []),
                                title: "Dnue", authors: ["Frank Herbert"], rawISBNs: [], year: 1965)
        Normalizer.normalize(&record, currentYear: 2026)
        if let status {
            record.enrichment = EnrichmentResult(status: status, match: match.map {
                Match(workKey: $0, editionKey: nil, title: "Dune", authors: ["Frank Herbert"], score: 180, source: "catalog")
            }, candidates: [Candidate(workKey: "/works/OL9W", title: "Dune Messiah", authors: ["Frank Herbert"],
                                      source: "catalog", score: 80)])
        }
        return record
    }

    @Test("Verifying an uncertain match is refused; verifying an unsure detection is not")
    func verifyRefusal() {
        let uncertain = ReviewState(reviewStatus: .verified, status: .needsCandidateSelection, candidates: 3)
        #expect(ReviewRules.refusal(.verify, id: "f:1", state: uncertain) == .uncertainMatch(id: "f:1", candidates: 3))
        let detection = ReviewState(reviewStatus: .needsReview, status: .needsCandidateSelection, candidates: 3)
        #expect(ReviewRules.refusal(.verify, id: "f:1", state: detection) == nil)
        #expect(ReviewRules.refusal(.edit(title: "  ", authors: nil), id: "f:1", state: detection) == .emptyEdit(id: "f:1"))
    }

    @Test("An edit that changes the title clears the stale lookup, locks the typed fields and releases a chosen match")
    func editClearsLookup() throws {
        var record = Self.record()
        let effects = try ReviewRules.apply(.edit(title: " Dune ", authors: nil), to: &record, at: Self.now)
        #expect(record.title == "Dune" && record.reviewStatus == .userEdited)
        #expect(record.enrichment == nil && record.status == .pending)
        #expect(effects.suppliedFields == ["title": "\"Dune\""])
        #expect(effects.releasedLocks == ["match"])
        #expect(effects.locks(after: ["match", "authors"]) == ["title", "authors"])
        #expect(effects.changeLog.map(\.field) == ["status", "match"])
        #expect(effects.changeLog.allSatisfy { $0.source == "person" })
        #expect(effects.changeLog.first { $0.field == "match" }?.kind == .cleared)
    }

    @Test("Typing the stored values again keeps the lookup")
    func editSameValues() throws {
        var record = Self.record()
        let effects = try ReviewRules.apply(.edit(title: "Dnue", authors: ["Frank Herbert"]), to: &record, at: Self.now)
        #expect(record.enrichment?.match?.workKey == "/works/OL1W")
        #expect(effects.changeLog.isEmpty && effects.releasedLocks.isEmpty)
    }

    @Test("Choosing a candidate out of range is refused with the count; a valid one becomes the locked match")
    func choose() throws {
        var record = Self.record(status: .needsCandidateSelection, match: nil)
        #expect(throws: ReviewError.noSuchCandidate(id: "f:1", number: 2, count: 1)) {
            try ReviewRules.apply(.choose(2), to: &record, at: Self.now)
        }
        let effects = try ReviewRules.apply(.choose(1), to: &record, at: Self.now)
        #expect(record.enrichment?.match?.workKey == "/works/OL9W" && record.status == .enriched)
        #expect(effects.suppliedFields == ["match": "\"\\/works\\/OL9W\""] || effects.suppliedFields == ["match": "\"/works/OL9W\""])
    }

    @Test("Re-enrichment leaves a match a person chose, and an answer to a question the person has since corrected")
    func reenrichmentRespectsPeople() {
        var incoming = Self.record()
        incoming.enrichment = EnrichmentResult(status: .notFound)
        let locked = StoredEnrichmentState(status: .enriched, reviewStatus: .verified, lockedFields: ["match"],
                                           enrichment: Self.record().enrichment)
        #expect(ReenrichmentRules.decide(incoming, stored: locked, quotaEnd: nil, at: Self.now) == .keep)
        let editedSince = StoredEnrichmentState(status: .pending, reviewStatus: .userEdited, lockedFields: ["title"],
                                                enrichment: nil, editedTitleAndAuthors: ("Dune", ["Frank Herbert"]))
        #expect(ReenrichmentRules.decide(incoming, stored: editedSince, quotaEnd: nil, at: Self.now) == .keep)
    }

    @Test("A failed lookup never replaces an earlier answer: it only gets a retry time (a quota's end when a quota blocks)")
    func failedKeepsAnswer() {
        var incoming = Self.record()
        incoming.enrichment = EnrichmentResult(status: .failed, failure: "googlebooks: daily quota exhausted")
        let stored = StoredEnrichmentState(status: .enriched, reviewStatus: .verified, lockedFields: [],
                                           enrichment: Self.record().enrichment)
        let quotaEnd = Self.now.addingTimeInterval(3600)
        #expect(ReenrichmentRules.decide(incoming, stored: stored, quotaEnd: quotaEnd, at: Self.now) == .retryLater(at: quotaEnd))
    }

    @Test("A match that moves to another work is written with a finding naming bookpipe show, and logged")
    func movedMatch() throws {
        var incoming = Self.record(match: "/works/OL2W")
        incoming.findings = []
        let stored = StoredEnrichmentState(status: .enriched, reviewStatus: .verified, lockedFields: [],
                                           enrichment: Self.record().enrichment)
        guard case .write(let record, let changes, let retryAt) = ReenrichmentRules.decide(incoming, stored: stored,
                                                                                          quotaEnd: nil, at: Self.now) else {
            Issue.record("expected a write")
            return
        }
        #expect(retryAt == nil)
        #expect(changes.first { $0.field == "match" }?.kind == .moved)
        let finding = try #require(record.findings.first { $0.code == "enrich.match-moved" })
        #expect(finding.message.contains("bookpipe show f:1"))
    }
}
