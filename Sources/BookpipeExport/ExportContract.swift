import BookpipeCore
import BookpipeLibrary

/// The export contract's shape (DESIGN.md §6): the object written for each record in the `json`
/// and `jsonl` layouts, and the columns of the `csv` layout. Keys may be added; the documented
/// ones are never renamed.
enum ExportContract {
    /// The record's object in the export contract.
    ///
    /// Members are appended in key order (``ExportJSON/precedes(_:_:)``), so the writer need not sort
    /// them; a key appended out of order still comes out sorted, only more slowly.
    static func value(_ record: BookRecord) -> ExportJSON.Value {
        var source: [(String, ExportJSON.Value)] = [("file", .string(record.origin.file))]
        if record.origin.scan != nil { source.append(("index", .int(record.scan?.index ?? record.origin.row))) }
        source.append(("line", .int(record.origin.line)))
        source.append(("row", .int(record.origin.row)))
        if let scan = record.origin.scan { source.append(("scan", .string(scan))) }
        let enrichment = record.enrichment
        var object: [(String, ExportJSON.Value)] = []
        object.reserveCapacity(28)
        object.append(("authors", .strings(record.authors)))
        // What else was read, each key present only when the file had the value (docs/export-contract.md).
        if let binding = record.binding { object.append(("binding", .string(binding))) }
        if let candidates = enrichment?.candidates, !candidates.isEmpty {
            object.append(("candidates", .array(candidates.map { candidate in
                .object([
                    ("authors", .strings(candidate.authors)),
                    ("breakdown", .object(candidate.breakdown.map { ($0.key, .int($0.value)) })),
                    ("editionKey", candidate.editionKey.map { .string($0) } ?? .null),
                ] + (candidate.otherEditions.isEmpty ? [] : [("otherEditions", .strings(candidate.otherEditions))]) + [
                    ("score", .int(candidate.score)), ("source", .string(candidate.source)),
                    ("title", .string(candidate.title)), ("workKey", Self.workKey(candidate.workKey)),
                ])
            })))
        }
        if let confidence = record.scan?.confidence { object.append(("confidence", .double(confidence))) }
        if let date = record.dateAdded { object.append(("dateAdded", .string(date))) }
        if let date = record.dateRead { object.append(("dateRead", .string(date))) }
        if let failure = enrichment?.failure { object.append(("failure", .string(failure))) }
        if !record.findings.isEmpty {
            object.append(("findings", .array(record.findings.map { finding in
                var item: [(String, ExportJSON.Value)] = [("code", .string(finding.code))]
                if let field = finding.field { item.append(("field", .string(field))) }
                item.append(("message", .string(finding.message)))
                item.append(("severity", .string(finding.severity.rawValue)))
                return .object(item)
            })))
        }
        object.append(("format", .string(record.origin.format)))
        object.append(("id", .string(record.id)))
        object.append(("isbn13", record.normalized?.isbn13.map { .string($0) } ?? .null))
        if let match = enrichment?.match {
            object.append(("match", .object([
                ("authors", .strings(match.authors)), ("editionKey", match.editionKey.map { .string($0) } ?? .null),
                ("score", .int(match.score)), ("source", .string(match.source)), ("title", .string(match.title)),
                ("workKey", Self.workKey(match.workKey)),
            ])))
        } else {
            object.append(("match", .null))
        }
        object.append(("normalizedTitle", record.normalized.map { .string($0.searchTitle) } ?? .null))
        if let pages = record.pageCount { object.append(("pages", .int(pages))) }
        if let publisher = record.publisher { object.append(("publisher", .string(publisher))) }
        if let rating = record.rating, rating.isFinite { object.append(("rating", .double(rating))) }
        if !record.rawISBNs.isEmpty { object.append(("rawISBNs", .strings(record.rawISBNs))) }
        if let review = record.review { object.append(("review", .string(review))) }
        object.append(("reviewStatus", reviewStatus(record).map { .string($0.rawValue) } ?? .null))
        if let series = record.normalized?.series { object.append(("series", .string(series))) }
        if let number = record.normalized?.seriesNumber { object.append(("seriesNumber", .string(number))) }
        if let shelf = record.shelf { object.append(("shelf", .string(shelf))) }
        object.append(("source", .object(source)))
        object.append(("status", .string(record.status.rawValue)))
        if !record.tags.isEmpty { object.append(("tags", .strings(record.tags))) }
        object.append(("title", .string(record.title)))
        if let year = record.year { object.append(("year", .int(year))) }
        return .object(object)
    }

