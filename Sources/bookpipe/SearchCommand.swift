import ArgumentParser
import BookpipeCore
import BookpipeStore
import Foundation

/// `bookpipe search TEXT`: records by title, author or ISBN, best first.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Finds records by title, author or ISBN (either form); case and accents do not matter. Exits 1 when none matches.",
        discussion: """
            Best matches first: a title match above an author match, a shorter title above a longer one. \
            When a word is so common that more records match than --rank-at-most (\(LibraryStore.searchRankingLimit)), \
            the results are the best of the first ones in library order (a note says so); add words to narrow. \
            The first search of a large library builds the search index (seconds per million records); later ones are fast.
            """)

    @Argument(help: "Words of the title or author, or an ISBN-10/13.")
    var text: [String]

    @Option(help: "The most results.")
    var limit = 20

    @Option(help: "Rank at most this many matching records (the first ones in library order); more is slower for very common words.")
    var rankAtMost = LibraryStore.searchRankingLimit

    @Flag(help: "One JSON object per line.")
    var json = false

    @OptionGroup var library: LibraryOptions

    func validate() throws {
        let words = text.joined(separator: " ")
        guard words.contains(where: { $0.isLetter || $0.isNumber }) else {
            throw ValidationError("Give a word of the title or author, or an ISBN, to search for"
                + (words.isEmpty ? "." : " (\"\(words)\" has no letter or digit)."))
        }
        guard limit > 0 else { throw ValidationError("--limit must be 1 or more, not \(limit).") }
    }

    func run() async throws {
        if LibraryLocation.isServer(library.libraryPath) {
            let store = try openExistingAnyLibrary(library)
            let hits: SearchResults
            do {
                hits = try await store.search(text.joined(separator: " "), limit: limit, ranking: rankAtMost)
            } catch {
                printError("\(error)")
                throw ExitCode(1)
            }
            try printHits(hits)
            return
        }
        var store = try openExistingLibrary(library)
        let hits: SearchResults
        var scratchCopy: String?
        do {
            // Read only, unless the search index must first take in what changed since it was built.
            if try !store.searchIndexIsCurrent() {
                do {
                    store = try LibraryStore(path: library.libraryPath)
                } catch {
                    // A library that cannot be written (read-only file, folder or medium): its
                    // index is brought up to date in a scratch copy, removed afterwards.
                    let copy = FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-search-\(UUID().uuidString).sqlite").path
                    printError("note: \(library.libraryPath) is read-only and its search index is not up to date: "
                        + "searching a copy indexed now (\(copy), removed afterwards).")
                    scratchCopy = copy
                    _ = try store.backup(to: copy, copiesPhotos: false)
                    store = try LibraryStore(path: copy)
                }
            }
            hits = try await store.search(text.joined(separator: " "), limit: limit, ranking: rankAtMost)
        } catch {
            printError("\(error)")
            try? await store.close()
            if let scratchCopy { Self.remove(scratchCopy) }
            throw ExitCode(1)
        }
        try? await store.close()
        if let scratchCopy { Self.remove(scratchCopy) }
        try printHits(hits)
    }

    /// Prints the hits (or says there are none, exit 1).
    private func printHits(_ hits: SearchResults) throws {
        if hits.moreMatch {
            printError("more than \(hits.ranked) records match: these are the best of the first \(hits.ranked) in library order."
                + " Add words to narrow the search.")
        }
        if hits.isEmpty {
            printError("no record matches \"\(text.joined(separator: " "))\"")
            throw ExitCode(1)
        }
        if json {
            for hit in hits {
                var object: [String: Any] = ["id": hit.id, "title": hit.title, "authors": hit.authors,
                                             "status": hit.status.rawValue, "file": hit.file, "line": hit.line]
                if let isbn = hit.isbn13 { object["isbn13"] = isbn }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        for hit in hits {
            print(TerminalText.inert("\(hit.id)  \(hit.status.rawValue)  \(hit.title) — \(hit.authors.joined(separator: "; "))"
                + (hit.isbn13.map { "  ISBN \($0)" } ?? "") + "  \(hit.file):\(hit.line)"))
        }
    }

    /// Removes the scratch copy a search of a read-only library indexed, once its store is closed.
    private static func remove(_ copy: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
    }
}
