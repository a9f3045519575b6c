import BookpipeImaging
import Foundation
import Testing

@Suite struct FileIOTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fileio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("Writing without replacing refuses a file that is there, and a link pointing nowhere, leaving both as they were")
    func refusesExisting() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("a.jpg").path
        try FileIO.write([1, 2, 3], to: path, replacing: false)
        #expect(try FileIO.read(path) == [1, 2, 3])
        #expect(throws: ImagingError(.outputExists, file: path)) { try FileIO.write([9], to: path, replacing: false) }
        #expect(try FileIO.read(path) == [1, 2, 3])
        #expect(ImagingError(.outputExists, file: path).description == "\(path): a file is already there; it was left as it was.")
        let dangling = folder.appendingPathComponent("dangling.jpg").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: folder.appendingPathComponent("nowhere").path)
        #expect(FileIO.exists(dangling))
        #expect(throws: ImagingError(.outputExists, file: dangling)) { try FileIO.write([9], to: dangling, replacing: false) }
    }

    @Test("Replacing a file renames a complete copy over it: a link at the path is replaced, the file it named keeps its bytes")
    func replacesLinkNotTarget() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = folder.appendingPathComponent("original.jpg").path
        try FileIO.write([1, 2, 3], to: original)
        let hard = folder.appendingPathComponent("hard.jpg").path, soft = folder.appendingPathComponent("soft.jpg").path
        try FileManager.default.linkItem(atPath: original, toPath: hard)
        try FileManager.default.createSymbolicLink(atPath: soft, withDestinationPath: original)
        #expect(FileIO.identity(of: hard) == FileIO.identity(of: original))
        #expect(FileIO.identity(of: soft) == FileIO.identity(of: original))
        try FileIO.write([7], to: hard)
        try FileIO.write([8], to: soft)
        #expect(try FileIO.read(original) == [1, 2, 3])
        #expect(try FileIO.read(hard) == [7] && FileIO.identity(of: hard) != FileIO.identity(of: original))
        #expect(try FileIO.read(soft) == [8] && FileIO.identity(of: soft) != FileIO.identity(of: original))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["hard.jpg", "original.jpg", "soft.jpg"])
        #expect(FileIO.names(inFolder: folder.path).sorted() == ["hard.jpg", "original.jpg", "soft.jpg"])
        #expect(FileIO.names(inFolder: folder.appendingPathComponent("missing").path) == [])
    }
}
