import BookpipeCore
import Foundation
import GRDB

/// Turns records into stored columns and back.
enum RecordCoding {
    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Hand-written for the import hot path; the keys are `NormalizedForms`' Codable keys.
    static func encodeNormalized(_ forms: NormalizedForms) -> String {
        JSONText.object([
            ("searchTitle", .string(forms.searchTitle)),
            ("mainTitle", .string(forms.mainTitle)),
            ("titleKey", .string(forms.titleKey)),
            ("series", forms.series.map { .string($0) }),
            ("seriesNumber", forms.seriesNumber.map { .string($0) }),
            ("authors", .strings(forms.authors)),
            ("authorKeys", .strings(forms.authorKeys)),
            ("isbn13", forms.isbn13.map { .string($0) }),
            ("allISBN13s", .strings(forms.allISBN13s)),
        ])
    }

    /// Hand-written for the import hot path; the keys are `Finding`'s Codable keys.
    static func encodeFindings(_ findings: [Finding]) -> String {
        "[" + findings.map { finding in
            JSONText.object([
                ("code", .string(finding.code)),
                ("severity", .string(finding.severity.rawValue)),
                ("field", finding.field.map { .string($0) }),
                ("message", .string(finding.message)),
            ])
        }.joined(separator: ",") + "]"
    }

    static func decode(_ row: Row, path: String) throws -> BookRecord {
        func json<T: Decodable>(_ column: String, as type: T.Type) throws -> T? {
            guard let text: String = row[column] else { return nil }
            do {
                return try JSONDecoder().decode(T.self, from: Data(text.utf8))
            } catch {
                throw StoreError.corruptValue(path: path, what: "\(column) of record \(row["id"] as String? ?? "?")")
            }
        }
        let origin = RecordOrigin(file: row["file"], fileHash: row["file_hash"], row: row["row"], line: row["line"],
                                  format: row["format"], rawFields: JSONText.decodeArray(row["raw"]), scan: row["scan"])
        var record = BookRecord(origin: origin, title: row["title"], authors: JSONText.decodeArray(row["authors"]),
                                rawISBNs: JSONText.decodeArray(row["raw_isbns"]), year: row["year"],
                                reviewStatus: ReviewStatus(rawValue: row["review_status"]) ?? .verified)
        record.publisher = row["publisher"]
        record.pageCount = row["page_count"]
        record.shelf = row["shelf"]
        record.rating = row["rating"]
        record.dateAdded = row["date_added"]
        record.dateRead = row["date_read"]
        record.scan = try json("detection", as: ScanDetection.self)
        record.normalized = try json("normalized", as: NormalizedForms.self)
        record.enrichment = try json("enrichment", as: EnrichmentResult.self)
        record.findings = try json("findings", as: [Finding].self) ?? []
        return record
    }
}
