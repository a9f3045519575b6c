import BookpipeCore

/// The parts of Open Library's answers that bookpipe reads. Every field is optional: records
/// are edited by people and any field may be missing.
enum OpenLibraryResponses {
    /// One value of the Books API with `jscmd=data` (`GET /api/books?bibkeys=…&format=json&jscmd=data`),
    /// keyed in the response by the bibkey exactly as sent.
    ///
    /// It describes an *edition*: `key` is `/books/OL…M`. Open Library's `DataProcessor` reads the
    /// edition's work only for its authors, subjects and excerpts and sends no work key.
    struct BooksAPIEntry: Decodable {
        struct Author: Decodable {
            var name: String?
        }

        struct Identifiers: Decodable {
            var isbn10: [String]?
            var isbn13: [String]?

            enum CodingKeys: String, CodingKey {
                case isbn10 = "isbn_10"
                case isbn13 = "isbn_13"
            }
        }

        var key: String?
        var title: String?
        var subtitle: String?
        var authors: [Author]?
        var identifiers: Identifiers?
        var publishDate: String?

        enum CodingKeys: String, CodingKey {
            case key, title, subtitle, authors, identifiers
            case publishDate = "publish_date"
        }

        /// The candidate for `isbn` (the ISBN-13 that was asked for), or `nil` when the entry
        /// has no key or title.
        ///
        /// The edition key is used as both work key and edition key (the Books API names no
        /// work). The ISBN asked for is listed first: the entry was found by it, even when the
        /// record lists only the ISBN-10 form.
        func candidate(isbn: String, source: String) -> Candidate? {
            guard let key, !key.isEmpty, let title, !title.isEmpty else { return nil }
            let listed = (identifiers?.isbn13 ?? []) + (identifiers?.isbn10 ?? [])
            return Candidate(
                workKey: key, editionKey: key,
                title: SourceResponses.fullTitle(title, subtitle: subtitle),
                authors: (authors ?? []).compactMap { $0.name }.filter { !$0.isEmpty },
                year: PublicationYear.parse(publishDate),
                isbn13s: SourceResponses.isbn13s([isbn] + listed),
                source: source)
        }
    }

    /// `GET /search.json?…&fields=…`: `numFound` and the matching works.
    struct SearchResponse: Decodable {
        struct Document: Decodable {
            var key: String?
            var title: String?
            var subtitle: String?
            var authorName: [String]?
            var firstPublishYear: Int?
            var isbn: [String]?
            var editionKey: [String]?

            enum CodingKeys: String, CodingKey {
                case key, title, subtitle, isbn
                case authorName = "author_name"
                case firstPublishYear = "first_publish_year"
                case editionKey = "edition_key"
            }

            /// The candidate for this work, or `nil` when the document has no key or title.
            ///
            /// The edition key is the first of `edition_key` (`/books/` added): an edition of the
            /// work, not necessarily the one a row describes.
            func candidate(source: String) -> Candidate? {
                guard let key, !key.isEmpty, let title, !title.isEmpty else { return nil }
                let edition = editionKey?.first(where: { !$0.isEmpty }).map { $0.hasPrefix("/") ? $0 : "/books/\($0)" }
                return Candidate(
                    workKey: key, editionKey: edition,
                    title: SourceResponses.fullTitle(title, subtitle: subtitle),
                    authors: (authorName ?? []).filter { !$0.isEmpty },
                    year: firstPublishYear,
                    isbn13s: SourceResponses.isbn13s(isbn ?? []),
                    source: source)
            }
        }

        var numFound: Int?
        var docs: [Document]
    }
}
