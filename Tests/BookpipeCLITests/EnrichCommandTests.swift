import BookpipeCore
import BookpipeStore
import BookpipeTesting
import Foundation
import Testing

/// `bookpipe import` with enrichment and `bookpipe enrich`, run as the built binary against the
/// local catalogue and against fake Open Library / Google Books servers on loopback.
@Suite(.serialized) struct EnrichCommandTests {
    static let goodreads = CLI.repositoryRoot.appendingPathComponent("samples/goodreads_library_export.csv").path
    static let storygraph = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
    static let catalogDump = CLI.repositoryRoot.appendingPathComponent("samples/catalog/openlibrary-sample.txt").path

    /// A pipeline file with the default chain but retry delays short enough for a test.
    static let quickPipeline = """
        name: quick-enrich
        source:
          stage: library-records
        steps:
          - stage: enrich-records
            concurrency: 2
            with:
              sources: [openlibrary]
              openlibraryRate: 200
              rateLimitedBackoff: 10ms
              unavailableDelay: 10ms
              unavailableRequeues: 1
              transportAttempts: 2
              requestTimeout: 2s
          - stage: save-enrichment
            on-failure: stop

        """

    /// `csv-import` with small batches and a faster rate, so a test can kill it mid-enrichment.
    static let smallBatchImport = """
        name: small-batch-import
        source:
          stage: read-csv
          with:
            files: $inputs
            batchSize: 20
        steps:
          - stage: normalize-records
          - stage: store-records
            on-failure: stop
          - stage: enrich-records
            with:
              sources: [openlibrary]
              openlibraryRate: 20
          - stage: save-enrichment
            on-failure: stop

        """

