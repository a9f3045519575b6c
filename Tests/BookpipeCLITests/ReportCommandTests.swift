import Foundation
import Testing

/// `bookpipe report`, `search` and `show` through the built binary, on the samples imported with
/// `--no-enrich` into a temporary library (run 1: the Goodreads export, run 2: the StoryGraph one).
@Suite(.timeLimit(.minutes(5)))
struct ReportCommandTests {
    static let goodreadsHash = "1bd891400412d29e6e6d2c6d21e88ceb"
    static let storygraphHash = "04f6615162bfda06272c635a76535f04"
    static let library = ["--library", "lib.sqlite"]

    /// A folder holding the two samples and a library of both, imported in two runs.
    static func importedSamples() throws -> URL {
        let directory = try CLI.temporaryDirectory()
        for name in ["goodreads_library_export.csv", "storygraph_export.csv"] {
            try FileManager.default.copyItem(at: CLI.repositoryRoot.appendingPathComponent("samples/\(name)"),
                                             to: directory.appendingPathComponent(name))
            let imported = try CLI.run(["import", name, "--no-enrich", "--progress", "none"] + library, in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        return directory
    }

    static let summary = """
        data quality of lib.sqlite (all records):
          rows: 70 records (0 enriched, 0 needsCandidateSelection, 0 notFound, 0 failed, 70 pending), 0 rejected
          completeness: isbn 92.9 %, cover 0.0 %, year 84.3 %, pages 84.3 %, publisher 84.3 %, author 100.0 %
          matches: 0 accepted, 0 waiting for a person to choose
          validity: 0 invalid ISBN, 0 ISBN-10/13 disagree, 0 impossible years, 0 unreadable dates
          duplicates: 2 books have a duplicate (1 group, 2 records; 0 sameISBN13, 0 sameWork, 1 sameTitleAndFirstAuthor)
          review: 0 waiting (0 scan detections, 0 uncertain matches), 0 reviewed (0 corrected, 0 verified as they were); encoding repairs in 0 records
          runs: 2; last #2 finished <time> (<duration>)
          findings (code, count, what to do):
            warning duplicate.book 1 — bookpipe show ID (names the other records); bookpipe link ID ID or bookpipe remove ID

        """

    /// The summary with the last run's start time and duration replaced by placeholders.
    static func timeless(_ summary: String) -> String {
        summary.replacingOccurrences(of: #"finished \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+ s\)"#,
                                     with: "finished <time> (<duration>)", options: .regularExpression)
    }

    @Test("report writes the HTML, JSON and CSV files and prints the terminal summary; --run 2 covers the second import only; an unknown run exits 2")
    func reportFiles() throws {
        let directory = try Self.importedSamples()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["report", "--html", "r.html", "--json", "r.json", "--csv", "r.csv"] + Self.library, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.timeless(result.stdout) == Self.summary)
        // Each file written is named, with what it holds (the figures are the JSON report's).
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("r.json"))) as? [String: Any])
        let records = try #require((written["rows"] as? [String: Any])?["records"] as? Int)
        let findings = try #require(written["findings"] as? [String: Any])
        let total = try #require(findings["byCode"] as? [[String: Any]]).compactMap { $0["count"] as? Int }.reduce(0, +)
        let listed = try #require(findings["items"] as? [[String: Any]]).compactMap { ($0["rows"] as? [Any])?.count }.reduce(0, +)
        #expect(total > 0 && listed > 0)
        #expect(result.stderr == """
            wrote r.json (JSON report: \(records) records, \(total) finding\(total == 1 ? "" : "s"))
            wrote r.html (HTML report: \(records) records, \(total) finding\(total == 1 ? "" : "s"))
            wrote r.csv (problem rows: \(listed) rows)

            """)

        let html = try String(contentsOf: directory.appendingPathComponent("r.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>") || html.hasPrefix("<!doctype html>"), "\(html.prefix(40))")
        #expect(html.contains("<svg") && html.contains("Dune (Dune, #1)"))
        // Every figure is on the page, not only in the JSON: validity, duplicates by kind, the queue's age.
        for figure in ["unreadable dates", "impossible years", "groups by reason: sameWork", "oldest waiting / median",
                       "records with a repaired field", "mean score of accepted matches"] {
            #expect(html.contains(figure), "\(figure)")
        }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("r.json"))) as? [String: Any]
        #expect(json?["schemaVersion"] as? Int == 2)
        #expect((json?["rows"] as? [String: Any])?["records"] as? Int == 70)
        let csv = try String(contentsOf: directory.appendingPathComponent("r.csv"), encoding: .utf8)
        let g = Self.goodreadsHash, s = Self.storygraphHash
        #expect(csv == """
            severity,code,field,record_id,location,title,message,action\r
            warning,duplicate.book,,\(g):14,goodreads_library_export.csv:16,"Dune (Dune, #1)",2 books (2 records): the same title and first author (dune / frank herbert),bookpipe show ID (names the other records); bookpipe link ID ID or bookpipe remove ID\r
            warning,duplicate.book,,\(s):8,storygraph_export.csv:9,Dune,2 books (2 records): the same title and first author (dune / frank herbert),bookpipe show ID (names the other records); bookpipe link ID ID or bookpipe remove ID\r

            """)

        let run = try CLI.run(["report", "--run", "2"] + Self.library, in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("""
            data quality of lib.sqlite (run 2):
              rows: 11 records (0 enriched, 0 needsCandidateSelection, 0 notFound, 0 failed, 11 pending), 0 rejected

            """), "\(run.stdout)")
        let unknown = try CLI.run(["report", "--run", "99"] + Self.library, in: directory)
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "lib.sqlite: no run 99. The report's runs table lists them: bookpipe report --json -.\n")
    }

    @Test("report --json - writes the JSON to standard output and the summary to standard error; no library exits 1")
    func reportToStandardOutput() throws {
        let directory = try Self.importedSamples()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["report", "--json", "-"] + Self.library, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.timeless(result.stderr) == Self.summary)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((json?["scope"] as? [String: String]) == ["kind": "all"])
        let missing = try CLI.run(["report", "--library", "none.sqlite"], in: directory)
        #expect(missing.status == 1)
        #expect(missing.stderr == "none.sqlite: no library here. Import something first, or pass --library.\n")
    }

    @Test("search finds by title, author, ISBN-10 and ISBN-13 (hyphens or not), whatever the case and accents; no match says so; ranking only the first matches says so; no match exits 1")
    func search() throws {
        let directory = try Self.importedSamples()
        defer { try? FileManager.default.removeItem(at: directory) }
        func search(_ words: String...) throws -> String {
            let result = try CLI.run(["search"] + words + Self.library, in: directory)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout
        }
        let norwegianWood = "\(Self.goodreadsHash):2  pending  Norwegian Wood — Haruki Murakami; Jay Rubin  ISBN 9780375704024  goodreads_library_export.csv:3\n"
        #expect(try search("Norwegian", "Wood") == norwegianWood)
        #expect(try search("MURAKAMI") == norwegianWood)
        #expect(try search("0375704027") == norwegianWood)
        #expect(try search("9780375704024") == norwegianWood)
        #expect(try search("MISERABLES") == "\(Self.goodreadsHash):3  pending  Les Misérables — Victor Hugo; Lee Fahnestock; Norman MacAfee  goodreads_library_export.csv:4\n")
        #expect(try search("garcia", "marquez") == "\(Self.goodreadsHash):17  pending  One Hundred Years of Solitude — Gabriel García Márquez; Gregory Rabassa  ISBN 9780060883287  goodreads_library_export.csv:19\n")
        let fifthSeason = "\(Self.storygraphHash):4  pending  The Fifth Season — N.K. Jemisin  ISBN 9780316229296  storygraph_export.csv:5\n"
        #expect(try search("0316229296") == fifthSeason)
        #expect(try search("978-0-316-22929-6") == fifthSeason)
        let json = try CLI.run(["search", "jemisin", "--json"] + Self.library, in: directory)
        #expect(json.stdout == """
            {"authors":["N.K. Jemisin"],"file":"storygraph_export.csv","id":"\(Self.storygraphHash):4","isbn13":"9780316229296","line":5,"status":"pending","title":"The Fifth Season"}

            """)
        let common = try CLI.run(["search", "the", "--limit", "1", "--rank-at-most", "2"] + Self.library, in: directory)
        #expect(common.status == 0 && common.stdout.split(separator: "\n").count == 1)
        #expect(common.stderr == "more than 2 records match: these are the best of the first 2 in library order."
            + " Add words to narrow the search.\n")
        let nothing = try CLI.run(["search", " - "] + Self.library, in: directory)
        #expect(nothing.status == 2 && nothing.stderr.contains("Give a word of the title or author, or an ISBN"))
        let none = try CLI.run(["search", "zzzz"] + Self.library, in: directory)
        #expect(none.status == 1 && none.stdout == "")
        #expect(none.stderr == "no record matches \"zzzz\"\n")
    }

    @Test("search and show print a title's control characters and bidirectional overrides as escapes, never act on them")
    func hostileTitlesOnTheTerminal() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try "Title,Author\n\"\u{1B}[2J\u{1B}[31mRED zebra\",A\n\"\rzebra over\",B\n\"zebra \u{202E}txt.exe\",C\n"
            .write(to: directory.appendingPathComponent("evil.csv"), atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import", "evil.csv", "--no-enrich", "--progress", "none", "--library", "e.sqlite"], in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let search = try CLI.run(["search", "zebra", "--library", "e.sqlite"], in: directory)
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.stdout.split(separator: "\n").count == 3)
        for unsafe in ["\u{1B}", "\r", "\u{202E}"] { #expect(!search.stdout.contains(unsafe), "\(search.stdout)") }
        #expect(search.stdout.contains("\\u{1B}[2J\\u{1B}[31mRED zebra") && search.stdout.contains("\\rzebra over")
                && search.stdout.contains("zebra \\u{202E}txt.exe"))
        let id = try #require(search.stdout.split(separator: " ").first.map(String.init))
        let show = try CLI.run(["show", id, "--library", "e.sqlite"], in: directory)
        #expect(show.status == 0, "\(show.stderr)")
        for unsafe in ["\u{1B}", "\r", "\u{202E}"] { #expect(!show.stdout.contains(unsafe), "\(show.stdout)") }
        // --json keeps the text as it is (a program reads it; JSON escapes the controls itself).
        let json = try CLI.run(["search", "zebra", "--json", "--library", "e.sqlite"], in: directory)
        #expect(json.stdout.contains("\\u001b[2J"))
    }

    @Test("show ID prints the record's story; --json gives the same story as JSON; an unknown id exits 1")
    func show() throws {
        let directory = try Self.importedSamples()
        defer { try? FileManager.default.removeItem(at: directory) }
        let id = "\(Self.goodreadsHash):2"
        let text = try CLI.run(["show", id] + Self.library, in: directory)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(6)) == [
            "\(id)  pending  review: notRouted",
            "read from goodreads_library_export.csv:3 (row 2, goodreads)",
            "entry id:11297 of the list \"goodreads\" (a newer export of the list updates this record)",
            "",
            "row as read:",
            "  Book Id: 11297",
        ])
        #expect(lines.contains("  ISBN: =\"0375704027\""))
        #expect(lines.contains("normalised: search title \"Norwegian Wood\", key \"norwegian wood\", authors Haruki Murakami; Jay Rubin, ISBN-13 9780375704024"))
        #expect(lines.contains("  isbn:9780375704024 → no answer cached (not asked, or asked of the local catalogue, whose answers are not cached)"))
        #expect(lines.contains("review history: none"))
        #expect(lines.contains("provenance: authors ← file, binding ← file, dateAdded ← file, isbn13 ← file, normalizedTitle ← file, pages ← file, publisher ← file, rating ← file, rawISBNs ← file, shelf ← file, tags ← file, title ← file, year ← file"))

        let json = try CLI.run(["show", id, "--json"] + Self.library, in: directory)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.split(separator: "\n").count == 1, "one object, one line: \(json.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["id"] as? String == id)
        let normalized = try #require(object["normalized"] as? [String: Any])
        #expect(normalized["isbn13"] as? String == "9780375704024" && normalized["titleKey"] as? String == "norwegian wood")
        #expect((object["provenance"] as? [String: String])?["title"] == "file")
        // The same provenance as the export's, key for key.
        let export = try CLI.run(["export", "--format", "jsonl"] + Self.library, in: directory)
        let exported = try export.stdout.split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["id"] as? String == id }
        #expect(object["provenance"] as? [String: String] == exported?["provenance"] as? [String: String])
        let raw = try #require(object["raw"] as? [[String: String]])
        #expect(raw[1] == ["column": "Title", "value": "Norwegian Wood"])

        let unknown = try CLI.run(["show", "nope:1"] + Self.library, in: directory)
        #expect(unknown.status == 1 && unknown.stdout == "")
        #expect(unknown.stderr == "lib.sqlite: no record nope:1. Find ids with `bookpipe search TEXT`.\n")
    }
}
