import BookpipeEnrichment
import BookpipeCore

/// Turns a title and an optional author into FTS5 `MATCH` expressions, safely.
///
/// User text never becomes FTS5 syntax: titles are folded to comparison keys
/// (``TextFolding/key(_:)``, which makes every punctuation character a space), split into
/// words, and every word is written as a double-quoted FTS5 string (with any `"` doubled), so
/// `"`, `*`, `-`, `:`, `(`, `^`, `AND`, `OR`, `NOT` and `NEAR` in a title are only words or
/// nothing. Only the operators this type writes (`AND`, `OR`, column filters, parentheses) are
/// syntax.
///
/// The steps, tried in order (see ``steps``):
/// 1. every word of the search title, with the author (any of the author's name words, in the
///    authors column), then without it;
/// 2. when the title has a subtitle, every word of the main title, with the author, then without;
/// 3. only when nothing was found: any word of the title that is not a stopword, with the
///    author, then without (typos and extra words; candidates found this way rarely agree
///    enough to be accepted, but give a person something to choose from).
struct CatalogSearchQuery: Sendable, Hashable {
    /// One `MATCH` expression, and whether it runs only when the earlier ones found nothing.
    struct Step: Sendable, Hashable {
        var expression: String
        var onlyIfNothingFound: Bool
    }

    /// The steps, in order; empty when the title has no word to search for.
    let steps: [Step]

    /// The most words taken from a title (longer titles are cut, which only widens the search).
    static let maximumWords = 16

    /// Words that alone say nothing about a book (used only to leave them out of the fallback).
    static let stopwords: Set<String> = [
        "a", "an", "the", "of", "and", "or", "in", "on", "to", "for", "with", "at", "by", "from", "is", "as",
        "le", "la", "les", "l", "el", "los", "las", "de", "del", "des", "du", "der", "die", "das", "und", "un", "une",
        "y", "e", "et", "il", "lo", "o", "i",
    ]

    init(title: String, author: String?) {
        let normalized = TitleNormalizer.normalize(title)
        let titleWords = Self.words(normalized.key)
        guard !titleWords.isEmpty else {
            steps = []
            return
        }
        let authorWords = author.map { Self.words(AuthorNormalizer.key($0)).filter { $0.count >= 2 } } ?? []
        let authorFilter = authorWords.isEmpty ? nil : "authors_key : (\(Self.any(authorWords)))"

        var steps: [Step] = []
        func add(_ titleExpression: String, onlyIfNothingFound: Bool) {
            let titlePart = "title_key : (\(titleExpression))"
            if let authorFilter {
                steps.append(Step(expression: "\(titlePart) AND \(authorFilter)", onlyIfNothingFound: onlyIfNothingFound))
            }
            steps.append(Step(expression: titlePart, onlyIfNothingFound: onlyIfNothingFound))
        }
        add(Self.all(titleWords), onlyIfNothingFound: false)
        if normalized.hasSubtitle {
            let mainWords = Self.words(normalized.mainKey)
            if !mainWords.isEmpty, mainWords != titleWords {
                add(Self.all(mainWords), onlyIfNothingFound: false)
            }
        }
        let significant = titleWords.filter { !Self.stopwords.contains($0) }
        if !significant.isEmpty, titleWords.count > 1 {
            add(Self.any(significant), onlyIfNothingFound: true)
        }
        self.steps = steps
    }

    /// The words of a comparison key that can be searched: those with a letter or a digit.
    static func words(_ key: String) -> [String] {
        var seen = Set<String>()
        var words: [String] = []
        for word in key.split(separator: " ") where word.contains(where: { $0.isLetter || $0.isNumber }) {
            let text = String(word)
            if seen.insert(text).inserted { words.append(text) }
            if words.count == maximumWords { break }
        }
        return words
    }

    /// A word as an FTS5 string: in double quotes, any double quote doubled.
    static func quoted(_ word: String) -> String {
        var text = "\""
        for character in word {
            text.append(character)
            if character == "\"" { text.append("\"") }
        }
        return text + "\""
    }

    private static func all(_ words: [String]) -> String { words.map(quoted).joined(separator: " AND ") }
    private static func any(_ words: [String]) -> String { words.map(quoted).joined(separator: " OR ") }
}
