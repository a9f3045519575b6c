import ArgumentParser
import BookpipeReport
import BookpipeStore
import Foundation

/// `bookpipe show ID`: one record's whole story (``RecordStory``).
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Prints one record's story: the row as read, normalised forms, findings, lookups and answers, candidates, match, review, provenance.")

    @Argument(help: "The record's id (<file hash>:<row>), as search, export and report print it.")
    var id: String

    @Flag(help: "As one JSON object on one line.")
    var json = false

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        guard FileManager.default.fileExists(atPath: library.libraryPath) else {
            printError("\(library.libraryPath): no library here. Import something first, or pass --library.")
            throw ExitCode(1)
        }
        let story: RecordStory?
        do {
            story = try await RecordStory.load(id: id, from: LibraryStore(path: library.libraryPath, access: .readOnly))
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        guard let story else {
            printError("\(library.libraryPath): no record \(id). Find ids with `bookpipe search TEXT`.")
            throw ExitCode(1)
        }
        if json {
            print(String(decoding: try story.json(), as: UTF8.self))
        } else {
            print(story.text)
        }
    }
}
