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
    /// The record's object in the export contract.
    static func value(_ record: BookRecord) -> ExportJSON.Value {
        var source: [(String, ExportJSON.Value)] = [
            ("file", .string(record.origin.file)), ("row", .int(record.origin.row)), ("line", .int(record.origin.line)),
        ]
        if let scan = record.origin.scan {
            source.append(("scan", .string(scan)))
            source.append(("index", .int(record.origin.row)))
        }
        var object: [(String, ExportJSON.Value)] = [
            ("id", .string(record.id)),
            ("source", .object(source)),
            ("title", .string(record.title)),
            ("normalizedTitle", record.normalized.map { .string($0.searchTitle) } ?? .null),
            ("authors", .strings(record.authors)),
            ("isbn13", record.normalized?.isbn13.map { .string($0) } ?? .null),
            ("status", .string(record.status.rawValue)),
            ("reviewStatus", .string(record.reviewStatus.rawValue)),
            ("format", .string(record.origin.format)),
        ]
        if let failure = record.enrichment?.failure { object.append(("failure", .string(failure))) }
        if let match = record.enrichment?.match {
            object.append(("match", .object([
                ("workKey", .string(match.workKey)), ("editionKey", match.editionKey.map { .string($0) } ?? .null),
                ("title", .string(match.title)), ("authors", .strings(match.authors)), ("score", .int(match.score)),
                ("source", .string(match.source)),
            ])))
        } else {
            object.append(("match", .null))
        }
        if let candidates = record.enrichment?.candidates, !candidates.isEmpty {
            object.append(("candidates", .array(candidates.map { candidate in
                .object([
                    ("workKey", .string(candidate.workKey)), ("title", .string(candidate.title)),
                    ("authors", .strings(candidate.authors)), ("score", .int(candidate.score)),
                    ("breakdown", .object(candidate.breakdown.map { ($0.key, .int($0.value)) })),
                    ("source", .string(candidate.source)),
                ])
            })))
        }
        if let confidence = record.scan?.confidence { object.append(("confidence", .double(confidence))) }
        if let year = record.year { object.append(("year", .int(year))) }
        if let series = record.normalized?.series { object.append(("series", .string(series))) }
        if let number = record.normalized?.seriesNumber { object.append(("seriesNumber", .string(number))) }
        if !record.findings.isEmpty {
            object.append(("findings", .array(record.findings.map { finding in
                var item: [(String, ExportJSON.Value)] = [
                    ("code", .string(finding.code)), ("severity", .string(finding.severity.rawValue)),
                    ("message", .string(finding.message)),
                ]
                if let field = finding.field { item.append(("field", .string(field))) }
                return .object(item)
            })))
        }
        return .object(object)
    }

    /// The record's JSON text: keys sorted, slashes not escaped (the bytes `JSONSerialization`
    /// wrote with `.sortedKeys` and `.withoutEscapingSlashes`).
    static func jsonText(_ record: BookRecord) -> String {
        ExportJSON.text(value(record))
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
