// Fuzz target: the scan-result JSON reader (`bookpipe import-scan`): positions in error messages,
// numbers (confidences, boxes), nesting depth, the accepted shapes. Every input ends in a scan
// result or a thrown ScanResultError with a message, never a crash.
import BookpipeIngest
import Foundation

/// A scan file inside an empty folder: photo names resolve against it and are found missing.
private let scanPath = FileManager.default.temporaryDirectory
    .appendingPathComponent("bookpipe-fuzz-scan-\(getpid())/scan.json").path

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScanResultJSON(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    do {
        let result = try ScanResultFile(bytes: bytes, path: scanPath)
        _ = result.file
    } catch {
        _ = error.description
    }
    return 0
}
