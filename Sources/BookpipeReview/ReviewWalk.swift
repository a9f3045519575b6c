import BookpipeCore
import BookpipeLibrary
import Foundation

/// `bookpipe review` alone: walks the queue one item at a time and asks for a decision —
/// `v` verify, `e` edit (then a title line and an authors line), `c` choose (then a candidate
/// number, or `n` for none), `s` skip, `q` quit. Each decision is written at once, so quitting
/// (or the end of the input) loses nothing.
///
/// The walk reads answers line by line from whatever `readLine` gives: a terminal, or a script
/// piped into standard input.
///
/// ```swift
/// let walk = ReviewWalk(queue: try ReviewQueue(libraryPath: "library.sqlite"))
/// let summary = try await walk.run(readLine: { Swift.readLine() }, write: { print($0, terminator: "") })
/// ```
public struct ReviewWalk: Sendable {
    /// The queue walked.
    public let queue: ReviewQueue

    /// A walk over a queue.
    public init(queue: ReviewQueue) {
        self.queue = queue
    }

    /// What a walk did.
    public struct Summary: Sendable, Hashable {
        /// Items verified as they were.
        public var verified = 0
        /// Items edited.
        public var edited = 0
        /// Items whose candidate was chosen (or none).
        public var chosen = 0
        /// Items skipped (they stay in the queue).
        public var skipped = 0
        /// Whether the walk stopped before the end (quit or end of input).
        public var quit = false

        /// One line for people.
        public var line: String {
            "review: \(verified) verified, \(edited) edited, \(chosen) chosen, \(skipped) skipped"
                + (quit ? " (stopped early; the rest stay in the queue)" : "")
        }
    }

    /// The one-letter answers and what they do, as the prompt shows them.
    public static let prompt = "[v]erify  [e]dit  [c]hoose  [s]kip  [q]uit > "

    /// Walks the queue as it is when the walk starts, newest first.
    /// - Parameters:
    ///   - readLine: The next answer line, nil at the end of input (treated as quit).
    ///   - write: Text for the person (prompts have no line break).
    /// - Returns: What was decided.
    /// - Throws: ``StoreError`` when the library cannot be read or written.
    public func run(readLine: () -> String?, write: (String) -> Void) async throws -> Summary {
        var summary = Summary()
        let entries = try await queue.list()
        write("\(entries.count) item\(entries.count == 1 ? "" : "s") to review\n")
        walk: for (number, entry) in entries.enumerated() {
            guard let item = try await queue.store.reviewItem(id: entry.id), item.kind != nil else { continue }
            write("\n[\(number + 1)/\(entries.count)]\n")
            for line in (try? await queue.show(id: entry.id)) ?? [entry.id] { write(line + "\n") }
            let candidates = item.record.enrichment?.candidates ?? []
            while true {
                write(Self.prompt)
                guard let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() else {
                    summary.quit = true
                    break walk
                }
                do {
                    switch answer.first {
                    case "v":
                        report(try await queue.verify(ids: [entry.id]), write)
                        write("verified \(entry.id)\n")
                        summary.verified += 1
                    case "e":
                        write("title [\(item.record.title)] > ")
                        guard let title = readLine() else { summary.quit = true; break walk }
                        let current = item.record.authors.joined(separator: "; ")
                        write("authors, separated by ; [\(current)] > ")
                        guard let authorLine = readLine() else { summary.quit = true; break walk }
                        let newTitle = title.trimmingCharacters(in: .whitespaces)
                        let authors = authorLine.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                            .filter { !$0.isEmpty }
                        // An empty line keeps the field as it is (and unlocked).
                        guard !newTitle.isEmpty || !authors.isEmpty else {
                            write("nothing changed (both lines empty); answer v to verify it as it is\n")
                            continue
                        }
                        let (record, warnings) = try await queue.edit(
                            id: entry.id, title: newTitle.isEmpty ? nil : newTitle,
                            authors: authors.isEmpty ? nil : authors)
                        report(warnings, write)
                        write("edited \(record.id): \(record.title) — \(record.authors.joined(separator: ", "))\n")
                        summary.edited += 1
                    case "c":
                        guard !candidates.isEmpty else {
                            write("this item has no candidates to choose from\n")
                            continue
                        }
                        write("candidate 1-\(candidates.count), or n for none > ")
                        guard let choice = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() else {
                            summary.quit = true
                            break walk
                        }
                        let number: Int?
                        if choice == "n" || choice == "none" {
                            number = nil
                        } else if let value = Int(choice), (1...candidates.count).contains(value) {
                            number = value
                        } else {
                            write("not a candidate number: \(choice)\n")
                            continue
                        }
                        let (record, warnings) = try await queue.choose(id: entry.id, candidate: number)
                        report(warnings, write)
                        write("chose \(record.enrichment?.match.map { $0.title } ?? "none of the candidates") for \(record.id)\n")
                        summary.chosen += 1
                    case "s":
                        summary.skipped += 1
                    case "q":
                        summary.quit = true
                        break walk
                    default:
                        write("answer v, e, c, s or q\n")
                        continue
                    }
                } catch let error as ReviewError {
                    write("error: \(error.description)\n")
                    continue
                }
                continue walk
            }
        }
        write("\n" + summary.line + "\n")
        return summary
    }

    private func report(_ warnings: [String], _ write: (String) -> Void) {
        for warning in warnings { write(warning + "\n") }
    }
}
