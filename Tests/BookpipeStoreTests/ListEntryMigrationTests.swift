import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

/// Records stored before v13 get their list entry and digest from the same rules an import uses.
@Suite struct ListEntryMigrationTests {
    func record(_ row: Int, bookID: String, isbn13: String?) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "exports/goodreads_library_export.csv", fileHash: "old", row: row,
                                                     line: row + 1, format: "goodreads",
                                                     rawFields: [bookID, "Title \(row)", "Author \(row)"]),
                                title: "Title \(row)", authors: ["Author \(row)"], rawISBNs: isbn13.map { [$0] } ?? [], year: 2001)
        record.normalized = NormalizedForms(searchTitle: "Title \(row)", mainTitle: "Title \(row)", titleKey: "title \(row)",
                                            series: nil, authors: ["Author \(row)"], authorKeys: ["author \(row)"],
                                            isbn13: isbn13, allISBN13s: isbn13.map { [$0] } ?? [])
        return record
    }

    @Test("A library made before v13 gets every CSV record's entry (id, else ISBN-13, else title and author) and digest; a newer export then finds them")
    func entriesFilledIn() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("v13-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        try await store.registerSourceFile(
            SourceFileInfo(hash: "old", path: "exports/goodreads_library_export.csv", format: "goodreads",
                           header: ["Book Id", "Title", "Author"], encoding: "utf-8", size: 10, reading: "r"), runID: nil)
        let records = [record(1, bookID: "5297", isbn13: "9780141439570"), record(2, bookID: " ", isbn13: "9780441013593"),
                       record(3, bookID: "", isbn13: nil)]
        try store.insert(records)
        // As a library stored before v13: no entries, no digests.
        try await store.pool.write { db in try db.execute(sql: "UPDATE records SET entry = NULL, digest = NULL") }
        #expect(try store.listEntries(list: "goodreads", excludingFile: nil).isEmpty)
        try await store.pool.write { db in try Schema.fillListEntries(db) }
        let entries = try store.listEntries(list: "goodreads", excludingFile: nil)
        #expect(entries.map(\.key) == ["id:5297", "isbn:9780441013593", "title:title 3|author 3"])
        #expect(entries.map(\.digest) == records.map { ListIdentity.readDigest(of: $0) })
        #expect(entries.map(\.recordID) == ["old:1", "old:2", "old:3"])
        #expect(try store.listEntries(list: "storygraph", excludingFile: nil).isEmpty)
        #expect(try store.listEntries(list: "goodreads", excludingFile: "old").isEmpty)
    }
}
