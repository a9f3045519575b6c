import BookpipeCore
import BookpipeTesting
import Foundation
import Testing

@testable import BookpipeIngest

/// Where test inputs live, computed from this file's path.
enum TestPaths {
    static let testsDirectory: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast()
        return parts.joined(separator: "/")
    }()
    /// Small bad-input files of this target.
    static func input(_ name: String) -> String { testsDirectory + "/Inputs/" + name }
    /// A shared real-world fixture (`<repo root>/../shared/fixtures`, see ``TestFixtures``): tests
    /// that read one carry `.enabled(if: TestFixtures.sharedAvailable)`.
    static func fixture(_ name: String) -> String { TestFixtures.path(name) }
}

/// Everything a reader produced for one file.
struct ImportResult {
    var format: DetectedFormat
    var fileHash: String
    var records: [BookRecord] = []
    var rejected: [RejectedRow] = []
    var repairs: [String] = []
    var notes: [String] = []
    var batchSizes: [Int] = []

    func record(row: Int) -> BookRecord? { records.first { $0.origin.row == row } }
}

/// Reads a whole file in batches.
func importAll(_ path: String, options: ImportOptions = ImportOptions(), batchSize: Int = 100) throws -> ImportResult {
    let reader = try CSVRecordReader(path: path, options: options)
    var result = ImportResult(format: reader.format, fileHash: reader.fileHash)
    while let batch = try reader.nextBatch(maxRecords: batchSize) {
        result.records += batch.records
        result.rejected += batch.rejected
        result.repairs += batch.repairs
        result.notes += batch.notes
        result.batchSizes.append(batch.records.count + batch.rejected.count)
    }
    result.format = reader.format
    #expect(reader.bytesRead == reader.totalBytes)
    return result
}

/// The error an import of `path` throws, or nil.
func importError(_ path: String, options: ImportOptions = ImportOptions()) -> IngestError? {
    do {
        _ = try importAll(path, options: options)
        return nil
    } catch let error as IngestError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "bookpipe-ingest-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes bytes to a file in the directory and returns its path.
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Array(text.utf8))
    }
}
