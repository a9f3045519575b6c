import Foundation
import Testing
@testable import BookpipeExport

@Suite struct ExportFileTests {
    @Test("Until it is closed, the export is in path.partial and the previous file is untouched")
    func replacesOnClose() throws {
        let folder = try ExportSamples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out.csv").path
        try "previous\n".write(toFile: path, atomically: true, encoding: .utf8)
        var file = try ExportFile(path: path)
        // More than the megabyte that is buffered, so part of it is already on disk.
        let line = String(repeating: "x", count: 1023) + "\n"
        for _ in 0..<1500 { file.write(line) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "previous\n")
        #expect(FileManager.default.fileExists(atPath: path + ".partial"))
        try file.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(String(repeating: line, count: 1500).utf8))
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
    }

    @Test("A discarded export removes its temporary file and keeps the previous one")
    func discard() throws {
        let folder = try ExportSamples.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out.json").path
        try "previous\n".write(toFile: path, atomically: true, encoding: .utf8)
        var file = try ExportFile(path: path)
        file.write("half an export")
        file.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["out.json"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "previous\n")
    }

    @Test("A path whose folder is missing cannot be opened, and the error names the path")
    func missingFolder() throws {
        let path = "/nonexistent-\(UUID().uuidString)/out.csv"
        #expect(throws: ExportError(path: path)) { try ExportFile(path: path) }
    }
}
