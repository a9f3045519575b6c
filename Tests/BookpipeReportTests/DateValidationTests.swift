import BookpipeCore
import BookpipeStore
import GRDB
import Testing
@testable import BookpipeReport

@Suite struct DateValidationTests {
    @Test("Reads the dates exports write", arguments: ["2020/10/21", "2020-10-21", "2020-1-5", "2020-10-21T08:30:00Z",
                                                      "2020/10/21 08:30", "10/21/2020", "21.10.2020", "2020", "2020-02",
                                                      "Jan 5, 2020", "5 January 2020", "2024-02-29"])
    func readable(_ text: String) {
        #expect(DateValidation.isReadable(text))
    }

    @Test("Rejects what is not a date", arguments: ["31/31/2020", "2021-02-29", "2020-13-01", "yesterday", "20/10",
                                                   "0000-00-00", "2020-10-21-5", "Smarch 5, 2020", "1.2.3"])
    func unreadable(_ text: String) {
        #expect(!DateValidation.isReadable(text))
    }
}

@Suite struct RawFieldTests {
    @Test("bookpipe_field finds a raw field in the stored joined text as RawFields splits it, escapes included",
          arguments: [["a", "b", "c"], ["", "x\u{1F}y", "z"], ["é", "\u{1B}", ""], ["only"]])
    func field(_ fields: [String]) throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        let joined = RawFields(fields).encoded
        let found = try store.readDatabase("test") { db in
            StoredColumnFunctions.register(in: db)
            return try (0...fields.count).map { try String.fetchOne(db, sql: "SELECT bookpipe_field(?, ?)", arguments: [joined, $0]) }
        }
        #expect(found == fields.map(Optional.some) + [nil])
        let text = try store.readDatabase("test") { db in
            StoredColumnFunctions.register(in: db)
            return try String.fetchOne(db, sql: "SELECT bookpipe_field(?, 'as is')", arguments: [joined])
        }
        #expect(text == "as is")
    }
}
