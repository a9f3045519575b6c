import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

/// The SQLite engine's listing table (v14): what it keeps beside the records, checked in the file.
@Suite struct ListingStoreTests {
    static func record(_ row: Int) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "abc", row: row, line: row + 1, format: "goodreads",
                                                     rawFields: []),
                                title: "Title \(row)", authors: ["Ann Author"], rawISBNs: [], year: 2000 + row)
        Normalizer.normalize(&record, currentYear: 2026)
        return record
    }

    static func indexes(_ store: LibraryStore) throws -> [String] {
        try store.pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'record_listing' AND sql IS NOT NULL ORDER BY name
                """)
        }
    }

    @Test("A listing whose indexes are missing (a first listing cut short) builds them again; nothing else is rebuilt")
    func missingIndexesAreBuilt() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        try store.insert((1...3).map(Self.record))
        #expect(try await store.refreshListing() == 3)
        let all = try Self.indexes(store)
        #expect(all.count == LibraryStore.listingIndexes.count)
        try await store.pool.write { db in
            try db.execute(sql: "DROP INDEX record_listing_year; DROP INDEX record_listing_shelf")
        }
        try store.insert([Self.record(4)])
        #expect(try await store.refreshListing() == 1)
        #expect(try Self.indexes(store) == all)
        #expect(try await store.refreshListing() == 0)
        var years: [Int?] = []
        try await store.listRecords(try LibraryQuery.parse(["year:2002..2004"])) { years.append($0.record.year) }
        #expect(years == [2002, 2003, 2004])
    }

    @Test("An update of a listed field queues the record for listing again; an update that changes no listed field does not")
    func updatesQueueListedFields() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("listing-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        try store.insert((1...2).map(Self.record))
        try await store.refreshListing()
        func stale() throws -> [Int64] {
            try store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT key & 4294967295 FROM record_listing_stale") }
        }
        var same = Self.record(1)
        same.findings = [Finding(code: "x", severity: .info, field: nil, message: "m")]
        try await store.update([same])
        #expect(try stale() == [])
        var moved = Self.record(2)
        moved.enrichment = EnrichmentResult(status: .notFound)
        try await store.update([moved])
        #expect(try stale() == [2])
        #expect(try store.listingIsCurrent() == false)
        #expect(try await store.refreshListing() == 1)
        #expect(try stale() == [] && store.listingIsCurrent())
    }
}
