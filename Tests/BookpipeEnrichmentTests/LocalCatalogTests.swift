import Synchronization
import BookpipeCore
import Foundation
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

@Suite(.timeLimit(.minutes(5)))
struct LocalCatalogTests {
    @Test("Importing the sample dump stores every edition, work, author and ISBN, and indexes every work")
    func importSample() async throws {
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let seenPhases = Mutex<Set<CatalogImportProgress.Phase>>([])
        let summary = try await catalog.import(dumpFile: CatalogSamples.dump) { progress in
            seenPhases.withLock { _ = $0.insert(progress.phase) }
        }
        let phases = seenPhases.withLock { $0 }
        #expect(summary.lines == 299)
        #expect(summary.editions == 121)
        #expect(summary.works == 103)
        #expect(summary.authors == 75)
        #expect(summary.changed == 299)
        #expect(summary.unchanged == 0)
        #expect(summary.skipped == 0)
        #expect(summary.problems.isEmpty)
        #expect(summary.invalidISBNs == 0)
        #expect(summary.searchUnitsRebuilt == 103)
        #expect(!summary.isCompressed)
        #expect(phases == [.reading, .indexing])

        let counts = try catalog.counts()
        #expect(counts.editions == 121)
        #expect(counts.works == 103)
        #expect(counts.authors == 75)
        // Distinct ISBN-13s of the sample's editions, ISBN-10s converted (checked with samples/tools/isbnlib.py).
        #expect(counts.isbn13s == 104)
        // One entry per work, plus the editions whose title differs from their work's.
        #expect(counts.searchDocuments >= 103)
        #expect(counts.pendingSearchUnits == 0)
        #expect(counts.imports == 1)
    }

    @Test("Re-importing the same dump changes nothing")
    func reimportIsIdempotent() async throws {
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        _ = try await catalog.import(dumpFile: CatalogSamples.dump)
        let before = try catalog.counts()
        let hits = try catalog.search(title: "Dune", author: "Frank Herbert")
        let again = try await catalog.import(dumpFile: CatalogSamples.dump)
        #expect(again.changed == 0)
        #expect(again.unchanged == 299)
        #expect(again.searchUnitsRebuilt == 0)
        var after = try catalog.counts()
        #expect(after.imports == 2)
        after.imports = before.imports
        after.lastImportAt = before.lastImportAt
        #expect(after == before)
        #expect(try catalog.search(title: "Dune", author: "Frank Herbert") == hits)
    }

    @Test("Re-importing a newer dump changes exactly the records that changed, were added or were removed, and says so")
    func newerDumpChangesOnlyWhatChanged() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        func author(_ number: Int, _ name: String, revision: Int = 1) throws -> String {
            try CatalogSamples.line(type: "author", key: "/authors/OL\(number)A", revision: revision, ["name": name])
        }
        func work(_ number: Int, _ title: String, author: Int, revision: Int = 1) throws -> String {
            try CatalogSamples.line(type: "work", key: "/works/OL\(number)W", revision: revision, [
                "title": title, "authors": [["author": ["key": "/authors/OL\(author)A"]]]])
        }
        func edition(_ number: Int, _ title: String, work: Int, isbn: String, revision: Int = 1) throws -> String {
            try CatalogSamples.line(type: "edition", key: "/books/OL\(number)M", revision: revision, [
                "title": title, "works": [["key": "/works/OL\(work)W"]], "isbn_13": [isbn]])
        }
        let january = [
            try author(1, "Ursula K. Le Guin"), try author(2, "Tove Jansson"),
            try work(1, "The Dispossessed", author: 1), try work(2, "The Summer Book", author: 2),
            try work(3, "A Wizard of Earthsea", author: 1),
            try edition(1, "The Dispossessed", work: 1, isbn: "9780061054884"),
            try edition(2, "The Summer Book", work: 2, isbn: "9781590172681"),
            try edition(3, "A Wizard of Earthsea", work: 3, isbn: "9780547773742"),
        ]
        let first = try await catalog.import(dumpFile: try CatalogSamples.writeDump(january, named: "2026-01.txt", in: directory))
        #expect(first.changed == 8)
        let untouched = try catalog.candidates(forISBNs: ["9780061054884"])
        // What a record's rows look like on disk: a rewritten record or a rebuilt search entry
        // would show a new last_modified or new search document ids.
        func stored(work: Int) async throws -> [String] {
            try await catalog.pool.read { db in
                try String.fetchAll(db, sql: """
                    SELECT 'work ' || revision || ' ' || last_modified FROM works WHERE key = ?1
                    UNION ALL SELECT 'document ' || id FROM search_documents WHERE unit = ?1
                    """, arguments: ["/works/OL\(work)W"])
            }
        }
        let workOneInJanuary = try await stored(work: 1)
        let workTwoInJanuary = try await stored(work: 2)

