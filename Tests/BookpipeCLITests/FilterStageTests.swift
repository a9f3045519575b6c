import BookpipeLibrary
import BookpipeTesting
import Foundation
import Testing

/// The `filter` and `dedupe-records` steps of pipeline files, through the built binary on real
/// exports from `../shared/fixtures/real`: a filter and `bookpipe list` with the same query pick
/// the same records, and deduplicating by ISBN-13 keeps as many records as the library has books.
@Suite(.timeLimit(.minutes(15)), .enabled(if: TestFixtures.sharedAvailable))
struct FilterStageTests {
    static let files = ["goodreads_31col_de.csv", "storygraph_23col_crlf.csv"]

    /// A pipeline that reads the files, normalises, runs `steps` and writes JSON Lines to `out.jsonl`.
    static func exportPipeline(_ steps: String) -> String {
        """
        name: filtered-export
        source:
          stage: read-csv
          with:
            files: $inputs
        steps:
          - stage: normalize-records
        \(steps)
          - stage: write-export
            with:
              format: jsonl
              output: out.jsonl
        """
    }

    /// `1123` → `1,123`, as the summary writes counts.
    static func grouped(_ value: Int) -> String {
        value >= 1000 ? "\(value / 1000),\(String(format: "%03d", value % 1000))" : "\(value)"
    }

    /// The `id`s of a JSON Lines text.
    static func ids(_ text: String) throws -> [String] {
        try CLI.jsonLines(text).compactMap { $0["id"] as? String }
    }

    @Test("A filter step and `bookpipe list` with the same query pick the same records of the same files")
    func filterAgreesWithList() throws {
        let directory = try ListCommandTests.imported(Self.files)
        defer { try? FileManager.default.removeItem(at: directory) }
        let queries = ["author:garcia", "shelf:to-read ^rating:<4", "year:1940..1950", "orwell", "title:\"the road\"",
                       "isbn:978", "isbn:invalid", "missing:year", "missing:publisher ^file:storygraph", "rating:>=4.5",
                       "file:storygraph shelf:read", "review:waiting", "status:pending ^missing:isbn", "a", "der"]
        var nonEmpty = 0
        for (index, query) in queries.enumerated() {
            let pipeline = "filter-\(index).yaml"
            try Self.exportPipeline("""
                  - stage: filter
                    with:
                      query: '\(query)'
                """).write(to: directory.appendingPathComponent(pipeline), atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("out.jsonl"))
            let run = try CLI.run(["run", pipeline] + Self.files + ["--progress", "none"], in: directory)
            #expect(run.status == 0, "\(query): \(run.stderr)")
            let filtered = try Self.ids(try String(contentsOf: directory.appendingPathComponent("out.jsonl"), encoding: .utf8))
            let listed = try CLI.run(["list"] + LibraryQuery.tokens(query) + ["--json"] + ListCommandTests.library, in: directory)
            #expect(listed.status == (filtered.isEmpty ? 1 : 0), "\(query): \(listed.stderr)")
            #expect(filtered == (try Self.ids(listed.stdout)), "\(query): the filter and list differ")
            #expect(run.stderr.contains("filter \(query): \(Self.grouped(filtered.count)) of 1,644 records passed"), "\(run.stderr)")
            if !filtered.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty >= 12)
    }

    @Test("dedupe-records by ISBN-13 keeps one record per book, as many as `list --books` counts, and says what it dropped")
    func dedupeKeepsOneRecordPerBook() throws {
        let directory = try ListCommandTests.imported(Self.files)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.exportPipeline("""
              - stage: dedupe-records
                with:
                  by: [isbn13]
            """).write(to: directory.appendingPathComponent("dedupe.yaml"), atomically: true, encoding: .utf8)
        let run = try CLI.run(["run", "dedupe.yaml"] + Self.files + ["--progress", "none"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        let kept = try Self.ids(try String(contentsOf: directory.appendingPathComponent("out.jsonl"), encoding: .utf8))
        let books = try CLI.run(["list", "--books"] + ListCommandTests.library, in: directory)
        #expect(books.stderr.hasSuffix("\(kept.count) books\n") && kept.count < 1644, "\(kept.count): \(books.stderr)")
        #expect(Set(kept).count == kept.count)
        #expect(run.stderr.contains("dedupe-records: \(Self.grouped(1644 - kept.count)) of 1,644 records dropped as the same book as an earlier one (same ISBN-13 \(1644 - kept.count))"),
                "\(run.stderr)")
    }
}
