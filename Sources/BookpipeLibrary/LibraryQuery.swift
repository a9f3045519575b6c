import BookpipeCore

/// What `bookpipe list` and `bookpipe remove` look for, parsed from the words a person typed, in
/// the habits of beets and calibredb: field queries (`author:herbert`, `year:1960..1970`,
/// `rating:>=4`, `shelf:to-read`) and free words, every one of which must hold.
///
/// The value is engine-neutral: each engine translates it into its own query language (the SQLite
/// engine: an FTS5 match for words, its listing table's indexes for the rest). Matching ignores
/// case and diacritics (``TextFolding/key(_:)``).
///
/// ```swift
/// let query = try LibraryQuery.parse(["author:herbert", "year:1960..1970", "dune"])
/// ```
///
/// | token | matches a record whose |
/// |---|---|
/// | `word` | title or an author has a word starting with `word` |
/// | `title:left hand` | title has words starting with `left` and `hand` |
/// | `author:le guin` | authors have words starting with `le` and `guin` |
/// | `isbn:978044` | ISBN-13 starts with these digits (an ISBN-10 is read as its ISBN-13) |
/// | `year:1965`, `year:1960..1970`, `year:..1970`, `year:>=1960` | year read from the row is in range |
/// | `shelf:to-read` | shelf is `to-read` (case, accents and punctuation aside) |
/// | `status:notFound` | enrichment status is this one |
/// | `review:waiting` | review state: `waiting` (in the review queue), `verified`, `needsReview`, `userEdited` |
/// | `rating:>=4`, `rating:3..5` | rating is in range (unrated records never match) |
/// | `file:goodreads` | source file's path or detected format contains `goodreads` |
/// | `gone:yes` | newest export of its list no longer holds it (`gone:no`: it does) |
/// | `isbn:invalid` | ISBN could not be read as a valid ISBN (a finding of ``QualityCodes/isInvalidISBN(_:)``) |
/// | `missing:publisher` | has no `isbn` (valid ISBN-13), `year`, `pages`, `publisher`, `author` or `cover` |
/// | `finding:date.unparseable`, `finding:isbn` | carries a stored finding of this code (or of codes starting `isbn.`) |
///
/// A `^` before a token negates it (`^shelf:read`); a token's value may hold spaces when quoted
/// for the shell (`"title:the left hand"`).
public struct LibraryQuery: Sendable, Hashable {
    /// Every condition must hold.
    public var conditions: [Condition]

    /// Creates a query of these conditions (none: every record).
    public init(_ conditions: [Condition] = []) {
        self.conditions = conditions
    }

    /// True when the query names no condition (every record matches).
    public var isEmpty: Bool { conditions.isEmpty }

    /// True when a condition matches words of titles or authors (free words, `title:`, `author:`):
    /// engines match those with their search index (``LibrarySearchStore``).
    public var hasWords: Bool {
        conditions.contains {
            switch $0.test {
            case .words, .title, .author: return true
            default: return false
            }
        }
    }

    /// One condition, possibly negated.
    public struct Condition: Sendable, Hashable {
        /// What is tested.
        public var test: Test
        /// True when the condition holds for records the test does not match (`^` before the token).
        public var isNegated: Bool

        /// Creates a condition.
        public init(_ test: Test, isNegated: Bool = false) {
            self.test = test
            self.isNegated = isNegated
        }
    }

    /// What a condition tests.
    public enum Test: Sendable, Hashable {
        /// Free words: each starts a word of the title or of an author's name (folded).
        case words([String])
        /// Each word starts a word of the title (as read or its search form), folded.
        case title([String])
        /// Each word starts a word of an author's name, folded.
        case author([String])
        /// The ISBN-13 starts with these digits.
        case isbn(String)
        /// The year read from the row is within the bounds.
        case year(Bounds)
        /// The shelf's folded key (``TextFolding/key(_:)``) is this one.
        case shelf(String)
        /// The enrichment status is this one.
        case status(RecordStatus)
        /// The review state is this one.
        case review(ReviewState)
        /// The rating is within the bounds (an unrated record never matches).
        case rating(Bounds)
        /// The folded key of the source file's path or of its detected format contains this folded text.
        case file(String)
        /// The record is (true) or is not (false) gone from the newest export of its list.
        case gone(Bool)
        /// The record's id is one of these (records named one by one, as `remove 12 1bd89140:3`
        /// does once it has resolved them; no token parses to it).
        case ids([String])
        /// The record carries a stored finding about its ISBN that makes it invalid
        /// (``QualityCodes/isInvalidISBN(_:)``: every `isbn.` code but the repairs).
        case invalidISBN
        /// The record lacks this value (as the data-quality report's completeness counts it).
        case missing(MissingValue)
        /// The record carries a stored finding whose code is this one, or starts with it and a `.`.
        case finding(String)
    }