        // February: work 2 renamed (a new revision), edition 4 and work 4 added, edition 3 deleted;
        // everything else as in January.
        let delete = ["/type/delete", "/books/OL3M", "2", "2026-02-01T00:00:00.000000",
                      #"{"key": "/books/OL3M", "type": {"key": "/type/delete"}, "revision": 2}"#].joined(separator: "\t")
        let february = [
            january[0], january[1], january[2],
            try work(2, "The Summer Book (Sommarboken)", author: 2, revision: 2),
            january[4], try work(4, "Moominsummer Madness", author: 2),
            january[5], january[6], delete,
            try edition(4, "Moominsummer Madness", work: 4, isbn: "9780374453046"),
        ]
        let second = try await catalog.import(dumpFile: try CatalogSamples.writeDump(february, named: "2026-02.txt", in: directory))
        #expect(second.lines == 10)
        #expect(second.changed == 4)     // work 2, work 4, edition 4, the deletion of edition 3
        #expect(second.unchanged == 6)
        #expect(second.removals == 1)
        // Only the works whose entries changed are re-indexed: 2 (new title), 3 (lost its edition), 4 (new).
        #expect(second.searchUnitsRebuilt == 3)

        #expect(try catalog.candidates(forISBNs: ["9780061054884"]) == untouched)
        // An unchanged record is not rewritten and its search entry is not rebuilt; a changed one is both.
        #expect(try await stored(work: 1) == workOneInJanuary)
        let workTwoInFebruary = try await stored(work: 2)
        #expect(workTwoInFebruary.first != workTwoInJanuary.first)
        #expect(workTwoInFebruary.count == 3)  // the work's new title, and its edition's older title
        #expect(Set(workTwoInFebruary.dropFirst()).isDisjoint(with: workTwoInJanuary.dropFirst()))
        #expect(try catalog.candidates(forISBNs: ["9781590172681"])["9781590172681"]?.first?.title == "The Summer Book (Sommarboken)")
        #expect(try catalog.candidates(forISBNs: ["9780547773742"]).isEmpty)
        #expect(try catalog.candidates(forISBNs: ["9780374453046"])["9780374453046"]?.first?.workKey == "/works/OL4W")
        #expect(try catalog.search(title: "Moominsummer Madness", author: "Tove Jansson").first?.workKey == "/works/OL4W")
        #expect(try catalog.search(title: "The Summer Book (Sommarboken)", author: nil).first?.workKey == "/works/OL2W")
        let counts = try catalog.counts()
        #expect((counts.works, counts.editions, counts.authors, counts.isbn13s) == (4, 3, 2, 3))

        // Importing February again changes nothing.
        let third = try await catalog.import(dumpFile: try CatalogSamples.writeDump(february, named: "2026-02b.txt", in: directory))
        #expect(third.changed == 0)
        #expect(third.unchanged == 10)
        #expect(third.searchUnitsRebuilt == 0)
    }

    @Test("A malformed line is reported with file:line and skipped; every other line imports")
    func malformedLines() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        var lines = try CatalogSamples.dumpLines()
        let bad: [(line: Int, text: String, reason: CatalogSkipReason)] = [
            (3, "/type/author\t/authors/OL1A\t1", .wrongFieldCount),
            (10, "/type/edition\t/books/OL2M\t1\t2026-01-01\t{\"key\": \"/books/OL2M\", \"title\": ", .invalidJSON),
            (20, "/type/work\t/works/OL3W\tseven\t2026-01-01\t{\"key\": \"/works/OL3W\", \"title\": \"X\"}", .invalidRevision),
            (30, "/type/work\t/works/OL4W\t1\t2026-01-01\t{\"key\": \"/works/OL5W\", \"title\": \"X\"}", .keyMismatch),
            (40, "/type/edition\t/books/OL6M\t1\t2026-01-01\t{\"key\": \"/books/OL6M\", \"works\": []}", .missingTitle),
            (50, "Title,Author\tISBN\t1\t2026\t{}", .notARecordType),
            (60, "/type/work\t\t1\t2026-01-01\t{}", .missingKey),
        ]
        for entry in bad { lines.insert(entry.text, at: entry.line - 1) }
        let path = try CatalogSamples.writeDump(lines, in: directory)
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let summary = try await catalog.import(dumpFile: path)

