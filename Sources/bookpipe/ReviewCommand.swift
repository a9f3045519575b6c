import ArgumentParser
import BookpipeCore
import BookpipeReview
import BookpipeStore
import Foundation

/// `bookpipe review …`: the review queue. Parses and calls ``ReviewQueue``; no logic lives here.
struct ReviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "Lists and decides the review queue: unsure scan detections and uncertain matches.",
        discussion: "Each decision is written at once. A photo's managed copy is deleted once all its detections are reviewed.",
        subcommands: [Walk.self, List.self, Show.self, Verify.self, Edit.self, Choose.self, Sheet.self, Serve.self],
        defaultSubcommand: Walk.self)

    /// Opens the queue of an existing library (there is nothing to review in a library that does
    /// not exist: none is created) and runs the photo cleanup; or, `forReading` (list, show,
    /// sheet), opens it for reading only, which works on a read-only library, and leaves the
    /// cleanup to the next decision or run.
    static func open(_ library: LibraryOptions, forReading: Bool = false) async throws -> ReviewQueue {
        if LibraryLocation.isServer(library.libraryPath) {
            // The photos are rows of the database (docs/decisions/0031): any machine crops them.
            let queue = ReviewQueue(store: try openExistingAnyLibrary(library))
            if !forReading {
                for warning in await queue.cleanUp() { printError(warning) }
            }
            return queue
        }
        if forReading {
            return ReviewQueue(store: try openExistingLibrary(library))
        }
        try requireExistingLibrary(library)
        do {
            let queue = ReviewQueue(store: try LibraryStore(path: library.libraryPath))
            for warning in await queue.cleanUp() { printError(warning) }
            return queue
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }

    /// Runs a decision, then closes the library (its log folded into the file, see
    /// ``LibraryStore/close()``); a review error (unknown id, no such candidate) exits 1 with its message.
    static func decide(_ queue: ReviewQueue, _ body: () async throws -> [String]) async throws {
        let lines: [String]
        do {
            lines = try await body()
        } catch let error as ReviewError {
            try? await queue.store.close()
            printError("error: \(error.description)")
            throw ExitCode(1)
        } catch let error as StoreError {
            try? await queue.store.close()
            printError("error: \(error.description)")
            throw ExitCode(1)
        }
        do {
            try await queue.store.close()
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        for line in lines { printError(line) }
    }

    /// Asks a yes/no question on the terminal (standard error); only an answer starting with `y` is yes.
    static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return TerminalText.removingControls(answer).trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("y")
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the queue, newest first, with a count.")
        @Option(help: "Only scan detections (scan) or uncertain matches (match).") var kind: ReviewKind?
        @Flag(help: "One JSON object per line: id, kind, title, authors, confidence, photo, boundingBox, createdAt.") var json = false
        @OptionGroup var library: LibraryOptions

        func run() async throws {
            let queue = try await ReviewCommand.open(library, forReading: true)
            let entries: [ReviewListEntry]
            do { entries = try await queue.list(kind: kind) } catch { printError(error.description); throw ExitCode(1) }
            if json {
                for line in ReviewQueue.jsonLines(entries) { print(line) }
            } else {
                print(ReviewQueue.text(entries).joined(separator: "\n"))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Shows an item's fields, candidates and spine crop.")
        @Argument(help: "The item's id (from review list).") var id: String
        @Option(help: "Write the spine crop (JPEG) to this file.") var crop: String?
        @OptionGroup var library: LibraryOptions

        func run() async throws {
            let queue = try await ReviewCommand.open(library, forReading: true)
            do {
                print(try await queue.show(id: id, cropPath: crop).joined(separator: "\n"))
            } catch let error as ReviewError {
                printError("error: \(error.description)")
                throw ExitCode(1)
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Marks detections as checked: verified as they are.")
        @Argument(help: "Item ids.") var ids: [String] = []
        @Flag(help: "Every queued scan detection.") var all = false
        @Flag(help: "Verify with --all without asking; needed when standard input is not a terminal.") var yes = false
        @OptionGroup var library: LibraryOptions

        func validate() throws {
            if all == !ids.isEmpty { throw ValidationError("Give item ids or --all (not both).") }
        }

        func run() async throws {
            let queue = try await ReviewCommand.open(library)
            if all {
                let count = (try? await queue.store.reviewQueueCount(kind: .scan)) ?? 0
                if count > 0, !yes {
                    // Without a terminal nobody can answer: piped input is not a person's yes.
                    guard isatty(0) != 0 else {
                        printError("error: verify --all would verify \(count) queued detection\(count == 1 ? "" : "s") as they are; "
                                   + "without a terminal to ask on, add --yes. Nothing changed.")
                        throw ExitCode(2)
                    }
                    guard ReviewCommand.confirm("Verify all \(count) queued detections as they are?") else {
                        printError("Nothing changed.")
                        return
                    }
                }
                try await ReviewCommand.decide(queue) {
                    let (verified, warnings) = try await queue.verifyAll()
                    return ["verified \(verified) detection\(verified == 1 ? "" : "s")"] + warnings
                }
            } else {
                try await ReviewCommand.decide(queue) {
                    let warnings = try await queue.verify(ids: ids)
                    return ["verified \(ids.count) item\(ids.count == 1 ? "" : "s")"] + warnings
                }
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Corrects title and/or authors (locked against enrichment); the next enrich matches the record from them.")
        @Argument(help: "The item's id.") var id: String
        @Option(help: "The right title.") var title: String?
        @Option(name: .customLong("author"), help: "An author (repeat for several).") var authors: [String] = []
        @OptionGroup var library: LibraryOptions

        func validate() throws {
            if title == nil && authors.isEmpty { throw ValidationError("Give --title and/or --author.") }
        }

        func run() async throws {
            let queue = try await ReviewCommand.open(library)
            try await ReviewCommand.decide(queue) {
                let (record, warnings) = try await queue.edit(id: id, title: title, authors: authors.isEmpty ? nil : authors)
                // Pending: the match of the old values was cleared (or there was none yet).
                let lookup = record.status == .pending ? "; not matched until `bookpipe enrich` looks it up from these" : ""
                return ["edited \(record.id): \(record.title) — \(record.authors.joined(separator: ", ")) "
                        + "(locked against enrichment\(lookup))"] + warnings
            }
        }
    }

    struct Choose: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Chooses candidate N (as review show numbers them), or --none.")
        @Argument(help: "The item's id.") var id: String
        @Argument(help: "The candidate's number.") var number: Int?
        @Flag(help: "None of the candidates is the book.") var none = false
        @Flag(help: "Choose a candidate whose author disagrees with the row's without asking.") var yes = false
        @OptionGroup var library: LibraryOptions

        func validate() throws {
            if (number == nil) == !none { throw ValidationError("Give a candidate number or --none.") }
        }

        func run() async throws {
            let queue = try await ReviewCommand.open(library)
            if let number, !yes, let reason = try? await queue.confirmationNeeded(id: id, candidate: number) {
                guard isatty(0) != 0 else {
                    try? await queue.store.close()
                    printError("error: \(reason); add --yes to choose it anyway. Nothing changed.")
                    throw ExitCode(1)
                }
                guard ReviewCommand.confirm("\(reason). Choose it anyway?") else {
                    try? await queue.store.close()
                    printError("Nothing changed.")
                    return
                }
            }
            try await ReviewCommand.decide(queue) {
                let (record, warnings) = try await queue.choose(id: id, candidate: none ? nil : number)
                let what = record.enrichment?.match.map { "\($0.title) (\($0.identity))" } ?? "none of the candidates"
                return ["chose \(what) for \(record.id)"] + warnings
            }
        }
    }

    struct Walk: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walks the queue one item at a time: verify, edit, choose, skip or quit (the default).",
            discussion: """
                Each decision is written at once, so quitting loses nothing. When standard input is not a \
                terminal, the same answers are read line by line from it: v, s, q, c then a number (or n), \
                e then a title line and an authors line (separated by ;; an empty line keeps the value).
                """)
        @OptionGroup var library: LibraryOptions

        func run() async throws {
            let queue = try await ReviewCommand.open(library)
            let terminal = isatty(0) != 0
            let write: (String) -> Void = { text in
                FileHandle.standardOutput.write(Data(text.utf8))
            }
            do {
                let walk = ReviewWalk(queue: queue)
                if terminal {
                    // Lines are edited in place with libedit: arrows move, nothing of a key is stored.
                    // (`write` goes straight to the descriptor, so it never overtakes libedit's prompt.)
                    let interrupt = TerminalLineEditor.stopOnInterrupt()
                    defer { interrupt.cancel() }
                    _ = try await walk.run(ask: { TerminalLineEditor.readLine(prompt: $0) }, write: write)
                } else {
                    _ = try await walk.run(readLine: {
                        let line = readLine()
                        if let line { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
                        return line
                    }, write: write)
                }
                try await queue.store.close()
            } catch {
                try? await queue.store.close()
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Sheet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Writes the queue as self-contained HTML pages: each spine crop beside its fields and commands.",
            discussion: "Pages of at most --page-size items: index.html, then page-2.html, page-3.html …, linked to each other.")
        @Option(help: "The folder for the pages (index.html first); created when needed.") var output: String
        @Option(help: "The most items on one page.") var pageSize = 100
        @OptionGroup var library: LibraryOptions

        func validate() throws {
            if pageSize < 1 { throw ValidationError("--page-size must be 1 or more, not \(pageSize).") }
        }

        func run() async throws {
            let queue = try await ReviewCommand.open(library, forReading: true)
            do {
                let written = try await ReviewSheet(queue: queue, libraryPath: library.libraryPath, pageSize: pageSize).write(to: output)
                let pages = written.pages > 1 ? " on \(written.pages) pages of up to \(pageSize)" : ""
                printError("wrote \(written.page) (review sheet: \(written.items) item\(written.items == 1 ? "" : "s")\(pages), \(written.crops) with a crop)")
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}

extension ReviewKind: ExpressibleByArgument {}