    /// A value whose absence a query names (`missing:publisher`): the data-quality report's
    /// completeness fields, and the author.
    public enum MissingValue: String, Sendable, Hashable, CaseIterable {
        /// No valid ISBN-13.
        case isbn
        /// No year read as a number.
        case year
        /// No page count read as a number.
        case pages
        /// No publisher.
        case publisher
        /// No author (none read, or none with a letter or digit).
        case author
        /// No cover to show: not enriched, or enriched with neither an ISBN-13 nor an Open Library edition.
        case cover
    }

    /// A review state a query names.
    public enum ReviewState: String, Sendable, Hashable, CaseIterable {
        /// In the review queue: a scan detection to check (`needsReview`) or a match to choose
        /// (status `needsCandidateSelection`).
        case waiting
        /// Review status `verified`.
        case verified
        /// Review status `needsReview`.
        case needsReview
        /// Review status `userEdited`.
        case userEdited
    }

    /// A range of numbers; a missing end is open.
    public struct Bounds: Sendable, Hashable {
        /// The lowest value that matches (or the value matches are above, when not inclusive).
        public var lower: Double?
        /// Whether ``lower`` itself matches.
        public var includesLower: Bool
        /// The highest value that matches (or the value matches are below, when not inclusive).
        public var upper: Double?
        /// Whether ``upper`` itself matches.
        public var includesUpper: Bool

        /// Creates bounds.
        public init(lower: Double?, includesLower: Bool = true, upper: Double?, includesUpper: Bool = true) {
            self.lower = lower
            self.includesLower = includesLower
            self.upper = upper
            self.includesUpper = includesUpper
        }

        /// Whether `value` is within the bounds.
        public func contains(_ value: Double) -> Bool {
            if let lower, includesLower ? value < lower : value <= lower { return false }
            if let upper, includesUpper ? value > upper : value >= upper { return false }
            return true
        }
    }

    /// The field names a token may start with, in the order help lists them.
    public static let fields = ["title", "author", "isbn", "year", "shelf", "status", "review", "rating", "file", "gone",
                                "missing", "finding"]

    /// Parses the words a person typed (each shell argument one token).
    ///
    /// - Parameter tokens: field queries (`field:value`, `^field:value`) and free words.
    /// - Returns: the query; empty when no token holds a letter or digit.
    /// - Throws: ``LibraryQueryError`` naming the token: an unknown field (`autor:x`), a field with
    ///   no value, or a value the field cannot take (`year:19x0`, `rating:>=x`, `status:lost`).
    public static func parse(_ tokens: [String]) throws(LibraryQueryError) -> LibraryQuery {
        var conditions: [Condition] = []
        var freeWords: [String] = []
        for token in tokens {
            var body = Substring(token)
            let isNegated = body.hasPrefix("^")
            if isNegated { body = body.dropFirst() }
            guard let colon = body.firstIndex(of: ":"), body[..<colon].allSatisfy({ $0.isASCII && $0.isLetter }),
                  colon != body.startIndex else {
                let words = Self.words(String(body))
                if isNegated {
                    guard !words.isEmpty else { throw LibraryQueryError(token: token, problem: .emptyValue) }
                    conditions.append(Condition(.words(words), isNegated: true))
                } else if let isbn = Self.fullISBN(String(body)) {
                    conditions.append(Condition(.isbn(isbn)))
                } else {
                    freeWords += words
                }
                continue
            }
            let name = body[..<colon].lowercased()
            let value = String(body[body.index(after: colon)...]).trimmingSpaces
            guard let field = Self.field(named: name) else {
                throw LibraryQueryError(token: token, problem: .unknownField(name))
            }
            guard !value.isEmpty else { throw LibraryQueryError(token: token, problem: .emptyValue) }
            let test = try Self.test(field: field, value: value, token: token)
            conditions.append(Condition(test, isNegated: isNegated))
        }
        if !freeWords.isEmpty { conditions.insert(Condition(.words(freeWords)), at: 0) }
        return LibraryQuery(conditions)
    }

