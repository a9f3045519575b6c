import BookpipeCore
import BookpipeTesting
import Foundation
import Testing
@testable import BookpipeEnrichment

/// Google Books volumes tied to their Open Library works through their ISBNs (issue 23), against
/// two fake servers on loopback: Open Library knows the work by its original title, Google Books
/// has English editions.
@Suite(.timeLimit(.minutes(5)))
struct WorkResolutionTests {
    static let work = "/works/OL4242001W"
    static let isbnHardback = "9780000001016", isbnPaperback = "9780000001023", isbnOther = "9780000001030"

    /// Open Library's records: every edition under the original title.
    static let openLibraryBooks = [
        FakeBook(title: "Der stille Hafen", authors: ["Anna Berger"], year: 1998, isbn13: isbnHardback,
                 workKey: work, editionKey: "/books/OL4242101M"),
        FakeBook(title: "Der stille Hafen", authors: ["Anna Berger"], year: 1998, isbn13: isbnPaperback,
                 workKey: work, editionKey: "/books/OL4242102M"),
        FakeBook(title: "Ein anderes Buch", authors: ["Jonas Keller"], year: 2004, isbn13: isbnOther,
                 workKey: "/works/OL4242009W", editionKey: "/books/OL4242109M"),
    ]

    static func record(title: String, author: String) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "export.csv", fileHash: "feedbeef", row: 1, line: 2),
                                title: title, authors: [author], reviewStatus: .verified)
        Normalizer.normalize(&record)
        return record
    }

    func enrich(_ record: BookRecord, google books: [FakeBook]) async throws -> (BookRecord, openLibraryRequests: [String]) {
        try await withFakeServices(Self.openLibraryBooks) { openLibrary, client async throws in
            try await withFakeServices(books) { google, _ async throws in
                let enricher = Enricher(sources: [EnricherTests.openLibrary(openLibrary, client),
                                                  EnricherTests.googleBooks(google, client)], store: nil)
                let enriched = try await enricher.enrich([record])
                return (enriched[0], openLibrary.requestLog.filter { $0.path == "/api/books" }.map { $0.parameter("bibkeys") ?? "" })
            }
        }
    }

    @Test("Two English editions Open Library does not know by title, whose ISBNs name one work: one candidate, accepted, with its work and the other edition listed")
    func editionsOfOneWorkAreOneCandidate() async throws {
        let google = [
            FakeBook(title: "The Silent Harbour", authors: ["Anna Berger"], year: 2001, isbn13: Self.isbnHardback,
                     googleVolumeID: "harbourHB"),
            FakeBook(title: "The Silent Harbour", subtitle: "A Novel", authors: ["Anna Berger"], year: 2003,
                     isbn13: Self.isbnPaperback, googleVolumeID: "harbourPB"),
        ]
        let (record, asked) = try await enrich(Self.record(title: "The Silent Harbour", author: "Anna Berger"), google: google)
        #expect(record.status == .enriched, "\(String(describing: record.enrichment))")
        let match = try #require(record.enrichment?.match)
        #expect(match.workKey == Self.work)
        #expect(match.source == "googlebooks")
        #expect(match.editionKey == "googlebooks:harbourHB")
        #expect(record.enrichment?.candidates.first?.otherEditions == ["googlebooks:harbourPB"])
        #expect(asked == ["ISBN:\(Self.isbnHardback),ISBN:\(Self.isbnPaperback)"], "both ISBNs in one Books API request")
    }

    @Test("A volume whose ISBNs name two works, and one without ISBNs, stay without a work: the editions remain rivals")
    func disagreeingISBNsTieNothing() async throws {
        let google = [
            // Two ISBNs of two different works (a bad record): no work.
            FakeBook(title: "The Silent Harbour", authors: ["Anna Berger"], year: 2001, isbn13: Self.isbnHardback,
                     isbn10: "0000001031", googleVolumeID: "harbourMixed"),
            FakeBook(title: "The Silent Harbour", subtitle: "A Novel", authors: ["Anna Berger"], year: 2003,
                     googleVolumeID: "harbourNoISBN"),
        ]
        let (record, _) = try await enrich(Self.record(title: "The Silent Harbour", author: "Anna Berger"), google: google)
        #expect(record.status == .needsCandidateSelection, "\(String(describing: record.enrichment))")
        #expect(record.enrichment?.candidates.map(\.workKey) == ["", ""])
        #expect(record.enrichment?.candidates.allSatisfy(\.otherEditions.isEmpty) == true)
    }

    @Test("The work's record must be the same book: an ISBN whose Open Library edition has other authors ties nothing")
    func workOfAnotherBookIsNotTaken() async throws {
        let google = [FakeBook(title: "The Silent Harbour", authors: ["Anna Berger"], year: 2001, isbn13: Self.isbnOther,
                               googleVolumeID: "harbourWrongISBN")]
        let (record, _) = try await enrich(Self.record(title: "The Silent Harbour", author: "Anna Berger"), google: google)
        #expect(record.status == .enriched)
        #expect(record.enrichment?.match?.workKey == "")
    }
}
