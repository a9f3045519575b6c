import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

/// v12-work-keys-null: stored enrichments that say `"workKey": ""` are rewritten with null.
@Suite struct WorkKeysNullMigrationTests {
    @Test("v12: an empty work key stored by an earlier version, in the match and the candidates, becomes null; works are untouched")
    func emptyWorkKeysBecomeNull() async throws {
        let helpers = ReenrichmentStoreTests()
        let path = helpers.temporaryLibrary()
        let store = try LibraryStore(path: path)
        try store.insert([helpers.record(1), helpers.record(2)])
        try await store.update([helpers.enriched(helpers.record(2), work: "/works/OL7W", edition: "/books/OL7M")])
        // What versions before v12 wrote for a Google Books match (sorted keys, as RecordCoding writes).
        let old = #"{"candidates":[{"authors":["Author"],"breakdown":{},"isbn13s":[],"score":180,"source":"googlebooks","#
            + #""title":"Title","workKey":""}],"match":{"authors":["Author"],"editionKey":"googlebooks:abc","score":180,"#
            + #""source":"googlebooks","title":"Title","workKey":""},"status":"enriched"}"#
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE records SET enrichment = ?, status = 'enriched' WHERE key = (SELECT min(key) FROM records)",
                           arguments: [old])
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v12-work-keys-null'")
        }
        let reopened = try LibraryStore(path: path)
        let texts = try await queue.read { try String.fetchAll($0, sql: "SELECT enrichment FROM records ORDER BY key") }
        #expect(texts.count == 2)
        #expect(!texts[0].contains(#""workKey":"""#), "\(texts[0])")
        #expect(texts[0].contains(#""workKey":null"#), "\(texts[0])")
        #expect(texts[1].contains(#""workKey":"\/works\/OL7W""#) || texts[1].contains(#""workKey":"/works/OL7W""#), "\(texts[1])")
        let records = try reopened.records(ids: ["abc:1", "abc:2"])
        #expect(records[0].enrichment?.match?.workKey == "")
        #expect(records[0].enrichment?.match?.editionKey == "googlebooks:abc")
        #expect(records[1].enrichment?.match?.workKey == "/works/OL7W")
    }
}
