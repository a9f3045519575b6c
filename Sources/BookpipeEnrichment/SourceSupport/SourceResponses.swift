import BookpipeCore
import Foundation

/// Small pieces every remote source needs to turn a response into ``Candidate``s and answers.
package enum SourceResponses {
    /// ISBN-13s of `values` (ISBN-10s converted, invalid ones dropped), without repeats, in order.
    ///
    /// Only values that are 10 or 13 characters once cleaned are read: API data is not repaired
    /// the way spreadsheet cells are.
    package static func isbn13s(_ values: some Sequence<String>) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        for value in values {
            guard let cleaned = ISBN.clean(value), cleaned.utf8.count == 10 || cleaned.utf8.count == 13,
                  case .success(let isbn) = ISBN.parse(cleaned), seen.insert(isbn.isbn13).inserted else { continue }
            result.append(isbn.isbn13)
        }
        return result
    }

    /// `Title: Subtitle`, or the title alone when there is no subtitle.
    package static func fullTitle(_ title: String, subtitle: String?) -> String {
        guard let subtitle = subtitle?.trimmingCharacters(in: .whitespacesAndNewlines), !subtitle.isEmpty else { return title }
        return "\(title): \(subtitle)"
    }

    /// The first of `values` that is not empty once trimmed (a publisher's name), trimmed.
    package static func firstText(_ values: [String?]) -> String? {
        for case let value? in values {
            let text = value.trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { return text }
        }
        return nil
    }

    /// `values` without repeats, in order.
    package static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }

    /// Runs `body` for each batch, at most `width` at a time, and merges the answers.
    ///
    /// - Throws: `CancellationError` when the task is cancelled (the other batches are cancelled too).
    package static func answers(for batches: [[String]], width: Int,
                        _ body: @escaping @Sendable ([String]) async throws -> [String: LookupAnswer])
        async throws -> [String: LookupAnswer] {
        try await withThrowingTaskGroup(of: [String: LookupAnswer].self) { group in
            var pending = batches.makeIterator()
            var answers: [String: LookupAnswer] = [:]
            for _ in 0..<max(1, width) {
                guard let batch = pending.next() else { break }
                group.addTask { try await body(batch) }
            }
            while let part = try await group.next() {
                answers.merge(part) { first, _ in first }
                if let batch = pending.next() {
                    group.addTask { try await body(batch) }
                }
            }
            return answers
        }
    }
}
