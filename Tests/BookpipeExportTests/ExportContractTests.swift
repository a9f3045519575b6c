import BookpipeCore
import Foundation
import Testing
@testable import BookpipeExport

@Suite struct ExportContractTests {
    /// The keys DESIGN.md §6 promises on every object; they are never renamed.
    static let requiredKeys: Set<String> = ["id", "source", "title", "normalizedTitle", "authors", "isbn13", "status",
                                            "match", "reviewStatus"]

    func object(_ record: BookRecord) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(ExportContract.jsonText(record).utf8)) as? [String: Any])
    }

    @Test("A row that was only read has the contract's keys, with null for what is not known yet")
    func pendingRow() throws {
        let object = try object(ExportSamples.pendingRow)
        #expect(Set(object.keys) == Self.requiredKeys.union(["format"]))
        #expect(object["status"] as? String == "pending")
        #expect(object["match"] is NSNull && object["isbn13"] is NSNull && object["normalizedTitle"] is NSNull)
        let source = try #require(object["source"] as? [String: Any])
        #expect(Set(source.keys) == ["file", "row", "line"])
        #expect(source["file"] as? String == "shelf/goodreads.csv")
        #expect(source["row"] as? Int == 2 && source["line"] as? Int == 4)
    }

    @Test("A CSV row nobody routed has a null reviewStatus; a person's or a scan routing's decision is written as is")
    func reviewStatus() throws {
        #expect(try object(ExportSamples.pendingRow)["reviewStatus"] is NSNull)
        #expect(try object(ExportSamples.enrichedDune)["reviewStatus"] is NSNull)
        var edited = ExportSamples.pendingRow
        edited.reviewStatus = .userEdited
        #expect(try object(edited)["reviewStatus"] as? String == "userEdited")
        var flagged = ExportSamples.pendingRow
        flagged.reviewStatus = .needsReview
        #expect(try object(flagged)["reviewStatus"] as? String == "needsReview")
        var sureScan = ExportSamples.uncertainScan
        sureScan.reviewStatus = .verified
        #expect(try object(sureScan)["reviewStatus"] as? String == "verified")
        #expect(ExportContract.csvFields(sureScan)[10] == "verified")
        #expect(ExportContract.csvFields(ExportSamples.pendingRow)[10] == "")
    }

    @Test("A failed lookup says why under failure")
    func failure() throws {
        var record = ExportSamples.pendingRow
        record.enrichment = EnrichmentResult(status: .failed, failure: "openlibrary: HTTP 503 four times")
        let object = try object(record)
        #expect(object["status"] as? String == "failed")
        #expect(object["failure"] as? String == "openlibrary: HTTP 503 four times")
        #expect(ExportContract.csvFields(record)[14] == "openlibrary: HTTP 503 four times")
    }

    @Test("A scan detection's source names the scan and the detection's index, and carries its confidence")
    func scanSource() throws {
        let object = try object(ExportSamples.uncertainScan)
        let source = try #require(object["source"] as? [String: Any])
        #expect(source["scan"] as? String == "shelf.json")
        #expect(source["index"] as? Int == 3)
        #expect(object["confidence"] as? Double == 0.42)
        #expect(object["reviewStatus"] as? String == "needsReview")
        let candidates = try #require(object["candidates"] as? [[String: Any]])
        #expect(candidates.first?["breakdown"] as? [String: Int] == ["title": 50, "author": 0])
    }

    @Test("Every record's CSV cells line up with the CSV header")
    func csvColumns() {
        for record in [ExportSamples.enrichedDune, ExportSamples.pendingRow, ExportSamples.uncertainScan] {
            #expect(ExportContract.csvFields(record).count == ExportContract.csvHeader.count)
        }
        #expect(ExportContract.csvFields(ExportSamples.enrichedDune) == [
            "aaaa:1", "shelf/goodreads.csv", "1", "2", "Dune (Dune #1)", "Dune", "Herbert, Frank", "9780441013593", "1965",
            "enriched", "", "/works/OL893415W", "Dune", "180", "", "", "", "", "2021/3/5", "", "", "", "", "", "", "",
        ])
    }

    @Test("Every key the contract writes is one whose order is JSONSerialization's: ASCII letters and digits")
    func keysInSortableForm() throws {
        var keys: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                keys += object.keys
                object.values.forEach(collect)
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        for record in [ExportSamples.enrichedDune, ExportSamples.pendingRow, ExportSamples.uncertainScan] {
            collect(try object(record))
        }
        #expect(keys.count > 40)
        for key in keys {
            let isSortable = key.first?.isLetter == true && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            #expect(isSortable, "\(key)")
        }
        #expect(Set(keys.map { $0.lowercased() }).count == Set(keys).count, "no two keys differ only in case")
    }
}
