import Foundation
import Testing

@testable import BookpipeIngest

/// A scan folder inside a temporary folder, with a photo outside it to escape to.
private struct PhotoFixture {
    let root: TemporaryDirectory
    /// `<root>/scans`: the scan folder.
    let folder: String
    /// Its real path.
    let realFolder: String
    /// `<root>/outside.jpg`.
    let outside: String

    init() throws {
        root = try TemporaryDirectory()
        folder = root.path + "/scans"
        try FileManager.default.createDirectory(atPath: folder + "/photos", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.path + "/elsewhere", withIntermediateDirectories: true)
        realFolder = try #require(ScanPhotoPath.realPath(folder))
        _ = try root.write("scans/shelf.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        _ = try root.write("scans/photos/left.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        _ = try root.write("elsewhere/secret.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        outside = try root.write("outside.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
    }

    func resolve(_ given: String, relativeTo base: String? = nil) throws(ScanPhotoError) -> ResolvedScanPhoto {
        try ScanPhotoPath.resolve(given, scanFolder: folder, scan: "shelf-1", file: folder + "/scan.json", relativeTo: base)
    }

    /// The reason `given` is refused, or nil when it is accepted.
    func refusal(_ given: String) -> ScanPhotoError.Reason? {
        do {
            _ = try resolve(given)
            return nil
        } catch {
            return error.reason
        }
    }

    func symlink(_ name: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: folder + "/" + name, withDestinationPath: target)
    }
}

@Suite struct ScanPhotoPathTests {
    @Test("A relative path inside the scan folder resolves to the photo's real path")
    func relativeInside() throws {
        let fixture = try PhotoFixture()
        let photo = try fixture.resolve("shelf.jpg")
        #expect(photo == ResolvedScanPhoto(path: fixture.realFolder + "/shelf.jpg", scanFolder: fixture.realFolder,
                                           given: "shelf.jpg"))
        #expect(try fixture.resolve("photos/left.jpg").path == fixture.realFolder + "/photos/left.jpg")
        #expect(try fixture.resolve("./photos/../shelf.jpg").path == fixture.realFolder + "/shelf.jpg")
    }

    @Test("An absolute path inside the scan folder is accepted; one elsewhere is refused")
    func absolutePaths() throws {
        let fixture = try PhotoFixture()
        #expect(try fixture.resolve(fixture.folder + "/shelf.jpg").path == fixture.realFolder + "/shelf.jpg")
        #expect(fixture.refusal(fixture.outside) == .absoluteOutside)
        #expect(fixture.refusal("/etc/passwd") == .absoluteOutside)
        #expect(fixture.refusal(fixture.folder) == .absoluteOutside)
    }

    @Test("'..' that leaves the folder is refused even when the file exists there")
    func dotDotEscapes() throws {
        let fixture = try PhotoFixture()
        #expect(fixture.refusal("../outside.jpg") == .leavesFolder(windowsSeparators: false))
        #expect(fixture.refusal("photos/../../outside.jpg") == .leavesFolder(windowsSeparators: false))
        #expect(fixture.refusal("../scans/../elsewhere/secret.jpg") == .leavesFolder(windowsSeparators: false))
        #expect(fixture.refusal("..") == .leavesFolder(windowsSeparators: false))
        #expect(fixture.refusal(".") == .notRegularFile(kind: "the scan folder itself"))
    }

    @Test("Windows paths: backslashes are separators, '..\\' that leaves is refused, drives and shares are refused")
    func windowsPaths() throws {
        let fixture = try PhotoFixture()
        #expect(try fixture.resolve("photos\\left.jpg").path == fixture.realFolder + "/photos/left.jpg")
        #expect(fixture.refusal("..\\outside.jpg") == .leavesFolder(windowsSeparators: true))
        #expect(fixture.refusal("photos\\..\\..\\elsewhere\\secret.jpg") == .leavesFolder(windowsSeparators: true))
        #expect(fixture.refusal("C:\\Users\\me\\shelf.jpg") == .windowsAbsolute)
        #expect(fixture.refusal("c:/shelf.jpg") == .windowsAbsolute)
        #expect(fixture.refusal("\\\\server\\share\\shelf.jpg") == .windowsAbsolute)
    }

    @Test("URLs are refused, file:// included, in any letter case")
    func urls() throws {
        let fixture = try PhotoFixture()
        #expect(fixture.refusal("file://" + fixture.folder + "/shelf.jpg") == .url(scheme: "file"))
        #expect(fixture.refusal("FILE:shelf.jpg") == .url(scheme: "file"))
        #expect(fixture.refusal("https://example.org/shelf.jpg") == .url(scheme: "https"))
    }

    @Test("A NUL byte is refused rather than cutting the path short")
    func nulByte() throws {
        let fixture = try PhotoFixture()
        #expect(fixture.refusal("shelf.jpg\u{0}.png") == .containsNUL)
        let error = try #require(throws: ScanPhotoError.self) { try fixture.resolve("shelf.jpg\u{0}.png") }
        #expect(error.description == "\(fixture.folder)/scan.json: scan \"shelf-1\": photo \"shelf.jpg\\0.png\" refused: "
            + "the path holds a NUL byte. Put the photo in the scan's folder (\(fixture.folder)) and name it relative to that folder.")
    }

    @Test("Symbolic links that lead outside are refused on the real path; links within the folder are followed")
    func symbolicLinks() throws {
        let fixture = try PhotoFixture()
        let realRoot = try #require(ScanPhotoPath.realPath(fixture.root.path))
        try fixture.symlink("link.jpg", to: fixture.outside)
        try fixture.symlink("linked-folder", to: fixture.root.path + "/elsewhere")
        try fixture.symlink("inside.jpg", to: "photos/left.jpg")
        try fixture.symlink("up", to: fixture.root.path + "/elsewhere")
        #expect(fixture.refusal("link.jpg") == .symlinkOutside(target: realRoot + "/outside.jpg"))
        #expect(fixture.refusal("linked-folder/secret.jpg") == .symlinkOutside(target: realRoot + "/elsewhere/secret.jpg"))
        // "..": read on the text ("up/.." is the scan folder), never as the system would read it
        // (through the link to <root>/elsewhere, then up to <root>, where outside.jpg is).
        #expect(fixture.refusal("up/../outside.jpg") == .notFound)
        #expect(try fixture.resolve("up/../shelf.jpg").path == fixture.realFolder + "/shelf.jpg")
        #expect(try fixture.resolve("inside.jpg").path == fixture.realFolder + "/photos/left.jpg")
        let error = try #require(throws: ScanPhotoError.self) { try fixture.resolve("link.jpg") }
        #expect(error.description == "\(fixture.folder)/scan.json: scan \"shelf-1\": photo \"link.jpg\" refused: it is, or "
            + "passes through, a symbolic link that leads outside the scan folder (to \(realRoot)/outside.jpg). "
            + "Copy the photo itself into the scan folder.")
    }

    @Test("A loop of symbolic links is refused, not followed forever")
    func symlinkLoop() throws {
        let fixture = try PhotoFixture()
        try fixture.symlink("a.jpg", to: "b.jpg")
        try fixture.symlink("b.jpg", to: "a.jpg")
        #expect(fixture.refusal("a.jpg") == .unreadable("a loop of symbolic links"))
    }

    @Test("Folders, FIFOs and missing files are refused with what they are")
    func notRegularFiles() throws {
        let fixture = try PhotoFixture()
        #expect(mkfifo(fixture.folder + "/pipe.jpg", 0o644) == 0)
        #expect(fixture.refusal("pipe.jpg") == .notRegularFile(kind: "a named pipe (FIFO)"))
        #expect(fixture.refusal("photos") == .notRegularFile(kind: "a folder"))
        #expect(fixture.refusal("missing.jpg") == .notFound)
        #expect(fixture.refusal("shelf.jpg/x") == .notFound)
        #expect(fixture.refusal("") == .empty)
        let error = try #require(throws: ScanPhotoError.self) { try fixture.resolve("pipe.jpg") }
        #expect(error.description == "\(fixture.folder)/scan.json: scan \"shelf-1\": photo \"pipe.jpg\" refused: "
            + "it is a named pipe (FIFO), not a photo file. Name the JPEG file itself.")
    }

    @Test("A path typed on the command line is taken from the current directory and must still be in the scan folder")
    func commandLinePath() throws {
        let fixture = try PhotoFixture()
        #expect(try fixture.resolve("scans/shelf.jpg", relativeTo: fixture.root.path).path == fixture.realFolder + "/shelf.jpg")
        // Outside the scan folder with no '..' in it: the message names the real reason.
        let outside = #expect(throws: ScanPhotoError.self) { try fixture.resolve("elsewhere/secret.jpg", relativeTo: fixture.root.path) }
        #expect(outside?.reason == .outsideFromCurrentDirectory(resolved: fixture.root.path + "/elsewhere/secret.jpg"))
        #expect(outside?.description == "\(fixture.folder)/scan.json: scan \"shelf-1\": photo \"elsewhere/secret.jpg\" refused: "
                + "taken from the current directory (as --photo paths are) it is \(fixture.root.path)/elsewhere/secret.jpg, "
                + "which is outside the scan folder (\(fixture.folder)). Put the photo in the scan file's folder and give its path, "
                + "for example --photo \(fixture.folder)/shelf.jpg.")
        #expect(outside?.description.contains("..") == false)
        #expect(throws: ScanPhotoError.self) { try fixture.resolve("outside.jpg", relativeTo: fixture.root.path) }
        // From inside the scan folder, only a '..' can lead out.
        let fromInside = #expect(throws: ScanPhotoError.self) { try fixture.resolve("../../outside.jpg", relativeTo: fixture.folder + "/photos") }
        #expect(fromInside?.reason == .leavesFolder(windowsSeparators: false))
    }

    @Test("A scan folder reached through a symbolic link still accepts its own photos")
    func linkedScanFolder() throws {
        let fixture = try PhotoFixture()
        let linked = fixture.root.path + "/linked-scans"
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: fixture.folder)
        let photo = try ScanPhotoPath.resolve("shelf.jpg", scanFolder: linked, scan: "s", file: linked + "/scan.json")
        #expect(photo.path == fixture.realFolder + "/shelf.jpg")
        #expect(throws: ScanPhotoError.self) {
            try ScanPhotoPath.resolve("../outside.jpg", scanFolder: linked, scan: "s", file: linked + "/scan.json")
        }
    }
}
