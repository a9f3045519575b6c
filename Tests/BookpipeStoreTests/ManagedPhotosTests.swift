import BookpipeImaging
import Foundation
import Testing

@testable import BookpipeStore

/// A scan folder and a library folder in a temporary folder, with real JPEG photos.
private final class PhotoFolders {
    let root: String
    let scans: String
    let library: String
    let photos: ManagedPhotos

    init(maxPhotoBytes: Int = 100 << 20) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("managed-photos-\(UUID().uuidString)").path
        scans = root + "/scans"
        library = root + "/library/library.sqlite"
        try FileManager.default.createDirectory(atPath: scans, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/library", withIntermediateDirectories: true)
        photos = ManagedPhotos(libraryPath: library, maxPhotoBytes: maxPhotoBytes)
    }

    deinit {
        // A test may leave the managed folder read-only or a copy as a folder; make it removable.
        chmod(photos.folder, 0o755)
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Writes `bytes` into the scan folder and returns the path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8], in folder: String? = nil) throws -> String {
        let path = (folder ?? scans) + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Copies with the real JPEG check: the header guards, then a 1/8-scale decode that finds cut-off data.
    func store(_ path: String, scanFolder: String? = nil) throws(ManagedPhotoError) -> ManagedPhoto {
        try photos.store(photoAt: path, scanFolder: scanFolder ?? scans, scan: "shelf-1") { bytes, name in
            _ = try ImageDecoder().header(of: bytes, file: name)
            _ = try ImageDecoder().decodeStored(bytes, file: name, scale: .eighth)
        }
    }

    /// Every entry of the managed folder (hidden files included).
    func managedEntries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: photos.folder)) ?? []).sorted()
    }
}

/// A real JPEG of a flat colour.
private func jpeg(red: UInt8, width: Int = 64, height: Int = 48) throws -> [UInt8] {
    try JPEGEncoder(quality: 90).encode(PixelBuffer(width: width, height: height, red: red, green: 90, blue: 30))
}

/// `jpeg` with its frame header's size replaced.
private func claiming(width: Int, height: Int, in jpeg: [UInt8]) -> [UInt8] {
    var bytes = jpeg
    var index = 2
    while index + 9 < bytes.count {
        if bytes[index] == 0xFF, bytes[index + 1] == 0xC0 {
            bytes[index + 5] = UInt8(height >> 8)
            bytes[index + 6] = UInt8(height & 0xFF)
            bytes[index + 7] = UInt8(width >> 8)
            bytes[index + 8] = UInt8(width & 0xFF)
            return bytes
        }
        index += 2 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
    }
    return bytes
}

private func storeError(_ body: () throws(ManagedPhotoError) -> ManagedPhoto) -> ManagedPhotoError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

@Suite struct ManagedPhotosTests {
    @Test("SHA-256 matches the FIPS 180-4 test vectors")
    func sha256Vectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(Array(repeating: UInt8(ascii: "a"), count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("A photo is copied beside the library under the SHA-256 of its bytes; the original is left as it was")
    func copies() throws {
        let folders = try PhotoFolders()
        let bytes = try jpeg(red: 200)
        let original = try folders.write("shelf.jpg", bytes)
        let copy = try folders.store(original)
        let name = SHA256.hex(bytes) + ".jpg"
        #expect(copy == ManagedPhoto(name: name, path: folders.library + ".photos/" + name, byteCount: bytes.count,
                                     wasAlreadyStored: false))
        #expect(FileManager.default.contents(atPath: copy.path) == Data(bytes))
        #expect(FileManager.default.contents(atPath: original) == Data(bytes))
        #expect(folders.managedEntries() == [name])
        #expect(try folders.photos.storedNames() == [name])
        #expect(folders.photos.path(named: name) == copy.path)
    }

    @Test("The same photo twice, under other names and from other scans, is stored once; another photo gets its own copy")
    func deduplicates() throws {
        let folders = try PhotoFolders()
        let bytes = try jpeg(red: 200)
        let first = try folders.store(try folders.write("a.jpg", bytes))
        try FileManager.default.createDirectory(atPath: folders.scans + "/other", withIntermediateDirectories: true)
        let second = try folders.store(try folders.write("b.jpg", bytes, in: folders.scans + "/other"),
                                       scanFolder: folders.scans + "/other")
        #expect(second.name == first.name)
        #expect(second.wasAlreadyStored)
        let third = try folders.store(try folders.write("c.jpg", try jpeg(red: 10)))
        #expect(third.name != first.name)
        #expect(!third.wasAlreadyStored)
        #expect(folders.managedEntries() == [first.name, third.name].sorted())
    }

