import Foundation
import BookpipeCore

/// Open Library's endpoints, in the shapes of `openlibrary/plugins/books/dynlinks.py` (Books
/// API) and `search.json`, as the shared fixtures show them.
extension FakeCatalog {
    /// Fields `search.json` returns when `fields` is not given: everything but `isbn` and
    /// `edition_key`, which Open Library sends only on request.
    static let defaultSearchFields: Set<String> = [
        "key", "type", "title", "subtitle", "author_name", "author_key", "first_publish_year", "publish_year",
        "publish_date", "edition_count", "cover_edition_key", "publisher",
    ]

    /// `GET /api/books?bibkeys=…&format=…&jscmd=…`.
    func openLibraryBooksAPI(_ parameter: (String) -> String?,
                             configuration: FakeBookServices.Configuration = .init()) -> ScriptedResponse {
        let bibkeys = (parameter("bibkeys") ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
        var result: [String: Any] = [:]
        for bibkey in bibkeys {
            guard let book = book(forBibkey: bibkey), configuration.openLibraryKnows(book) else { continue }
            switch parameter("jscmd") {
            case "data":
                result[bibkey] = booksAPIData(book)
            case "details":
                var entry = booksAPIView(book, bibkey: bibkey)
                // As dynlinks' details processor: the edition record, its authors' names filled in.
                var details = editionRecord(book)
                details["authors"] = book.authors.map { ["key": Self.authorKey($0), "name": $0] }
                if !book.authors.isEmpty { details["by_statement"] = book.authors.joined(separator: ", ") + "." }
                entry["details"] = details
                result[bibkey] = entry
            default:
                result[bibkey] = booksAPIView(book, bibkey: bibkey)
            }
        }
        if parameter("format")?.lowercased() == "json" { return Self.json(result) }
        let json = Self.json(result).body
        let script = Array("var _OLBookInfo = ".utf8) + json + Array(";".utf8)
        return ScriptedResponse(headers: [("Content-Type", "text/javascript")], body: script)
    }

    /// The edition a bibkey names (`ISBN:…`, `OLID:OL…M`, or a bare ISBN), as `split_key` reads it.
    func book(forBibkey raw: String) -> FakeBook? {
        let bibkey = raw.trimmingCharacters(in: .whitespaces)
        let kind: String
        let value: String
        if let colon = bibkey.firstIndex(of: ":") {
            kind = bibkey[..<colon].lowercased()
            value = String(bibkey[bibkey.index(after: colon)...])
        } else if bibkey.lowercased().hasPrefix("isbn") {
            kind = "isbn"
            value = String(bibkey.dropFirst(4))
        } else if bibkey.first?.isNumber == true {
            kind = "isbn"
            value = bibkey
        } else {
            kind = "olid"
            value = bibkey
        }
        switch kind {
        case "isbn": return books(withISBN: value).first
        case "olid": return book(editionID: value.uppercased())
        default: return nil
        }
    }

    /// One `jscmd=data` value, like `openlibrary-books-api-jscmd-data-bookwyrm.json`.
    func booksAPIData(_ book: FakeBook) -> [String: Any] {
        var identifiers: [String: Any] = ["openlibrary": [book.editionID]]
        if let isbn10 = book.isbn10 { identifiers["isbn_10"] = [isbn10] }
        if let isbn13 = book.isbn13 { identifiers["isbn_13"] = [isbn13] }
        var data: [String: Any] = [
            "url": "https://openlibrary.org\(book.editionKey)/\(Self.slug(book.title))",
            "key": book.editionKey,
            "title": book.title,
            "authors": book.authors.map { name in
                ["url": "https://openlibrary.org\(Self.authorKey(name))/\(Self.slug(name))", "name": name]
            },
            "identifiers": identifiers,
        ]
        if let subtitle = book.subtitle { data["subtitle"] = subtitle }
        if let publisher = book.publisher { data["publishers"] = [["name": publisher]] }
        if let publishDate = book.publishDate { data["publish_date"] = publishDate }
        if let pageCount = book.pageCount { data["number_of_pages"] = pageCount }
        if !book.authors.isEmpty { data["by_statement"] = book.authors.joined(separator: ", ") + "." }
        return data
    }

    /// One `jscmd=viewapi` value (the Books API's default).
    func booksAPIView(_ book: FakeBook, bibkey: String) -> [String: Any] {
        let url = "https://openlibrary.org\(book.editionKey)/\(Self.slug(book.title))"
        return ["bib_key": bibkey, "info_url": url, "preview": "noview", "preview_url": url]
    }

    /// `GET /search.json`: one document per work, in the order books were added.
    func openLibrarySearch(_ parameter: (String) -> String?,
                           configuration: FakeBookServices.Configuration = .init()) -> ScriptedResponse {
        let limit = parameter("limit").flatMap(Int.init).map { max(0, $0) } ?? 100
        let offset = parameter("offset").flatMap(Int.init)
            ?? parameter("page").flatMap(Int.init).map { max(0, $0 - 1) * limit } ?? 0
        var fields = Self.defaultSearchFields
        if let requested = parameter("fields") {
            let names = Set(requested.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            fields = names.contains("*") ? Self.defaultSearchFields.union(["isbn", "edition_key"]) : names
        }
        var workOrder: [String] = []
        var seen = Set<String>()
        for entry in matching(title: parameter("title"), author: parameter("author"), anywhere: parameter("q"))
        where configuration.openLibraryKnows(entry.book) && seen.insert(entry.book.workKey).inserted {
            workOrder.append(entry.book.workKey)
        }
        let page = workOrder.dropFirst(offset).prefix(limit)
        let docs = page.map { searchDocument(editions: editions(ofWork: $0)).filter { fields.contains($0.key) } }
        return Self.json([
            "numFound": workOrder.count, "num_found": workOrder.count, "numFoundExact": true, "start": offset,
            "q": parameter("q") ?? "", "offset": NSNull(),
            "documentation_url": "https://openlibrary.org/dev/docs/api/search", "docs": docs,
        ])
    }

    /// A `search.json` document for a work, from its editions.
    func searchDocument(editions: [FakeBook]) -> [String: Any] {
        guard let first = editions.first else { return [:] }
        let years = editions.compactMap(\.year)
        let authors = first.authors
        var document: [String: Any] = [
            "key": first.workKey,
            "type": "work",
            "title": first.title,
            "author_name": authors,
            "author_key": authors.map { String(Self.authorKey($0).split(separator: "/").last ?? "") },
            "edition_count": editions.count,
            "cover_edition_key": first.editionID,
            "edition_key": editions.map(\.editionID),
            "isbn": editions.flatMap { [$0.isbn13, $0.isbn10].compactMap { $0 } },
        ]
        if let subtitle = first.subtitle { document["subtitle"] = subtitle }
        if let earliest = years.min() {
            document["first_publish_year"] = earliest
            document["publish_year"] = Array(Set(years)).sorted()
        }
        let dates = editions.compactMap(\.publishDate)
        if !dates.isEmpty { document["publish_date"] = dates }
        let publishers = editions.compactMap(\.publisher)
        if !publishers.isEmpty { document["publisher"] = publishers }
        return document
    }

    /// The edition record (`/books/OL…M.json`), like `openlibrary-edition-bookwyrm.json`.
    func editionRecord(_ book: FakeBook) -> [String: Any] {
        var record: [String: Any] = [
            "key": book.editionKey,
            "title": book.title,
            "type": ["key": "/type/edition"],
            "works": [["key": book.workKey]],
            "authors": book.authors.map { ["key": Self.authorKey($0)] },
            "revision": 1,
            "latest_revision": 1,
            "created": ["type": "/type/datetime", "value": "2009-02-12T16:29:58.929717"],
            "last_modified": ["type": "/type/datetime", "value": "2017-10-08T21:20:07.665236"],
        ]
        if let subtitle = book.subtitle { record["subtitle"] = subtitle }
        if let isbn10 = book.isbn10 { record["isbn_10"] = [isbn10] }
        if let isbn13 = book.isbn13 { record["isbn_13"] = [isbn13] }
        if let publishDate = book.publishDate { record["publish_date"] = publishDate }
        if let publisher = book.publisher { record["publishers"] = [publisher] }
        if let pageCount = book.pageCount { record["number_of_pages"] = pageCount }
        return record
    }

    /// The work record (`/works/OL…W.json`), like `openlibrary-work-bookwyrm.json`.
    func workRecord(_ book: FakeBook, editions: [FakeBook]) -> [String: Any] {
        var record: [String: Any] = [
            "key": book.workKey,
            "title": book.title,
            "type": ["key": "/type/work"],
            "authors": book.authors.map { ["author": ["key": Self.authorKey($0)], "type": ["key": "/type/author_role"]] },
            "revision": 1,
            "latest_revision": 1,
            "created": ["type": "/type/datetime", "value": "2009-12-11T01:57:19.964652"],
            "last_modified": ["type": "/type/datetime", "value": "2020-06-10T09:57:44.285919"],
        ]
        if let subtitle = book.subtitle { record["subtitle"] = subtitle }
        if let earliest = editions.compactMap(\.year).min() { record["first_publish_date"] = String(earliest) }
        return record
    }
}