    /// The record's object with its `provenance` (docs/export-contract.md, "Provenance"): the
    /// object of ``value(_:)`` with the member inserted at its place in key order.
    /// - Parameters:
    ///   - record: The record.
    ///   - editedByPerson: The fields a person supplied in review (``LibraryReviewStore/personEditedFields()``).
    ///
    /// `book`: the id of the first record of the record's book when it is one book with records
    /// of other lists (``BookGrouping``); nil leaves the key out.
    static func value(_ record: BookRecord, editedByPerson: Set<String>, book: String? = nil) -> ExportJSON.Value {
        let plain = value(record)
        guard case .object(var members) = plain else { return plain }
        var entries: [(String, ExportJSON.Value)] = [("provenance", .object(provenance(record, editedByPerson: editedByPerson).map {
            ($0.field, .string($0.supplier))
        }))]
        if let book { entries.append(("book", .string(book))) }
        for entry in entries {
            members.insert(entry, at: members.firstIndex { ExportJSON.precedes(entry.0, $0.0) } ?? members.endIndex)
        }
        return .object(members)
    }

    /// Who supplied each field the record's object holds, in key order: `file` for what was read
    /// from the input (a CSV row or a scan detection) and what is derived from it, a source's name
    /// (`openlibrary`, `googlebooks`, `catalog`, …) for the match it found, `person` for what a
    /// person typed or chose in review (``ReviewRules/provenance(of:editedByPerson:)`` decides
    /// `title`, `authors` and `match`). `normalizedTitle`, `series` and `seriesNumber` are derived
    /// from the title and have its supplier. Keys as in ``value(_:)``; `match` is listed when there
    /// is one, or when a person decided that none of the candidates is the book.
    static func provenance(_ record: BookRecord, editedByPerson: Set<String>) -> [(field: String, supplier: String)] {
        let reviewed = ReviewRules.provenance(of: record, editedByPerson: editedByPerson)
        let file = "file"
        let title = reviewed["title"] ?? file
        var fields: [(field: String, supplier: String)] = [("authors", reviewed["authors"] ?? file)]
        if record.binding != nil { fields.append(("binding", file)) }
        if record.scan?.confidence != nil { fields.append(("confidence", file)) }
        if record.dateAdded != nil { fields.append(("dateAdded", file)) }
        if record.dateRead != nil { fields.append(("dateRead", file)) }
        if record.normalized?.isbn13 != nil { fields.append(("isbn13", file)) }
        if let match = reviewed["match"] { fields.append(("match", match)) }
        if record.normalized != nil { fields.append(("normalizedTitle", title)) }
        if record.pageCount != nil { fields.append(("pages", file)) }
        if record.publisher != nil { fields.append(("publisher", file)) }
        if let rating = record.rating, rating.isFinite { fields.append(("rating", file)) }
        if !record.rawISBNs.isEmpty { fields.append(("rawISBNs", file)) }
        if record.review != nil { fields.append(("review", file)) }
        if record.normalized?.series != nil { fields.append(("series", title)) }
        if record.normalized?.seriesNumber != nil { fields.append(("seriesNumber", title)) }
        if record.shelf != nil { fields.append(("shelf", file)) }
        if !record.tags.isEmpty { fields.append(("tags", file)) }
        fields.append(("title", title))
        if record.year != nil { fields.append(("year", file)) }
        return fields
    }

