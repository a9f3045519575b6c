import BookpipeCore

/// The parts of Google Books' answers that bookpipe reads.
enum GoogleBooksResponses {
    /// `GET /books/v1/volumes?q=…`: `{"kind": "books#volumes", "totalItems": N, "items": [...]}`.
    /// Google leaves `items` out when nothing matched.
    struct VolumeList: Decodable {
        var totalItems: Int?
        var items: [Volume]?
    }

    /// One volume (an edition, in Open Library's terms).
    struct Volume: Decodable {
        struct Info: Decodable {
            struct IndustryIdentifier: Decodable {
                var type: String?
                var identifier: String?
            }

            var title: String?
            var subtitle: String?
            var authors: [String]?
            var publishedDate: String?
            var publisher: String?
            var industryIdentifiers: [IndustryIdentifier]?
        }

        var id: String?
        var volumeInfo: Info?

        /// The candidate for this volume, or `nil` without an id or title.
        ///
        /// A volume is an edition and names no Open Library work: the work key is empty (never an
        /// invented one), the edition key `googlebooks:<volume id>`; the publisher is
        /// `volumeInfo.publisher`. ISBN-13s come from
        /// `industryIdentifiers` (`ISBN_13`, and `ISBN_10` converted); other identifier types
        /// (`ISSN`, `OTHER`) are ignored.
        func candidate(source: String) -> Candidate? {
            guard let id, !id.isEmpty, let info = volumeInfo, let title = info.title, !title.isEmpty else { return nil }
            let key = "googlebooks:\(id)"
            let identifiers = (info.industryIdentifiers ?? [])
                .filter { $0.type == "ISBN_13" || $0.type == "ISBN_10" }
                .sorted { ($0.type == "ISBN_13" ? 0 : 1) < ($1.type == "ISBN_13" ? 0 : 1) }
                .compactMap(\.identifier)
            return Candidate(
                workKey: "", editionKey: key,
                title: SourceResponses.fullTitle(title, subtitle: info.subtitle),
                authors: (info.authors ?? []).filter { !$0.isEmpty },
                year: PublicationYear.parse(info.publishedDate),
                publisher: SourceResponses.firstText([info.publisher]),
                isbn13s: SourceResponses.isbn13s(identifiers),
                source: source)
        }
    }
}
