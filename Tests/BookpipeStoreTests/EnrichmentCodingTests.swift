import BookpipeCore
import Foundation
import Testing
@testable import BookpipeStore

/// The `enrichment` column's hand-written encoder writes exactly what `JSONEncoder` writes.
@Suite struct EnrichmentCodingTests {
    private func candidate(_ title: String, work: String = "/works/OL1W", edition: String? = "/books/OL1M",
                           year: Int? = 1965, publisher: String? = "Ace", isbns: [String] = ["9780441013593"],
                           breakdown: [String: Int] = ["title": 100, "author": 50, "year": 30, "isbn": 0],
                           others: [String] = []) -> Candidate {
        var candidate = Candidate(workKey: work, editionKey: edition, title: title, authors: ["Frank Herbert", "Ann Other"],
                                  year: year, publisher: publisher, isbn13s: isbns, source: "catalog", score: 180,
                                  breakdown: breakdown)
        candidate.otherEditions = others
        return candidate
    }

    private var results: [EnrichmentResult] {
        let dune = candidate("Dune")
        return [
            EnrichmentResult(status: .pending),
            EnrichmentResult(status: .notFound),
            EnrichmentResult(status: .failed, failure: "openlibrary: HTTP 503 \"busy\" / retry"),
            EnrichmentResult(status: .enriched,
                             match: Match(workKey: dune.workKey, editionKey: dune.editionKey, title: dune.title,
                                          authors: dune.authors, score: 180, source: "catalog"),
                             candidates: [dune]),
            // A Google Books match: no work (null), no edition, no year; texts that JSON escapes.
            EnrichmentResult(status: .enriched,
                             match: Match(workKey: "", editionKey: nil, title: #"A "quoted" \ back/slash"#,
                                          authors: [], score: 150, source: "googlebooks"),
                             candidates: [candidate(#"A "quoted" \ back/slash"#, work: "", edition: nil, year: nil,
                                                    publisher: nil, isbns: [], breakdown: [:])]),
            EnrichmentResult(status: .needsCandidateSelection, candidates: [
                candidate("Søren Kierkegaard: Æsthetik – 東京 🙂", others: ["/books/OL2M", "/books/OL3M"]),
                candidate("Dune Messiah", work: "/works/OL2W", breakdown: ["title": 50]),
            ]),
            // Left to JSONEncoder: a control character, a breakdown key that is not lowercase letters.
            EnrichmentResult(status: .notFound, candidates: [candidate("Tab\there\u{1}")]),
            EnrichmentResult(status: .notFound, candidates: [candidate("Keys", breakdown: ["Title": 1, "isbn13": 2])]),
        ]
    }

    @Test("the hand-written enrichment encoder writes JSONEncoder's bytes (sorted keys), for every shape of result")
    func sameBytesAsJSONEncoder() throws {
        for result in results {
            let fast = RecordCoding.encodeEnrichment(result)
            #expect(fast == RecordCoding.encode(result))
            #expect(try JSONDecoder().decode(EnrichmentResult.self, from: Data(fast.utf8)) == result)
        }
    }
}
