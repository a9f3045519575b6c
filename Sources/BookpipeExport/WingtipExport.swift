import BookpipeCore
import BookpipeLibrary
import Foundation

/// The book-tracking app's own CSV layout, `wingtip_library_<yyyy-MM-dd>.csv`: the file the app
/// writes when a user exports a library, so a library cleaned by bookpipe can go back into the app.
///
/// Columns, in this order: `ISBN`, `Title`, `Author`, `Format`, `Added Date` (yyyy-MM-dd),
/// `Cover URL`, `Spine Confidence`; comma-separated, CRLF line ends, quotes only where needed (the app's CSV
/// converter writes the same). One row per book:
/// - enriched records give the matched title and authors, others the title as read and the
///   authors in display order ("Herbert, Frank" → "Frank Herbert"), joined with ", ";
/// - the same book read from several exports (equal ISBN-13; without one, equal matched work;
///   without a match, equal title and first-author keys; without a title or an author, equal
///   Open Library `Work Id` as in Open Library's reading log) is written once, the first time seen
///   (file order, then row order); different ISBNs stay separate rows (different editions); a row
///   with none of these is a book of its own (nothing says it is the same as another);
/// - `Format` is the source's binding/format column (Goodreads `Binding`, StoryGraph `Format`,
///   LibraryThing `Media`, Calibre `formats`) when the file has one;
/// - `Added Date` is the source's date-added column when it holds a date, otherwise empty: never
///   today's date or the day of the import (the layout has no place to say a date is missing, so
///   ``LibraryExport/write(library:toFile:)`` counts such books in its ``ExportSummary``);
/// - `Cover URL`, for a matched book, is Open Library's cover of the matched edition
///   (`https://covers.openlibrary.org/b/olid/OL…M-M.jpg?default=false`) or, without an Open Library
///   edition, of its ISBN (`…/b/isbn/978…-M.jpg?default=false`); `default=false` makes a missing
///   cover a 404 the app can replace with its placeholder, instead of a blank picture. Empty for
///   books not matched (a wrong cover is worse than none).
/// - `Spine Confidence` is the book model's `spineConfidence`: for a scanned book, the vision
///   model's confidence in 0…1 as it gave it (shortest form that reads back the same); empty for
///   CSV rows and for detections without a valid confidence (never a made-up value).
///
/// Cells are neutralised against spreadsheet formulas like every CSV bookpipe writes.
struct WingtipExport: Sendable {
    /// The app's columns, in order.
    static let header = ["ISBN", "Title", "Author", "Format", "Added Date", "Cover URL", "Spine Confidence"]

    /// Column names (lowercased) that hold a book's binding or format, by preference.
    static let formatColumns = ["binding", "format", "media", "formats"]

    /// Column names (lowercased) that hold an Open Library work id (`OL…W`).
    static let workIDColumns = ["work id"]

    /// The app's file name for an export made on `date` (UTC).
    static func fileName(on date: Date) -> String {
        "wingtip_library_\(dayString(date)).csv"
    }

    private var seenBooks: Set<String> = []
    /// Per file fingerprint.
    private let files: [String: FileFacts]
    /// Rows written so far.
    private(set) var booksWritten = 0
    /// Rows written with an empty `Added Date` (the source had no usable date added).
    private(set) var booksWithoutAddedDate = 0

    /// What is looked up once per source file.
    private struct FileFacts: Sendable {
        var formatColumn: Int?
        var workIDColumn: Int?
    }

    /// Looks up each source file's binding/format column and Open Library work id column.
    init(sourceFiles: [SourceFileInfo]) {
        var files: [String: FileFacts] = [:]
        for info in sourceFiles {
            let lowercased = info.header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            files[info.hash] = FileFacts(
                formatColumn: Self.formatColumns.lazy.compactMap { lowercased.firstIndex(of: $0) }.first,
                workIDColumn: Self.workIDColumns.lazy.compactMap { lowercased.firstIndex(of: $0) }.first)
        }
        self.files = files
    }

