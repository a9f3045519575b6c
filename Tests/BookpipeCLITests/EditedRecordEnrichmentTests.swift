import Foundation
import Testing

/// What `review edit` and `review choose` mean for `bookpipe enrich`, through the binary on the
/// sample scan and the sample catalogue (offline): a corrected detection is matched from the
/// correction, a match a person chose is kept.
@Suite(.timeLimit(.minutes(5)))
struct EditedRecordEnrichmentTests {
    static let catalogDump = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path
    static let library = ["--library", "lib.sqlite"]
    static let offline = ["--offline", "--catalog", "catalog.sqlite", "--progress", "none"]

    /// A scan folder with the sample catalogue imported (`catalog.sqlite`) and the sample scan
    /// imported into `lib.sqlite`, enriched unless `enrich` is false.
    static func scanLibrary(enrich: Bool) throws -> URL {
        let directory = try ReviewCommandTests.scanFolder()
        let catalog = try CLI.run(["catalog", "import", catalogDump, "--catalog", "catalog.sqlite", "--progress", "none"],
                                  in: directory)
        #expect(catalog.status == 0, "\(catalog.stderr)")
        let imported = try CLI.run(["import-scan", "scan.json"] + (enrich ? offline : ["--no-enrich", "--progress", "none"])
                                   + library, in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        return directory
    }

    /// The id of the queued item whose title is `title`.
    static func queuedID(_ title: String, kind: String? = nil, in directory: URL) throws -> String? {
        let list = try CLI.run(["review", "list", "--json"] + (kind.map { ["--kind", $0] } ?? []) + library, in: directory)
        let items = try CLI.jsonLines(list.stdout)
        return items.first { $0["title"] as? String == title }?["id"] as? String
    }

    /// The export's object of record `id` (`export --format jsonl`).
    static func exported(_ id: String, in directory: URL) throws -> [String: Any] {
        let export = try CLI.run(["export", "--format", "jsonl"] + library, in: directory)
        #expect(export.status == 0, "\(export.stderr)")
        for line in export.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            if object["id"] as? String == id { return object }
        }
        Issue.record("no exported object has the id \(id)")
        return [:]
    }

