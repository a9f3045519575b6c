import BookpipeCore
import BookpipeLibrary
import Testing

/// Rules both engines apply to what they count or read (moved out of the engines' SQL code).
@Suite struct SharedRulesTests {
    @Test("A source's reach is 1 minus the shares the sources before it matched; too little history is nil")
    func reach() {
        let reach = EnrichmentSelection.reach(chain: ["catalog", "openlibrary", "googlebooks"],
                                              matchedBySource: ["catalog": 60, "openlibrary": 30, "googlebooks": 5],
                                              lookedUp: 100, minimum: 50)
        #expect(reach == ["catalog": 1.0, "openlibrary": 0.4, "googlebooks": 0.1])
        #expect(EnrichmentSelection.reach(chain: ["catalog"], matchedBySource: [:], lookedUp: 49, minimum: 50) == nil)
        #expect(EnrichmentSelection.reach(chain: ["catalog"], matchedBySource: [:], lookedUp: 0, minimum: 0) == nil)
    }

    @Test("A record's queue: an unsure detection first, then an uncertain match, else none")
    func reviewKind() {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "a", row: 1, line: 2), title: "T", authors: [])
        #expect(ReviewKind.of(record) == nil)
        record.enrichment = EnrichmentResult(status: .needsCandidateSelection)
        #expect(ReviewKind.of(record) == .match)
        record.reviewStatus = .needsReview
        #expect(ReviewKind.of(record) == .scan)
    }
}
