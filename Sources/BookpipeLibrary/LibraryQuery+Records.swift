import BookpipeCore

/// The words of a record that queries and searches match, as every engine indexes them: the
/// title as read and its search form, the authors as read and in display order, each split into
/// runs of letters and digits and folded (``LibraryQuery/words(_:)``: case, diacritics, `ß` → `ss`).
///
/// An engine's word index holds exactly these words (the SQLite engine's FTS5 table, the
/// PostgreSQL engine's word columns), so a listing, a search and ``LibraryQuery/matches(_:isGone:)``
/// cannot disagree about which record holds a word.
public enum RecordWords {
    /// The title's words: the title as read, then its search form (when it differs).
    public static func title(_ record: BookRecord) -> [String] {
        var words = LibraryQuery.words(record.title)
        if let forms = record.normalized, forms.searchTitle != record.title { words += LibraryQuery.words(forms.searchTitle) }
        return words
    }

    /// The authors' words: the names as read, then the display forms not read as such.
    public static func authors(_ record: BookRecord) -> [String] {
        var names = record.authors
        for author in record.normalized?.authors ?? [] where !names.contains(author) { names.append(author) }
        return names.flatMap(LibraryQuery.words)
    }
}

extension LibraryQuery {
    /// Whether `record` matches every condition: the query as a rule over a record's values.
    ///
    /// This is what each engine's listing computes in its own query language, and what a pipeline's
    /// `filter` step applies to the records passing through it; the contract's suite holds every
    /// engine to it. Words are matched as ``RecordWords`` gives them (each query word the start of
    /// a word, a single letter or digit a whole word).
    /// - Parameters:
    ///   - record: the record as stored (or as read, in a pipeline: pending, with the findings normalising gave).
    ///   - isGone: whether the newest export of its list no longer holds it (`gone:`), which only a
    ///     library knows.
    public func matches(_ record: BookRecord, isGone: Bool = false) -> Bool {
        // The record's words are folded once, by the first condition that needs them.
        var words: (title: [String], authors: [String])?
        for condition in conditions {
            if Self.matches(condition.test, record, isGone: isGone, words: &words) == condition.isNegated { return false }
        }
        return true
    }

    private static func matches(_ test: Test, _ record: BookRecord, isGone: Bool,
                                words cached: inout (title: [String], authors: [String])?) -> Bool {
        func held() -> (title: [String], authors: [String]) {
            if let cached { return cached }
            let folded = (title: RecordWords.title(record), authors: RecordWords.authors(record))
            cached = folded
            return folded
        }
        switch test {
        case .words(let words):
            let record = held()
            return words.allSatisfy { holds(record.title, $0) || holds(record.authors, $0) }
        case .title(let words):
            let title = held().title
            return words.allSatisfy { holds(title, $0) }
        case .author(let words):
            let authors = held().authors
            return words.allSatisfy { holds(authors, $0) }
        case .isbn(let digits):
            return record.normalized?.isbn13?.hasPrefix(digits) ?? false
        case .year(let bounds):
            return record.year.map { bounds.contains(Double($0)) } ?? false
        case .rating(let bounds):
            return record.rating.map(bounds.contains) ?? false
        case .shelf(let key):
            return record.shelf.map(TextFolding.key) == key
        case .status(let status):
            return record.status == status
        case .review(let state):
            switch state {
            case .waiting: return record.reviewStatus == .needsReview || record.status == .needsCandidateSelection
            case .verified: return record.reviewStatus == .verified
            case .needsReview: return record.reviewStatus == .needsReview
            case .userEdited: return record.reviewStatus == .userEdited
            }
        case .file(let key):
            return TextFolding.key(record.origin.file).contains(key) || TextFolding.key(record.origin.format).contains(key)
        case .gone(let wanted):
            return isGone == wanted
        case .ids(let ids):
            return ids.contains(record.id)
        case .invalidISBN:
            return record.findings.contains { QualityCodes.isInvalidISBN($0.code) }
        case .finding(let code):
            return record.findings.contains { $0.code == code || $0.code.hasPrefix(code + ".") }
        case .missing(let value):
            return isMissing(value, record)
        }
    }

    /// Whether `word` is one of `held` (a single letter or digit) or starts one.
    private static func holds(_ held: [String], _ word: String) -> Bool {
        word.count > 1 ? held.contains { $0.hasPrefix(word) } : held.contains(word)
    }

    /// Whether the record lacks the value, as the data-quality report's completeness counts it.
    public static func isMissing(_ value: MissingValue, _ record: BookRecord) -> Bool {
        switch value {
        case .isbn: return record.normalized?.isbn13 == nil
        case .year: return record.year == nil
        case .pages: return record.pageCount == nil
        case .publisher: return record.publisher == nil
        case .author: return record.normalized?.authors.isEmpty ?? true
        case .cover:
            guard record.status == .enriched else { return true }
            return record.normalized?.isbn13 == nil && !(record.enrichment?.match?.editionKey.map(isOpenLibraryEdition) ?? false)
        }
    }

    /// An Open Library edition key (`/books/OL123M`), as the engines test it (SQLite's GLOB
    /// `*OL[0-9]*M`, PostgreSQL's `OL[0-9].*M$`): `OL` and a digit, then anything, and an `M` that ends it.
    static func isOpenLibraryEdition(_ key: String) -> Bool {
        guard key.hasSuffix("M") else { return false }
        var rest = Substring(key)
        while let range = rest.range(of: "OL") {
            let after = rest[range.upperBound...]
            if let digit = after.first, digit.isASCII, digit.isNumber, after.count > 1 { return true }
            rest = after
        }
        return false
    }
}

extension LibraryQuery {
    /// The tokens of a query written as one text (a pipeline file's `query:`), split as a shell
    /// would split the words of `bookpipe list`: at spaces, except inside double quotes, which are
    /// removed (`title:"left hand" ^shelf:read` → `title:left hand`, `^shelf:read`). An apostrophe is
    /// a letter of a word (`author:o'brien`).
    public static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        var quote: Character?
        var inToken = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" {
                quote = character
                inToken = true
            } else if character.isWhitespace {
                if inToken { tokens.append(current) }
                current = ""
                inToken = false
            } else {
                current.append(character)
                inToken = true
            }
        }
        if inToken { tokens.append(current) }
        return tokens
    }
}
