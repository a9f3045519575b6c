import BookpipeCore
import BookpipeStore
import Foundation

/// Records that exercise every part of the export contract, and temporary libraries to hold them.
enum ExportSamples {
    /// A new, empty library in a temporary file (removed by the system's temporary-file cleanup).
    static func temporaryLibrary() throws -> LibraryStore {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("export-\(UUID().uuidString).sqlite").path
        return try LibraryStore(path: path)
    }

    /// A temporary folder for output files.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// An enriched Goodreads row with series, ISBN and a match carrying an Open Library edition.
    static var enrichedDune: BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "shelf/goodreads.csv", fileHash: "aaaa", row: 1, line: 2,
                                                     format: "goodreads",
                                                     rawFields: ["Dune (Dune #1)", "Herbert, Frank", "Paperback", "2021/3/5"]),
                                title: "Dune (Dune #1)", authors: ["Herbert, Frank"], year: 1965)
        record.dateAdded = "2021/3/5"
        record.normalized = NormalizedForms(searchTitle: "Dune", mainTitle: "Dune", titleKey: "dune", series: "Dune",
                                            seriesNumber: "1", authors: ["Frank Herbert"], authorKeys: ["frank herbert"],
                                            isbn13: "9780441013593", allISBN13s: ["9780441013593"])
        record.enrichment = EnrichmentResult(status: .enriched, match: Match(
            workKey: "/works/OL893415W", editionKey: "/books/OL26242482M", title: "Dune", authors: ["Frank Herbert"],
            score: 180, source: "openlibrary"))
        return record
    }

    /// A scan detection waiting for a person: low confidence, candidates to choose from, a finding,
    /// and text that JSON must escape (quotes, backslash, tab, a control character) or must not
    /// (slash, non-ASCII).
    static var uncertainScan: BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "scans/shelf.json", fileHash: "bbbb", row: 3, line: 9,
                                                     format: "scan", rawFields: ["{}"], scan: "shelf.json"),
                                title: "He said \"no\" \\ / back\tagain\u{1}", authors: ["A/B", "Ünïcödé 📚"],
                                reviewStatus: .needsReview)
        record.scan = ScanDetection(confidence: 0.42, boundingBox: BoundingBox(x: 0.1, y: 0.2, width: 0.05, height: 0.5),
                                    photoPath: "scans/shelf.jpg")
        record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL1W", title: "Back Again", authors: ["A B"], source: "catalog", score: 50,
                      breakdown: ["title": 50, "author": 0]),
        ])
        record.addFinding(Finding(code: "isbn.invalid-checksum", severity: .warning, field: "ISBN",
                                  message: "\"123\" is not a valid ISBN"))
        return record
    }

    /// A row read and nothing more: no normalised forms, no enrichment.
    static var pendingRow: BookRecord {
        BookRecord(origin: RecordOrigin(file: "shelf/goodreads.csv", fileHash: "aaaa", row: 2, line: 4, format: "goodreads"),
                   title: "=HYPERLINK(\"http://x\")", authors: ["@evil", "+plus"])
    }

    /// The exact JSON object of ``enrichedDune`` as the export writes it (with its provenance).
    static let enrichedDuneJSON = #"{"authors":["Herbert, Frank"],"dateAdded":"2021/3/5","format":"goodreads","id":"aaaa:1","#
        + #""isbn13":"9780441013593","match":{"authors":["Frank Herbert"],"editionKey":"/books/OL26242482M","#
        + #""score":180,"source":"openlibrary","title":"Dune","workKey":"/works/OL893415W"},"#
        + #""normalizedTitle":"Dune","provenance":{"authors":"file","dateAdded":"file","isbn13":"file","#
        + #""match":"openlibrary","normalizedTitle":"file","series":"file","seriesNumber":"file","title":"file","#
        + #""year":"file"},"reviewStatus":null,"series":"Dune","seriesNumber":"1","#
        + #""source":{"file":"shelf/goodreads.csv","line":2,"row":1},"status":"enriched","title":"Dune (Dune #1)","#
        + #""year":1965}"#

    /// The exact JSON object of ``uncertainScan`` as the export writes it (with its provenance).
    static let uncertainScanJSON = #"{"authors":["A/B","Ünïcödé 📚"],"candidates":[{"authors":["A B"],"#
        + #""breakdown":{"author":0,"title":50},"editionKey":null,"score":50,"source":"catalog","title":"Back Again","#
        + #""workKey":"/works/OL1W"}],"confidence":0.42,"findings":[{"code":"isbn.invalid-checksum","#
        + #""field":"ISBN","message":"\"123\" is not a valid ISBN","severity":"warning"}],"format":"scan","#
        + #""id":"bbbb:3","isbn13":null,"match":null,"normalizedTitle":null,"#
        + #""provenance":{"authors":"file","confidence":"file","title":"file"},"reviewStatus":"needsReview","#
        + #""source":{"file":"scans/shelf.json","index":3,"line":9,"row":3,"scan":"shelf.json"},"#
        + #""status":"needsCandidateSelection","title":"He said \"no\" \\ / back\tagain\u0001"}"#

    /// The exact JSON object of ``pendingRow`` as the export writes it (with its provenance).
    static let pendingRowJSON = #"{"authors":["@evil","+plus"],"format":"goodreads","id":"aaaa:2","isbn13":null,"#
        + #""match":null,"normalizedTitle":null,"provenance":{"authors":"file","title":"file"},"reviewStatus":null,"#
        + #""source":{"file":"shelf/goodreads.csv","line":4,"row":2},"status":"pending","#
        + #""title":"=HYPERLINK(\"http://x\")"}"#

    /// What `JSONSerialization` writes for the same value with sorted keys and unescaped slashes:
    /// the bytes the export promised before it wrote its JSON itself.
    static func canonicalJSON(_ text: String) throws -> String {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        let data = try JSONSerialization.data(withJSONObject: value,
                                              options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        return String(decoding: data, as: UTF8.self)
    }

    /// A scan detection with every field the contract can write set at once: what the file had
    /// (shelf, rating, dates, publisher, pages, binding, review, tags, raw ISBNs), series, a
    /// failure, findings with and without a field, a match and candidates.
    static var everyField: BookRecord {
        var record = uncertainScan
        record.rawISBNs = ["=\"0441013597\"", "9780441013593"]
        record.year = 1965
        record.publisher = "Ace / Chilton"
        record.pageCount = 604
        record.shelf = "read"
        record.rating = 4.5
        record.dateAdded = "2021/03/05"
        record.dateRead = "2022-01-02"
        record.binding = "Mass Market Paperback"
        record.review = "Long,\n\"quoted\" review \u{2028} with a tab\t"
        record.tags = ["sci-fi", "to-read", "favourites"]
        record.normalized = enrichedDune.normalized
        record.enrichment = EnrichmentResult(status: .failed, failure: "googlebooks: HTTP 429",
                                             match: enrichedDune.enrichment?.match,
                                             candidates: uncertainScan.enrichment?.candidates ?? [])
        record.addFinding(Finding(code: "date.unparseable", severity: .info, message: "no field"))
        return record
    }
}
