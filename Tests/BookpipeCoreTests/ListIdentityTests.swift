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

    @Test("The stable hash of texts of every length up to 40 bytes is the word-by-word FNV the stored digests were made with")
    func stableHashOfEveryLength() {
        /// The hash as first written: whole little-endian words, then the last bytes shifted in one by one.
        func reference(_ bytes: [UInt8]) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ word: UInt64) {
                hash ^= word
                hash &*= 0x0000_0100_0000_01B3
                hash ^= hash >> 29
            }
            var index = 0
            while index + 8 <= bytes.count {
                var word: UInt64 = 0
                for offset in 0..<8 { word |= UInt64(bytes[index + offset]) << (8 * offset) }
                mix(word)
                index += 8
            }
            if index < bytes.count {
                var word: UInt64 = 0
                for offset in 0..<(bytes.count - index) { word |= UInt64(bytes[index + offset]) << (8 * offset) }
                mix(word ^ (UInt64(bytes.count - index) << 59))
            }
            return hash
        }
        for length in 0...40 {
            let ascii = String(decoding: (0..<length).map { UInt8(0x41 + ($0 * 7) % 26) }, as: UTF8.self)
            // The same length with a two-byte character at its end (bytes of 0x80 and more in the last word).
            let accented = length < 2 ? ascii : String(ascii.dropLast(2)) + "é"
            for text in [ascii, accented] {
                #expect(text.utf8.count == length)
                #expect(ListIdentity.stableHash(text) == reference(Array(text.utf8)), "\(length) bytes: \(text)")
                let dropped = min(3, length)
                #expect(ListIdentity.stableHash(text, droppingFirst: dropped) == reference(Array(text.utf8.dropFirst(dropped))))
            }
        }
    }
}