    /// Writes a Goodreads export of fake books (ISBN-13 on every row, or on every other row).
    static func writeExport(_ books: [FakeBook], to url: URL, isbnOnEveryRow: Bool = true) throws {
        var text = "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Recommended For,Recommended By,Owned Copies,Original Purchase Date,Original Purchase Location,Condition,Condition Description,BCID\n"
        for (index, book) in books.enumerated() {
            let title = book.title.replacingOccurrences(of: "\"", with: "\"\"")
            let author = book.authors.first ?? ""
            let isbn = isbnOnEveryRow || index.isMultiple(of: 2) ? book.isbn13s.first ?? "" : ""
            text += "\(index + 1),\"\(title)\",\(author),,,\"=\"\"\"\"\",\"=\"\"\(isbn)\"\"\",0,4.00,Pub,Paperback,300,\(book.year ?? 2000),\(book.year ?? 2000),,2020/01/01,,,read,,,,1,,,0,,,,,\n"
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    @Test("A filter before the lookups: the plan and the progress expect only the rows that pass it, and progress ends at its end",
          .timeLimit(.minutes(5)))
    func filterBeforeLookupsShrinksTheRowsExpected() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        #expect(try CLI.run(["catalog", "import", Self.catalogDump, "--catalog", catalog], in: directory).status == 0)
        #expect(try CLI.run(["import", Self.goodreads, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                            in: directory).status == 0)
        let toRead = try CLI.jsonLines(try CLI.run(["list", "shelf:to-read", "--json", "--library", "lib.sqlite"], in: directory).stdout)
        #expect(toRead.count > 0 && toRead.count < 59)
        let pipeline = directory.appendingPathComponent("to-read.yaml")
        try """
            name: enrich-to-read
            source:
              stage: library-records
            steps:
              - stage: filter
                with:
                  query: "shelf:to-read"
              - stage: enrich-records
              - stage: save-enrichment
            """.write(to: pipeline, atomically: true, encoding: .utf8)
        let run = try CLI.run(["enrich", "--pipeline", pipeline.path, "--catalog", catalog, "--offline", "--library", "lib.sqlite",
                               "--progress", "json"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("Enriching \(toRead.count) rows from catalog."), "the plan counts what the filter passes: \(run.stderr)")
        #expect(run.stderr.contains("59 records chosen (status pending); the filter steps pass those to enrich."), "\(run.stderr)")
        #expect(!run.stderr.contains("59 records to enrich"), "\(run.stderr)")
        let lines = try CLI.jsonLines(run.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.joined(separator: "\n"))
            .filter { $0["event"] as? String == "enrichment" }
        let last = try #require(lines.last)
        #expect(last["rowsExpected"] as? Int == toRead.count, "\(last)")
        #expect(last["rowsDone"] as? Int == toRead.count, "\(last)")
        #expect(lines.allSatisfy { ($0["rowsExpected"] as? Int ?? 0) >= ($0["rowsDone"] as? Int ?? 0) })
    }

    @Test("The plan counts the rows it will enrich: a file imported whole before adds none of its lines to the stored rows",
          .timeLimit(.minutes(5)))
    func planCountsAFileImportedBeforeOnce() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        #expect(try CLI.run(["catalog", "import", Self.catalogDump, "--catalog", catalog], in: directory).status == 0)
        let stored = try CLI.run(["import", Self.goodreads, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"], in: directory)
        #expect(stored.status == 0, "\(stored.stderr)")
        let again = try CLI.run(["import", Self.goodreads, "--catalog", catalog, "--offline", "--library", "lib.sqlite",
                                 "--progress", "none"], in: directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.hasPrefix("Enriching 59 rows from catalog."), "\(again.stderr)")
        #expect(again.stderr.contains("enriched in this run: 59 rows"), "\(again.stderr)")
    }

    @Test("The README's sample run: the catalogue offline matches every sample row it holds and nothing else",
          .timeLimit(.minutes(5)))
    func samplesOffline() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try CLI.run(["catalog", "import", Self.catalogDump, "--catalog", catalog], in: directory).status == 0)
        let result = try CLI.run(["import", Self.goodreads, Self.storygraph, "--catalog", catalog, "--offline",
                                  "--library", library, "--progress", "none"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("rows from catalog."))
        #expect(result.stderr.contains("enriched in this run: 70 rows"))
        let output = directory.appendingPathComponent("out.json").path
        #expect(try CLI.run(["export", "--format", "json", "--output", output, "--library", library], in: directory).status == 0)
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output)))
            as? [[String: Any]])
        #expect(objects.count == 70)
        // samples/expected-matches.csv: the right work for every row, none for the three absent books.
        let expected = try String(contentsOfFile: CLI.repositoryRoot.appendingPathComponent("samples/expected-matches.csv").path,
                                  encoding: .utf8)
            .split(separator: "\n").dropFirst()
        var expectedKey: [String: String] = [:]
        for line in expected {
            let fields = line.split(separator: ",", maxSplits: 2)
            guard fields.count == 3 else { continue }
            // The expected work key is the line's only /works/ key; none for books absent from the catalogue.
            let key = line.firstMatch(of: /\/works\/OL[0-9]+W/).map { String($0.output) } ?? ""
            expectedKey["\(fields[0]):\(fields[1])"] = key
        }
        for object in objects {
            let source = try #require(object["source"] as? [String: Any])
            let file = URL(fileURLWithPath: try #require(source["file"] as? String)).lastPathComponent
            let row = try #require(source["row"] as? Int)
            let match = object["match"] as? [String: Any]
            let want = try #require(expectedKey["\(file):\(row)"], "\(file) row \(row) is in expected-matches.csv")
            #expect((match?["workKey"] as? String ?? "") == want, "\(file) row \(row)")
            if match == nil {
                #expect(["notFound", "needsCandidateSelection"].contains(object["status"] as? String ?? ""))
            } else {
                #expect(object["status"] as? String == "enriched")
                #expect((match?["score"] as? Int ?? 0) >= 60)
                #expect(match?["source"] as? String == "catalog")
            }
        }
        // Candidates carry the per-field breakdown when a person must choose.
        for object in objects where object["status"] as? String == "needsCandidateSelection" {
            let candidates = try #require(object["candidates"] as? [[String: Any]])
            #expect(!candidates.isEmpty)
            #expect(candidates.allSatisfy { $0["workKey"] != nil && $0["score"] != nil && $0["breakdown"] != nil })
        }
        // JSON lines: every kind of record (matched, with candidates, not found) byte for byte as
        // JSONSerialization writes it.
        let lines = try CLI.run(["export", "--format", "jsonl", "--library", library], in: directory)
        #expect(lines.stdout.split(separator: "\n").count == 70)
        #expect(try CLI.nonCanonicalJSONLines(lines.stdout) == [])
        // The app's layout: matched books get their edition's cover, unmatched ones none.
        let wingtip = directory.appendingPathComponent("wingtip.csv").path
        #expect(try CLI.run(["export", "--format", "wingtip", "--output", wingtip, "--library", library], in: directory).status == 0)
        let rows = try String(contentsOfFile: wingtip, encoding: .utf8).components(separatedBy: "\r\n").dropFirst()
            .filter { !$0.isEmpty }
        let withCover = rows.filter { $0.hasSuffix("-M.jpg?default=false,") }  // the last column, Spine Confidence, is empty for CSV rows
        #expect(withCover.count >= 60, "most sample books are matched")
        #expect(withCover.allSatisfy { $0.contains("https://covers.openlibrary.org/b/olid/OL") || $0.contains("/b/isbn/978") })
        #expect(rows.count - withCover.count >= 3, "the books absent from the catalogue have no cover")
    }

    @Test("Killed with SIGKILL mid-enrichment, a rerun enriches every row exactly once and asks nothing twice",
          .timeLimit(.minutes(5)))
    func resumeEnrichmentAfterKill() async throws {
        let books = FakeBook.generated(count: 240, seed: 11)
        let services = FakeBookServices(books: books, configuration: .init(latency: .milliseconds(15)))
        try services.start()
        defer { services.stop() }
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("export.csv")
        try Self.writeExport(books, to: input, isbnOnEveryRow: false)
        let pipeline = directory.appendingPathComponent("import.yaml")
        try Self.smallBatchImport.write(to: pipeline, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        // 20 requests/s, batches of 20 rows, half the rows searched by title: several seconds of work.
        let arguments = ["run", pipeline.path, input.path, "--openlibrary-url", services.baseURL,
                         "--library", library, "--progress", "none"]
        let (process, _, _) = try CLI.start(arguments, in: directory)
        var enrichedBeforeKill = 0
        for _ in 0..<1000 {
            usleep(10_000)
            enrichedBeforeKill = (try? LibraryStore(path: library).counts().byStatus[.enriched]) ?? 0
            if enrichedBeforeKill > 0 { break }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let store = try LibraryStore(path: library)
        var settled = Set<String>()
        try await store.forEachRecord { record in
            if record.status != .pending, let isbn = record.normalized?.isbn13 { settled.insert(isbn) }
        }
        #expect(!settled.isEmpty, "the kill landed after some rows were enriched")
        #expect(settled.count < books.count, "the kill landed before the end")
        services.resetLog()

        let rerun = try CLI.run(arguments, in: directory)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let counts = try store.counts()
        #expect(counts.records == books.count)
        #expect(counts.duplicateIDs == 0)
        #expect(counts.byStatus[.enriched] == books.count, "\(counts.byStatus)")
        let askedAgain = services.requestLog.compactMap { $0.parameter("bibkeys") }
            .flatMap { $0.split(separator: ",").map { String($0.dropFirst("ISBN:".count)) } }
            .filter(settled.contains)
        #expect(askedAgain.isEmpty, "questions answered before the kill come from the cache: \(askedAgain.prefix(5))")
    }

    @Test("Two enrich runs on one library at once share the rows batch by batch: every row enriched once, no question asked twice",
          .timeLimit(.minutes(5)))
    func concurrentEnrichRunsClaimRows() async throws {
        let books = FakeBook.generated(count: 120, seed: 21)
        let services = FakeBookServices(books: books, configuration: .init(latency: .milliseconds(10)))
        try services.start()
        defer { services.stop() }
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("export.csv")
        try Self.writeExport(books, to: input, isbnOnEveryRow: false)
        let pipeline = directory.appendingPathComponent("quick.yaml")
        try Self.quickPipeline.write(to: pipeline, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try CLI.run(["import", input.path, "--no-enrich", "--library", library, "--progress", "none"],
                            in: directory).status == 0)
        let arguments = ["enrich", "--pipeline", pipeline.path, "--openlibrary-url", services.baseURL,
                         "--library", library, "--progress", "none"]
        // Both start at once; each claims a batch at a time, so both work.
        let first = try CLI.start(arguments, in: directory)
        let second = try CLI.start(arguments, in: directory)
        var outputs: [String] = []
        for (process, out, err) in [first, second] {
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(stderr)")
            outputs.append(stdout + stderr)
        }
        let store = try LibraryStore(path: library)
        #expect(try store.counts().byStatus[.enriched] == books.count)
        let isbns = services.requestLog.compactMap { $0.parameter("bibkeys") }.flatMap { $0.split(separator: ",").map(String.init) }
        #expect(isbns.count == Set(isbns).count, "an ISBN was asked twice")
        let searches = services.requestLog.filter { $0.path.hasSuffix("/search.json") }.map { $0.path + "?" + ($0.query ?? "") }
        #expect(searches.count == Set(searches).count, "a title was searched twice")
        #expect(isbns.count + searches.count > 0)
        // Each row was enriched by exactly one of the runs (the summaries add up to the rows).
        let done = outputs.compactMap { output -> Int? in
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("enriched in this run: ") }) else { return nil }
            return Int(line.dropFirst("enriched in this run: ".count).prefix { $0.isNumber })
        }
        #expect(done.count == 2 && done.reduce(0, +) == books.count, "\(outputs)")
        #expect(try store.claimHolders().isEmpty, "both runs released their claims")
    }

    @Test("Failed lookups stay failed (not notFound), a run where all failed exits 1, and `bookpipe enrich --failed` retries them",
          .timeLimit(.minutes(5)))
    func enrichFailedLater() async throws {
        let books = FakeBook.generated(count: 12, seed: 3)
        let services = FakeBookServices(books: books)
        try services.start()
        defer { services.stop() }
        let directory = try CLI.temporaryDirectory()
        let input = directory.appendingPathComponent("export.csv")
        try Self.writeExport(books, to: input)
        let pipeline = directory.appendingPathComponent("quick.yaml")
        try Self.quickPipeline.write(to: pipeline, atomically: true, encoding: .utf8)
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try CLI.run(["import", input.path, "--no-enrich", "--library", library, "--progress", "none"],
                            in: directory).status == 0)
        #expect(try LibraryStore(path: library).counts().byStatus[.pending] == books.count)

        services.setRandomFaults(rate: 1, seed: 1, faults: [.serviceUnavailable(retryAfter: nil)])
        let failing = try CLI.run(["enrich", "--pipeline", pipeline.path, "--openlibrary-url", services.baseURL,
                                   "--library", library, "--progress", "none"], in: directory)
        #expect(failing.status == 1, "every lookup failed: \(failing.stderr)")
        #expect(failing.stderr.hasSuffix("error: every lookup of this run failed (12 rows): is the network or the source down? "
                                         + "The rows are kept as failed; run `bookpipe enrich --failed` once the sources answer.\n"),
                "\(failing.stderr)")
        // The plan expects the requests from the rows (12 rows: 1 ISBN batch, 12 × 0.44 searches, 2 % retried); the
        // worst case of the retries the pipeline allows (1 + 4 (429) + 1 (503) + 1 (transport) attempts) is a footnote.
        #expect(failing.stderr.contains("""
              openlibrary: about 6 requests for the 12 rows that reach it (1 ISBN request, 5 title searches, 0 retries) ≈ 1 s at 200/s
            """), "\(failing.stderr)")
        #expect(failing.stderr.contains("worst case, every request retried to the policy's limit: 7× the requests.)"), "\(failing.stderr)")
        #expect(try LibraryStore(path: library).counts().byStatus[.failed] == books.count)
        #expect(try LibraryStore(path: library).counts().byStatus[.notFound] == nil)

        // Without --failed, failed rows are left alone.
        services.clearFaults()
        let plain = try CLI.run(["enrich", "--pipeline", pipeline.path, "--openlibrary-url", services.baseURL,
                                 "--library", library, "--progress", "none"], in: directory)
        #expect(plain.stderr.contains("0 records to enrich"))
        let retry = try CLI.run(["enrich", "--failed", "--pipeline", pipeline.path, "--openlibrary-url", services.baseURL,
                                 "--library", library, "--progress", "json"], in: directory)
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(try LibraryStore(path: library).counts().byStatus[.enriched] == books.count)
        // JSON progress lines carry per-source counters.
        #expect(retry.stderr.contains("\"event\":\"enrichment\""))
        #expect(retry.stderr.contains("\"name\":\"openlibrary\""))
    }

    @Test("enrich --stale, --until and --max-duration: bad values are usage errors; an overnight run offline finishes with exit 0",
          .timeLimit(.minutes(5)))
    func overnightOptions() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.sqlite").path
        let library = directory.appendingPathComponent("library.sqlite").path
        #expect(try CLI.run(["catalog", "import", Self.catalogDump, "--catalog", catalog], in: directory).status == 0)
        #expect(try CLI.run(["import", Self.goodreads, "--no-enrich", "--library", library, "--progress", "none"],
                            in: directory).status == 0)
        for bad in [["--until", "25:00"], ["--until", "7am"], ["--max-duration", "soon"], ["--stale", "old"]] {
            let result = try CLI.run(["enrich", "--library", library, "--catalog", catalog, "--offline"] + bad, in: directory)
            #expect(result.status == 64 || result.status == 2, "\(bad): \(result.stderr)")
            #expect(result.stderr.contains(bad[0]), "\(bad): \(result.stderr)")
        }
        let first = try CLI.run(["enrich", "--library", library, "--catalog", catalog, "--offline", "--stale", "30d",
                                 "--max-duration", "8h", "--progress", "none"], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("answers older than 30 d)"), "\(first.stderr)")
        #expect(!first.stderr.contains("stopped at the deadline"))
        // Everything was answered just now: a second overnight run has nothing stale to ask.
        let second = try CLI.run(["enrich", "--library", library, "--catalog", catalog, "--offline", "--stale", "30d",
                                  "--until", "07:00", "--progress", "none"], in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("0 records to enrich"), "\(second.stderr)")
    }
}
