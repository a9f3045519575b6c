import BookpipeCore
import Foundation
import Testing
@testable import BookpipeStore

/// `LibraryStore.close()`, `removeIfEmpty(path:)` and `backup(to:overwrite:copiesPhotos:)` on real files.
@Suite struct LibraryStoreCloseTests {
    func temporaryFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-close-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    func record(_ row: Int) -> BookRecord {
        BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "abc", row: row, line: row + 1, format: "generic", rawFields: []),
                   title: "Title \(row)", authors: ["Author"])
    }

    func files(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test("close() commits what was submitted, folds the log into the file and removes -wal and -shm; later use fails with StoreError; a second close does nothing")
    func closeFoldsTheLog() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try LibraryStore(path: folder + "/lib.sqlite")
        let ticket = try await store.submitInsert((1...500).map(record))
        #expect(try files(folder) == ["lib.sqlite", "lib.sqlite-shm", "lib.sqlite-wal"])
        try await store.close()
        #expect(store.isCommitted(ticket))
        #expect(try files(folder) == ["lib.sqlite"])
        #expect(throws: StoreError.self) { try store.counts() }
        try await store.close()
        #expect(try LibraryStore(path: folder + "/lib.sqlite", access: .readOnly).counts().records == 500)
    }

    @Test("removeIfEmpty removes an empty library and nothing beside it, and leaves one that holds a record or that another connection has open")
    func removeIfEmpty() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let empty = folder + "/empty.sqlite"
        try await LibraryStore(path: empty).close()
        #expect(LibraryStore.removeIfEmpty(path: empty))
        #expect(try files(folder).isEmpty)

        let open = try LibraryStore(path: empty)
        // Another connection has it open: its log may hold what that connection writes next.
        #expect(!LibraryStore.removeIfEmpty(path: empty))
        try open.insert([record(1)])
        try await open.close()
        #expect(!LibraryStore.removeIfEmpty(path: empty))
        #expect(try LibraryStore(path: empty, access: .readOnly).counts().records == 1)
        // Left as it was: the write-ahead log is on again for the next writer.
        #expect(try files(folder).allSatisfy { $0.hasPrefix("empty.sqlite") })
    }

    @Test("backup writes one rollback-journal file holding every committed record, and refuses to replace a file unless asked")
    func backup() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try LibraryStore(path: folder + "/lib.sqlite")
        try store.insert((1...20).map(record))
        let written = try store.backup(to: folder + "/copy.sqlite")
        #expect(written.records == 20 && written.photosFolder == nil && written.bytes > 0)
        // Byte 18 of the header: 1 for a rollback journal, 2 for WAL.
        let header = try #require(FileHandle(forReadingAtPath: folder + "/copy.sqlite")?.readData(ofLength: 20))
        #expect(header[18] == 1 && header[19] == 1)
        #expect(throws: LibraryBackupError.self) { try store.backup(to: folder + "/copy.sqlite") }
        try store.insert([record(21)])
        #expect(try store.backup(to: folder + "/copy.sqlite", overwrite: true).records == 21)
        #expect(try files(folder).filter { $0.hasPrefix(".") }.isEmpty, "no temporary file left")
        try await store.close()
    }
}