        #expect(summary.lines == 299 + bad.count)
        #expect(summary.skipped == bad.count)
        #expect(summary.problems.map(\.line) == bad.map(\.line))
        #expect(summary.problems.map(\.reason) == bad.map(\.reason))
        #expect(summary.skippedByReason.values.reduce(0, +) == bad.count)
        #expect(summary.problems[0].description
                == "\(path):3: expected 5 tab-separated fields (type, key, revision, last_modified, JSON), found 3; line skipped")
        #expect(summary.problems[2].description == "\(path):20: the revision \"seven\" is not a number; line skipped")
        #expect(summary.problems[3].description
                == "\(path):30: the key field says /works/OL4W but the JSON says /works/OL5W; line skipped")
        #expect(summary.problems[4].description == "\(path):40: edition /books/OL6M has no title; line skipped")
        // The rest imported as if the bad lines were not there.
        let counts = try catalog.counts()
        #expect(counts.editions == 121)
        #expect(counts.works == 103)
        #expect(counts.authors == 75)
    }

    @Test("A newer revision of a key replaces the older one; an older one changes nothing")
    func revisions() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        func work(revision: Int, title: String) throws -> String {
            try CatalogSamples.makeDump(
                in: directory, named: "rev\(revision)-\(title.count).txt",
                [CatalogSamples.line(type: "author", key: "/authors/OL1A", ["name": "Ann Leckie"]),
                 CatalogSamples.line(type: "work", key: "/works/OL1W", revision: revision,
                                     ["title": title, "authors": [["author": ["key": "/authors/OL1A"]]]])])
        }
        _ = try await catalog.import(dumpFile: try work(revision: 2, title: "Ancillary Justise"))
        #expect(try catalog.search(title: "Ancillary Justise", author: nil).first?.title == "Ancillary Justise")

        let newer = try await catalog.import(dumpFile: try work(revision: 3, title: "Ancillary Justice"))
        #expect(newer.changed == 1)
        #expect(newer.unchanged == 1)
        #expect(try catalog.search(title: "Ancillary Justice", author: "Ann Leckie").map(\.title) == ["Ancillary Justice"])
        #expect(try !catalog.search(title: "Ancillary Justise", author: nil).map(\.title).contains("Ancillary Justise"))

        let older = try await catalog.import(dumpFile: try work(revision: 1, title: "Ancillary"))
        #expect(older.changed == 0)
        #expect(older.unchanged == 2)
        #expect(try catalog.search(title: "Ancillary Justice", author: nil).map(\.title) == ["Ancillary Justice"])
    }

    @Test("Works and editions imported before their authors show the authors' names once the authors arrive")
    func authorsAfterWorks() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let lines = try CatalogSamples.dumpLines()
        let authors = lines.filter { $0.hasPrefix("/type/author\t") }
        let rest = lines.filter { !$0.hasPrefix("/type/author\t") }
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        _ = try await catalog.import(dumpFile: try CatalogSamples.writeDump(rest, named: "works-editions.txt", in: directory))
        #expect(try catalog.search(title: "Dune", author: nil).first { $0.workKey == "/works/OL900004W" }?.authors == [])
        let second = try await catalog.import(dumpFile: try CatalogSamples.writeDump(authors, named: "authors.txt", in: directory))
        #expect(second.searchUnitsRebuilt > 0)
        let dune = try #require(try catalog.search(title: "Dune", author: "Frank Herbert").first)
        #expect(dune.workKey == "/works/OL900004W", "the author now ranks Frank Herbert's Dune first")
        #expect(dune.authors == ["Frank Herbert"])
    }

    @Test("Editions whose work record is absent are still found, under the work key they name")
    func editionsWithoutWorkRecord() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let path = try CatalogSamples.makeDump(in: directory, [
            CatalogSamples.line(type: "author", key: "/authors/OL7A", ["name": "Tove Jansson"]),
            CatalogSamples.line(type: "edition", key: "/books/OL7M", [
                "title": "Comet in Moominland", "works": [["key": "/works/OL7W"]], "authors": [["key": "/authors/OL7A"]],
                "isbn_13": ["9780312608897"], "publish_date": "March 2010"]),
            CatalogSamples.line(type: "edition", key: "/books/OL8M", [
                "title": "The Summer Book", "authors": [["key": "/authors/OL7A"]], "publish_date": "1972"]),
        ])
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        _ = try await catalog.import(dumpFile: path)
        let comet = try #require(try catalog.search(title: "Comet in Moominland", author: "Tove Jansson").first)
        #expect(comet.workKey == "/works/OL7W")
        #expect(comet.editionKey == "/books/OL7M")
        #expect(comet.authors == ["Tove Jansson"])
        #expect(comet.year == 2010)
        let byISBN = try #require(try catalog.candidates(forISBNs: ["9780312608897"])["9780312608897"]?.first)
        #expect(byISBN.title == "Comet in Moominland")
        #expect(byISBN.authors == ["Tove Jansson"])
        // An edition that names no work at all is found as that edition, with no work key (never its own).
        let summer = try #require(try catalog.search(title: "The Summer Book", author: nil).first)
        #expect(summer.workKey == "")
        #expect(summer.editionKey == "/books/OL8M")
        #expect(summer.year == 1972)
    }

    @Test("A /type/delete line removes the record, and an older copy imported later does not come back")
    func deletes() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let edition = try CatalogSamples.line(type: "edition", key: "/books/OL9M", revision: 2, [
            "title": "Gideon the Ninth", "isbn_13": ["9781250313195"]])
        _ = try await catalog.import(dumpFile: try CatalogSamples.writeDump([edition], named: "a.txt", in: directory))
        #expect(try catalog.candidates(forISBNs: ["9781250313195"]).count == 1)

        let delete = ["/type/delete", "/books/OL9M", "3", "2026-02-01T00:00:00.000000",
                      #"{"key": "/books/OL9M", "type": {"key": "/type/delete"}, "revision": 3}"#].joined(separator: "\t")
        let removal = try await catalog.import(dumpFile: try CatalogSamples.writeDump([delete], named: "b.txt", in: directory))
        #expect(removal.removals == 1)
        #expect(removal.changed == 1)
        #expect(try catalog.candidates(forISBNs: ["9781250313195"]).isEmpty)
        #expect(try catalog.search(title: "Gideon the Ninth", author: nil).isEmpty)

        let stale = try await catalog.import(dumpFile: try CatalogSamples.writeDump([edition], named: "c.txt", in: directory))
        #expect(stale.unchanged == 1)
        #expect(try catalog.counts().editions == 0)
    }

    @Test("A gzip-compressed dump imports like the plain one", .timeLimit(.minutes(5)))
    func gzipDump() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let compressed = directory.appendingPathComponent("openlibrary-sample.txt.gz")
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gzip.arguments = ["gzip", "-c", CatalogSamples.dump]
        _ = FileManager.default.createFile(atPath: compressed.path, contents: nil)
        gzip.standardOutput = try FileHandle(forWritingTo: compressed)
        try gzip.run()
        gzip.waitUntilExit()
        #expect(gzip.terminationStatus == 0)

        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let summary = try await catalog.import(dumpFile: compressed.path)
        #expect(summary.isCompressed)
        #expect(summary.lines == 299)
        #expect(summary.skipped == 0)
        #expect(try catalog.counts().editions == 121)
    }

    @Test("Files that are not dumps are refused with a message naming them, and nothing is stored")
    func notDumps() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let csv = CatalogSamples.path("samples/goodreads_library_export.csv")
        await #expect(throws: CatalogError.notADump(
            path: csv,
            reason: "line 1: expected 5 tab-separated fields (type, key, revision, last_modified, JSON), found 1")) {
            try await catalog.import(dumpFile: csv)
        }
        let empty = directory.appendingPathComponent("empty.txt").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        await #expect(throws: CatalogError.notADump(path: empty, reason: "the file is empty")) {
            try await catalog.import(dumpFile: empty)
        }
        let missing = directory.appendingPathComponent("missing.txt").path
        await #expect(throws: CatalogError.dumpNotFound(path: missing)) { try await catalog.import(dumpFile: missing) }
        #expect(CatalogError.dumpNotFound(path: missing).description
                == "\(missing): no such file. Pass an Open Library dump (.txt or .txt.gz).")
        await #expect(throws: CatalogError.dumpUnreadable(path: directory.path, reason: "it is a folder")) {
            try await catalog.import(dumpFile: directory.path)
        }
        let brokenGzip = directory.appendingPathComponent("broken.txt.gz").path
        _ = FileManager.default.createFile(atPath: brokenGzip, contents: Data([0x1F, 0x8B, 0x08, 0x00, 0x42, 0x42]))
        do {
            _ = try await catalog.import(dumpFile: brokenGzip)
            Issue.record("a broken gzip file imported")
        } catch {
            guard case .dumpUnreadable(let path, let reason) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(path == brokenGzip)
            #expect(reason.hasPrefix("gzip could not decompress it"))
        }
        #expect(try catalog.counts() == CatalogCounts(editions: 0, works: 0, authors: 0, isbn13s: 0, searchDocuments: 0,
                                                      pendingSearchUnits: 0, imports: 0, lastImportAt: nil))
    }

    @Test("A cancelled import stops after a committed batch and the next import finishes the job")
    func cancelledImport() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        // Enough lines for several transactions.
        var lines: [String] = []
        for index in 1...12_000 {
            lines.append(try CatalogSamples.line(type: "work", key: "/works/OL\(index)W", ["title": "Work number \(index)"]))
        }
        let path = try CatalogSamples.writeDump(lines, in: directory)
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let task = Task { () throws -> CatalogImportSummary in
            try await catalog.import(dumpFile: path) { progress in
                if progress.lines >= LocalCatalog.linesPerTransaction { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        let result = await task.result
        guard case .failure(let error) = result, let catalogError = error as? CatalogError,
              case .interrupted(let dump, let committed) = catalogError else {
            Issue.record("expected an interruption, got \(result)")
            return
        }
        #expect(dump == path)
        #expect(committed == LocalCatalog.linesPerTransaction)
        let partial = try catalog.counts()
        #expect(partial.works == LocalCatalog.linesPerTransaction)
        #expect(partial.pendingSearchUnits == LocalCatalog.linesPerTransaction)

        let finished = try await catalog.import(dumpFile: path)
        #expect(finished.unchanged == LocalCatalog.linesPerTransaction)
        #expect(finished.changed == 12_000 - LocalCatalog.linesPerTransaction)
        #expect(finished.searchUnitsRebuilt == 12_000)
        let counts = try catalog.counts()
        #expect(counts.works == 12_000)
        #expect(counts.searchDocuments == 12_000)
        #expect(counts.pendingSearchUnits == 0)
    }

    @Test("Years are read from Open Library's free-text dates", arguments: [
        ("1965", 1965), ("March 1990", 1990), ("c1985", 1985), ("1990?", 1990), ("2003-05-01", 2003),
        ("May 5, 2004", 2004), ("12345", nil), ("", nil), ("n.d.", nil), ("0999", nil),
    ] as [(String, Int?)])
    func years(text: String, year: Int?) {
        #expect(DumpRecord.year(in: text) == year)
    }

    @Test("Author references, page counts and ISBN lists in any of Open Library's shapes are read")
    func lenientRecords() throws {
        let line = ["/type/edition", "/books/OL1M", "4", "2026-01-01T00:00:00",
                    #"{"key": "/books/OL1M", "title": " The Left Hand of Darkness ", "subtitle": "", "#
                    + #""works": [{"key": "/works/OL1W"}, {"key": "/works/OL2W"}], "authors": ["/authors/OL1A", {"key": "/authors/OL2A"}, "#
                    + #"{"author": {"key": "/authors/OL3A"}}, {"author": "/authors/OL4A"}, 7, null], "number_of_pages": "304", "#
                    + #""isbn_10": ["0441478123", 12], "publishers": "Ace", "publish_date": "1969"}"#].joined(separator: "\t")
        guard case .success(.edition(let edition)) = DumpRecord.parse(Array(line.utf8)[...], decoder: JSONDecoder()) else {
            Issue.record("the line did not parse as an edition")
            return
        }
        #expect(edition.title == "The Left Hand of Darkness")
        #expect(edition.subtitle == nil)
        #expect(edition.workKey == "/works/OL1W")
        #expect(edition.authorKeys == ["/authors/OL1A", "/authors/OL2A", "/authors/OL3A", "/authors/OL4A"])
        #expect(edition.pageCount == 304)
        #expect(edition.isbn10s == ["0441478123", "12"])
        #expect(edition.publishers == [])
        #expect(edition.publishYear == 1969)
    }
}

extension CatalogSamples {
    /// Writes dump lines (built with ``line(type:key:revision:lastModified:_:)``) to a file.
    static func makeDump(in directory: URL, named name: String = "dump.txt", _ lines: [String]) throws -> String {
        try writeDump(lines, named: name, in: directory)
    }
}
