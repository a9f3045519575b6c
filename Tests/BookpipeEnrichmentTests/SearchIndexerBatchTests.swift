import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

/// The rebuild reads a dense batch of units by key range (``SearchIndexer/BatchRows``): the documents
/// it computes must be the ones the unit-by-unit reads compute, for every kind of unit.
@Suite(.timeLimit(.minutes(5)))
struct SearchIndexerBatchTests {
    /// Every unit of the resume tests' catalogue (works with and without a record, editions without a
    /// work, a removed work, a key that names nothing), in key order.
    static func catalogAndUnits() async throws -> (LocalCatalog, [String]) {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        var lines = try CatalogImportResumeTests.dumpLines()
        // Work 3 gets 70 more editions (more than the 50 edition titles a work indexes, so which come
        // first matters), each with two authors; work 2,100 has no record and 3 editions; work 4,000
        // has a record without authors, so its editions' authors stand in.
        for number in 10_000..<10_070 {
            lines.append(try CatalogSamples.line(type: "edition", key: "/books/OL\(number)M", [
                "title": "Edition Title \(number % 60)", "works": [["key": "/works/OL3W"]],
                "authors": [["key": "/authors/OL\(number % 40 + 1)A"], ["key": "/authors/OL\(number % 7 + 100)A"]],
                "publish_date": String(1950 + number % 30)]))
        }
        for number in 10_100..<10_103 {
            lines.append(try CatalogSamples.line(type: "edition", key: "/books/OL\(number)M", [
                "title": "Lost Work \(number % 2)", "works": [["key": "/works/OL2100W"]], "publish_date": String(1990 - number % 5)]))
        }
        lines.append(try CatalogSamples.line(type: "work", key: "/works/OL4000W", ["title": "No Authors Here"]))
        _ = try await catalog.import(dumpFile: try CatalogSamples.writeDump(lines, in: directory))
        let units = try await catalog.pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT key FROM works UNION SELECT work_key FROM editions WHERE work_key IS NOT NULL
                UNION SELECT key FROM editions WHERE work_key IS NULL UNION SELECT '/works/OL11W' UNION SELECT '/works/OL1500X'
                ORDER BY 1
                """)
        }
        return (catalog, units)
    }

    static func text(_ documents: [SearchIndexer.UnitDocuments]) -> [String] {
        documents.map { String(describing: $0) }
    }

    @Test("Documents read by key range are the ones read unit by unit, old documents included")
    func rangeReadsMatchUnitReads() async throws {
        let (catalog, units) = try await Self.catalogAndUnits()
        #expect(units.count > 5_000)
        try await catalog.pool.read { db in
            let indexer = SearchIndexer(db: db)
            var documents = 0
            for start in stride(from: 0, to: units.count, by: 700) {
                let batch = Array(units[start..<min(start + 700, units.count)])
                let rows = try SearchIndexer.BatchRows(first: batch[0], last: batch[batch.count - 1], db: db)
                let byRange = try batch.map { try indexer.documents(of: $0, from: rows) }
                let oneByOne = try batch.map { try indexer.documents(of: $0) }
                #expect(Self.text(byRange) == Self.text(oneByOne), "units \(batch[0]) to \(batch[batch.count - 1])")
                documents += byRange.reduce(0) { $0 + $1.new.count + $1.old.count }
            }
            #expect(documents > 10_000)  // every unit has stored documents, and new ones
        }
    }

    @Test("A batch reads by range when its keys are dense, unit by unit when sparse, with the same documents")
    func denseAndSparseBatches() async throws {
        let (catalog, units) = try await Self.catalogAndUnits()
        try await catalog.pool.read { db in
            let indexer = SearchIndexer(db: db)
            let dense = Array(units[100..<1_100])
            let sparse = stride(from: 0, to: units.count, by: 97).map { units[$0] }
            for batch in [dense, sparse] {
                let batched = try indexer.documents(ofBatch: batch)
                let oneByOne = try batch.map { try indexer.documents(of: $0) }
                #expect(Self.text(batched) == Self.text(oneByOne))
            }
            let none = try indexer.documents(ofBatch: [])
            #expect(none.isEmpty)
        }
    }
}
