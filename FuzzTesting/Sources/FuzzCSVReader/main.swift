// Fuzz target: the CSV/TSV reader on raw bytes, as `bookpipe import` reads a file: byte-order
// marks and UTF-16, delimiter sniffing, format detection (header and column map), libcsv's
// quoting, Latin-1 repair, short and long rows, oversized fields. The first byte picks the
// options (detected format and delimiter, or a forced delimiter); the rest is the file.
//
// Every input must end in records or a thrown IngestError, never a crash; rows come in order,
// and no field keeps a NUL byte (the soak found the library cutting text at one).
import BookpipeCore
import BookpipeIngest
import Foundation

/// One file per fuzzing process, rewritten for each input (the reader reads a path).
private let inputPath = FileManager.default.temporaryDirectory
    .appendingPathComponent("bookpipe-fuzz-csv-\(getpid()).csv").path

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSVReader(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    guard let selector = bytes.first else { return 0 }
    let options: ImportOptions
    switch selector % 4 {
    case 1: options = ImportOptions(delimiter: UInt8(ascii: ";"))
    case 2: options = ImportOptions(delimiter: UInt8(ascii: "\t"))
    case 3: options = ImportOptions(columnMap: ["title": "Title", "authors": "Author"])
    default: options = ImportOptions()
    }
    guard FileManager.default.createFile(atPath: inputPath, contents: Data(bytes.dropFirst())) else {
        fatalError("cannot write \(inputPath)")
    }
    do {
        let reader = try CSVRecordReader(path: inputPath, options: options)
        var lastRow = 0
        while let batch = try reader.nextBatch(maxRecords: 64) {
            for record in batch.records {
                precondition(record.origin.row > lastRow, "rows out of order: \(record.origin.row) after \(lastRow)")
                lastRow = record.origin.row
                // The library cannot keep a NUL (SQLite text ends at it): the reader removes them.
                precondition(!record.origin.rawFields.contains { $0.utf8.contains(0) }, "a NUL byte in row \(lastRow)")
            }
        }
        precondition(reader.rowsRead >= lastRow, "row \(lastRow) read but only \(reader.rowsRead) counted")
    } catch {
        _ = error.description  // every error has a message for people
    }
    return 0
}
