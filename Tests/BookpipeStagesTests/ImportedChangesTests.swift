import BookpipeCore
import BookpipeLibrary
import Foundation
import Testing
@testable import BookpipeStages

/// What a newer export's row does to the record of its entry.
@Suite struct ImportedChangesTests {
    func stored() -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "h", row: 1, line: 2, format: "goodreads"),
                                title: "Dune", authors: ["Frank Herbert"], rawISBNs: [], year: 1965)
        Normalizer.normalize(&record)
        record.enrichment = EnrichmentResult(status: .enriched)
        record.enrichment?.match = Match(workKey: "/works/OL893415W", editionKey: nil, title: "Dune",
                                         authors: ["Frank Herbert"], score: 180, source: "openlibrary")
        return record
    }

    @Test("A changed title is applied and clears the match (looked up again); a changed shelf keeps it")
    func titleClearsShelfKeeps() {
        var retitled = stored()
        retitled.title = "Dune (Deluxe Edition)"
        let update = ImportedChanges.update(stored: stored(), incoming: retitled, personEdits: [], file: "b.csv", at: Date())
        #expect(update.changed == ["title"])
        #expect(update.update.record.title == "Dune (Deluxe Edition)")
        #expect(update.update.record.enrichment == nil)
        var shelved = stored()
        shelved.shelf = "read"
        let kept = ImportedChanges.update(stored: stored(), incoming: shelved, personEdits: [], file: "b.csv", at: Date())
        #expect(kept.update.record.enrichment?.match?.workKey == "/works/OL893415W")
    }

    @Test("A person's edited title and chosen match stand: the file's title is logged as kept, the match is not cleared")
    func personWins() {
        var retitled = stored()
        retitled.title = "Dune: The Graphic Novel"
        retitled.year = 2020
        let result = ImportedChanges.update(stored: stored(), incoming: retitled, personEdits: ["title", "match"],
                                            file: "b.csv", at: Date())
        #expect(result.kept == ["title"])
        #expect(result.changed == ["year"])
        #expect(result.update.record.title == "Dune")
        #expect(result.update.record.enrichment?.match?.workKey == "/works/OL893415W", "a chosen match is never cleared")
        #expect(result.update.changes.contains { $0.kind == .editKept && $0.new == "Dune: The Graphic Novel" })
    }
}
