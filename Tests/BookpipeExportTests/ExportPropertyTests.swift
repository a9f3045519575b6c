import BookpipeCore
import BookpipeIngest
import Foundation
import PropertyBased
import Testing
@testable import BookpipeExport

/// What the exports write reads back (issue 24): the `csv` layout through bookpipe's own CSV
/// reader, the `json` layout through a JSON parser, for generated text of every awkward kind.
@Suite struct ExportPropertyTests {
    /// Pieces of text: formula starts (the guard's = + - @ tab CR), quotes, delimiters, line
    /// breaks, an apostrophe (the guard's own mark), spaces, control characters, non-ASCII.
    static let pieces = [
        "=", "+", "-", "@", "\t", "\r", "\n", "\r\n", "\"", "\"\"", "'", ",", ";", "; ", " ", "  ", "a", "Dune", "é",
        "e\u{301}", "日本", "📚", "=HYPERLINK(\"http://x\")", "=1+1", "\u{1}", "\u{1F}", "\\", "/", "0", "3.5", "#",
    ]
    static let texts = Gen<String?>.element(of: pieces).map { $0 ?? "" }.array(of: 0...8).map { $0.joined() }

    /// A record holding `texts` in every free-text field the `csv` layout has a column for.
    static func record(_ texts: [String], rating: Double?) -> BookRecord {
        let title = texts[0].trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? "Untitled" + texts[0] : texts[0]
        var record = BookRecord(origin: RecordOrigin(file: "in.csv", fileHash: "ffff", row: 1, line: 2, format: "generic"),
                                title: title, authors: [texts[1]], rawISBNs: [texts[2]])
        record.shelf = texts[3]
        record.publisher = texts[4]
        record.binding = texts[5]
        record.review = texts[6]
        record.tags = [texts[7]]
        record.dateAdded = texts[8]
        record.rating = rating
        return record
    }

    @Test("A record's csv row read back by the CSV reader gives every cell as written, the formula guard's apostrophe included")
    func csvRoundTrip() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("export-csv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("export.csv").path
        await propertyCheck(count: 300, input: Self.texts.array(of: 9)) { texts in
            let record = Self.record(texts, rating: 3.5)
            let cells = ExportContract.csvFields(record)
            let file = CSVWriting.line(ExportContract.csvHeader) + CSVWriting.line(cells)
            try Data(file.utf8).write(to: URL(fileURLWithPath: path))
            let reader = try CSVRecordReader(path: path)
            let batch = try #require(try reader.nextBatch(maxRecords: 10))
            #expect(batch.rejected.isEmpty, "\(batch.rejected)")
            let read = try #require(batch.records.first)
            // The guard is one-way: a cell a spreadsheet would run comes back with its apostrophe.
            // Reading it back cannot tell it from a cell that began with "'" (docs/export-contract.md).
            #expect(read.origin.rawFields == cells.map(CSVWriting.neutralized))
            #expect(read.title == CSVWriting.neutralized(record.title))
            #expect(try reader.nextBatch(maxRecords: 10) == nil)
        }
    }

    @Test("A cell that does not start like a formula reads back exactly; one that does gains exactly one apostrophe")
    func formulaGuardIsOneApostrophe() async {
        await propertyCheck(count: 1000, input: Self.texts) { text in
            let guarded = CSVWriting.neutralized(text)
            if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) {
                #expect(guarded == "'" + text)
            } else {
                #expect(guarded == text)
            }
        }
    }

    @Test("A record's JSON object parses back to the same text fields, lists and rating")
    func jsonRoundTrip() async throws {
        await propertyCheck(count: 500, input: Self.texts.array(of: 9), Gen.int(in: 0...10)) { texts, halves in
            let record = Self.record(texts, rating: Double(halves) / 2)
            let text = ExportContract.jsonText(record)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(object["title"] as? String == record.title)
            #expect(object["authors"] as? [String] == record.authors)
            #expect(object["rawISBNs"] as? [String] == record.rawISBNs)
            #expect(object["shelf"] as? String == record.shelf)
            #expect(object["publisher"] as? String == record.publisher)
            #expect(object["binding"] as? String == record.binding)
            #expect(object["review"] as? String == record.review)
            #expect(object["tags"] as? [String] == record.tags)
            #expect(object["dateAdded"] as? String == record.dateAdded)
            #expect((object["rating"] as? NSNumber)?.doubleValue == record.rating)
            #expect(object["id"] as? String == record.id)
        }
    }
}