    @Test("A header claiming 60000×60000 is refused before any pixel memory is allocated, and nothing is written")
    func decompressionBomb() throws {
        let folders = try PhotoFolders()
        let path = try folders.write("bomb.jpg", claiming(width: 60000, height: 60000, in: try jpeg(red: 200)))
        let error = try #require(storeError { () throws(ManagedPhotoError) in try folders.store(path) })
        #expect(error.code == .refused)
        #expect(error.description == "scan \"shelf-1\": photo \(path): refused: \(path): the image is too large (the header "
            + "claims 60000x60000 = 3600000000 pixels; the limit is 100000000). Nothing was decoded; if it is a real photo, "
            + "shrink it below the limit first. The scan's detections can still be reviewed as text.")
        #expect(!FileManager.default.fileExists(atPath: folders.photos.folder))
    }

    @Test("Empty, non-JPEG and cut-off photos are refused by name; nothing is written", arguments: ["empty", "png", "cut"])
    func badPhotos(kind: String) throws {
        let folders = try PhotoFolders()
        let good = try jpeg(red: 120, width: 256, height: 192)
        let bytes: [UInt8] = switch kind {
        case "empty": []
        case "png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64)
        default: Array(good.prefix(good.count / 2))
        }
        let path = try folders.write("\(kind).jpg", bytes)
        let error = try #require(storeError { () throws(ManagedPhotoError) in try folders.store(path) })
        switch kind {
        case "empty":
            #expect(error.code == .emptyFile)
            #expect(error.description == "scan \"shelf-1\": photo \(path): the file is empty (0 bytes). "
                + "Copy the photo again and import again.")
        case "png":
            #expect(error.code == .refused)
            #expect(error.detail == "\(path): not a JPEG file (it is a PNG file (starts with 0x89 0x50 0x4E 0x47)). "
                + "Convert it to JPEG first; bookpipe reads JPEG photos only.")
        default:
            #expect(error.code == .refused)
            #expect(error.detail.hasPrefix("\(path): the JPEG data ends before the image does"))
        }
        #expect(folders.managedEntries().isEmpty)
    }

    @Test("Photos outside the scan folder, through a symbolic link, missing, a folder or a FIFO are refused unopened")
    func containment() throws {
        let folders = try PhotoFolders()
        let outside = try folders.write("outside.jpg", try jpeg(red: 1), in: folders.root)
        try FileManager.default.createSymbolicLink(atPath: folders.scans + "/link.jpg", withDestinationPath: outside)
        try FileManager.default.createDirectory(atPath: folders.scans + "/folder.jpg", withIntermediateDirectories: true)
        #expect(mkfifo(folders.scans + "/pipe.jpg", 0o644) == 0)
        let realRoot = try #require(ManagedPhotos.realPath(folders.root))
        let cases: [(String, ManagedPhotoError.Code, String)] = [
            (outside, .outsideScanFolder, realRoot + "/outside.jpg"),
            (folders.scans + "/../outside.jpg", .outsideScanFolder, realRoot + "/outside.jpg"),
            (folders.scans + "/link.jpg", .outsideScanFolder, realRoot + "/outside.jpg"),
            (folders.scans + "/missing.jpg", .missing, ""),
            (folders.scans + "/folder.jpg", .notRegularFile, ""),
            (folders.scans + "/pipe.jpg", .notRegularFile, ""),
        ]
        for (path, code, detail) in cases {
            var validated = false
            let error = storeError { () throws(ManagedPhotoError) in
                try folders.photos.store(photoAt: path, scanFolder: folders.scans, scan: "shelf-1") { _, _ in validated = true }
            }
            #expect(error == ManagedPhotoError(code: code, photo: path, scan: "shelf-1", detail: detail))
            #expect(!validated)
        }
        #expect(folders.managedEntries().isEmpty)
        #expect(ManagedPhotoError(code: .outsideScanFolder, photo: "x.jpg", scan: "s", detail: "/elsewhere/x.jpg").description
            == "scan \"s\": photo x.jpg: not inside the scan folder (/elsewhere/x.jpg); it was not copied. "
            + "The scan's detections can still be reviewed as text.")
    }

    @Test("A photo over the size limit is refused before it is read")
    func tooLarge() throws {
        let folders = try PhotoFolders(maxPhotoBytes: 100)
        let path = try folders.write("big.jpg", try jpeg(red: 5))
        var validated = false
        let error = storeError { () throws(ManagedPhotoError) in
            try folders.photos.store(photoAt: path, scanFolder: folders.scans, scan: "shelf-1") { _, _ in validated = true }
        }
        #expect(error?.code == .tooLarge)
        #expect(error?.detail.hasSuffix("bytes; the limit is 100") == true)
        #expect(!validated)
    }

    @Test("Deleting a copy is idempotent and leaves the user's original")
    func deletes() throws {
        let folders = try PhotoFolders()
        let original = try folders.write("shelf.jpg", try jpeg(red: 77))
        let copy = try folders.store(original)
        #expect(try folders.photos.delete(named: copy.name) == .deleted)
        #expect(!FileManager.default.fileExists(atPath: copy.path))
        #expect(try folders.photos.delete(named: copy.name) == .alreadyAbsent)
        #expect(FileManager.default.fileExists(atPath: original))
        #expect(try folders.photos.storedNames().isEmpty)
    }

    @Test("Only names the folder gives out can be deleted: paths and other names are refused and their files kept")
    func deleteRefusesOtherNames() throws {
        let folders = try PhotoFolders()
        let copy = try folders.store(try folders.write("shelf.jpg", try jpeg(red: 77)))
        let victim = try folders.write("victim.jpg", [1, 2, 3], in: folders.root + "/library")
        for name in ["../victim.jpg", victim, copy.name.uppercased(), "shelf.jpg", String(copy.name.dropFirst()),
                     copy.name + "/", "." + copy.name] {
            #expect(throws: ManagedPhotoError(code: .invalidName, photo: name, scan: nil, detail: "")) {
                try folders.photos.delete(named: name)
            }
        }
        #expect(FileManager.default.fileExists(atPath: victim))
        #expect(FileManager.default.fileExists(atPath: copy.path))
        #expect(ManagedPhotoError(code: .invalidName, photo: "../victim.jpg", scan: nil, detail: "").description
            == "\"../victim.jpg\" is not the name of a managed photo copy (64 hex digits and .jpg); nothing was deleted.")
    }

    @Test("A failed delete is reported with the system's reason, not swallowed")
    func failedDelete() throws {
        let folders = try PhotoFolders()
        let copy = try folders.store(try folders.write("shelf.jpg", try jpeg(red: 77)))
        // A copy that became a folder cannot be unlinked, even by root.
        try FileManager.default.removeItem(atPath: copy.path)
        try FileManager.default.createDirectory(atPath: copy.path + "/inside", withIntermediateDirectories: true)
        let error = try #require(throws: ManagedPhotoError.self) { try folders.photos.delete(named: copy.name) }
        #expect(error.code == .deleteFailed)
        #expect(error.description == "photo \(copy.path): deleting the managed copy failed (Is a directory). "
            + "It is kept; the next run tries again.")
    }

    @Test("A managed folder path taken by a file is an error, and the user's photo is untouched")
    func unusableFolder() throws {
        let folders = try PhotoFolders()
        try Data([1]).write(to: URL(fileURLWithPath: folders.photos.folder))
        let bytes = try jpeg(red: 33)
        let original = try folders.write("shelf.jpg", bytes)
        let error = storeError { () throws(ManagedPhotoError) in try folders.store(original) }
        #expect(error?.code == .folderUnusable)
        #expect(FileManager.default.contents(atPath: original) == Data(bytes))
    }

    @Test("A temporary file left by a killed copy is not listed, and the next copy completes")
    func leftoverTemporaryFile() throws {
        let folders = try PhotoFolders()
        let bytes = try jpeg(red: 99)
        let name = SHA256.hex(bytes) + ".jpg"
        try FileManager.default.createDirectory(atPath: folders.photos.folder, withIntermediateDirectories: true)
        try Data(bytes.prefix(10)).write(to: URL(fileURLWithPath: folders.photos.folder + "/." + name + ".abc.tmp"))
        #expect(try folders.photos.storedNames().isEmpty)
        // A half-written copy under the final name (not made by bookpipe) is replaced, not trusted.
        try Data(bytes.prefix(10)).write(to: URL(fileURLWithPath: folders.photos.folder + "/" + name))
        let copy = try folders.store(try folders.write("shelf.jpg", bytes))
        #expect(!copy.wasAlreadyStored)
        #expect(FileManager.default.contents(atPath: copy.path) == Data(bytes))
        #expect(try folders.photos.storedNames() == [name])
    }
}
