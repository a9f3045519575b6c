import BookpipeCore
import Foundation

/// The decoders of Open Library's and Google Books' answers, from body bytes to candidates, as
/// the sources run them: reachable by the fuzz targets in `FuzzTesting/` (not API).
@_spi(Fuzzing)
public enum SourceResponseDecoding {
    /// Decodes a Books API answer (`jscmd=details`) and makes each entry's candidate.
    /// - Parameter body: the response body.
    /// - Returns: the candidates, in bibkey order.
    /// - Throws: the `DecodingError` the source reports as a malformed body.
    public static func openLibraryBooks(_ body: Data) throws -> [Candidate] {
        let entries = try JSONDecoder().decode([String: OpenLibraryResponses.BooksAPIDetailsEntry].self, from: body)
        return entries.keys.sorted().compactMap { key in entries[key]?.candidate(isbn: nil, source: "openlibrary") }
    }

    /// Decodes a `search.json` answer and makes each document's candidate.
    /// - Parameter body: the response body.
    /// - Returns: the candidates, in the answer's order.
    /// - Throws: the `DecodingError` the source reports as a malformed body.
    public static func openLibrarySearch(_ body: Data) throws -> [Candidate] {
        try JSONDecoder().decode(OpenLibraryResponses.SearchResponse.self, from: body).docs
            .compactMap { $0.candidate(source: "openlibrary") }
    }

    /// Decodes a Google Books `volumes` answer and makes each volume's candidate.
    /// - Parameter body: the response body.
    /// - Returns: the candidates, in the answer's order.
    /// - Throws: the `DecodingError` the source reports as a malformed body.
    public static func googleBooksVolumes(_ body: Data) throws -> [Candidate] {
        (try JSONDecoder().decode(GoogleBooksResponses.VolumeList.self, from: body).items ?? [])
            .compactMap { $0.candidate(source: "googlebooks") }
    }
}
