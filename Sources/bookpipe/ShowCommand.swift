import ArgumentParser
import BookpipeCore
import BookpipeReport
import BookpipeStore
import Foundation

/// `bookpipe show ID`: one record's whole story (``RecordStory``).
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Prints one record's story: the row as read, normalised forms, findings, lookups and answers, candidates, match, review, provenance.")

    @Argument(help: "The record's id (<file hash>:<row>, the hash shortened to any unique prefix), or its number in `bookpipe list`.")
    var id: String

    @Flag(help: "As one JSON object on one line.")
    var json = false

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        guard LibraryLocation.isServer(library.libraryPath) || FileManager.default.fileExists(atPath: library.libraryPath) else {
            printError("\(library.libraryPath): no library here. Import something first, or pass --library.")
            throw ExitCode(1)
        }
        let story: RecordStory?
        do {
            let store = try LibraryLocation.open(library.libraryPath, access: .readOnly)
            var id = self.id
            if try await store.records(ids: [id]).isEmpty, let reference = RecordReference(id) {
                let found = try await store.recordIDs(for: reference, limit: 2)
                if found.count > 1 {
                    printError("\(library.libraryPath): \(id) names more than one record (\(found.joined(separator: ", ")), …); give more of the id.")
                    throw ExitCode(1)
                }
                if let only = found.first {
                    id = only
                } else if case .id(let prefix, let row?) = reference,
                          case let hashes = try await store.sourceFiles().map(\.hash).filter({ $0.hasPrefix(prefix) }), hashes.count == 1 {
                    id = "\(hashes[0]):\(row)"  // no such record now: its id, for what its change log says
                }
            }
            story = try await RecordStory.load(id: id, from: store)
            if story == nil, let removal = try await store.recordChanges(recordID: id).last(where: { $0.kind == .removed }) {
                printError("\(library.libraryPath): record \(id)" + (removal.old.map { " (\"\(TerminalText.inert($0))\")" } ?? "")
                    + " was removed by `bookpipe \(removal.source ?? "remove")` on \(removal.changedAt.formatted(.iso8601)).")
                throw ExitCode(1)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("\(error)")
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
