import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

@Suite struct LibraryStoreTests {
    func temporaryLibrary() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    }

    func record(_ row: Int) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "abc", row: row, line: row + 1, format: "goodreads",
                                                     rawFields: ["x\"y", "=1+1", "é\n"]),
                                title: "Title \(row)", authors: ["A, B"], rawISBNs: ["=\"0439023483\""], year: 2001)
        record.normalized = NormalizedForms(searchTitle: "title \(row)", mainTitle: "title", titleKey: "title \(row)",
                                            series: "S", authors: ["B A"], authorKeys: ["b a"], isbn13: "9780439023481",
                                            allISBN13s: ["9780439023481"])
        record.addFinding(Finding(code: "x.y", severity: .warning, field: "ISBN", message: "a \"quoted\" message"))
        return record
    }

    @Test("A record survives the round trip through the file exactly")
    func roundTrip() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        let original = record(1)
        try store.insert([original])
        #expect(try store.records(ids: [original.id]) == [original])
    }

    @Test("Inserting the same rows again stores each once and keeps the first version")
    func idempotentInsert() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        #expect(try store.insert((1...10).map(record)) == 10)
        var changed = record(3)
        changed.title = "Changed"
        #expect(try store.insert([changed] + (5...12).map(record)) == 2)
        #expect(try store.counts().records == 12)
        #expect(try store.records(ids: ["abc:3"]).first?.title == "Title 3")
        let finished = try store.finishedRows(fileHash: "abc")
        #expect(finished.count == 12)
        #expect(finished.contains(12) && !finished.contains(13))
    }

    @Test("A file is complete only when every row is stored or rejected")
    func completion() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try await store.registerSourceFile(SourceFileInfo(hash: "abc", path: "a.csv", format: "goodreads", header: ["t"],
                                                    encoding: "utf-8", size: 10), runID: nil)
        try store.insert((1...3).map(record))
        #expect(try await store.finishSourceFile(hash: "abc", rowsTotal: 4) == false)
        try await store.insertRejections([RejectedRow(fileHash: "abc", file: "a.csv", line: 9, row: 4, column: 1,
                                                reason: "unclosed quote", rawText: "\"x")], runID: nil)
        #expect(try await store.finishSourceFile(hash: "abc", rowsTotal: 4) == true)
        #expect(try store.sourceFile(hash: "abc")?.isComplete == true)
    }

    @Test("A file that is not a database is a damaged library: the message names it and says to restore or re-import")
    func notADatabase() throws {
        let path = temporaryLibrary()
        try Data("this is not sqlite, just text that is long enough to be read as a header".utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { _ = try LibraryStore(path: path) }
        do {
            _ = try LibraryStore(path: path)
        } catch {
            #expect(error.isDamage)
            #expect(error.description == "\(path): the library is damaged or is not a bookpipe library (file is not a database). "
                    + "Restore it from a copy (a backup, or the file from before it broke), or move it aside and import "
                    + "your exports again into a new library.")
        }
    }

    @Test("A library in a folder that does not exist names the folder and creates nothing")
    func missingFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString)").path
        do {
            _ = try LibraryStore(path: folder + "/lib.sqlite")
            Issue.record("opened a library in a missing folder")
        } catch {
            #expect(error.description == "\(folder)/lib.sqlite: cannot create the library: the folder \(folder) does not exist. "
                    + "Create it (mkdir -p \(folder)), or pass another --library.")
            #expect(!error.isDamage)
        }
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test("Binding, review and tags survive the round trip, with or without a rating before them; old rows read without them")
    func newFieldsRoundTrip() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        var full = record(1)
        full.binding = "Paperback"
        full.review = "Spice, \"sand\"\nand worms"
        full.tags = ["sf", "=x+1"]
        full.rating = 4.5
        var unrated = record(2)
        unrated.binding = "x\"y"  // a raw field: stored as its number
        unrated.tags = ["é\n"]
        let plain = record(3)
        try store.insert([full, unrated, plain])
        #expect(try store.records(ids: [full.id, unrated.id, plain.id]) == [full, unrated, plain])
        // A row stored before the fields existed: `fields` ends at the rating.
        try store.pool.write { db in
            try db.execute(sql: "UPDATE records SET fields = json_remove(fields, '$[12]', '$[11]', '$[10]') WHERE key & 0xFFFFFFFF = 1")
        }
        var old = full
        old.binding = nil
        old.review = nil
        old.tags = []
        #expect(try store.records(ids: [full.id]) == [old])
    }
}

