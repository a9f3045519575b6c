import ArgumentParser
import BookpipeExport
import BookpipeReview
import BookpipeStore
import Foundation

/// `bookpipe export`: one object per source row or scan detection (DESIGN.md §6, the export
/// contract, written by ``LibraryExport``).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Writes the library as JSON, JSON lines or CSV (one entry per source row), or as the app's CSV.",
        discussion: """
            json, jsonl and csv follow the export contract (one entry per source row or scan detection). \
            wingtip writes the book-tracking app's own layout (ISBN, Title, Author, Format, Added Date, \
            Cover URL; one row per book; Added Date empty when the imported file had none), by default to wingtip_library_<yyyy-MM-dd>.csv in the current folder.
            """)

    @Option(help: "json (an array), jsonl (one object per line), csv, or wingtip (the app's CSV layout).")
    var format: ExportFormat = .json

    @Option(name: .shortAndLong,
            help: "The output file ('-' for standard output; default: standard output, or wingtip_library_<date>.csv for wingtip). A folder takes the default file name.")
    var output: String?

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        guard LibraryLocation.isServer(library.libraryPath) || FileManager.default.fileExists(atPath: library.libraryPath) else {
            printError("\(library.libraryPath): no library here. Import something first, or pass --library.")
            throw ExitCode(1)
        }
        let store: any Library
        do {
            store = try LibraryLocation.open(library.libraryPath, access: .readOnly)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        do {
            let path = try outputPath(now: Date())
            let summary = try await LibraryExport(format: format).write(library: store, toFile: path)
            if path != "-" {
                let unit = format == .wingtip ? (summary.entries == 1 ? "book" : "books") : (summary.entries == 1 ? "entry" : "entries")
                printError("wrote \(path) (\(summary.entries) \(unit))")
            }
            if summary.entriesWithoutAddedDate > 0 {
                let books = summary.entries == 1 ? "book has" : "books have"
                printError("\(path == "-" ? "standard output" : path): \(summary.entriesWithoutAddedDate) of "
                    + "\(summary.entries) \(books) no date added in the imported files; their Added Date is left empty.")
            }
        } catch let error as ExportError {
            printError(error.description)
            throw ExitCode(1)
        }
    }

    /// Where to write: `--output`, a default file name inside the folder `--output` names, or the
    /// format's default (standard output; the app's dated file name for `wingtip`).
    /// A file the person named with `--output` is replaced; a default name never replaces a file
    /// that exists already (a second wingtip export on the same day would replace the first, which
    /// the person may have edited or not yet given to the app): the command refuses instead.
    func outputPath(now: Date) throws -> String {
        let defaultName = format.defaultFileName(on: now)
        guard let output else { return try unused(defaultName ?? "-") }
        var isFolder: ObjCBool = false
        guard output != "-", FileManager.default.fileExists(atPath: output, isDirectory: &isFolder), isFolder.boolValue else {
            return output
        }
        guard let defaultName else {
            printError("\(output): is a folder; pass a file name with --output (or '-' for standard output).")
            throw ExitCode(2)
        }
        return try unused((output as NSString).appendingPathComponent(defaultName))
    }

    /// The default path, when nothing is there yet.
    private func unused(_ path: String) throws -> String {
        guard path != "-", FileManager.default.fileExists(atPath: path) else { return path }
        printError("\(path): exists already (an earlier export today?) and is left as it is. "
            + "To replace it, name it: --output \(ShellQuoting.quote(path)); or name another file.")
        throw ExitCode(1)
    }
}

extension ExportFormat: ExpressibleByArgument {}
