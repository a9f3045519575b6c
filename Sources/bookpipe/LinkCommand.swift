import ArgumentParser
import BookpipeCore
import BookpipeLibrary
import BookpipeStore
import Foundation

/// `bookpipe link A B` and `bookpipe unlink A B`: a person says two records are one book, or two.
struct LinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link",
        abstract: "Says two records are one book (entries of two lists the library did not join by ISBN-13 or match).",
        discussion: "Logged on both records like every decision; `bookpipe unlink` undoes it. `bookpipe show ID` lists a record's book.")

    @Argument(help: "Two records: ids (a unique prefix of the hash with :row) or numbers from `bookpipe list`.")
    var records: [String]

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        try await BookLinkDecision.apply(records, linked: true, libraryPath: library.libraryPath)
    }
}

/// `bookpipe unlink A B`.
struct UnlinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlink",
        abstract: "Says two records are two books, though they share an ISBN-13 or a matched edition (a wrong link).",
        discussion: "Logged on both records like every decision; `bookpipe link` undoes it.")

    @Argument(help: "Two records: ids (a unique prefix of the hash with :row) or numbers from `bookpipe list`.")
    var records: [String]

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        try await BookLinkDecision.apply(records, linked: false, libraryPath: library.libraryPath)
    }
}

/// What `link` and `unlink` share: resolving the two records and recording the decision.
enum BookLinkDecision {
    static func apply(_ references: [String], linked: Bool, libraryPath: String) async throws {
        guard references.count == 2 else {
            throw ValidationError("give exactly two records (ids or numbers from `bookpipe list`), not \(references.count).")
        }
        guard LibraryLocation.isServer(libraryPath) || FileManager.default.fileExists(atPath: libraryPath) else {
            printError(ExistingLibrary.missingMessage(libraryPath))
            throw ExitCode(1)
        }
        let store: any Library
        do {
            store = try LibraryLocation.open(libraryPath, access: .readWrite)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        do {
            var ids: [String] = []
            for reference in references {
                guard let id = try await resolve(reference, in: store) else {
                    printError("\(libraryPath): no record \(reference) (or it names more than one); find ids with `bookpipe list`.")
                    try? await store.close()
                    throw ExitCode(1)
                }
                ids.append(id)
            }
            guard ids[0] != ids[1] else {
                printError("\(references[0]) and \(references[1]) are the same record.")
                try? await store.close()
                throw ExitCode(2)
            }
            let decision = LinkDecision(ids[0], ids[1], linked: linked)
            _ = try await store.recordLinkDecision(decision, at: Date())
            let books = BookGrouping.books(try await store.bookMembers(), decisions: try await store.linkDecisions())
            let together = books.contains { $0.contains(ids[0]) && $0.contains(ids[1]) }
            try await store.close()
            if linked {
                printError("linked \(ids[0]) and \(ids[1]): one book.")
            } else {
                printError("unlinked \(ids[0]) and \(ids[1]): two books"
                    + (together ? " (still one book through another record they are both linked to; see `bookpipe show`)." : "."))
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("\(error)")
            try? await store.close()
            throw ExitCode(1)
        }
    }

    /// A record's full id from an id, a unique prefix or a number.
    static func resolve(_ reference: String, in store: any Library) async throws -> String? {
        if try await !store.records(ids: [reference]).isEmpty { return reference }
        guard let parsed = RecordReference(reference) else { return nil }
        let found = try await store.recordIDs(for: parsed, limit: 2)
        return found.count == 1 ? found[0] : nil
    }
}