    /// The record's `reviewStatus` in the contract: what a scan's routing or a person decided, or
    /// nil (`null`; an empty cell in CSV) when neither did.
    ///
    /// A CSV row is never routed for review, so the reader's default (``ReviewStatus/verified``)
    /// means nobody looked at it, not that a person confirmed it: it is written as null.
    /// `needsReview` and `userEdited` are written for every record, and `verified` for a scan
    /// detection, whose routing decides it (confidence at or above the threshold, or missing).
    /// A work key as the contract writes it: the `/works/…` key, or `null` when no work is known
    /// (never `""`).
    static func workKey(_ key: String) -> ExportJSON.Value {
        key.isEmpty ? .null : .string(key)
    }

    static func reviewStatus(_ record: BookRecord) -> ReviewStatus? {
        if record.scan == nil && record.origin.scan == nil && record.reviewStatus == .verified { return nil }
        return record.reviewStatus
    }

    /// The record's JSON text: keys sorted, slashes not escaped (the bytes `JSONSerialization`
    /// wrote with `.sortedKeys` and `.withoutEscapingSlashes`).
    static func jsonText(_ record: BookRecord) -> String {
        ExportJSON.text(value(record))
    }

    /// The record's JSON text with its `provenance` and `book` (see ``value(_:editedByPerson:book:)``).
    static func jsonText(_ record: BookRecord, editedByPerson: Set<String>, book: String? = nil) -> String {
        ExportJSON.text(value(record, editedByPerson: editedByPerson, book: book))
    }

    /// The `csv` layout's columns with provenance: ``csvHeader`` and `provenance` appended.
    static let csvHeaderWithProvenance = csvHeader + ["provenance"]

    /// The `csv` layout as written: ``csvHeaderWithProvenance`` and `book` (the id of the first
    /// record of the record's book when it is one book with records of other lists; empty otherwise).
    static let csvLayout = csvHeaderWithProvenance + ["book"]

    /// The record's cells in the `csv` layout with provenance: ``csvFields(_:)`` and one cell
    /// `field=supplier` pairs joined with "; ", in key order (`authors=file; match=openlibrary; title=person`).
    static func csvFields(_ record: BookRecord, editedByPerson: Set<String>) -> [String] {
        csvFields(record) + [provenance(record, editedByPerson: editedByPerson).map { "\($0.field)=\($0.supplier)" }
            .joined(separator: "; ")]
    }

    /// The `csv` layout's columns, in order.
    static let csvHeader = ["id", "file", "row", "line", "title", "normalizedTitle", "authors", "isbn13", "year", "status",
                            "reviewStatus", "matchWorkKey", "matchTitle", "matchScore", "failure", "findings",
                            "shelf", "rating", "dateAdded", "dateRead", "publisher", "pages", "binding", "review", "tags",
                            "rawISBNs"]

    /// The record's cells in the `csv` layout, in ``csvHeader``'s order (lists joined with "; ").
    static func csvFields(_ record: BookRecord) -> [String] {
        let match = record.enrichment?.match
        return [record.id, record.origin.file, String(record.origin.row), String(record.origin.line), record.title,
                record.normalized?.searchTitle ?? "", record.authors.joined(separator: "; "), record.normalized?.isbn13 ?? "",
                record.year.map(String.init) ?? "", record.status.rawValue, reviewStatus(record)?.rawValue ?? "",
                match?.workKey ?? "", match?.title ?? "", match.map { String($0.score) } ?? "",
                record.enrichment?.failure ?? "", record.findings.map(\.code).joined(separator: "; "),
                record.shelf ?? "", record.rating.map(ratingText) ?? "", record.dateAdded ?? "", record.dateRead ?? "",
                record.publisher ?? "", record.pageCount.map(String.init) ?? "", record.binding ?? "", record.review ?? "",
                record.tags.joined(separator: "; "), record.rawISBNs.joined(separator: "; ")]
    }

    /// A rating as the JSON export writes it: `4` for a whole number, `3.5` otherwise.
    static func ratingText(_ rating: Double) -> String {
        guard rating.isFinite else { return "" }
        return rating == rating.rounded() && abs(rating) < 1e15 ? String(Int(rating)) : String(rating)
    }
}
