import BookpipeCore
import BookpipeLibrary
import Foundation
import Testing

/// The contract's photo requirements (``LibraryPhotoStore``, docs/decisions/0031) on every engine:
/// SQLite keeps the copies as files beside the library, PostgreSQL as rows of the database.
@Suite struct PhotoContractTests {
    /// A scan folder holding a real shelf photo from the samples; its path and bytes.
    static func scanFolder() throws -> (folder: String, photo: String, bytes: [UInt8]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("photo-contract-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/scan-photos/shelf1.jpg").path
        let photo = folder + "/shelf1.jpg"
        try FileManager.default.copyItem(atPath: sample, toPath: photo)
        return (folder, photo, Array(try Data(contentsOf: URL(fileURLWithPath: photo))))
    }

    /// A detection of row `row` of scan file `5ca9`, waiting for review, its lookup answered.
    static func detection(_ row: Int, photo: String?) -> BookRecord {
        var record = LibraryContractTests.record(row, file: "5ca9", status: .notFound)
        record.scan = ScanDetection(confidence: 0.3, boundingBox: BoundingBox(x: 0.1, y: 0.2, width: 0.1, height: 0.5),
                                    photoPath: photo)
        record.reviewStatus = .needsReview
        return record
    }

    static func register(_ library: any Library) async throws {
        try await library.registerSourceFile(SourceFileInfo(hash: "5ca9", path: "scan.json", format: "scan", header: [],
                                                            encoding: "utf-8", size: 10), runID: nil)
    }

    @Test("Photos: a copy is taken in once, stored with the detections naming it, read whole by another handle, and deleted with the last review",
          arguments: LibraryEngine.all)
    func photoLifecycle(_ engine: LibraryEngine) async throws {
        let scan = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(atPath: scan.folder) }
        let (library, reopen) = try engine.make()
        try await Self.register(library)
        var prepared = 0
        func take() async throws -> ManagedPhoto {
            try await library.storeScanPhoto(at: scan.photo, scanFolder: scan.folder, scan: "shelf-1",
                                             prepare: { bytes, _ in prepared += 1; return bytes }, validate: { _, _ in })
        }
        let copy = try await take()
        #expect(copy.name == SHA256.hex(scan.bytes) + ".jpg")
        #expect(copy.byteCount == scan.bytes.count && !copy.wasAlreadyStored)
        #expect(library.isManagedPhotoPath(copy.path) && !library.isManagedPhotoPath(scan.photo))
        #expect(try await take().wasAlreadyStored, "the same bytes are stored once")
        #expect(prepared == 1, "prepared once")

        try await library.committed(try await library.submitInsert([Self.detection(1, photo: copy.path),
                                                                    Self.detection(2, photo: copy.path)], runID: nil))
        // Another process (another machine, for a server) reads the copy whole.
        let other = try reopen()
        #expect(try await other.storedPhotoNames() == [copy.name])
        #expect(try await other.scanPhoto(storedAt: copy.path) == scan.bytes)
        #expect(try await other.availableScanPhotos(storedAt: [copy.path, scan.folder + "/gone.jpg"]) == [copy.path])
        #expect(try await other.scanPhoto(storedAt: "not a stored photo") == nil)

        // One detection reviewed: the copy stays for the other.
        try await other.verify(ids: ["5ca9:1"])
        #expect(try await other.cleanUpReviewedPhotos().deleted.isEmpty)
        #expect(try await library.scanPhoto(storedAt: copy.path) == scan.bytes)
        // The last one: the copy goes, and the detections no longer name it.
        try await library.verify(ids: ["5ca9:2"])
        #expect(try await library.cleanUpReviewedPhotos().deleted == [copy.name])
        #expect(try await other.storedPhotoNames().isEmpty)
        #expect(try await other.scanPhoto(storedAt: copy.path) == nil)
        #expect(try await other.availableScanPhotos(storedAt: [copy.path]).isEmpty)
        #expect(try await other.records(ids: ["5ca9:1", "5ca9:2"]).allSatisfy { $0.scan?.photoPath == nil })
        #expect(try await library.cleanUpReviewedPhotos() == PhotoCleanup(), "nothing left to do")
    }

    @Test("Photos: a photo outside the scan folder or refused by the check is not taken in, and says which and why",
          arguments: LibraryEngine.all)
    func refusedPhotos(_ engine: LibraryEngine) async throws {
        let scan = try Self.scanFolder()
        defer { try? FileManager.default.removeItem(atPath: scan.folder) }
        let (library, _) = try engine.make()
        let inner = scan.folder + "/inner"
        try FileManager.default.createDirectory(atPath: inner, withIntermediateDirectories: true)
        let outside = try await #require(throws: ManagedPhotoError.self) {
            try await library.storeScanPhoto(at: scan.photo, scanFolder: inner, scan: "shelf-1",
                                             prepare: { bytes, _ in bytes }, validate: { _, _ in })
        }
        #expect(outside.code == .outsideScanFolder && outside.scan == "shelf-1")
        struct NotAJPEG: Error {}
        let refused = try await #require(throws: ManagedPhotoError.self) {
            try await library.storeScanPhoto(at: scan.photo, scanFolder: scan.folder, scan: "shelf-1",
                                             prepare: { bytes, _ in bytes }, validate: { _, _ in throw NotAJPEG() })
        }
        #expect(refused.code == .refused)
        try await Self.register(library)
        try await library.committed(try await library.submitInsert([Self.detection(1, photo: nil)], runID: nil))
        #expect(try await library.storedPhotoNames().isEmpty)
    }
}
