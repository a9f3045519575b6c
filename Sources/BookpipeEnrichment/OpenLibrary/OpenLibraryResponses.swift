import BookpipeCore

/// The parts of Open Library's answers that bookpipe reads. Every field is optional: records
/// are edited by people and any field may be missing.
enum OpenLibraryResponses {
    /// One value of the Books API with `jscmd=details`
    /// (`GET /api/books?bibkeys=…&format=json&jscmd=details`), keyed in the response by the bibkey
    /// exactly as sent. `details` is the edition record (`key` is `/books/OL…M`) with its authors'
    /// names filled in and, unlike `jscmd=data`, its `works`: the work key comes in the same
    /// request, with no request per row.
    struct BooksAPIDetailsEntry: Decodable {
        struct Reference: Decodable {
            var key: String?
            var name: String?
        }

        struct Details: Decodable {
            var key: String?
            var title: String?
            var subtitle: String?
            var authors: [Reference]?
            var works: [Reference]?
            var isbn13: [String]?
            var isbn10: [String]?
            var publishDate: String?
            var publishers: [Name]?
            var byStatement: String?

            enum CodingKeys: String, CodingKey {
                case key, title, subtitle, authors, works, publishers
                case isbn13 = "isbn_13"
                case isbn10 = "isbn_10"
                case publishDate = "publish_date"
                case byStatement = "by_statement"
            }
        }

        /// A name given as a string (`"Penguin"`, as edition records have it) or as an object
        /// (`{"name": "Penguin"}`, as `jscmd=data` has it); anything else reads as no name.
        struct Name: Decodable {
            var text: String?

            init(from decoder: any Decoder) throws {
                if let text = try? decoder.singleValueContainer().decode(String.self) {
                    self.text = text
                } else {
                    self.text = try? Reference(from: decoder).name
                }
            }
        }

        var details: Details?

        /// The edition's work key (`/works/OL…W`), when the record names one.
        var workKey: String? {
            details?.works?.lazy.compactMap(\.key).first(where: WorkKey.isWork)
        }

        /// The candidate for `isbn` (the ISBN-13 that was asked for; nil when the edition was asked
        /// for by its key), or `nil` when the entry has no edition key, no title, or no work.
        ///
        /// ``Candidate/workKey`` is the edition's work (`/works/OL…W`), ``Candidate/editionKey``
        /// the edition, ``Candidate/publisher`` the first of its `publishers`. An edition that
        /// names no work gives no candidate: a work key is always a
        /// work (issue 14), and the title search still finds the work. The ISBN asked for is
        /// listed first: the entry was found by it, even when the record lists only the ISBN-10.
        func candidate(isbn: String?, source: String) -> Candidate? {
            guard let details, let key = details.key, !key.isEmpty, let title = details.title, !title.isEmpty,
                  let workKey else { return nil }
            let listed = (details.isbn13 ?? []) + (details.isbn10 ?? [])
            var authors = (details.authors ?? []).compactMap(\.name).filter { !$0.isEmpty }
            if authors.isEmpty, let statement = details.byStatement {
                authors = Self.authors(byStatement: statement)
            }
            return Candidate(
                workKey: workKey, editionKey: key,
                title: SourceResponses.fullTitle(title, subtitle: details.subtitle),
                authors: authors,
                year: PublicationYear.parse(details.publishDate),
                publisher: SourceResponses.firstText((details.publishers ?? []).map(\.text)),
                isbn13s: SourceResponses.isbn13s((isbn.map { [$0] } ?? []) + listed),
                source: source)
        }

        /// Names from a `by_statement` ("Pascal Quignard." or "Garth Nix and Sean Williams.").
        static func authors(byStatement statement: String) -> [String] {
            var text = statement.trimmingCharacters(in: .whitespacesAndNewlines)
            while text.hasSuffix(".") { text.removeLast() }
            return text.replacingOccurrences(of: " and ", with: ", ").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
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

            /// The candidate for this work, or `nil` when the document has no key or title. A key
            /// that is not a work key (`/works/OL…W`) is not stored as one.
            ///
            /// The edition key is the first of `edition_key` (`/books/` added): an edition of the
            /// work, not necessarily the one a row describes.
            func candidate(source: String) -> Candidate? {
                guard let key, !key.isEmpty, let title, !title.isEmpty else { return nil }
                let edition = editionKey?.first(where: { !$0.isEmpty }).map { $0.hasPrefix("/") ? $0 : "/books/\($0)" }
                return Candidate(
                    workKey: WorkKey.sanitized(key), editionKey: edition ?? (WorkKey.isWork(key) ? nil : key),
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
