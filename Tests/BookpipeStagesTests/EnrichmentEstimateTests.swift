import BookpipePipeline
import Testing
@testable import BookpipeStages

/// The plan's arithmetic (issue 23): expected requests from the rows, each source's share from the
/// library's history or the chain, retries as an expectation, time from the rates.
@Suite struct EnrichmentEstimateTests {
    static let openLibrary = EnrichmentEstimate.Source(name: "openlibrary", requestsPerSecond: 3, isbnBatchSize: 25,
                                                       attemptsPerRequest: 12)
    static let googleBooks = EnrichmentEstimate.Source(name: "googlebooks", requestsPerSecond: 1, isbnBatchSize: 1,
                                                       attemptsPerRequest: 12)

    @Test("Without history: every row reaches the first remote source, 10 % the next; ISBN rows in batches, the rest searched, 2 % retried")
    func chainWithoutHistory() throws {
        let estimates = EnrichmentEstimate.estimate(rows: 1_500, chain: [Self.openLibrary, Self.googleBooks])
        let openLibrary = try #require(estimates.first), google = try #require(estimates.last)
        // 1,500 rows: 1,050 with an ISBN → 42 batches of 25; searches 1,500 × (1 − 0.7 × 0.8) = 660.
        #expect(openLibrary.rows == 1_500 && !openLibrary.shareFromHistory)
        #expect(openLibrary.isbnRequests == 42)
        #expect(abs(openLibrary.searches - 660) < 1e-9)
        #expect(abs(openLibrary.retries - 702 * 0.02) < 1e-9)
        #expect(abs(openLibrary.seconds - 702 * 1.02 / 3) < 1e-9)
        // Google sees what Open Library leaves: 150 rows; 105 ISBNs one a request, 66 searches.
        #expect(abs(google.rows - 150) < 1e-9)
        #expect(google.isbnRequests == 105)
        #expect(abs(google.searches - 66) < 1e-9)
        // The hosts work at the same time: the busiest sets the pace.
        #expect(EnrichmentEstimate.seconds(estimates) == openLibrary.seconds)
    }

    @Test("A local catalogue first leaves 10 % of the rows to the remote sources; it needs no request itself")
    func catalogueFirst() {
        let estimates = EnrichmentEstimate.estimate(rows: 1_000, chain: [
            .init(name: "catalog", requestsPerSecond: nil), Self.openLibrary, Self.googleBooks])
        #expect(estimates.map(\.name) == ["openlibrary", "googlebooks"])
        #expect(estimates.map { ($0.rows * 1000).rounded() / 1000 } == [100, 10])
    }

    @Test("With the library's history each source's share is taken from it, not from the chain")
    func historyWins() throws {
        var openLibrary = Self.openLibrary, google = Self.googleBooks
        openLibrary.reach = 0.9
        google.reach = 0.08
        let estimates = EnrichmentEstimate.estimate(rows: 48_000, chain: [openLibrary, google])
        #expect(estimates.map(\.shareFromHistory) == [true, true])
        #expect(estimates.map(\.rows) == [43_200, 3_840])
        // 3,840 rows at Google: 2,688 ISBN requests + 3,840 × 0.44 searches, 2 % retried.
        let expected = (2_688 + 3_840 * 0.44) * 1.02
        #expect(try abs(#require(estimates.last).requests - expected) < 1e-6)
    }

    @Test("What fits before a deadline is the share of rows the time allows at the expected pace; all when the run fits")
    func rowsFitting() {
        let estimates = EnrichmentEstimate.estimate(rows: 1_500, chain: [Self.openLibrary, Self.googleBooks])
        let needed = EnrichmentEstimate.seconds(estimates)
        #expect(EnrichmentEstimate.rowsFitting(rows: 1_500, estimates: estimates, allowed: needed + 1) == 1_500)
        #expect(EnrichmentEstimate.rowsFitting(rows: 1_500, estimates: estimates, allowed: needed / 2) == 750)
        #expect(EnrichmentEstimate.rowsFitting(rows: 1_500, estimates: [], allowed: 0) == 1_500)
    }

    @Test("The plan states the expectation, the assumptions and the worst case only as a footnote")
    func planText() throws {
        let run = EnrichmentRun()
        run.register(budget: .init(source: "openlibrary", requestsPerSecond: 3, isbnBatchSize: 25, attemptsPerRequest: 12))
        run.register(budget: .init(source: "googlebooks", requestsPerSecond: 1, isbnBatchSize: 1, attemptsPerRequest: 12))
        run.expect(rows: 1_500)
        let plan = try #require(run.plan)
        #expect(plan == """
            Enriching 1,500 rows from openlibrary → googlebooks: about 3 min 59 s (each host at its own rate, all at once; \
            cached answers need no request).
              openlibrary: about 716 requests for the 1,500 rows that reach it (42 ISBN requests, 660 title searches, 14 retries) \
            ≈ 3 min 59 s at 3/s
              googlebooks: about 174 requests for 150 rows (10 %) (105 ISBN requests, 66 title searches, 3 retries) ≈ 2 min 55 s at 1/s
              (assumed until this library has history: 70 % of rows with an ISBN, 80 % of those settled by it, 90 % of the rows a \
            source sees answered there; 2 % of requests retried; worst case, every request retried to the policy's limit: 12× the requests.)
            """, "\(plan)")
    }
}
