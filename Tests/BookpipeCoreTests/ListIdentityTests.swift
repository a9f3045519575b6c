import BookpipeCore
import Testing

/// The rules that make a row of a newer export the same entry as a stored record.
@Suite struct ListIdentityTests {
    func record(id: String, title: String = "Dune", isbn13: String? = nil) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "h", row: 1, line: 2, format: "goodreads",
                                                     rawFields: ["x", id, title]),
                                title: title, authors: ["Frank Herbert"], rawISBNs: [], year: 1965)
        Normalizer.normalize(&record)
        record.normalized?.isbn13 = isbn13
        return record
    }

    @Test("A list is named by its format; a generic file by its name; --list wins")
    func listNames() {
        #expect(ListIdentity.listName(format: "goodreads", path: "dir/export.csv", explicit: nil) == "goodreads")
        #expect(ListIdentity.listName(format: "generic", path: "dir/my-books.2024.csv", explicit: nil) == "generic:my-books.2024")
        #expect(ListIdentity.listName(format: "generic", path: "wishlist", explicit: nil) == "generic:wishlist")
        #expect(ListIdentity.listName(format: "goodreads", path: "a.csv", explicit: "anna") == "anna")
    }

    @Test("The id column is found ignoring case and spaces, in the format's order of preference")
    func idColumns() {
        #expect(ListIdentity.idColumn(format: "goodreads", header: ["Title", "Book ID"]) == 1)
        #expect(ListIdentity.idColumn(format: "calibre", header: ["id", "title", "uuid"]) == 2)
        #expect(ListIdentity.idColumn(format: "calibre", header: ["id", "title"]) == 0)
        #expect(ListIdentity.idColumn(format: "storygraph", header: ["Title", "Book Id"]) == nil)
    }

    @Test("The entry key is the list's id, else the ISBN-13, else the title and first author")
    func entryKeys() {
        #expect(ListIdentity.entryKey(of: record(id: " 42 "), idColumn: 1) == "id:42")
        #expect(ListIdentity.entryKey(of: record(id: "", isbn13: "9780441013593"), idColumn: 1) == "isbn:9780441013593")
        #expect(ListIdentity.entryKey(of: record(id: "7", isbn13: "9780441013593"), idColumn: nil) == "isbn:9780441013593")
        #expect(ListIdentity.entryKey(of: record(id: ""), idColumn: 1) == "title:dune|frank herbert")
        #expect(ListIdentity.entryKey(of: record(id: "", title: ""), idColumn: 1) == nil)
        #expect(ListIdentity.entryKey(of: record(id: "9"), idColumn: 40) == "title:dune|frank herbert")
    }

    @Test("Changed fields are named; the digest changes exactly when a field does, and is stable")
    func changesAndDigest() {
        let stored = record(id: "1")
        var incoming = stored
        #expect(ListIdentity.changedFields(stored: stored, incoming: incoming).isEmpty)
        #expect(ListIdentity.readDigest(of: incoming) == ListIdentity.readDigest(of: stored))
        incoming.rating = 4
        incoming.shelf = "read"
        #expect(ListIdentity.changedFields(stored: stored, incoming: incoming) == ["shelf", "rating"])
        #expect(ListIdentity.readDigest(of: incoming) != ListIdentity.readDigest(of: stored))
        // A value moved from one field to the next is a change too.
        var moved = stored
        moved.publisher = "X"
        var other = stored
        other.shelf = "X"
        #expect(ListIdentity.readDigest(of: moved) != ListIdentity.readDigest(of: other))
        // The digest is the same in every process (FNV-1a): a library written today is read tomorrow.
        #expect(ListIdentity.readDigest(of: BookRecord(origin: RecordOrigin(file: "", fileHash: "", row: 1, line: 1))) == -3_054_891_141_568_123_778)
        var full = stored
        full.rating = 4.5
        full.tags = ["classics", "to-reread"]
        full.review = "A long review, longer than eight bytes."
        #expect(ListIdentity.readDigest(of: full) == 2_913_862_540_481_505_942)
    }
}
