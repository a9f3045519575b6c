import BookpipeCore
import BookpipeStore
import Foundation
import Testing

/// One book in two lists, through the binary: the samples share Circe (Goodreads and StoryGraph).
@Suite(.serialized, .timeLimit(.minutes(5))) struct BookLinkCommandTests {
    @Test("The same ISBN-13 in a Goodreads and a StoryGraph export is one book: stats counts it once, show says why; unlink and link are a person's decisions, logged")
    func oneBookTwoLists() throws {
        let directory = try CLI.temporaryDirectory()
        let library = directory.appendingPathComponent("library.sqlite").path
        let samples = CLI.repositoryRoot.appendingPathComponent("samples")
        let imported = try CLI.run(["import", samples.appendingPathComponent("goodreads_library_export.csv").path,
                                    samples.appendingPathComponent("storygraph_export.csv").path, "--no-enrich",
                                    "--library", library, "--progress", "none"], in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let stats = try CLI.run(["stats", "--library", library], in: directory)
        #expect(stats.stdout.contains("70 records") && stats.stdout.contains("  books: 69 (1 record is the same book"), "\(stats.stdout)")

        let listed = try CLI.run(["list", "isbn:9780316556347", "--json", "--library", library], in: directory)
        let ids = listed.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
        }
        #expect(ids.count == 2, "\(listed.stdout)")
        guard ids.count == 2 else { return }
        let shown = try CLI.run(["show", ids[0], "--library", library], in: directory)
        #expect(shown.stdout.contains("same book: \(ids[1]) (storygraph) — same ISBN-13 9780316556347"), "\(shown.stdout)")

        // Every export names the book: both entries carry the first one's id; the others carry none.
        let exported = try CLI.run(["export", "--format", "jsonl", "--library", library], in: directory)
        let objects = exported.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(objects.count == 70)
        let books = objects.compactMap { object -> (String, String)? in
            guard let book = object["book"] as? String, let id = object["id"] as? String else { return nil }
            return (id, book)
        }
        #expect(books.map(\.0).sorted() == ids.sorted() && books.allSatisfy { $0.1 == ids.min() }, "\(books)")
        #expect(Set(objects.map { ($0["book"] as? String) ?? ($0["id"] as? String ?? "") }).count == 69)
        let csv = try CLI.run(["export", "--format", "csv", "--library", library], in: directory)
        #expect(csv.stdout.hasPrefix("id,") && csv.stdout.contains(",provenance,book\r\n"))

        // The listing counts books once too: each listed record names its book, and --books prints
        // a book once.
        let both = try CLI.run(["list", "isbn:9780316556347", "--fields", "id,book", "--library", library], in: directory)
        #expect(both.stdout.split(separator: "\n").count == 2, "\(both.stdout)")
        #expect(both.stdout.split(separator: "\n").allSatisfy { $0.hasSuffix(Substring(ids.min()!)) }, "\(both.stdout)")
        #expect(both.stderr.contains("2 records, 1 book (records of several lists that are one book count once"), "\(both.stderr)")
        let all = try CLI.run(["list", "--books", "--json", "--library", library], in: directory)
        #expect(all.status == 0 && all.stdout.split(separator: "\n").count == 69, "\(all.stderr)")
        #expect(all.stderr.contains("69 books"), "\(all.stderr)")
        let everyRecord = try CLI.run(["list", "--library", library], in: directory)
        #expect(everyRecord.stdout.split(separator: "\n").count == 70)
        #expect(everyRecord.stderr.contains("70 records, 69 books"), "\(everyRecord.stderr)")

        let unlinked = try CLI.run(["unlink", ids[0], ids[1], "--library", library], in: directory)
        #expect(unlinked.status == 0, "\(unlinked.stderr)")
        #expect(try CLI.run(["show", ids[1], "--library", library], in: directory).stdout.contains("same book: none"))
        #expect(try CLI.run(["stats", "--library", library], in: directory).stdout.contains("  books: 70\n"))
        let linked = try CLI.run(["link", ids[1], ids[0], "--library", library], in: directory)
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(try CLI.run(["show", ids[1], "--library", library], in: directory).stdout
            .contains("same book: \(ids[0]) (goodreads) — linked by a person"))
        let changes = try LibraryStore(path: library).recordChanges(recordID: ids[0]).filter { $0.field == "book" }
        #expect(changes.map(\.kind) == [.unlinked, .linked])
        #expect(changes.allSatisfy { $0.source == "person" })

        let wrong = try CLI.run(["link", ids[0], "--library", library], in: directory)
        #expect(wrong.status == 2)
        let missing = try CLI.run(["link", ids[0], "ffffffff:1", "--library", library], in: directory)
        #expect(missing.status == 1 && missing.stderr.contains("no record ffffffff:1"), "\(missing.stderr)")
    }
}
