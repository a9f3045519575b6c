import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeExport

/// Provenance in the export (issue 12: "each stored field records who supplied it (the file, a
/// source, or a person) … the export shows provenance").
@Suite struct ExportProvenanceTests {
    /// Keys that describe the record or its processing rather than hold a supplied value.
    static let bookkeeping: Set<String> = ["id", "source", "status", "reviewStatus", "format", "failure", "candidates",
                                           "findings", "provenance"]

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func provenance(_ record: BookRecord, _ edited: Set<String> = []) throws -> [String: String] {
        let object = try object(ExportContract.jsonText(record, editedByPerson: edited))
        return try #require(object["provenance"] as? [String: String])
    }

    @Test("Every value the object holds has exactly one supplier under provenance, and nothing else is listed",
          arguments: [ExportSamples.enrichedDune, ExportSamples.pendingRow, ExportSamples.uncertainScan])
    func everyValueHasASupplier(_ record: BookRecord) throws {
        let object = try object(ExportContract.jsonText(record, editedByPerson: []))
        let supplied = Set(object.filter { !($0.value is NSNull) }.keys).subtracting(Self.bookkeeping)
        let provenance = try #require(object["provenance"] as? [String: String])
        #expect(Set(provenance.keys) == supplied)
        // The object is the contract's object plus provenance: nothing else changes.
        var plain = try self.object(ExportContract.jsonText(record))
        plain["provenance"] = provenance
        #expect(NSDictionary(dictionary: plain).isEqual(to: object))
    }

    @Test("Read values come from the file, the match from the source that found it")
    func fileAndSource() throws {
        let dune = try provenance(ExportSamples.enrichedDune)
        #expect(dune["match"] == "openlibrary")
        #expect(dune.filter { $0.key != "match" }.values.allSatisfy { $0 == "file" })
        #expect(Set(dune.keys) == ["authors", "dateAdded", "isbn13", "match", "normalizedTitle", "series", "seriesNumber",
                                   "title", "year"])
        let scan = try provenance(ExportSamples.uncertainScan)
        #expect(scan == ["authors": "file", "confidence": "file", "title": "file"])
    }

    @Test("A person's title edit is the person's, and so are the forms derived from it; a chosen match or none is the person's")
    func personEdits() throws {
        let edited = try provenance(ExportSamples.enrichedDune, ["title", "match"])
        #expect(edited["title"] == "person" && edited["normalizedTitle"] == "person")
        #expect(edited["series"] == "person" && edited["seriesNumber"] == "person")
        #expect(edited["authors"] == "file" && edited["year"] == "file")
        #expect(edited["match"] == "person")
        var none = ExportSamples.uncertainScan
        none.enrichment = EnrichmentResult(status: .notFound)
        let chosenNone = try provenance(none, ["match", "authors"])
        #expect(chosenNone["match"] == "person" && chosenNone["authors"] == "person" && chosenNone["title"] == "file")
    }

    @Test("The CSV layout appends one provenance column: field=supplier pairs in key order")
    func csvColumn() {
        #expect(ExportContract.csvHeaderWithProvenance.last == "provenance")
        #expect(Array(ExportContract.csvHeaderWithProvenance.dropLast()) == ExportContract.csvHeader)
        let cells = ExportContract.csvFields(ExportSamples.uncertainScan, editedByPerson: ["title"])
        #expect(cells.count == ExportContract.csvHeaderWithProvenance.count)
        #expect(cells.last == "authors=file; confidence=file; title=person")
    }

    @Test("A library's export takes the person's edits from the library: edited fields and a chosen candidate say person, the rest file or source")
    func libraryEditsReachTheExport() async throws {
        let store = try ExportSamples.temporaryLibrary()
        try store.insert([ExportSamples.uncertainScan, ExportSamples.enrichedDune, ExportSamples.pendingRow])
        try await store.edit(id: "bbbb:3", title: "Back Again", authors: nil)
        // The edit made the lookup stale; the next enrichment asks with "Back Again", is unsure
        // again, and the person chooses among the new candidates.
        var asked = try #require(try store.records(ids: ["bbbb:3"]).first)
        asked.enrichment = ExportSamples.uncertainScan.enrichment
        _ = try await store.saveEnrichment([asked], runID: nil)
        try await store.choose(id: "bbbb:3", candidate: 1)
        #expect(try store.personEditedFields() == ["bbbb:3": ["title", "match"]])
        var text = ""
        try await LibraryExport(format: .jsonl).write(library: store, to: &text)
        let objects = try text.split(separator: "\n").map { try object(String($0)) }
        let byID = Dictionary(uniqueKeysWithValues: objects.map { ($0["id"] as? String ?? "", $0) })
        let scan = try #require(byID["bbbb:3"]?["provenance"] as? [String: String])
        #expect(scan["title"] == "person" && scan["match"] == "person" && scan["authors"] == "file")
        #expect(scan["normalizedTitle"] == "person")
        let dune = try #require(byID["aaaa:1"]?["provenance"] as? [String: String])
        #expect(dune["match"] == "openlibrary" && dune["title"] == "file")
        let pending = try #require(byID["aaaa:2"]?["provenance"] as? [String: String])
        #expect(pending == ["authors": "file", "title": "file"])

        var csv = ""
        try await LibraryExport(format: .csv).write(library: store, to: &csv)
        let lines = csv.split(separator: "\r\n").map(String.init)
        #expect(lines[0].hasSuffix(",rawISBNs,provenance,book"))
        // The scan is a book of its own: its `book` cell is empty.
        #expect(lines.contains { $0.hasPrefix("bbbb:3,") && $0.hasSuffix("match=person; normalizedTitle=person; title=person,") })
    }
}
