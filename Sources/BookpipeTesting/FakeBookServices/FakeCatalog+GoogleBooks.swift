import Foundation
import BookpipeCore

/// Google Books' endpoints, in the shapes of `googlebooks-volumes-search-jellyfin.json` and
/// `googlebooks-volume-get-en-jellyfin.json`.
extension FakeCatalog {
    /// `GET /books/v1/volumes?q=…&maxResults=…&startIndex=…`.
    func googleVolumes(_ parameter: (String) -> String?) -> ScriptedResponse {
        guard let q = parameter("q"), !q.trimmingCharacters(in: .whitespaces).isEmpty else {
            return Self.googleError(code: 400, status: "INVALID_ARGUMENT", reason: "queryRequired",
                                    message: "Missing query.")
        }
        let maxResults = parameter("maxResults").flatMap(Int.init) ?? 10
        guard (0...40).contains(maxResults) else {
            return Self.googleError(code: 400, status: "INVALID_ARGUMENT", reason: "invalid",
                                    message: "Invalid value '\(maxResults)'. Values must be within the range: [0, 40]")
        }
        let startIndex = max(0, parameter("startIndex").flatMap(Int.init) ?? 0)
        let terms = Self.googleQuery(q)
        var found: [FakeBook]
        if let isbn = terms.isbn {
            found = books(withISBN: isbn)
        } else {
            found = matching(title: terms.title, author: terms.author, anywhere: terms.free).map(\.book)
        }
        var result: [String: Any] = ["kind": "books#volumes", "totalItems": found.count]
        found = Array(found.dropFirst(startIndex).prefix(maxResults))
        if !found.isEmpty { result["items"] = found.map(volume) }
        return Self.json(result)
    }

    /// `GET /books/v1/volumes/{id}`.
    func googleVolume(id: String) -> ScriptedResponse {
        guard let book = book(volumeID: id) else {
            return Self.googleError(code: 404, status: "NOT_FOUND", reason: "notFound",
                                    message: "The volume ID could not be found.")
        }
        return Self.json(volume(book))
    }

    /// One volume, with the fields and nesting Google sends.
    func volume(_ book: FakeBook) -> [String: Any] {
        let id = book.googleVolumeID
        var identifiers: [[String: String]] = []
        if let isbn10 = book.isbn10 { identifiers.append(["type": "ISBN_10", "identifier": isbn10]) }
        if let isbn13 = book.isbn13 { identifiers.append(["type": "ISBN_13", "identifier": isbn13]) }
        var info: [String: Any] = [
            "title": book.title,
            "readingModes": ["text": false, "image": false],
            "printType": "BOOK",
            "maturityRating": "NOT_MATURE",
            "allowAnonLogging": false,
            "contentVersion": "preview-1.0.0",
            "language": "en",
            "previewLink": "http://books.google.com/books?id=\(id)&dq=isbn&hl=&cd=1&source=gbs_api",
            "infoLink": "http://books.google.com/books?id=\(id)&dq=isbn&hl=&source=gbs_api",
            "canonicalVolumeLink": "https://books.google.com/books/about/\(Self.slug(book.title)).html?hl=&id=\(id)",
        ]
        if let subtitle = book.subtitle { info["subtitle"] = subtitle }
        if !book.authors.isEmpty { info["authors"] = book.authors }
        if let publisher = book.publisher { info["publisher"] = publisher }
        if let publishedDate = book.publishedDate { info["publishedDate"] = publishedDate }
        if !identifiers.isEmpty { info["industryIdentifiers"] = identifiers }
        if let pageCount = book.pageCount { info["pageCount"] = pageCount }
        return [
            "kind": "books#volume",
            "id": id,
            "etag": String(String(FakeBook.hash("etag\(id)"), radix: 36).prefix(11)),
            "selfLink": "https://www.googleapis.com/books/v1/volumes/\(id)",
            "volumeInfo": info,
            "saleInfo": ["country": "US", "saleability": "NOT_FOR_SALE", "isEbook": false],
            "accessInfo": [
                "country": "US", "viewability": "NO_PAGES", "embeddable": false, "publicDomain": false,
                "textToSpeechPermission": "ALLOWED", "epub": ["isAvailable": false], "pdf": ["isAvailable": false],
                "webReaderLink": "http://play.google.com/books/reader?id=\(id)&hl=&source=gbs_api",
                "accessViewStatus": "NONE", "quoteSharingAllowed": false,
            ] as [String: Any],
        ]
    }

    /// The parts of a Google `q`: `isbn:`, `intitle:` and `inauthor:` terms, and free words.
    /// A keyword's text runs to the next keyword (`intitle:Children of Time inauthor:Adrian`).
    static func googleQuery(_ q: String) -> (isbn: String?, title: String?, author: String?, free: String?) {
        let keywords = ["isbn:", "intitle:", "inauthor:", "inpublisher:", "subject:"]
        var parts: [String: String] = [:]
        var current = ""
        var text = ""
        var index = q.startIndex
        while index < q.endIndex {
            let rest = q[index...]
            let atWordStart = index == q.startIndex || q[q.index(before: index)].isWhitespace
            if atWordStart, let keyword = keywords.first(where: { rest.lowercased().hasPrefix($0) }) {
                parts[current, default: ""] += " " + text
                current = keyword
                text = ""
                index = q.index(index, offsetBy: keyword.count)
                continue
            }
            text.append(q[index])
            index = q.index(after: index)
        }
        parts[current, default: ""] += " " + text
        func value(_ key: String) -> String? {
            let cleaned = (parts[key] ?? "").replacingOccurrences(of: "\"", with: " ")
                .trimmingCharacters(in: .whitespaces)
            return cleaned.isEmpty ? nil : cleaned
        }
        return (value("isbn:"), value("intitle:"), value("inauthor:"), value(""))
    }
}
