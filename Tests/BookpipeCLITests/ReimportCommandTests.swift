import BookpipeCore
import BookpipeStore
import BookpipeTesting
import Foundation
import Testing

/// Importing a newer export of a list already in the library, through the binary: the same book
/// stays one record, changes are applied and logged, a person's edit wins, missing entries are
/// kept and marked, and nothing is written by a dry run or for a file that looks like another list.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ReimportCommandTests {
    /// A CSV file as rows of cells (quotes as `csv` writes them).
    struct Table {
        var header: [String]
        var rows: [[String]]

        init(path: String) throws {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let parsed = Self.parse(text)
            header = parsed.first ?? []
            rows = Array(parsed.dropFirst())
        }

        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name), "no column \(name)") }

        mutating func set(_ name: String, row: Int, to value: String) throws { rows[row][try column(name)] = value }

        func write(to path: String) throws {
            func quote(_ cell: String) -> String {
                cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                    ? "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : cell
            }
            let text = ([header] + rows).map { $0.map(quote).joined(separator: ",") }.joined(separator: "\n") + "\n"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }

        /// RFC 4180 rows (enough for the samples and fixtures used here).
        static func parse(_ text: String) -> [[String]] {
            var rows: [[String]] = []
            var row: [String] = []
            var cell = ""
            var quoted = false
            var iterator = Array(text.unicodeScalars).makeIterator()
            var pending: Unicode.Scalar?
            func next() -> Unicode.Scalar? {
                if let scalar = pending { pending = nil; return scalar }
                return iterator.next()
            }
            while let scalar = next() {
                if quoted {
                    if scalar == "\"" {
                        if let following = next() {
                            if following == "\"" { cell.unicodeScalars.append("\"") } else { quoted = false; pending = following }
                        } else {
                            quoted = false
                        }
                    } else {
                        cell.unicodeScalars.append(scalar)
                    }
                } else if scalar == "\"" {
                    quoted = true
                } else if scalar == "," {
                    row.append(cell)
                    cell = ""
                } else if scalar == "\n" || scalar == "\r" {
                    if scalar == "\r", let following = next(), following != "\n" { pending = following }
                    row.append(cell)
                    cell = ""
                    rows.append(row)
                    row = []
                } else {
                    cell.unicodeScalars.append(scalar)
                }
            }
            if !cell.isEmpty || !row.isEmpty {
                row.append(cell)
                rows.append(row)
            }
            return rows.filter { $0 != [""] }
        }
    }

    static let sample = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path

    func importing(_ files: [String], _ extra: [String] = [], library: String, in directory: URL) throws -> CLI.Result {
        try CLI.run(["import"] + files + ["--no-enrich", "--library", library, "--progress", "none"] + extra, in: directory)
    }

    @Test("A newer Goodreads export updates its entries: one new, changed fields applied and logged, one gone and kept; the summary counts each; the same file again, and again, changes nothing")
    func newerExportUpdates() async throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let first = try importing([Self.sample], library: library, in: directory)
        #expect(first.status == 0, "\(first.stderr)")

        var table = try Table(path: Self.sample)
        let renamed = table.rows[0][try table.column("Title")]
        try table.set("Title", row: 0, to: renamed + " (Revised)")
        try table.set("Exclusive Shelf", row: 1, to: "read")
        try table.set("My Rating", row: 1, to: "5")
        var added = table.rows[2]
        added[try table.column("Book Id")] = "99999999"
        added[try table.column("Title")] = "A Book Added Since"
        added[try table.column("ISBN")] = ""
        added[try table.column("ISBN13")] = ""
        let removedTitle = table.rows[4][try table.column("Title")]
        table.rows.remove(at: 4)
        table.rows.append(added)
        let newer = directory.appendingPathComponent("goodreads_library_export-december.csv").path
        try table.write(to: newer)

        let dryRun = try importing([newer], ["--dry-run"], library: library, in: directory)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stderr.contains("59 rows read, 1 new, 2 changed (title 1, shelf 1, rating 1), 56 unchanged, 1 no longer in the export (dry run: nothing written)"),
                "\(dryRun.stderr)")
        #expect(try LibraryStore(path: library).counts().records == 59)

        let second = try importing([newer], library: library, in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("59 rows read, 1 new, 2 changed (title 1, shelf 1, rating 1), 56 unchanged, 1 no longer in the export, 0 rejected"),
                "\(second.stderr)")
        #expect(second.stderr.contains("1 entry of the list \"goodreads\" is not in this export: kept and marked gone"))

        let store = try LibraryStore(path: library)
        #expect(try store.counts().records == 60)
        var byTitle: [String: BookRecord] = [:]
        try store.forEachRecord(where: nil) { byTitle[$0.title] = $0 }
        let revised = try #require(byTitle[renamed + " (Revised)"])
        #expect(byTitle[renamed] == nil, "the entry was updated, not doubled")
        #expect(revised.status == .pending, "a changed title is looked up again")
        #expect(byTitle["A Book Added Since"] != nil)
        let kept = try #require(byTitle[removedTitle], "an entry missing from the newer export is kept")
        let changes = try store.recordChanges(recordID: revised.id)
        #expect(changes.contains { $0.field == "title" && $0.old == renamed && $0.new == renamed + " (Revised)"
                    && $0.kind == .imported && $0.source == newer })
        #expect(try store.listEntries(list: "goodreads", excludingFile: nil).first { $0.recordID == kept.id }?.isGone == true)

        let shown = try CLI.run(["show", revised.id, "--library", library], in: directory)
        #expect(shown.stdout.contains("entry id:5297 of the list \"goodreads\""), "\(shown.stdout)")
        #expect(shown.stdout.contains("title: \(renamed) → \(renamed) (Revised) (imported, from \(newer))"), "\(shown.stdout)")

        // Again and again: a run that found the file complete leaves it complete (it used to count
        // only this file's own records, not the entries it matched, and mark the file unfinished).
        for _ in 0..<2 {
            let third = try importing([newer], library: library, in: directory)
            #expect(third.stderr.contains("already imported (59 rows); nothing changed."), "\(third.stderr)")
        }
        #expect(try store.counts().records == 60)
        let gone = try CLI.run(["list", "gone:yes", "--library", library], in: directory)
        #expect(gone.status == 0 && gone.stdout.contains(removedTitle), "\(gone.stdout)")

        // A still newer export without one more book, imported with --prune: both gone books are removed, logged.
        table.rows.remove(at: 6)
        let pruning = directory.appendingPathComponent("goodreads_library_export-january.csv").path
        try table.write(to: pruning)
        let pruned = try importing([pruning], ["--prune"], library: library, in: directory)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stderr.contains("0 new, 0 changed, 58 unchanged, 2 no longer in the export (2 removed)"), "\(pruned.stderr)")
        #expect(try store.counts().records == 58)
        let removedChanges = try store.recordChanges(recordID: kept.id)
        #expect(removedChanges.contains { $0.kind == .removed && $0.source == "import --prune" }, "\(removedChanges)")
        let noneGone = try CLI.run(["list", "gone:yes", "--library", library], in: directory)
        #expect(noneGone.status == 1)
    }

    @Test("A person's edit wins over a newer export's value; the conflict is reported and logged")
    func personEditWins() async throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try importing([Self.sample], library: library, in: directory).status == 0)
        let store = try LibraryStore(path: library)
        var first: BookRecord?
        try store.forEachRecord(where: nil) { record in if first == nil { first = record } }
        let record = try #require(first)
        _ = try await store.edit(id: record.id, title: "Title As A Person Wrote It", authors: nil)
        try await store.close()

        var table = try Table(path: Self.sample)
        try table.set("Title", row: 0, to: "Title The Website Changed")
        let newer = directory.appendingPathComponent("newer.csv").path
        try table.write(to: newer)
        let second = try importing([newer], library: library, in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("kept: 1 fields a person edited that the file gives another value"), "\(second.stderr)")
        let reopened = try LibraryStore(path: library)
        let stored = try #require(try reopened.records(ids: [record.id]).first)
        #expect(stored.title == "Title As A Person Wrote It")
        let changes = try reopened.recordChanges(recordID: record.id)
        #expect(changes.contains { $0.kind == .editKept && $0.new == "Title The Website Changed" })

        // Next month the site still says the same title and the rating changed: no new conflict.
        try table.set("My Rating", row: 0, to: "2")
        let later = directory.appendingPathComponent("later.csv").path
        try table.write(to: later)
        let third = try importing([later], library: library, in: directory)
        #expect(third.stderr.contains("1 changed (rating 1)") && !third.stderr.contains("kept:"), "\(third.stderr)")
        #expect(try reopened.recordChanges(recordID: record.id).filter { $0.kind == .editKept }.count == 1)
        #expect(try reopened.records(ids: [record.id]).first?.title == "Title As A Person Wrote It")

        // An export whose title is still the one from before the edit (an unchanged row but its shelf) is no conflict either.
        let untouched = directory.appendingPathComponent("untouched.csv").path
        var original = try Table(path: Self.sample)
        try original.set("Exclusive Shelf", row: 0, to: "to-read")
        try original.write(to: untouched)
        let fresh = directory.appendingPathComponent("fresh.sqlite").path
        #expect(try importing([Self.sample], library: fresh, in: directory).status == 0)
        let freshStore = try LibraryStore(path: fresh)
        _ = try await freshStore.edit(id: record.id, title: "Title As A Person Wrote It", authors: nil)
        try await freshStore.close()
        let shelfOnly = try importing([untouched], library: fresh, in: directory)
        #expect(shelfOnly.stderr.contains("1 changed (shelf 1)") && !shelfOnly.stderr.contains("kept:"), "\(shelfOnly.stderr)")
    }

    @Test("A StoryGraph export has no ids: rows are the same entry by ISBN-13, so a changed shelf updates the record")
    func storyGraphByISBN() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let sample = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
        let first = try importing([sample], library: library, in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        var table = try Table(path: sample)
        let rows = table.rows.count
        try table.set("Read Status", row: 0, to: "to-read")
        let newer = directory.appendingPathComponent("storygraph-newer.csv").path
        try table.write(to: newer)
        let second = try importing([newer], library: library, in: directory)
        #expect(second.stderr.contains("1 changed (shelf 1), \(rows - 1) unchanged"), "\(second.stderr)")
        #expect(try LibraryStore(path: library).counts().records == rows)
    }

    @Test("Two rows of one export with the same Book Id are both kept, each with a finding")
    func duplicateIDsKept() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        var table = try Table(path: Self.sample)
        table.rows[1][try table.column("Book Id")] = table.rows[0][try table.column("Book Id")]
        let edited = directory.appendingPathComponent("hand-edited.csv").path
        try table.write(to: edited)
        let result = try importing([edited], library: library, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("1 rows have the id of an earlier row of the file; both are kept"), "\(result.stderr)")
        var flagged = 0
        try LibraryStore(path: library).forEachRecord(where: nil) { record in
            if record.findings.contains(where: { $0.code == "entry.duplicate-id" }) { flagged += 1 }
        }
        #expect(flagged == 1)
        #expect(try LibraryStore(path: library).counts().records == table.rows.count)
    }

    @Test("Three rows with one Book Id, apart in the file: the two later rows get the finding, the first does not")
    func repeatedIDFlagsLaterRows() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        var table = try Table(path: Self.sample)
        let idColumn = try table.column("Book Id")
        let lastRow = table.rows.count - 1
        table.rows[4][idColumn] = table.rows[1][idColumn]
        table.rows[lastRow][idColumn] = table.rows[1][idColumn]
        let edited = directory.appendingPathComponent("hand-edited.csv").path
        try table.write(to: edited)
        let result = try importing([edited], library: library, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("2 rows have the id of an earlier row of the file; both are kept"), "\(result.stderr)")
        var flaggedRows: [Int] = []
        try LibraryStore(path: library).forEachRecord(where: nil) { record in
            if record.findings.contains(where: { $0.code == "entry.duplicate-id" }) { flaggedRows.append(record.origin.row) }
        }
        // Data rows are numbered from 1: table rows 4 and the last, not table row 1.
        #expect(flaggedRows.sorted() == [5, lastRow + 1])
    }

    @Test("Someone else's export whose ids collide: refused before anything is written; --list keeps it a list of its own, --yes imports it")
    func anotherListRefused() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try importing([Self.sample], library: library, in: directory).status == 0)
        var table = try Table(path: Self.sample)
        let title = try table.column("Title")
        for index in table.rows.indices { table.rows[index][title] = "Someone Else's Book \(index)" }
        let other = directory.appendingPathComponent("friend.csv").path
        try table.write(to: other)
        let refused = try importing([other], library: library, in: directory)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("this looks like another list"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--list NAME") && refused.stderr.contains("--yes"))
        let store = try LibraryStore(path: library)
        var titles: [String] = []
        try store.forEachRecord(where: nil) { titles.append($0.title) }
        #expect(!titles.contains { $0.hasPrefix("Someone Else's Book") })

        let ownList = try importing([other], ["--list", "friend"], library: library, in: directory)
        #expect(ownList.status == 0, "\(ownList.stderr)")
        #expect(ownList.stderr.contains("59 imported"), "\(ownList.stderr)")
        #expect(try store.counts().records == 118)
    }

    @Test("A generic file's --key column identifies its rows; a --key that names no column lists the headers")
    func genericKeyColumn() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let list = directory.appendingPathComponent("my-books.csv").path
        try "code,title,author\nA1,Dune,Frank Herbert\nA2,Emma,Jane Austen\n".write(toFile: list, atomically: true, encoding: .utf8)
        let missing = try importing([list], ["--key", "Code Number"], library: library, in: directory)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("--key Code Number: the file has no column \"Code Number\""), "\(missing.stderr)")
        #expect(missing.stderr.contains("code") && missing.stderr.contains("title") && missing.stderr.contains("author"))
        #expect(try importing([list], ["--key", "code"], library: library, in: directory).status == 0)
        // Emma's title corrected: the same entry by its code, though the title key changed.
        try "code,title,author\nA1,Dune,Frank Herbert\nA2,Emma (Penguin Classics),Jane Austen\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        let second = try importing([list], ["--key", "code"], library: library, in: directory)
        #expect(second.stderr.contains("0 new, 1 changed (title 1), 1 unchanged"), "\(second.stderr)")
        #expect(try LibraryStore(path: library).counts().records == 2)
    }

    @Test("The same person's 2015 export imported after their 2020 one is older than the list: refused, nothing written (dry run too); --yes applies it; in the right order it applies",
          .enabled(if: TestFixtures.sharedAvailable))
    func olderExportRefused() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let newer = TestFixtures.path("real/goodreads_31col_2020_large.csv")
        let older = TestFixtures.path("real/goodreads_31col_2015_crlf_blank_tail.csv")
        #expect(try importing([newer], library: library, in: directory).status == 0)
        func snapshot() throws -> (records: Int, changes: Int, gone: Int) {
            let store = try LibraryStore(path: library)
            var changes = 0
            var ids: [String] = []
            try store.forEachRecord(where: nil) { ids.append($0.id) }
            for id in ids { changes += try store.recordChanges(recordID: id).count }
            let gone = try store.listEntries(list: "goodreads", excludingFile: nil).filter(\.isGone).count
            return (ids.count, changes, gone)
        }
        let before = try snapshot()
        #expect(before.records == 2_638 && before.changes == 0 && before.gone == 0)
        for extra in [["--dry-run"], []] {
            let refused = try importing([older], extra, library: library, in: directory)
            #expect(refused.status == 1, "\(extra): \(refused.stderr)")
            #expect(refused.stderr.contains("this export looks older than the list \"goodreads\" in the library: its newest book was added on 2015/05/10, and 1,125 books of the list added after that are not in it."),
                    "\(refused.stderr)")
            #expect(refused.stderr.contains("pass --yes to apply this one anyway"))
            let after = try snapshot()
            #expect(after.records == before.records && after.changes == 0 && after.gone == 0, "\(extra): nothing written: \(after)")
        }
        let forced = try importing([older], ["--yes"], library: library, in: directory)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stderr.contains("1567 rows read, 61 new, 800 changed"), "\(forced.stderr)")

        // Exported in 2015, then in 2020, and imported in that order: the newer one applies.
        let inOrder = directory.appendingPathComponent("in-order.sqlite").path
        #expect(try importing([older], library: inOrder, in: directory).status == 0)
        let applied = try importing([newer], library: inOrder, in: directory)
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stderr.contains("2638 rows read, 1,132 new, 800 changed"), "\(applied.stderr)")
        #expect(applied.stderr.contains("61 entries of the list \"goodreads\" are not in this export: kept and marked gone"))
    }

    @Test("The real 2020 Goodreads export, one rating changed in a spreadsheet: one record changes, none is added",
          .enabled(if: TestFixtures.sharedAvailable))
    func realExportEdited() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let real = TestFixtures.path("real/goodreads_31col_2020_large.csv")
        let first = try importing([real], library: library, in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        let records = try LibraryStore(path: library).counts().records
        var table = try Table(path: real)
        let rating = try table.column("My Rating")
        table.rows[3][rating] = table.rows[3][rating] == "5" ? "4" : "5"
        let edited = directory.appendingPathComponent("goodreads_library_export.csv").path
        try table.write(to: edited)
        let second = try importing([edited], library: library, in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 new, 1 changed (rating 1)"), "\(second.stderr)")
        #expect(try LibraryStore(path: library).counts().records == records)
    }

    // A 20,000-row import, then for each crash point a killed run, a rerun and two more runs: about
    // 30 s on a loaded 2-core machine; the guard is 10× that.
    @Test("Killed with SIGKILL while a newer export is applied, the same command again finishes it: its changes applied whole or not at all, each once, no record doubled, the file complete",
          .timeLimit(.minutes(7)))
    func reimportResumesAfterKill() throws {
        let rows = 20_000
        let directory = try CLI.temporaryDirectory()
        let firstLibrary = directory.appendingPathComponent("first.sqlite").path
        let first = directory.appendingPathComponent("export-1.csv")
        try CLI.writeGoodreadsExport(rows: rows, to: first)
        #expect(try importing([first.path], library: firstLibrary, in: directory).status == 0)
        // The newer export: every 4th book rated 5 (was 0), and 100 books added at the end.
        let text = try String(contentsOf: first, encoding: .utf8)
        var newer = ""
        newer.reserveCapacity(text.utf8.count + 20_000)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let comma = line.firstIndex(of: ","), let id = Int(line[..<comma]), id % 4 == 0 {
                newer += line.replacingOccurrences(of: ",0,4.00,Pub,", with: ",5,4.00,Pub,") + "\n"
            } else if !line.isEmpty {
                newer += line + "\n"
            }
        }
        for id in (rows + 1)...(rows + 100) {
            newer += "\(id),New Book \(id),Someone,\"Someone\",,,,0,4.00,Pub,Paperback,300,2001,2001,,2020/01/01,,,to-read,,,,1,,,0,,,,,\n"
        }
        let second = directory.appendingPathComponent("export-2.csv")
        try newer.write(to: second, atomically: true, encoding: .utf8)
        // The kill lands right after the run's n-th committed transaction (the writer's fault
        // injection), so where it lands does not depend on the machine's speed. The file's new and
        // changed rows wait until it is read whole (an older export is refused) and are written in
        // one transaction, the fourth: before it, after it, and after the file is marked complete.
        var ratedAtKill: Set<Int> = []
        for crashPoint in [2, 4, 6] {
            let library = directory.appendingPathComponent("library-\(crashPoint).sqlite").path
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: firstLibrary + suffix) {
                try FileManager.default.copyItem(atPath: firstLibrary + suffix, toPath: library + suffix)
            }
            let arguments = ["import", second.path, "--no-enrich", "--library", library, "--progress", "none"]
            var environment = ProcessInfo.processInfo.environment
            environment["BOOKPIPE_TEST_CRASH_AFTER_COMMITS"] = String(crashPoint)
            let killed = try CLI.run(arguments, in: directory, environment: environment)
            #expect(killed.wasSignaled && killed.status == SIGKILL,
                    "transaction \(crashPoint): the run had ended before it (\(killed.stderr))")
            let ratedBeforeRerun = try Self.rated(library)
            ratedAtKill.insert(ratedBeforeRerun)

            let rerun = try CLI.run(arguments, in: directory)
            #expect(rerun.status == 0, "\(rerun.stderr)")
            if ratedBeforeRerun == 0 {
                #expect(rerun.stderr.contains("100 new, 5,000 changed (rating 5,000), 15,000 unchanged"), "\(rerun.stderr)")
            } else {
                #expect(rerun.stderr.contains("already imported") || rerun.stderr.contains(" 0 new, 0 changed, 20,000 unchanged, 100 already stored"),
                        "\(rerun.stderr)")
            }
            let store = try LibraryStore(path: library)
            #expect(try store.counts().records == rows + 100)
            var rated: [String] = []
            var ids = Set<String>()
            try store.forEachRecord(where: nil) { record in
                if record.rating == 5 { rated.append(record.id) }
                ids.insert(record.listEntry ?? record.id)
            }
            #expect(rated.count == rows / 4)
            let logged = try rated.map { try store.recordChanges(recordID: $0).filter { $0.field == "rating" }.count }
            #expect(logged.allSatisfy { $0 == 1 }, "each change logged once")
            #expect(ids.count == rows + 100, "one record per entry")
            // Complete, and it stays complete: the same command twice more changes nothing.
            for _ in 0..<2 {
                let again = try CLI.run(arguments, in: directory)
                #expect(again.stderr.contains("already imported (\(rows + 100) rows); nothing changed."), "\(again.stderr)")
            }
        }
        // Never a part of the changes: none of them before the kill, or all.
        #expect(ratedAtKill == [0, rows / 4], "\(ratedAtKill)")
    }

    /// Records rated 5 (read from the file, which may be mid-write).
    static func rated(_ library: String) throws -> Int {
        var count = 0
        try LibraryStore(path: library, access: .readOnly).forEachRecord(where: nil) { if $0.rating == 5 { count += 1 } }
        return count
    }

    @Test("With enrichment on, a re-import looks up again only the records whose title, authors, ISBN or year changed; a changed shelf keeps the match")
    func reimportEnrichesOnlyWhatMatchingReads() async throws {
        let books = FakeBook.generated(count: 8, seed: 5)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        let directory = try CLI.temporaryDirectory()
        let pipeline = directory.appendingPathComponent("import.yaml")
        try """
            name: quick-import
            source:
              stage: read-csv
              with:
                files: $inputs
            steps:
              - stage: normalize-records
              - stage: store-records
                on-failure: stop
              - stage: enrich-records
                with:
                  sources: [openlibrary]
                  openlibraryRate: 200
              - stage: save-enrichment
                on-failure: stop

            """.write(to: pipeline, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        func run(_ input: URL) throws -> CLI.Result {
            try CLI.run(["run", pipeline.path, input.path, "--openlibrary-url", services.baseURL, "--library", library,
                         "--progress", "none"], in: directory)
        }
        let first = directory.appendingPathComponent("export-1.csv")
        try EnrichCommandTests.writeExport(books, to: first)
        #expect(try run(first).status == 0)
        let store = try LibraryStore(path: library)
        var ids: [String] = []
        try store.forEachRecord(where: nil) { ids.append($0.id) }
        #expect(try store.counts().byStatus[.enriched] == books.count)
        let before = try store.enrichedAt(recordIDs: ids)

        var table = try Table(path: first.path)
        try table.set("Exclusive Shelf", row: 0, to: "to-read")
        try table.set("Title", row: 1, to: table.rows[1][try table.column("Title")] + " (Anniversary Edition)")
        let second = directory.appendingPathComponent("export-2.csv")
        try table.write(to: second.path)
        let result = try run(second)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("0 new, 2 changed (title 1, shelf 1), 6 unchanged"), "\(result.stderr)")
        let after = try store.enrichedAt(recordIDs: ids)
        let relooked = ids.filter { after[$0] != before[$0] }
        #expect(relooked == [ids[1]], "only the record whose title changed was looked up again")
        #expect(try store.counts().byStatus[.enriched] == books.count)
        let shelved = try #require(try store.records(ids: [ids[0]]).first)
        #expect(shelved.shelf == "to-read")
        #expect(shelved.enrichment?.match != nil, "a changed shelf keeps the match")
    }

    @Test("An export and its newer version in one command: the newer one updates the entries the first brought, in the same run")
    func bothExportsInOneRun() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        var table = try Table(path: Self.sample)
        try table.set("My Rating", row: 3, to: "1")
        let newer = directory.appendingPathComponent("newer.csv").path
        try table.write(to: newer)
        let result = try importing([Self.sample, newer], library: library, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("0 new, 1 changed (rating 1), 58 unchanged"), "\(result.stderr)")
        #expect(try LibraryStore(path: library).counts().records == 59)
    }

    @Test("Two exports of one list in one command with --prune: a book the older lacks but the newer holds is kept; a rejected row means nothing is called gone")
    func pruneAcrossExportsAndRejections() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try importing([Self.sample], library: library, in: directory).status == 0)
        let full = try Table(path: Self.sample)
        var october = full
        let lacking = october.rows.remove(at: 5)
        let octoberPath = directory.appendingPathComponent("october.csv").path
        try october.write(to: octoberPath)
        var november = full
        november.rows.remove(at: 7)
        let novemberPath = directory.appendingPathComponent("november.csv").path
        try november.write(to: novemberPath)
        let both = try importing([octoberPath, novemberPath], ["--prune"], library: library, in: directory)
        #expect(both.status == 0, "\(both.stderr)")
        let store = try LibraryStore(path: library)
        var titles: [String] = []
        try store.forEachRecord(where: nil) { titles.append($0.title) }
        #expect(titles.contains(lacking[try full.column("Title")]), "the newer export holds it")
        #expect(!titles.contains(full.rows[7][try full.column("Title")]), "the newest export lacks it: pruned")
        #expect(titles.count == 58)

        // A row the reader rejects could be any entry: nothing is called gone.
        let text = try String(contentsOfFile: novemberPath, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let broken = ([lines[0]] + lines[1...3].dropLast() + ["\"unclosed,quote"] + lines[4...]).joined(separator: "\n")
        let brokenPath = directory.appendingPathComponent("december.csv").path
        try broken.replacingOccurrences(of: "Circe", with: "Circe ").write(toFile: brokenPath, atomically: true, encoding: .utf8)
        let rejected = try importing([brokenPath], ["--prune"], library: library, in: directory)
        #expect(rejected.stderr.contains("rows were rejected, so no entry of the list \"goodreads\" is called gone"), "\(rejected.stderr)")
        #expect(try store.counts().records == 58)
    }

    @Test("A small list a month later, most rows with a new shelf, rating or date, is no other list; --prune of more than half the list needs --yes")
    func ordinaryMonthAndPruneGuard() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        var table = try Table(path: Self.sample)
        table.rows = Array(table.rows.prefix(15))
        let first = directory.appendingPathComponent("small.csv").path
        try table.write(to: first)
        #expect(try importing([first], library: library, in: directory).status == 0)
        for row in table.rows.indices {
            table.rows[row][try table.column("Exclusive Shelf")] = "read"
            table.rows[row][try table.column("My Rating")] = "5"
        }
        let month = directory.appendingPathComponent("small-month.csv").path
        try table.write(to: month)
        let updated = try importing([month], library: library, in: directory)
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(!updated.stderr.contains("another list"))

        table.rows = Array(table.rows.prefix(5))
        let few = directory.appendingPathComponent("small-few.csv").path
        try table.write(to: few)
        let refused = try importing([few], ["--prune"], library: library, in: directory)
        #expect(refused.stderr.contains("not removed: more than half of the list"), "\(refused.stderr)")
        #expect(try LibraryStore(path: library).counts().records == 15)
        // The same file again is already imported; a newer copy with --prune --yes removes them.
        try (try String(contentsOfFile: few, encoding: .utf8) + "\n").write(toFile: few, atomically: true, encoding: .utf8)
        let confirmed = try importing([few], ["--prune", "--yes"], library: library, in: directory)
        #expect(confirmed.stderr.contains("(10 removed)"), "\(confirmed.stderr)")
        #expect(try LibraryStore(path: library).counts().records == 5)
    }

    @Test("A newer export read again with other columns (--key) updates the same entries: nothing doubled")
    func rereadNewerExport() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try importing([Self.sample], library: library, in: directory).status == 0)
        var table = try Table(path: Self.sample)
        try table.set("My Rating", row: 0, to: "1")
        var added = table.rows[2]
        added[try table.column("Book Id")] = "424242"
        added[try table.column("Title")] = "Another Book"
        added[try table.column("ISBN")] = ""
        added[try table.column("ISBN13")] = ""
        table.rows.append(added)
        let newer = directory.appendingPathComponent("newer.csv").path
        try table.write(to: newer)
        #expect(try importing([newer], library: library, in: directory).status == 0)
        #expect(try LibraryStore(path: library).counts().records == 60)
        let again = try importing([newer], ["--key", "Book Id"], library: library, in: directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("imported before with other columns"), "\(again.stderr)")
        #expect(try LibraryStore(path: library).counts().records == 60, "read again, the rows update the same records")
    }
}
