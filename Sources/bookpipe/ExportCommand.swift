import ArgumentParser
import BookpipeCore
import BookpipeStore
import Foundation

/// `bookpipe export`: one object per source row or scan detection (DESIGN.md §6, the export contract).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Writes the library as JSON, JSON lines or CSV (one entry per source row), or as the app's CSV.",
        discussion: """
            json, jsonl and csv follow the export contract (one entry per source row or scan detection). \
            wingtip writes the book-tracking app's own layout (ISBN, Title, Author, Format, Added Date, \
            Cover URL; one row per book), by default to wingtip_library_<yyyy-MM-dd>.csv in the current folder.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, jsonl, csv, wingtip }

    @Option(help: "json (an array), jsonl (one object per line), csv, or wingtip (the app's CSV layout).")
    var format: Format = .json

    @Option(name: .shortAndLong,
            help: "The output file ('-' for standard output; default: standard output, or wingtip_library_<date>.csv for wingtip). A folder takes the default file name.")
    var output: String?

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        guard FileManager.default.fileExists(atPath: library.libraryPath) else {
            printError("\(library.libraryPath): no library here. Import something first, or pass --library.")
            throw ExitCode(1)
        }
        let store = try LibraryStore(path: library.libraryPath)
        var writer = try OutputWriter(path: outputPath(now: Date()))
        switch format {
        case .json:
            writer.write("[")
            var first = true
            try store.forEachRecord { record in
                writer.write((first ? "\n" : ",\n") + ExportContract.jsonText(record))
                first = false
            }
            writer.write("\n]\n")
        case .jsonl:
            try store.forEachRecord { record in writer.write(ExportContract.jsonText(record) + "\n") }
        case .csv:
            writer.write(CSVWriting.line(ExportContract.csvHeader))
            try store.forEachRecord { record in writer.write(CSVWriting.line(ExportContract.csvFields(record))) }
        case .wingtip:
            var export = try WingtipExport(store: store)
            writer.write(CSVWriting.line(WingtipExport.header))
            try store.forEachRecord { record in
                if let row = export.row(for: record) { writer.write(CSVWriting.line(row)) }
            }
        }
        try writer.close()
    }

    /// Where to write: `--output`, a default file name inside the folder `--output` names, or the
    /// format's default (standard output; the app's dated file name for `wingtip`).
    func outputPath(now: Date) throws -> String {
        let defaultName = format == .wingtip ? WingtipExport.fileName(on: now) : nil
        guard let output else { return defaultName ?? "-" }
        var isFolder: ObjCBool = false
        guard output != "-", FileManager.default.fileExists(atPath: output, isDirectory: &isFolder), isFolder.boolValue else {
            return output
        }
        guard let defaultName else {
            printError("\(output): is a folder; pass a file name with --output (or '-' for standard output).")
            throw ExitCode(2)
        }
        return (output as NSString).appendingPathComponent(defaultName)
    }
}

/// The export contract's shape.
enum ExportContract {
    static func object(_ record: BookRecord) -> [String: Any] {
        var source: [String: Any] = ["file": record.origin.file, "row": record.origin.row, "line": record.origin.line]
        if let scan = record.origin.scan {
            source["scan"] = scan
            source["index"] = record.origin.row
        }
        var object: [String: Any] = [
            "id": record.id,
            "source": source,
            "title": record.title,
            "normalizedTitle": record.normalized?.searchTitle ?? NSNull(),
            "authors": record.authors,
            "isbn13": record.normalized?.isbn13 ?? NSNull(),
            "status": record.status.rawValue,
            "reviewStatus": record.reviewStatus.rawValue,
            "format": record.origin.format,
        ]
        if let failure = record.enrichment?.failure { object["failure"] = failure }
        if let match = record.enrichment?.match {
            object["match"] = ["workKey": match.workKey, "editionKey": match.editionKey ?? NSNull(), "title": match.title,
                               "authors": match.authors, "score": match.score, "source": match.source] as [String: Any]
        } else {
            object["match"] = NSNull()
        }
        if let candidates = record.enrichment?.candidates, !candidates.isEmpty {
            object["candidates"] = candidates.map { candidate -> [String: Any] in
                ["workKey": candidate.workKey, "title": candidate.title, "authors": candidate.authors,
                 "score": candidate.score, "breakdown": candidate.breakdown, "source": candidate.source]
            }
        }
        if let confidence = record.scan?.confidence { object["confidence"] = confidence }
        if let year = record.year { object["year"] = year }
        if let series = record.normalized?.series { object["series"] = series }
        if let number = record.normalized?.seriesNumber { object["seriesNumber"] = number }
        if !record.findings.isEmpty {
            object["findings"] = record.findings.map { finding -> [String: Any] in
                var item: [String: Any] = ["code": finding.code, "severity": finding.severity.rawValue, "message": finding.message]
                if let field = finding.field { item["field"] = field }
                return item
            }
        }
        return object
    }

    static func jsonText(_ record: BookRecord) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object(record), options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static let csvHeader = ["id", "file", "row", "line", "title", "normalizedTitle", "authors", "isbn13", "year", "status",
                            "reviewStatus", "matchWorkKey", "matchTitle", "matchScore", "failure", "findings"]

    static func csvFields(_ record: BookRecord) -> [String] {
        let match = record.enrichment?.match
        return [record.id, record.origin.file, String(record.origin.row), String(record.origin.line), record.title,
                record.normalized?.searchTitle ?? "", record.authors.joined(separator: "; "), record.normalized?.isbn13 ?? "",
                record.year.map(String.init) ?? "", record.status.rawValue, record.reviewStatus.rawValue,
                match?.workKey ?? "", match?.title ?? "", match.map { String($0.score) } ?? "",
                record.enrichment?.failure ?? "", record.findings.map(\.code).joined(separator: "; ")]
    }
}

/// CSV output that spreadsheet programs cannot turn into formulas.
enum CSVWriting {
    /// A cell starting with = + - @ (or a tab / carriage return) is prefixed with `'` so Excel and
    /// LibreOffice show it as text instead of running it; the library keeps the original.
    static func neutralized(_ cell: String) -> String {
        guard let first = cell.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return cell }
        return "'" + cell
    }

    static func quoted(_ cell: String) -> String {
        let safe = neutralized(cell)
        if safe.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + safe.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return safe
    }

    static func line(_ cells: [String]) -> String {
        cells.map(quoted).joined(separator: ",") + "\r\n"
    }
}

/// Buffered output to a file (written to a temporary name, then renamed) or standard output.
struct OutputWriter {
    private let path: String
    private let temporaryPath: String?
    private let handle: FileHandle
    private var buffer = Data()

    init(path: String) throws {
        self.path = path
        if path == "-" {
            temporaryPath = nil
            handle = FileHandle.standardOutput
        } else {
            let temporary = path + ".partial"
            guard FileManager.default.createFile(atPath: temporary, contents: nil),
                  let handle = FileHandle(forWritingAtPath: temporary) else {
                printError("\(path): cannot write here. Check the folder exists and is writable.")
                throw ExitCode(1)
            }
            temporaryPath = temporary
            self.handle = handle
        }
    }

    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { flush() }
    }

    private mutating func flush() {
        handle.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func close() throws {
        flush()
        guard let temporaryPath else { return }
        try handle.close()
        _ = try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: temporaryPath, toPath: path)
    }
}