    /// The row for `record`, or nil when the same book was already written.
    mutating func row(for record: BookRecord) -> [String]? {
        let facts = files[record.origin.fileHash] ?? FileFacts(formatColumn: nil, workIDColumn: nil)
        guard seenBooks.insert(Self.bookIdentity(record, workIDColumn: facts.workIDColumn)).inserted else { return nil }
        let match = record.enrichment?.match
        let authors = match?.authors ?? record.normalized?.authors ?? record.authors
        let format = facts.formatColumn.flatMap { Self.cell($0, of: record) }
        let addedDate = record.dateAdded.flatMap(Self.isoDay)
        booksWritten += 1
        if addedDate == nil { booksWithoutAddedDate += 1 }
        return [
            record.normalized?.isbn13 ?? "",
            match?.title ?? record.title,
            authors.joined(separator: ", "),
            format ?? "",
            addedDate ?? "",
            Self.coverURL(record) ?? "",
            Self.spineConfidence(record) ?? "",
        ]
    }

    /// The detection's confidence as the vision model gave it, for scanned books only.
    static func spineConfidence(_ record: BookRecord) -> String? {
        guard let confidence = record.scan?.confidence, confidence.isFinite, (0...1).contains(confidence) else { return nil }
        return "\(confidence)"
    }

    /// The trimmed raw cell at `column` of the record's row, nil when the row is shorter.
    private static func cell(_ column: Int, of record: BookRecord) -> String? {
        let fields = record.origin.rawFields
        return column < fields.count ? fields[column].trimmingCharacters(in: .whitespaces) : nil
    }

    /// Open Library's medium cover of a matched record's edition or ISBN (see the type's notes).
    static func coverURL(_ record: BookRecord) -> String? {
        guard record.status == .enriched, let match = record.enrichment?.match else { return nil }
        let base = "https://covers.openlibrary.org/b"
        if let edition = match.editionKey?.split(separator: "/").last,
           edition.hasPrefix("OL"), edition.hasSuffix("M"), edition.dropFirst(2).dropLast().allSatisfy(\.isNumber) {
            return "\(base)/olid/\(edition)-M.jpg?default=false"
        }
        if let isbn = record.normalized?.isbn13 { return "\(base)/isbn/\(isbn)-M.jpg?default=false" }
        return nil
    }

    /// The key under which two records are the same book for the app.
    ///
    /// - Parameters:
    ///   - record: The record.
    ///   - workIDColumn: The record's file's Open Library `Work Id` column, when it has one.
    static func bookIdentity(_ record: BookRecord, workIDColumn: Int? = nil) -> String {
        if let isbn = record.normalized?.isbn13 { return "isbn:" + isbn }
        if let match = record.enrichment?.match {
            // A source that names no work (a Google Books volume): the edition it names.
            return match.workKey.isEmpty ? "edition:" + match.identity : "work:" + match.workKey
        }
        let title = record.normalized?.titleKey ?? record.title.lowercased()
        let author = record.normalized?.authorKeys.first ?? record.authors.first?.lowercased() ?? ""
        if !title.isEmpty || !author.isEmpty { return "title:\(title)|author:\(author)" }
        // Nothing read names the book (Open Library's reading log has only work and edition ids):
        // its work id, in the form of a matched work's key, or else the row itself.
        if let column = workIDColumn, let workID = cell(column, of: record), !workID.isEmpty {
            return "work:/works/" + workID
        }
        return "row:" + record.id
    }

    /// `yyyy-MM-dd` from the date forms the exports use: `2019/05/03` (Goodreads, StoryGraph),
    /// `2019-05-03`, `2019-05-03 10:20:30` or ISO 8601 with a time (LibraryThing, Calibre, the
    /// store's own timestamps), one-digit months and days included. Nil for anything else.
    static func isoDay(_ text: String) -> String? {
        let parts = text.trimmingCharacters(in: .whitespaces).prefix { $0 != " " && $0 != "T" }
            .split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "-" })
        guard parts.count == 3, parts[0].count == 4,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...2).contains(parts[1].count), (1...2).contains(parts[2].count),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// `yyyy-MM-dd` of `date`'s UTC day.
    static func dayString(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }
}
