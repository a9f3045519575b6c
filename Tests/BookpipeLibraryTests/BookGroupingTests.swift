import BookpipeCore
import BookpipeLibrary
import Testing

/// Which records are one book: entries of different lists sharing an ISBN-13 or a matched
/// edition, and a person's links; a person's unlink keeps a pair apart.
@Suite struct BookGroupingTests {
    func member(_ id: String, _ list: String?, isbn: String? = nil, work: String? = nil, edition: String? = nil) -> BookMember {
        BookMember(recordID: id, list: list, isbn13: isbn, workKey: work, editionKey: edition)
    }

    @Test("Entries of two lists with one ISBN-13 are one book; two entries of one list stay two (two copies)")
    func sameISBNAcrossLists() {
        let members = [member("a:1", "goodreads", isbn: "9780316556347"), member("b:1", "storygraph", isbn: "9780316556347"),
                       member("a:2", "goodreads", isbn: "9780441013593"), member("a:3", "goodreads", isbn: "9780441013593")]
        #expect(BookGrouping.books(members, decisions: []) == [["a:1", "b:1"], ["a:2"], ["a:3"]])
        #expect(BookGrouping.links(members, decisions: [])[LinkDecision("b:1", "a:1", linked: true)] == .sameISBN13("9780316556347"))
    }

    @Test("The same matched edition joins; the same work in another edition does not")
    func sameEdition() {
        let members = [member("a:1", "goodreads", work: "/works/OL1W", edition: "/books/OL1M"),
                       member("b:1", "storygraph", work: "/works/OL1W", edition: "/books/OL1M"),
                       member("c:1", "calibre", work: "/works/OL1W", edition: "/books/OL2M")]
        #expect(BookGrouping.books(members, decisions: []) == [["a:1", "b:1"], ["c:1"]])
    }

    @Test("A person's unlink keeps a pair apart; a person's link joins any two records, of one list too")
    func decisions() {
        let members = [member("a:1", "goodreads", isbn: "9780316556347"), member("b:1", "storygraph", isbn: "9780316556347")]
        let apart = [LinkDecision("b:1", "a:1", linked: false)]
        #expect(BookGrouping.books(members, decisions: apart) == [["a:1"], ["b:1"]])
        let withNine = members + [member("a:9", "goodreads")]
        let joined = [LinkDecision("a:1", "a:9", linked: true)]
        #expect(BookGrouping.books(withNine, decisions: joined) == [["a:1", "a:9", "b:1"]])
        #expect(BookGrouping.links(withNine, decisions: joined)[LinkDecision("a:9", "a:1", linked: true)] == .linkedByPerson)
        // A decision about a record no longer in the library (removed) links nothing.
        #expect(BookGrouping.books(members, decisions: joined) == [["a:1", "b:1"]])
    }
}