@Suite struct LibraryStoreBulkTests {
    func temporaryLibrary() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    }

    func record(_ row: Int, file: String = "a.csv", hash: String = "abc") -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: file, fileHash: hash, row: row, line: row + 1, format: "goodreads",
                                                     rawFields: ["\(row)", "Title \(row)", "A \u{1F} B", "", "=\"0439023483\""]),
                                title: "Title \(row)", authors: ["A \u{1F} B", "Someone Else"], rawISBNs: ["=\"0439023483\""],
                                year: 2001)
        record.publisher = ""
        record.rating = 3.5
        record.normalized = NormalizedForms(searchTitle: "Title \(row)", mainTitle: "Title", titleKey: "title \(row)",
                                            series: "S", seriesNumber: "1", authors: ["A B"], authorKeys: ["a b"],
                                            isbn13: "9780439023481", allISBN13s: ["9780439023481", "9780000000002"])
        return record
    }

    @Test("Values copied from raw fields are stored as field numbers and read back exactly, wherever the field is")
    func rawFieldReferences() throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        var records: [BookRecord] = []
        for row in 1...40 {
            // 1 to 7 fields; the title is the last one, an author the first, the ISBN a middle one,
            // and some values are in no field (written out) or empty (never a field number).
            let fields = (0..<(row % 7 + 1)).map { "f\($0)-\(row)" }
            var record = BookRecord(
                origin: RecordOrigin(file: "r.csv", fileHash: "ref", row: row, line: row + 1, format: "goodreads",
                                     rawFields: fields),
                title: fields[fields.count - 1], authors: [fields[0], "Not A Field \(row)"],
                rawISBNs: [fields[fields.count / 2]], year: nil)
            record.publisher = fields[0]
            record.dateRead = row % 2 == 0 ? "" : "zz"
            record.normalized = NormalizedForms(searchTitle: fields[fields.count - 1], mainTitle: "m", titleKey: "k",
                                                authors: [fields[0], "x"], authorKeys: ["a"])
            records.append(record)
        }
        #expect(try store.insert(records) == 40)
        for record in records {
            #expect(try store.records(ids: [record.id]) == [record], "row \(record.origin.row)")
        }
        // Row 6 has 7 fields: the title is field 6, the first author field 0, the ISBN field 3.
        let stored = try DatabaseQueue(path: path).read { db in
            try String.fetchOne(db, sql: "SELECT fields FROM records WHERE key & 4294967295 = 6")
        }
        #expect(stored?.hasPrefix("[6,[0,\"Not A Field 6\"],[3]") == true, "\(stored ?? "nil")")
    }

    @Test("Submitted writes commit in submission order, inserts stay idempotent, and a ticket says when they are in")
    func submittedWrites() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        let first = try await store.submitInsert((1...3000).map { record($0) })
        let second = try await store.submitInsert((2000...4000).map { record($0) })
        #expect(first < second)
        try await store.committed(second)
        #expect(store.isCommitted(first), "a ticket's commit includes every write submitted before it")
        #expect(try store.counts().records == 4000)
        #expect(try store.records(ids: ["abc:1", "abc:4000", "abc:4001", "nope:1", "bad"]).map(\.origin.row) == [1, 4000])
        #expect(try store.records(ids: ["abc:17"]) == [record(17)])
        // A write submitted after records sees them: order is kept across kinds of writes.
        #expect(try await store.finishSourceFile(hash: "abc", rowsTotal: 4000))
        #expect(try store.finishedRows(fileHash: "abc").count == 4000)
    }

    @Test("Libraries opened at the same moment by several connections all migrate and open (a new file, 20 times)")
    func concurrentFirstOpen() async throws {
        for _ in 0..<20 {
            let path = temporaryLibrary()
            let opened = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 {
                    group.addTask { (try? LibraryStore(path: path)) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(opened == 4)
        }
    }

    @Test("A failed transaction fails every later write and every waiter, and earlier commits stay")
    func failedWrite() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        let good = try await store.submitInsert([record(1)])
        try await store.committed(good)
        var tooLarge = record(2)
        tooLarge.origin.row = 1 << 40
        let bad = try await store.submitInsert([tooLarge])
        await #expect(throws: StoreError.self) { try await store.committed(bad) }
        await #expect(throws: StoreError.self) { _ = try await store.submitInsert([record(3)]) }
        #expect(try store.counts().records == 1)
    }

    @Test("Rows of one file read from two paths keep their own paths, in path then row order")
    func origins() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try store.insert([record(2, file: "b.csv"), record(1, file: "b.csv")])
        try store.insert([record(3, file: "a.csv"), record(9, file: "z.csv", hash: "other")])
        var seen: [String] = []
        try store.forEachRecord { seen.append("\($0.origin.file):\($0.origin.row)") }
        #expect(seen == ["a.csv:3", "b.csv:1", "b.csv:2", "z.csv:9"])
        var pending = 0
        try store.forEachRecord(where: .pending) { _ in pending += 1 }
        #expect(pending == 4)
        try store.forEachRecord(where: .enriched) { _ in Issue.record("no enriched records") }
    }

    @Test("An update replaces what was read, the forms and the enrichment, and keeps the raw fields")
    func update() async throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try store.insert([record(1)])
        var changed = record(1)
        changed.title = "Another Title"
        changed.authors = ["Title 1"]
        changed.enrichment = EnrichmentResult(status: .notFound)
        changed.reviewStatus = .needsReview
        changed.addFinding(Finding(code: "x", severity: .info, message: "m"))
        changed.origin.rawFields = ["ignored"]
        try await store.update([changed, record(5)])
        let stored = try #require(try store.records(ids: ["abc:1"]).first)
        var expected = changed
        expected.origin.rawFields = record(1).origin.rawFields
        #expect(stored == expected)
        #expect(try store.counts().byStatus[.notFound] == 1)
        #expect(try store.records(ids: ["abc:5"]).isEmpty)
    }

    @Test("Records have no secondary index until the review queue is used, and status queries page them in key order")
    func statusQueries() async throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        #expect(try indexNames(path) == [], "a CSV import pays for no index")
        #expect(try store.reviewQueueCount() == 0)
        #expect(try indexNames(path) == ["records_review_queue"], "the queue's partial index is made on first use")
        var failed = record(2)
        failed.enrichment = EnrichmentResult(status: .failed, failure: "timeout")
        var notFound = record(3)
        notFound.enrichment = EnrichmentResult(status: .notFound)
        try store.insert([record(1), failed, notFound, record(4)])
        try await store.update([failed, notFound])
        #expect(try store.records(statuses: [.failed], limit: 10).records.map(\.origin.row) == [2])
        #expect(try store.records(statuses: [.notFound, .failed], limit: 10).records.map(\.origin.row) == [2, 3])
        let firstPage = try store.records(statuses: [.pending, .failed], limit: 2)
        #expect(firstPage.records.map(\.origin.row) == [1, 2])
        #expect(try store.records(statuses: [.pending, .failed], afterKey: firstPage.lastKey, limit: 2).records
            .map(\.origin.row) == [4])
        #expect(try store.countRecords(statuses: [.failed, .needsCandidateSelection]) == 1)
        #expect(try store.countRecords(statuses: [.pending]) == 2)
    }

    @Test("""
        A stored row inside a group of 32 rows keeps its first version; the rows before and after it \
        are stored and counted once each, in a bulk insert or not
        """, arguments: [false, true])
    func storedRowInsideGroup(bulk: Bool) async throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        if bulk { try await store.prepareForBulkInsert(expectedRows: 50_000) }
        // Rows 1–32 go in the first group of one INSERT, 33–64 in the second: row 10 is its
        // group's 10th row, row 45 its group's 13th.
        try await store.committed(try await store.submitInsert([record(10), record(45)]))
        let again = (1...100).map { row in
            var changed = record(row)
            changed.title = "Changed \(row)"
            return changed
        }
        if bulk {
            try await store.committed(try await store.submitInsert(again))
            try await store.finishBulkInsert()
        } else {
            #expect(try store.insert(again) == 98)
        }
        #expect(try store.counts().byStatus == [.pending: 100])
        let stored = try await DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM records") }
        #expect(stored == 100)
        #expect(try store.records(ids: ["abc:9", "abc:10", "abc:11", "abc:45", "abc:46", "abc:100"]).map(\.title)
                == ["Changed 9", "Title 10", "Changed 11", "Title 45", "Changed 46", "Changed 100"])
    }

    @Test("A large import into an empty library commits without syncs until finishBulkInsert; others keep syncs")
    func unsyncedBulkInsert() async throws {
        func synchronous(_ store: LibraryStore) throws -> Int? {
            try store.pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        }
        func foreignKeys(_ store: LibraryStore) throws -> Int? {
            try store.pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA foreign_keys") }
        }
        /// A record row naming an origin that does not exist (refused while foreign keys are checked).
        func insertOrphan(_ store: LibraryStore, key: Int64) throws {
            try store.pool.write { db in
                try db.execute(sql: """
                    INSERT INTO records (key, origin, line, fields, status, review_status, updated_at)
                    VALUES (?, 999999, 1, '[]', 'pending', 'unreviewed', 0)
                    """, arguments: [key])
            }
        }
        let store = try LibraryStore(path: temporaryLibrary())
        try await store.prepareForBulkInsert(expectedRows: 500)
        #expect(try synchronous(store) == 1, "small imports keep NORMAL")
        #expect(try foreignKeys(store) == 1)
        try await store.prepareForBulkInsert(expectedRows: 50_000)
        #expect(try synchronous(store) == 0)
        #expect(try foreignKeys(store) == 0, "the bulk insert's parents are the writer's own rows")
        _ = try await store.submitInsert((1...100).map { record($0) })
        try await store.finishBulkInsert()
        #expect(try synchronous(store) == 1)
        #expect(try foreignKeys(store) == 1, "checked again once the bulk insert is done")
        #expect(throws: DatabaseError.self) { try insertOrphan(store, key: 1 << 40) }
        #expect(try store.counts().records == 100)
        // Every stored record's origin and run exist.
        #expect(try store.pool.read { try Row.fetchAll($0, sql: "PRAGMA foreign_key_check(records)") }.isEmpty)
        // The library holds records now: a second large import keeps synced commits and checks.
        try await store.prepareForBulkInsert(expectedRows: 50_000)
        #expect(try synchronous(store) == 1)
        #expect(try foreignKeys(store) == 1)
    }

    @Test("A bulk insert holds one more descriptor of the library file (for its write-out) until it finishes or the store closes")
    func bulkWritebackDescriptor() async throws {
        let path = temporaryLibrary()
        /// Open descriptors of this process naming the library file itself (not its -wal or -shm).
        func descriptors() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { name in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) == path
            }
        }
        let store = try LibraryStore(path: path)
        let before = try descriptors()
        try await store.prepareForBulkInsert(expectedRows: 50_000)
        #expect(try descriptors() == before + 1)
        _ = try await store.submitInsert((1...100).map { record($0) })
        try await store.finishBulkInsert()
        #expect(try descriptors() == before)
        #expect(try store.counts().records == 100)

        // A bulk insert that never finished: closing the store lets go of it too.
        let second = temporaryLibrary()
        let unfinished = try LibraryStore(path: second)
        try await unfinished.prepareForBulkInsert(expectedRows: 50_000)
        _ = try await unfinished.submitInsert((1...10).map { record($0) })
        try await unfinished.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) == second
        } == 0)
        #expect(try LibraryStore(path: second).counts().records == 10)
    }

    @Test("Record counts by status and by file follow inserts, repeated inserts and updates, like a full count")
    func recordCounts() async throws {
        let path = temporaryLibrary()
        let store = try LibraryStore(path: path)
        func fullCount() throws -> [RecordStatus: Int] {
            try DatabaseQueue(path: path).read { db in
                var counts: [RecordStatus: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM records GROUP BY status") {
                    counts[RecordStatus(rawValue: row["status"])!] = row["n"]
                }
                return counts
            }
        }
        try store.insert((1...10).map { record($0) })
        try store.insert((5...12).map { record($0) })
        #expect(try store.counts().byStatus == [.pending: 12])
        var notFound = record(3)
        notFound.enrichment = EnrichmentResult(status: .notFound)
        var failed = record(4)
        failed.enrichment = EnrichmentResult(status: .failed, failure: "timeout")
        try await store.update([notFound, failed, record(99)])
        try await store.update([notFound])
        #expect(try store.counts().byStatus == [.pending: 10, .notFound: 1, .failed: 1])
        #expect(try store.counts().byStatus == fullCount())
        // One insert with runs of different statuses (counted run by run) and a file of its own.
        var mixed = [record(20), notFound, record(21), failed, failed, record(22)].enumerated().map { index, base in
            var copy = base
            copy.origin.row = 30 + index
            return copy
        }
        mixed[5].origin.fileHash = "other"
        try store.insert(mixed)
        #expect(try store.counts().byStatus == [.pending: 13, .notFound: 2, .failed: 3])
        #expect(try store.counts().byStatus == fullCount())
        #expect(try await store.finishSourceFile(hash: "other", rowsTotal: 1) == true)
        // Completeness uses the per-file counts: 12 stored of 12 rows.
        #expect(try await store.finishSourceFile(hash: "abc", rowsTotal: 18) == false)
        #expect(try await store.finishSourceFile(hash: "abc", rowsTotal: 17) == true)
        // A library whose counters are missing (made before v4) gets them from its records.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "DROP TABLE record_counts; DELETE FROM grdb_migrations WHERE identifier LIKE 'v4%'")
        }
        #expect(try LibraryStore(path: path).counts().byStatus == [.pending: 13, .notFound: 2, .failed: 3])
    }

    @Test("A library made before v3 loses the unused indexes and keeps its records")
    func migrationFromV2() throws {
        let path = temporaryLibrary()
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v2: lookup cache, host quotas")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO library_state (name, value) VALUES ('deferred-indexes', '1')")
        }
        #expect(try indexNames(path) == ["records_isbn13", "records_status", "records_title_key"])
        let store = try LibraryStore(path: path)
        try store.insert([record(1)])
        // No index on records at all (the review queue's is made when the queue is first used).
        #expect(try indexNames(path) == [])
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM library_state") } == 0)
        #expect(try store.records(ids: ["abc:1"]) == [record(1)])
    }

    @Test("Rejections at several places of one line are each kept (a minified scan result); a library made before v10 keeps its rejected rows")
    func rejectionsOfOneLine() async throws {
        let path = temporaryLibrary()
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v9-work-keys: no source-specific work keys")
        try await queue.write { db in
            try db.execute(sql: """
                INSERT INTO rejected_rows (file_hash, line, row, column_number, file, reason, raw_text)
                VALUES ('old', 3, 2, NULL, 'old.csv', 'unclosed quote', 'a,"b')
                """)
        }
        let store = try LibraryStore(path: path)
        func detection(_ row: Int, column: Int) -> RejectedRow {
            RejectedRow(fileHash: "min", file: "min.json", line: 1, row: row, column: column,
                        reason: "detection \(row) has no title", rawText: "{}")
        }
        // Two scans rejected as a whole (no row) and three detections, all on line 1.
        let scans = [RejectedRow(fileHash: "min", file: "min.json", line: 1, row: nil, column: 30, reason: "scan 2", rawText: "1"),
                     RejectedRow(fileHash: "min", file: "min.json", line: 1, row: nil, column: 12, reason: "scan 1", rawText: "2")]
        let rejected = [detection(4, column: 88), detection(2, column: 47), detection(3, column: 62)] + scans
        try await store.insertRejections(rejected, runID: nil)
        try await store.insertRejections(rejected, runID: nil)   // a rerun keeps each once
        let stored = try store.rejections()
        #expect(stored.map(\.reason) == ["scan 1", "scan 2", "detection 2 has no title", "detection 3 has no title",
                                         "detection 4 has no title", "unclosed quote"])
        #expect(stored.last == RejectedRow(fileHash: "old", file: "old.csv", line: 3, row: 2, column: nil,
                                          reason: "unclosed quote", rawText: "a,\"b"))
        #expect(try store.counts().rejected == 6)
        #expect(try store.finishedRows(fileHash: "min").contains(3))
    }

    @Test("A library opened to read only is read and not written: same bytes, same modification time, no write-ahead log content")
    func readOnlyAccessWritesNothing() async throws {
        let path = temporaryLibrary()
        try LibraryStore(path: path).insert([record(1), record(2)])   // closed again: SQLite removes the log
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        do {
            let store = try LibraryStore(path: path, access: .readOnly)
            #expect(try store.records(ids: ["abc:1", "abc:2"]) == [record(1), record(2)])
            #expect(try store.counts().byStatus == [.pending: 2])
            // A write is refused and changes nothing.
            #expect(throws: StoreError.self) { try store.insert([record(3)]) }
            await #expect(throws: StoreError.self) { try await store.committed(store.submitInsert([record(4)])) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified)
        let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(log == 0, "nothing went into the write-ahead log")
        // Read-write again: everything as before, and writable.
        let store = try LibraryStore(path: path)
        try store.insert([record(3)])
        #expect(try store.counts().byStatus == [.pending: 3])
    }

    @Test("A library of an older schema opened to read only is brought up to date first (as a read-write open would)")
    func readOnlyAccessMigratesAnOlderLibrary() throws {
        let path = temporaryLibrary()
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v2: lookup cache, host quotas")
        let store = try LibraryStore(path: path, access: .readOnly)
        #expect(try queue.read { try Schema.migrator.hasCompletedMigrations($0) })
        try store.insert([record(1)])
        #expect(try store.records(ids: ["abc:1"]) == [record(1)])
    }

    func indexNames(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' AND sql IS NOT NULL ORDER BY name")
        }
    }
}