    /// The field a name means: a field of ``fields`` or a plural or short form people type.
    private static func field(named name: String) -> String? {
        switch name {
        case "authors": return "author"
        case "shelves": return "shelf"
        case "isbn13": return "isbn"
        default: return fields.contains(name) ? name : nil
        }
    }

    private static func test(field: String, value: String, token: String) throws(LibraryQueryError) -> Test {
        func words() throws(LibraryQueryError) -> [String] {
            let words = Self.words(value)
            guard !words.isEmpty else { throw LibraryQueryError(token: token, problem: .badValue("no letter or digit")) }
            return words
        }
        switch field {
        case "title": return .title(try words())
        case "author": return .author(try words())
        case "isbn":
            if value.lowercased() == "invalid" { return .invalidISBN }
            guard let digits = isbn(value) else {
                throw LibraryQueryError(token: token, problem: .badValue("an ISBN is digits (and a final X), hyphens allowed"))
            }
            return .isbn(digits)
        case "year":
            let bounds = try Self.bounds(value, token: token)
            for end in [bounds.lower, bounds.upper] {
                if let end, end != end.rounded() {
                    throw LibraryQueryError(token: token, problem: .badValue("a year is a whole number"))
                }
            }
            return .year(bounds)
        case "rating": return .rating(try Self.bounds(value, token: token))
        case "shelf":
            let key = TextFolding.key(value)
            guard !key.isEmpty else { throw LibraryQueryError(token: token, problem: .badValue("no letter or digit")) }
            return .shelf(key)
        case "status":
            guard let status = RecordStatus.allCases.first(where: { $0.rawValue.lowercased() == value.lowercased() }) else {
                throw LibraryQueryError(token: token, problem: .badChoice(RecordStatus.allCases.map(\.rawValue)))
            }
            return .status(status)
        case "review":
            guard let state = ReviewState.allCases.first(where: { $0.rawValue.lowercased() == value.lowercased() }) else {
                throw LibraryQueryError(token: token, problem: .badChoice(ReviewState.allCases.map(\.rawValue)))
            }
            return .review(state)
        case "missing":
            guard let missing = MissingValue.allCases.first(where: { $0.rawValue == value.lowercased() }) else {
                throw LibraryQueryError(token: token, problem: .badChoice(MissingValue.allCases.map(\.rawValue)))
            }
            return .missing(missing)
        case "finding":
            let code = value.lowercased()
            guard code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                throw LibraryQueryError(token: token, problem: .badValue(
                    "a finding code is letters, digits, dots and hyphens (e.g. finding:date.unparseable)"))
            }
            return .finding(code)
        case "file":
            let key = TextFolding.key(value)
            guard !key.isEmpty else { throw LibraryQueryError(token: token, problem: .badValue("no letter or digit")) }
            return .file(key)
        default:
            switch value.lowercased() {
            case "yes", "true", "1": return .gone(true)
            case "no", "false", "0": return .gone(false)
            default: throw LibraryQueryError(token: token, problem: .badChoice(["yes", "no"]))
            }
        }
    }

    /// `1965`, `1960..1970`, `1960..`, `..1970`, `>=4`, `>4`, `<=4`, `<4`, `=4`.
    private static func bounds(_ value: String, token: String) throws(LibraryQueryError) -> Bounds {
        func number(_ text: Substring) throws(LibraryQueryError) -> Double {
            let trimmed = String(text).trimmingSpaces
            guard let number = Double(trimmed), number.isFinite, !trimmed.contains(where: { $0.isLetter }) else {
                throw LibraryQueryError(token: token, problem: .badValue(
                    "\"\(trimmed)\" is not a number; write N, A..B, A.., ..B, >N, >=N, <N or <=N"))
            }
            return number
        }
        let text = Substring(value)
        if let range = text.range(of: "..") {
            let lower = text[..<range.lowerBound], upper = text[range.upperBound...]
            guard !lower.isEmpty || !upper.isEmpty else {
                throw LibraryQueryError(token: token, problem: .badValue("a range needs at least one end (A..B, A.., ..B)"))
            }
            let bounds = Bounds(lower: lower.isEmpty ? nil : try number(lower), upper: upper.isEmpty ? nil : try number(upper))
            if let low = bounds.lower, let high = bounds.upper, low > high {
                throw LibraryQueryError(token: token, problem: .badValue("the range's start is after its end"))
            }
            return bounds
        }
        for (prefix, make) in [(">=", { Bounds(lower: $0, upper: nil) }), ("<=", { Bounds(lower: nil, upper: $0) }),
                               (">", { Bounds(lower: $0, includesLower: false, upper: nil) }),
                               ("<", { Bounds(lower: nil, upper: $0, includesUpper: false) }),
                               ("=", { Bounds(lower: $0, upper: $0) })] as [(String, (Double) -> Bounds)]
            where text.hasPrefix(prefix) {
            return make(try number(text.dropFirst(prefix.count)))
        }
        let exact = try number(text)
        return Bounds(lower: exact, upper: exact)
    }

    /// The words of a text, as the search index splits them: runs of letters and digits, folded
    /// (case and diacritics; ``TextFolding/key(_:)``).
    public static func words(_ text: String) -> [String] {
        text.split { !($0.isLetter || $0.isNumber) }.map { TextFolding.key(String($0)) }.filter { !$0.isEmpty }
    }

    /// The ISBN-13 of a whole, valid ISBN-10 or ISBN-13 (hyphens allowed); nil for anything else.
    static func fullISBN(_ text: String) -> String? {
        let compact = text.filter { $0 != "-" && !$0.isWhitespace }
        guard compact.count == 10 || compact.count == 13, case .success(let isbn) = ISBN.parse(compact) else { return nil }
        return isbn.isbn13
    }

    /// The digits an ISBN query means: an ISBN-10 becomes its ISBN-13; otherwise the digits typed
    /// (a prefix of ISBN-13s). Nil when the text holds anything but digits, hyphens, spaces and a final X.
    static func isbn(_ text: String) -> String? {
        let compact = text.filter { $0 != "-" && !$0.isWhitespace }
        guard !compact.isEmpty, compact.dropLast().allSatisfy(\.isASCIIDigit),
              compact.last.map({ $0.isASCIIDigit || $0 == "X" || $0 == "x" }) == true else { return nil }
        if let full = fullISBN(compact) { return full }
        return compact.allSatisfy(\.isASCIIDigit) ? compact : nil
    }
}

