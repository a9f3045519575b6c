import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeStore

/// The figures a report is made of, as the SQLite engine computes them, against plain SQL.
@Suite struct QualityFiguresTests {
    func temporaryLibrary() throws -> LibraryStore {
        try LibraryStore(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("figures-\(UUID().uuidString).sqlite").path)
    }

    func record(_ row: Int, title: String, author: String, isbn: String? = nil, enriched: Bool = false,
                workKey: String? = nil, dateAdded: String? = nil, dateRead: String? = nil) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "export.csv", fileHash: "aaaa", row: row, line: row + 1,
                                                     format: "goodreads", rawFields: [title, author]),
                                title: title, authors: [author], rawISBNs: isbn.map { [$0] } ?? [])
        record.dateAdded = dateAdded
        record.dateRead = dateRead
        Normalizer.normalize(&record)
        if enriched {
            record.enrichment = EnrichmentResult(status: .enriched, match: Match(
                workKey: workKey ?? "/works/OL\(row)W", editionKey: nil, title: title, authors: [author], score: 150,
                source: "catalog"))
        }
        return record
    }

    @Test("A library without migration 'report history''s tables (opened read-only before it) gives figures and an empty history; migrating counts each run's writes from what it wrote last")
    func beforeReportHistory() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("figures-\(UUID().uuidString).sqlite").path
        let store = try LibraryStore(path: path)
        let run = try await store.beginRun(command: "import", pipeline: "csv-import")
        try store.insert([record(1, title: "One", author: "Ann"), record(2, title: "Two", author: "Ann")], runID: run)
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TABLE run_writes; DROP TABLE report_history; DROP TRIGGER IF EXISTS run_writes_on_update")
        }
        let figures = try store.qualityFigures(.library) { _ in true }
        #expect(figures.runs.map(\.written) == [2])
        #expect(try store.reportHistory(limit: nil).isEmpty)
        // Migrating again (the migration forgotten) starts the counts from the records each run wrote last.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'report history'")
        }
        let migrated = try LibraryStore(path: path)
        #expect(try migrated.qualityFigures(.library) { _ in true }.runs.map(\.written) == [2])
    }

    @Test("Duplicate groups found in one scan are the groups, order and members of the three GROUP BY queries")
    func duplicatesAsGroupBy() throws {
        let store = try temporaryLibrary()
        var records: [BookRecord] = []
        for row in 1...60 {
            records.append(record(row, title: ["Émile", "emile", "Zed", "Alpha", "alpha beta"][row % 5],
                                  author: ["Ann Lee", "Bob Ray", "Zoë Ö"][row % 3],
                                  isbn: row % 4 == 0 ? ["9780547773742", "9780441478125", "9780316229296"][row % 3] : nil,
                                  enriched: row % 2 == 0, workKey: row % 7 == 1 ? "" : "/works/OL\(row % 7)W"))
        }
        try store.insert(records)
        let groups = try store.qualityFigures(.library) { _ in true }.duplicateGroups
        // What the three GROUP BYs give.
        var expected: [QualityFigures.DuplicateGroup] = []
        let queries: [(DuplicateKind, String, String)] = [
            (.sameISBN13, "isbn13", "isbn13 IS NOT NULL"),
            // A Google Books match has no work key: no work to share.
            (.sameWork, "json_extract(enrichment, '$.match.workKey')",
             "status = 'enriched' AND json_extract(enrichment, '$.match.workKey') <> ''"),
            (.sameTitleAndFirstAuthor, "title_key || ' / ' || coalesce(json_extract(normalized, '$[1][0]'), '')",
             "title_key IS NOT NULL AND title_key <> ''"),
        ]
        try store.readDatabase("test") { db in
            for (kind, groupBy, condition) in queries {
                for row in try Row.fetchAll(db, sql: """
                    SELECT \(groupBy) AS value, count(*) AS n FROM records r WHERE \(condition) GROUP BY 1 HAVING n > 1 ORDER BY n DESC, 1
                    """) {
                    let members = try Row.fetchAll(db, sql: """
                        SELECT key, line FROM records r WHERE \(condition) AND \(groupBy) IS ? ORDER BY key
                        """, arguments: [row["value"] as String?]).map { member in
                        RecordPlace(id: "aaaa:\((member["key"] as Int64) & 0xFFFF_FFFF)", file: "export.csv", line: member["line"])
                    }
                    expected.append(.init(kind: kind, value: row["value"], members: members))
                }
            }
        }
        #expect(groups == expected)
        for kind in DuplicateKind.allCases { #expect(groups.contains { $0.kind == kind }, "\(kind)") }
    }

    @Test("The caller's date rule decides which stored dates are listed: text only, each record once with both dates, in library order")
    func refusedDates() throws {
        let store = try temporaryLibrary()
        try store.insert([
            record(1, title: "A", author: "X", dateAdded: "2020/10/21", dateRead: "bad"),
            record(2, title: "B", author: "X"),
            record(3, title: "C", author: "X", dateAdded: "bad", dateRead: "bad"),
            record(4, title: "D", author: "X", dateAdded: "2021-01-01"),
        ])
        let refused = try store.qualityFigures(.library) { $0 != "bad" }.refusedDates
        #expect(refused == [
            .init(record: RecordPlace(id: "aaaa:1", file: "export.csv", line: 2), dateAdded: "2020/10/21", dateRead: "bad"),
            .init(record: RecordPlace(id: "aaaa:3", file: "export.csv", line: 4), dateAdded: "bad", dateRead: "bad"),
        ])
        // A rule that refuses every text lists the records that have a date, and only those.
        let every = try store.qualityFigures(.library) { _ in false }.refusedDates
        #expect(every.map(\.record.id) == ["aaaa:1", "aaaa:3", "aaaa:4"])
        #expect(every.last?.dateRead == nil)
    }

    @Test("A run's scope counts the records it wrote last, and lists only its own entry")
    func runScope() async throws {
        let store = try temporaryLibrary()
        let first = try await store.beginRun(command: "import a", pipeline: "csv-import")
        try store.insert([record(1, title: "A", author: "X"), record(2, title: "B", author: "X")], runID: first)
        let second = try await store.beginRun(command: "import b", pipeline: "csv-import")
        try store.insert([record(3, title: "C", author: "X", enriched: true)], runID: second)
        try await store.finishRun(second, status: .finished, summary: nil)
        let figures = try store.qualityFigures(QualityScope(runID: second)) { _ in true }
        #expect(figures.records == 1 && figures.recordsByStatus == [.enriched: 1])
        #expect(figures.runs.map(\.id) == [second] && figures.runs.first?.records == 1 && figures.runs.first?.status == .finished)
        #expect(figures.runs.first.map { $0.finishedAt != nil && $0.finishedAt! >= $0.startedAt } == true)
        #expect(figures.files.map(\.records) == [1])
        let library = try store.qualityFigures(.library) { _ in true }
        #expect(library.records == 3 && library.runs.map(\.records) == [2, 1] && library.runs.first?.finishedAt == nil)
    }

    @Test("Titles are read by record id; an id of no record is absent")
    func titles() throws {
        let store = try temporaryLibrary()
        try store.insert([record(1, title: "Dune", author: "Frank Herbert"), record(2, title: "Emma", author: "Jane Austen")])
        #expect(try store.recordTitles(ids: ["aaaa:2", "aaaa:1", "aaaa:9", "bbbb:1", "nonsense"]) == ["aaaa:1": "Dune", "aaaa:2": "Emma"])
    }
}

@Suite struct RawFieldTests {
    @Test("bookpipe_field finds a raw field in the stored joined text as RawFields splits it, escapes included",
          arguments: [["a", "b", "c"], ["", "x\u{1F}y", "z"], ["é", "\u{1B}", ""], ["only"]])
    func field(_ fields: [String]) throws {
        let store = try LibraryStore(path: FileManager.default.temporaryDirectory
            .appendingPathComponent("fields-\(UUID().uuidString).sqlite").path)
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
