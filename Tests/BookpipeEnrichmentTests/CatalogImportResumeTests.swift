import BookpipeCore
import Foundation
import GRDB
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

/// A fresh import (an empty catalogue) stores records without reading stored versions first, and
/// the search entries are rebuilt by a reader and a writer side by side: the catalogue each writes
/// must be the one the ordinary way writes, also when the import is interrupted and run again.
///
/// Serialized: an import works on its caller's thread (GRDB's blocking writes), and three at once
/// held both threads of a two-core machine's task pool for most of a minute, so other suites' async
/// tests (loopback servers, rate limits) ran past their time limits.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CatalogImportResumeTests {
    /// Every table's rows, sorted, as text (the full-text index checked against its documents).
    static func tables(of catalog: LocalCatalog, leavingOut excluded: String? = nil) throws -> [String: [String]] {
        try catalog.pool.write { db in
            try db.execute(sql: "INSERT INTO search_index (search_index) VALUES ('integrity-check')")
            var result: [String: [String]] = [:]
            result["schema"] = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master").map(\.description).sorted()
            for table in ["authors", "works", "editions", "edition_isbns", "work_authors", "edition_authors",
                          "search_documents", "search_titles", "search_pending", "removed_keys"] {
                result[table] = try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map(\.description)
                    .filter { row in excluded.map { !row.contains($0) } ?? true }.sorted()
            }
            return result
        }
    }

    /// About 7,700 lines over two transactions, and 5,200 search units (over one batch): authors, editions, then works (the real dump's
    /// order), with keys that come twice (a newer revision after an older one and the reverse),
    /// removals before and after the records they remove, editions without a work record and
    /// editions that name no work.
    static func dumpLines() throws -> [String] {
        var lines: [String] = []
        for number in 1...500 {
            lines.append(try CatalogSamples.line(type: "author", key: "/authors/OL\(number)A", ["name": "Author \(number)"]))
        }
        lines.append(try CatalogSamples.line(type: "author", key: "/authors/OL5A", revision: 2, ["name": "Author Five Renamed"]))
        lines.append(removal("/books/OL20M", revision: 3))   // before the edition, and newer: it stays away
        lines.append(removal("/books/OL21M", revision: 1))   // before the edition, and older: the edition stays
        for number in 1...5_200 {
            var fields: [String: Any] = [
                "title": number % 3 == 0 ? "Another Title \(number % 500)" : "Title \(number / 2)",
                "authors": [["key": "/authors/OL\(number % 600 + 1)A"]],
                "isbn_13": [String(9_780_000_000_000 + number * 10 % 1_000_000_000)],
                "publish_date": String(1900 + number % 120),
            ]
            if number % 50 != 0 { fields["works"] = [["key": "/works/OL\(number)W"]] }
            lines.append(try CatalogSamples.line(type: "edition", key: "/books/OL\(number)M", revision: 2, fields))
        }
        lines.append(try CatalogSamples.line(type: "edition", key: "/books/OL7M", revision: 3, [
            "title": "Seven, newer", "works": [["key": "/works/OL900W"]], "isbn_13": ["9780306406157"]]))
        lines.append(try CatalogSamples.line(type: "edition", key: "/books/OL8M", revision: 1, ["title": "Eight, older"]))
        for number in 1...2_000 {
            lines.append(try CatalogSamples.line(type: "work", key: "/works/OL\(number)W", [
                "title": "Work Title \(number / 3)", "authors": [["author": ["key": "/authors/OL\(number % 500 + 1)A"]]],
            ]))
        }
        lines.append(try CatalogSamples.line(type: "work", key: "/works/OL10W", revision: 2, [
            "title": "Ten, newer", "authors": [["author": ["key": "/authors/OL1A"]], ["author": ["key": "/authors/OL2A"]]]]))
        lines.append(removal("/works/OL11W", revision: 5))   // after the work, and newer: it goes
        lines.append(removal("/authors/OL12A", revision: 5))
        lines.append(removal("/works/OL1900W", revision: 5))
        lines.append(try CatalogSamples.line(type: "work", key: "/works/OL1900W", revision: 4, ["title": "Stale"]))
        return lines
    }

    static func removal(_ key: String, revision: Int) -> String {
        ["/type/delete", key, String(revision), "2026-02-01T00:00:00.000000",
         #"{"key": "\#(key)", "type": {"key": "/type/delete"}, "revision": \#(revision)}"#].joined(separator: "\t")
    }

    @Test("A fresh import writes the catalogue that an import into a catalogue holding records writes")
    func freshImportMatchesTheOrdinaryWay() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let dump = try CatalogSamples.writeDump(try Self.dumpLines(), in: directory)

        let (fresh, _) = try CatalogSamples.emptyCatalog()
        let freshSummary = try await fresh.import(dumpFile: dump)

        // The same dump into a catalogue that already holds one unrelated author: not fresh.
        let (ordinary, _) = try CatalogSamples.emptyCatalog()
        let other = try CatalogSamples.line(type: "author", key: "/authors/OL999999A", ["name": "Someone Else"])
        _ = try await ordinary.import(dumpFile: try CatalogSamples.writeDump([other], named: "other.txt", in: directory))
        let ordinarySummary = try await ordinary.import(dumpFile: dump)

        #expect(freshSummary.changed == ordinarySummary.changed)
        #expect(freshSummary.unchanged == ordinarySummary.unchanged)
        #expect(freshSummary.unchanged == 5)  // edition 8's and work 1900's older copies, and 3 removals of nothing stored
        let freshTables = try Self.tables(of: fresh)
        Self.expectSame(freshTables, try Self.tables(of: ordinary, leavingOut: "/authors/OL999999A"))
        #expect(freshTables["search_pending"] == [])
        #expect(try fresh.search(title: "Ten, newer", author: "Author 2").first?.workKey == "/works/OL10W")
        #expect(try fresh.counts().editions == 5_199)  // edition 20 removed
    }

    @Test("An import interrupted while storing or while indexing, then run again, leaves the catalogue an uninterrupted one leaves",
          arguments: [CatalogImportProgress.Phase.reading, .indexing])
    func interruptedImportResumes(phase: CatalogImportProgress.Phase) async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let dump = try CatalogSamples.writeDump(try Self.dumpLines(), in: directory)

        let (whole, _) = try CatalogSamples.emptyCatalog()
        _ = try await whole.import(dumpFile: dump)

        let (resumed, _) = try CatalogSamples.emptyCatalog()
        let task = Task { () throws -> CatalogImportSummary in
            try await resumed.import(dumpFile: dump) { progress in
                let stop = switch phase {
                case .reading: progress.lines >= LocalCatalog.linesPerTransaction
                case .indexing: progress.searchUnitsRebuilt > 0
                }
                if stop { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        let result = await task.result
        guard case .failure(let error) = result, let catalogError = error as? CatalogError,
              case .interrupted = catalogError else {
            Issue.record("expected an interruption, got \(result)")
            return
        }
        let partial = try resumed.counts()
        #expect(partial.pendingSearchUnits > 0)
        if phase == .indexing { #expect(partial.searchDocuments > 0) }
        // A fresh import builds some indexes after its records; opening the catalogue restores them.
        let reopened = try LocalCatalog(path: resumed.path)
        #expect(try Self.tables(of: reopened)["schema"] == (try Self.tables(of: whole)["schema"]))

        let finished = try await resumed.import(dumpFile: dump)
        #expect(finished.skipped == 0)
        #expect(try resumed.counts().pendingSearchUnits == 0)
        Self.expectSame(try Self.tables(of: resumed), try Self.tables(of: whole))
    }

    /// Names the tables that differ, with a few of the rows that do.
    static func expectSame(_ found: [String: [String]], _ expected: [String: [String]],
                           sourceLocation: SourceLocation = #_sourceLocation) {
        for (table, rows) in expected.sorted(by: { $0.key < $1.key }) where found[table] != rows {
            let extra = Set(found[table] ?? []).subtracting(rows).sorted().prefix(3)
            let missing = Set(rows).subtracting(found[table] ?? []).sorted().prefix(3)
            Issue.record("\(table) differs: \(found[table]?.count ?? 0) rows against \(rows.count); extra \(extra), missing \(missing)",
                         sourceLocation: sourceLocation)
        }
    }
}