    static func enrich(_ options: [String] = [], in directory: URL) throws -> CLI.Result {
        let result = try CLI.run(["enrich"] + options + offline + library, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    @Test("A misread spine corrected with review edit is matched to the corrected book by enrich and by enrich --all: the export's match, provenance and wingtip row name it")
    func correctedDetectionIsMatchedAgain() throws {
        let directory = try Self.scanLibrary(enrich: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let id = try #require(try Self.queuedID("The Left Hand of Darkness", in: directory))
        #expect((try Self.exported(id, in: directory)["match"] as? [String: Any])?["title"] as? String == "The Left Hand of Darkness")

        // Corrected to a book the shelf does not hold already (the wingtip layout has one row per
        // book: a second "It" would share the row of the shelf's own).
        let edit = try CLI.run(["review", "edit", id, "--title", "The Shining", "--author", "Stephen King"] + Self.library,
                               in: directory)
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(edit.stderr == "edited \(id): The Shining — Stephen King (locked against enrichment; "
                + "not matched until `bookpipe enrich` looks it up from these)\n", "\(edit.stderr)")
        // Until then the match of the misread title is not exported as if current.
        let waiting = try Self.exported(id, in: directory)
        #expect(waiting["match"] is NSNull && waiting["status"] as? String == "pending", "\(waiting)")

        for options in [[], ["--all"]] {
            let enriched = try Self.enrich(options, in: directory)
            #expect(enriched.stderr.contains(options.isEmpty ? "enriched in this run: 1 rows (1 enriched)" : "enriched in this run: 12 rows"),
                    "\(enriched.stderr)")
            let object = try Self.exported(id, in: directory)
            let match = try #require(object["match"] as? [String: Any], "\(object)")
            #expect(match["workKey"] as? String == "/works/OL900047W" && match["title"] as? String == "The Shining", "\(match)")
            #expect(match["authors"] as? [String] == ["Stephen King"])
            #expect(object["title"] as? String == "The Shining" && object["authors"] as? [String] == ["Stephen King"])
            #expect(object["status"] as? String == "enriched" && object["reviewStatus"] as? String == "userEdited")
            let provenance = try #require(object["provenance"] as? [String: String])
            #expect(provenance["title"] == "person" && provenance["authors"] == "person" && provenance["match"] == "catalog",
                    "\(provenance)")
        }
        let wingtip = try CLI.run(["export", "--format", "wingtip", "--output", "wingtip.csv"] + Self.library, in: directory)
        #expect(wingtip.status == 0, "\(wingtip.stderr)")
        let rows = try String(contentsOf: directory.appendingPathComponent("wingtip.csv"), encoding: .utf8)
        #expect(rows.contains("\r\n,The Shining,Stephen King,,,,0.31\r\n"), "\(rows)")
        #expect(!rows.contains("Left Hand"), "\(rows)")
        #expect(try Self.queuedID("The Shining", in: directory) == nil, "a person checked it: it stays out of the queue")
    }

    @Test("The order of docs/review.md (import --no-enrich, then review edit): a plain enrich looks the edited record up from the edit instead of leaving it pending")
    func editBeforeAnyEnrichment() throws {
        let directory = try Self.scanLibrary(enrich: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let id = try #require(try Self.queuedID("STATION ELEVEN", in: directory))
        let edit = try CLI.run(["review", "edit", id, "--title", "Station Eleven", "--author", "Emily St. John Mandel"]
                               + Self.library, in: directory)
        #expect(edit.status == 0, "\(edit.stderr)")
        let enriched = try Self.enrich(in: directory)
        #expect(enriched.stderr.contains("enriched in this run: 12 rows"), "\(enriched.stderr)")
        let object = try Self.exported(id, in: directory)
        #expect(object["status"] as? String == "enriched", "\(object)")
        #expect((object["match"] as? [String: Any])?["workKey"] as? String == "/works/OL900063W", "\(object)")
        #expect(object["title"] as? String == "Station Eleven" && object["reviewStatus"] as? String == "userEdited")
    }

    @Test("A match a person chose (review choose N, then --none) survives enrich --all; an edited record whose new lookup is unsure is queued as a match")
    func chosenMatchSurvivesAndUnsureEditIsQueued() throws {
        let directory = try Self.scanLibrary(enrich: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let omens = try #require(try Self.queuedID("GOOD OMENS", kind: "match", in: directory))
        // The spine reads one author "GAIMAN PRATCHETT", which agrees with none of the candidate's:
        // with no terminal to ask on, choosing it needs --yes, and nothing changes without it.
        let unconfirmed = try CLI.run(["review", "choose", omens, "1"] + Self.library, in: directory)
        #expect(unconfirmed.status == 1)
        #expect(unconfirmed.stderr.contains("is by Terry Pratchett, Neil Gaiman, not by GAIMAN PRATCHETT as the row says; add --yes"),
                "\(unconfirmed.stderr)")
        #expect(try Self.queuedID("GOOD OMENS", kind: "match", in: directory) == omens)
        let choose = try CLI.run(["review", "choose", omens, "1", "--yes"] + Self.library, in: directory)
        #expect(choose.status == 0, "\(choose.stderr)")
        _ = try Self.enrich(["--all"], in: directory)
        var object = try Self.exported(omens, in: directory)
        #expect((object["match"] as? [String: Any])?["workKey"] as? String == "/works/OL900062W", "\(object)")
        #expect((object["provenance"] as? [String: String])?["match"] == "person")

        let none = try CLI.run(["review", "choose", omens, "--none"] + Self.library, in: directory)
        #expect(none.status == 0, "\(none.stderr)")
        _ = try Self.enrich(["--all"], in: directory)
        object = try Self.exported(omens, in: directory)
        #expect(object["match"] is NSNull && object["status"] as? String == "notFound", "\(object)")
        #expect((object["provenance"] as? [String: String])?["match"] == "person")

        // A spine corrected to a title the catalogue only half knows: the new lookup is unsure, so
        // the person is asked to choose (the match queue), as for any record.
        let spine = try #require(try Self.queuedID("The Left Hand of Darkness", kind: "scan", in: directory))
        let edit = try CLI.run(["review", "edit", spine, "--title", "GOOD OMENS", "--author", "GAIMAN PRATCHETT"] + Self.library,
                               in: directory)
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try Self.queuedID("GOOD OMENS", kind: "match", in: directory) == nil)
        _ = try Self.enrich(in: directory)
        #expect(try Self.queuedID("GOOD OMENS", kind: "match", in: directory) == spine)
    }
}
