import Foundation
import BookpipeCore

/// The books of ``FakeBookServices``, indexed, and the routing of requests to the two APIs.
/// A value: the services copy it out of their lock and build answers without holding it.
struct FakeCatalog: Sendable {
    struct Entry: Sendable {
        var book: FakeBook
        /// Comparison key of `Title Subtitle`.
        var titleKey: String
        /// Comparison keys of the authors, joined by spaces.
        var authorKey: String
    }

    private(set) var entries: [Entry] = []
    private var byISBN13: [String: [Int]] = [:]
    private var byEditionID: [String: Int] = [:]
    private var byWorkKey: [String: [Int]] = [:]
    private var byVolumeID: [String: Int] = [:]

    init(books: [FakeBook]) { add(books) }

    var books: [FakeBook] { entries.map(\.book) }

    mutating func add(_ books: [FakeBook]) {
        for book in books {
            let index = entries.count
            entries.append(Entry(book: book, titleKey: TextFolding.key(book.fullTitle),
                                 authorKey: book.authors.map(AuthorNormalizer.key).joined(separator: " ")))
            for isbn in book.isbn13s { byISBN13[isbn, default: []].append(index) }
            byEditionID[book.editionID] = byEditionID[book.editionID] ?? index
            byWorkKey[book.workKey, default: []].append(index)
            byVolumeID[book.googleVolumeID] = byVolumeID[book.googleVolumeID] ?? index
        }
    }

    /// Books with this ISBN (10 or 13 digits, hyphens allowed).
    func books(withISBN raw: String) -> [FakeBook] {
        let digits = raw.filter { $0 != "-" && $0 != " " }
        guard digits.count == 10 || digits.count == 13, case .success(let isbn) = ISBN.parse(digits) else { return [] }
        return (byISBN13[isbn.isbn13] ?? []).map { entries[$0].book }
    }

    func book(editionID: String) -> FakeBook? { byEditionID[editionID].map { entries[$0].book } }
    func editions(ofWork key: String) -> [FakeBook] { (byWorkKey[key] ?? []).map { entries[$0].book } }
    func book(volumeID: String) -> FakeBook? { byVolumeID[volumeID].map { entries[$0].book } }

    /// Entries whose title holds every word of `title`, whose authors hold every word of
    /// `author`, and whose title or authors hold every word of `anywhere` (words compared as
    /// comparison keys, each a substring).
    func matching(title: String?, author: String?, anywhere: String?) -> [Entry] {
        func words(_ text: String?, _ key: (String) -> String) -> [String] {
            guard let text else { return [] }
            return key(text).split(separator: " ").map(String.init)
        }
        let titleWords = words(title, TextFolding.key)
        let authorWords = words(author, AuthorNormalizer.key)
        let anyWords = words(anywhere, TextFolding.key)
        return entries.filter { entry in
            titleWords.allSatisfy(entry.titleKey.contains)
                && authorWords.allSatisfy(entry.authorKey.contains)
                && anyWords.allSatisfy { entry.titleKey.contains($0) || entry.authorKey.contains($0) }
        }
    }

    // MARK: - Routing

    func route(_ path: String, parameters: [(name: String, value: String)],
               configuration: FakeBookServices.Configuration) -> ScriptedResponse {
        func parameter(_ name: String) -> String? { parameters.first { $0.name == name }?.value }
        if path == "/books/v1/volumes" || path.hasPrefix("/books/v1/volumes/") {
            if let required = configuration.googleAPIKey, parameter("key") != required {
                return Self.googleError(code: 400, status: "INVALID_ARGUMENT", reason: "badRequest",
                                        message: "API key not valid. Please pass a valid API key.")
            }
            if path == "/books/v1/volumes" { return googleVolumes(parameter) }
            return googleVolume(id: String(path.dropFirst("/books/v1/volumes/".count)))
        }
        switch path {
        case "/api/books":
            return openLibraryBooksAPI(parameter, configuration: configuration)
        case "/search.json":
            return openLibrarySearch(parameter, configuration: configuration)
        default:
            break
        }
        if let isbn = Self.between(path, "/isbn/", ".json") {
            guard let book = books(withISBN: isbn).first else {
                return Self.json(["error": "notfound", "key": "/isbn/\(isbn)"], status: 404)
            }
            return .redirect(to: "/books/\(book.editionID).json")
        }
        if let id = Self.between(path, "/books/", ".json") {
            guard let book = book(editionID: id) else {
                return Self.json(["error": "notfound", "key": "/books/\(id)"], status: 404)
            }
            return Self.json(editionRecord(book))
        }
        if let id = Self.between(path, "/works/", ".json") {
            guard let first = editions(ofWork: "/works/\(id)").first else {
                return Self.json(["error": "notfound", "key": "/works/\(id)"], status: 404)
            }
            return Self.json(workRecord(first, editions: editions(ofWork: first.workKey)))
        }
        return .notFound
    }

    // MARK: - Helpers

    /// Query parameters, form-decoded: `+` is a space, then percent-decoding.
    static func formDecode(_ query: String?) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The part of `path` between `prefix` and `suffix`, when it is one non-empty segment.
    static func between(_ path: String, _ prefix: String, _ suffix: String) -> String? {
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else { return nil }
        let middle = path.dropFirst(prefix.count).dropLast(suffix.count)
        return middle.contains("/") ? nil : String(middle)
    }

    /// A JSON answer (keys sorted, slashes unescaped, as Python's `json.dumps` writes them).
    static func json(_ object: Any, status: Int = 200) -> ScriptedResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return ScriptedResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(data))
    }

    /// An error in the format of Google's APIs.
    static func googleError(code: Int, status: String, reason: String, message: String,
                            details: [[String: Any]] = []) -> ScriptedResponse {
        var error: [String: Any] = [
            "code": code, "message": message, "status": status,
            "errors": [["message": message, "domain": "global", "reason": reason]],
        ]
        if !details.isEmpty { error["details"] = details }
        return json(["error": error], status: code)
    }

    /// An Open Library author key for a name, the same every run.
    static func authorKey(_ name: String) -> String { "/authors/OL\(FakeBook.hash(name) % 9_000_000 + 1_000_000)A" }

    /// Open Library's URL slug of a title (`Les_ombres_errantes`).
    static func slug(_ text: String) -> String {
        let mapped = text.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        return mapped.split(separator: "_").joined(separator: "_")
    }
}