/// A token of a listing query that cannot be read: which one, and why. The description names the
/// token and the valid fields or values, for a usage error.
public struct LibraryQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token as typed.
    public var token: String
    /// What is wrong with it.
    public var problem: Problem

    /// What is wrong with a token.
    public enum Problem: Sendable, Hashable {
        /// The text before `:` names no field.
        case unknownField(String)
        /// The field has no value (`author:`).
        case emptyValue
        /// The value is not one the field can take; the text says why.
        case badValue(String)
        /// The value is not one of these.
        case badChoice([String])
    }

    /// Creates an error.
    public init(token: String, problem: Problem) {
        self.token = token
        self.problem = problem
    }

    /// `"autor:herbert": no field "autor". Fields: title, author, …`
    public var description: String {
        let fields = "Fields: " + LibraryQuery.fields.joined(separator: ", ") + " (a word alone matches title and authors)."
        switch problem {
        case .unknownField(let name):
            return "\"\(token)\": no field \"\(name)\". \(fields)"
        case .emptyValue:
            return "\"\(token)\": give a value after the field (e.g. author:herbert). \(fields)"
        case .badValue(let reason):
            return "\"\(token)\": \(reason)."
        case .badChoice(let choices):
            return "\"\(token)\": the value must be one of " + choices.joined(separator: ", ") + "."
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
