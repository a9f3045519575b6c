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

    /// Walks the queue as it is when the walk starts, newest first, reading answers line by line:
    /// each prompt is written, then `readLine` gives the answer (a script piped into standard
    /// input). An edit shows the current value in the prompt; an empty line keeps it.
    /// - Parameters:
    ///   - readLine: The next answer line, nil at the end of input (treated as quit).
    ///   - write: Text for the person (prompts have no line break).
    /// - Returns: What was decided.
    /// - Throws: ``StoreError`` when the library cannot be read or written.
    public func run(readLine: () -> String?, write: (String) -> Void) async throws -> Summary {
        try await run(ask: { prompt in
            write(prompt)
            return readLine()
        }, write: write)
    }

    /// Walks the queue as it is when the walk starts, newest first.
    /// - Parameters:
    ///   - ask: Shows a prompt and returns the person's line (nil at the end of input, treated as
    ///     quit): a line editor on a terminal. An edit shows the current value in the prompt; an
    ///     empty line keeps it. Whatever the line holds, no control character is stored
    ///     (``ReviewRules/typedValue(_:)``).
    ///   - write: Text for the person (prompts are written by `ask`).
    /// - Returns: What was decided.
    /// - Throws: ``StoreError`` when the library cannot be read or written.
    public func run(ask: (_ prompt: String) -> String?, write: (String) -> Void) async throws -> Summary {
        var summary = Summary()
        let entries = try await queue.list()
        write("\(entries.count) item\(entries.count == 1 ? "" : "s") to review\n")
        walk: for (number, entry) in entries.enumerated() {
            guard let item = try await queue.store.reviewItem(id: entry.id), item.kind != nil else { continue }
            write("\n[\(number + 1)/\(entries.count)]\n")
            for line in (try? await queue.show(id: entry.id)) ?? [entry.id] { write(line + "\n") }
            let candidates = item.record.enrichment?.candidates ?? []
            while true {
                guard let answer = ask(Self.prompt).map(ReviewRules.typedValue)?.lowercased() else {
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
                        let currentAuthors = item.record.authors.joined(separator: "; ")
                        guard let titleLine = ask("title [\(item.record.title)] > ") else {
                            summary.quit = true
                            break walk
                        }
                        guard let authorLine = ask("authors, separated by ; [\(currentAuthors)] > ") else {
                            summary.quit = true
                            break walk
                        }
                        let newTitle = ReviewRules.typedValue(titleLine)
                        let authors = authorLine.split(separator: ";").map { ReviewRules.typedValue(String($0)) }
                            .filter { !$0.isEmpty }
                        // An empty line, or the value as it was, keeps the field as it is (and unlocked).
                        let title = newTitle.isEmpty || newTitle == item.record.title ? nil : newTitle
                        let changedAuthors = authors.isEmpty || authors == item.record.authors ? nil : authors
                        guard title != nil || changedAuthors != nil else {
                            write("nothing changed; answer v to verify it as it is\n")
                            continue
                        }
                        let (record, warnings) = try await queue.edit(id: entry.id, title: title, authors: changedAuthors)
                        report(warnings, write)
                        write("edited \(record.id): \(record.title) — \(record.authors.joined(separator: ", "))\n")
                        summary.edited += 1
                    case "c":
                        guard !candidates.isEmpty else {
                            write("this item has no candidates to choose from\n")
                            continue
                        }
                        guard let choice = ask("candidate 1-\(candidates.count), or n for none > ")
                            .map(ReviewRules.typedValue)?.lowercased() else {
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
                        if let number, let reason = ReviewRules.authorDisagreement(choosing: candidates[number - 1],
                                                                                      for: item.record) {
                            guard let confirmation = ask("\(reason). Choose it anyway? [y/N] > ") else {
                                summary.quit = true
                                break walk
                            }
                            guard ReviewRules.typedValue(confirmation).lowercased().hasPrefix("y") else {
                                write("not chosen\n")
                                continue
                            }
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
