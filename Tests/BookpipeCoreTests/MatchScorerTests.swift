import Foundation
import Testing
@testable import BookpipeCore

/// A row, a candidate and the points each field must earn.
struct ScoringCase: Sendable, CustomTestStringConvertible {
    var name: String
    var rowTitle: String
    var rowAuthors: [String] = []
    var rowYear: Int? = nil
    var rowISBNs: [String] = []
    var title: String
    var authors: [String] = []
    var year: Int? = nil
    var isbn13s: [String] = []
    var expected: [String: Int]
    var testDescription: String { name }
}

@Suite struct MatchScorerTests {
    static func candidate(
        _ key: String, _ title: String, _ authors: [String], year: Int? = nil, isbns: [String] = []
    ) -> Candidate {
        Candidate(workKey: key, title: title, authors: authors, year: year, isbn13s: isbns, source: "openlibrary")
    }

    static let scoringCases: [ScoringCase] = [
        ScoringCase(name: "exact title, exact author, exact year: 100 + 50 + 30",
                    rowTitle: "Gideon the Ninth (The Locked Tomb #1)", rowAuthors: ["Tamsyn Muir"], rowYear: 2019,
                    title: "Gideon the Ninth", authors: ["Tamsyn Muir"], year: 2019,
                    expected: ["title": 100, "author": 50, "year": 30, "isbn": 0]),
        ScoringCase(name: "year within 2 years: +15", rowTitle: "Dune", rowAuthors: ["Frank Herbert"], rowYear: 1965,
                    title: "Dune", authors: ["Frank Herbert"], year: 1967,
                    expected: ["title": 100, "author": 50, "year": 15, "isbn": 0]),
        ScoringCase(name: "year 3 years off: 0", rowTitle: "Dune", rowYear: 1965, title: "Dune", year: 1968,
                    expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "year 2 years earlier: +15", rowTitle: "Dune", rowYear: 1965, title: "Dune", year: 1963,
                    expected: ["title": 100, "author": 0, "year": 15, "isbn": 0]),
        ScoringCase(name: "missing year: 0", rowTitle: "Dune", title: "Dune", year: 1965,
                    expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "partial author (initials vs full name): +25", rowTitle: "The Hobbit",
                    rowAuthors: ["J.R.R. Tolkien"], title: "The Hobbit", authors: ["John Ronald Reuel Tolkien"],
                    expected: ["title": 100, "author": 25, "year": 0, "isbn": 0]),
        ScoringCase(name: "initials written three ways are the same author", rowTitle: "The Hobbit",
                    rowAuthors: ["Tolkien, J.R.R."], title: "The Hobbit", authors: ["JRR Tolkien"],
                    expected: ["title": 100, "author": 50, "year": 0, "isbn": 0]),
        ScoringCase(name: "author 'Last, First' with diacritics folded", rowTitle: "Marelle",
                    rowAuthors: ["Cortazar, Julio"], title: "Marelle", authors: ["Julio Cortázar"],
                    expected: ["title": 100, "author": 50, "year": 0, "isbn": 0]),
        ScoringCase(name: "contains: extra words on the candidate", rowTitle: "Klara and the Sun",
                    title: "Klara and the Sun A Novel",
                    expected: ["title": 50, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "subtitle only on the row: exact", rowTitle: "Range: Why Generalists Triumph in a Specialized World",
                    rowAuthors: ["David   Epstein"], title: "Range", authors: ["David Epstein"],
                    expected: ["title": 100, "author": 50, "year": 0, "isbn": 0]),
        ScoringCase(name: "subtitle only on the candidate: exact", rowTitle: "Project Hail Mary",
                    title: "Project Hail Mary: A Novel", expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "different subtitles on the same main title: contains", rowTitle: "Range: Why Generalists Triumph",
                    title: "Range: How Generalists Win", expected: ["title": 50, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "2001: A Space Odyssey matches itself", rowTitle: "2001: A Space Odyssey",
                    title: "2001: a space odyssey", expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "2001: A Space Odyssey does not match 2001", rowTitle: "2001: A Space Odyssey",
                    title: "2001", expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "leading article difference is exact", rowTitle: "Hobbit", title: "The Hobbit",
                    expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "curly vs straight apostrophe is exact", rowTitle: "A Reader’s Book With No ISBN",
                    title: "A Reader's Book with no ISBN", expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "& and 'and' are exact", rowTitle: "Pride &amp; Prejudice", title: "Pride and Prejudice",
                    expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "It is not contained in Iteration", rowTitle: "It", title: "Iteration",
                    expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "It is not contained in It Ends with Us", rowTitle: "It", title: "It Ends with Us",
                    expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "Emma is not contained in Emmanuel", rowTitle: "Emma", title: "Emmanuel",
                    expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "Dune is not contained in Dune Messiah (half the words)", rowTitle: "Dune",
                    title: "Dune Messiah", expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "a one-letter title is never contained", rowTitle: "V", title: "V for",
                    expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "different author with the same family name: 0", rowTitle: "It", rowAuthors: ["Stephen King"],
                    title: "It", authors: ["Owen King"], expected: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ScoringCase(name: "identical ISBN: +100 (ISBN-10 on the row, ISBN-13 on the candidate)",
                    rowTitle: "Hunger", rowISBNs: ["=\"0439023483\""], title: "The Hunger Games",
                    isbn13s: ["9780439023481"], expected: ["title": 0, "author": 0, "year": 0, "isbn": 100]),
        ScoringCase(name: "candidate ISBN-10s are compared as ISBN-13", rowTitle: "X", rowISBNs: ["9780439023481"],
                    title: "Y", isbn13s: ["0439023483"], expected: ["title": 0, "author": 0, "year": 0, "isbn": 100]),
        ScoringCase(name: "empty titles never score", rowTitle: "", title: "",
                    expected: ["title": 0, "author": 0, "year": 0, "isbn": 0]),
    ]

    @Test("Each field earns the documented points", arguments: scoringCases)
    func scores(_ testCase: ScoringCase) {
        let query = MatchQuery(title: testCase.rowTitle, authors: testCase.rowAuthors, year: testCase.rowYear,
                               isbns: testCase.rowISBNs)
        let scored = MatchScorer().score(
            Self.candidate("/works/OL1W", testCase.title, testCase.authors, year: testCase.year,
                           isbns: testCase.isbn13s), for: query)
        #expect(scored.breakdown == testCase.expected)
        #expect(scored.score == testCase.expected.values.reduce(0, +))
    }

    @Test("Two editions of one work with different titles, both exact, are one candidate: accepted, the best kept and the other listed")
    func editionsOfOneWorkAreOneCandidate() throws {
        let query = MatchQuery(title: "The Silent Harbour", authors: ["Anna Berger"])
        var english = Candidate(workKey: "/works/OL9W", editionKey: "googlebooks:hb", title: "The Silent Harbour",
                                authors: ["Anna Berger"], year: 2001, source: "googlebooks")
        var novel = Candidate(workKey: "/works/OL9W", editionKey: "googlebooks:pb", title: "The Silent Harbour: A Novel",
                              authors: ["Anna Berger"], year: 2003, source: "googlebooks")
        let decision = MatchScorer().decide(for: query, candidates: [novel, english])
        guard case .accept(let chosen) = decision else {
            Issue.record("expected accept, got \(decision)")
            return
        }
        #expect(chosen.editionKey == "googlebooks:hb")
        #expect(chosen.otherEditions == ["googlebooks:pb"])
        // Without their work the same two editions are rivals: a person chooses, each listed.
        english.workKey = ""
        novel.workKey = ""
        guard case .needsSelection(let shortlist) = MatchScorer().decide(for: query, candidates: [novel, english]) else {
            Issue.record("expected needsSelection")
            return
        }
        #expect(shortlist.map(\.editionKey) == ["googlebooks:hb", "googlebooks:pb"])
    }

    @Test("A shortlist lists each work once: its editions under its best one")
    func shortlistGroupsEditions() {
        let query = MatchQuery(title: "Harbour", authors: ["Nobody Known"])
        let editions = [
            Candidate(workKey: "/works/OL1W", editionKey: "/books/OL1M", title: "Harbour", authors: ["Ann Lee"], source: "openlibrary"),
            Candidate(workKey: "/works/OL1W", editionKey: "googlebooks:x", title: "Harbour", authors: ["Ann Lee"], source: "googlebooks"),
            Candidate(workKey: "/works/OL2W", editionKey: "/books/OL2M", title: "Harbour", authors: ["Bo Kim"], source: "openlibrary"),
        ]
        guard case .needsSelection(let shortlist) = MatchScorer().decide(for: query, candidates: editions) else {
            Issue.record("expected needsSelection")
            return
        }
        #expect(shortlist.map(\.workKey) == ["/works/OL1W", "/works/OL2W"])
        #expect(shortlist.first?.otherEditions.count == 1)
    }

    @Test("No candidates gives noCandidates")
    func noCandidates() {
        #expect(MatchScorer().decide(for: MatchQuery(title: "It"), candidates: []) == .noCandidates)
    }

    @Test("'It' by Stephen King is accepted over 'It' by someone else")
    func itByStephenKing() throws {
        let query = MatchQuery(title: "It", authors: ["Stephen King"], year: 1986)
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL2W", "It", ["Someone Else"], year: 2010),
            Self.candidate("/works/OL1W", "It", ["Stephen King"], year: 1986),
            Self.candidate("/works/OL3W", "Iteration", ["Stephen King"], year: 1986),
        ])
        guard case .accept(let chosen) = decision else {
            Issue.record("expected accept, got \(decision)")
            return
        }
        #expect(chosen.workKey == "/works/OL1W")
        #expect(chosen.score == 180)
        #expect(chosen.breakdown == ["title": 100, "author": 50, "year": 30, "isbn": 0])
    }

    @Test("'It' by an author no candidate has is not accepted: the author must agree")
    func itByUnknownAuthor() {
        let query = MatchQuery(title: "It", authors: ["Nobody Known"])
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL1W", "It", ["Stephen King"], year: 1986),
        ])
        guard case .needsSelection(let candidates) = decision else {
            Issue.record("expected needsSelection, got \(decision)")
            return
        }
        #expect(candidates.map(\.workKey) == ["/works/OL1W"])
        #expect(candidates.first?.score == 100)
    }

    @Test("'Emma' by Jane Austen is accepted over 'Emma' by another author and 'Emmanuel'")
    func emma() {
        let query = MatchQuery(title: "Emma", authors: ["Austen, Jane"])
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL9W", "Emma", ["Emma Tennant"]),
            Self.candidate("/works/OL8W", "Emmanuel", ["Jane Austen"]),
            Self.candidate("/works/OL7W", "Emma", ["Jane Austen"], year: 1815),
        ])
        #expect(decision == .accept(MatchScorer().score(
            Self.candidate("/works/OL7W", "Emma", ["Jane Austen"], year: 1815), for: query)))
    }

    @Test("'Emma' with no author on the row and two different works needs selection")
    func emmaWithoutAuthor() {
        let decision = MatchScorer().decide(for: MatchQuery(title: "Emma"), candidates: [
            Self.candidate("/works/OL9W", "Emma", ["Emma Tennant"]),
            Self.candidate("/works/OL7W", "Emma", ["Jane Austen"]),
        ])
        guard case .needsSelection(let candidates) = decision else {
            Issue.record("expected needsSelection, got \(decision)")
            return
        }
        // Equal scores: ties broken by work key.
        #expect(candidates.map(\.workKey) == ["/works/OL7W", "/works/OL9W"])
    }

    @Test("A row without author is accepted on an exact title when no other work competes")
    func noAuthorOnRow() {
        let decision = MatchScorer().decide(for: MatchQuery(title: "Untitled Draft"), candidates: [
            Self.candidate("/works/OL5W", "Untitled Draft", ["Jane Doe"]),
        ])
        #expect(decision == .accept(MatchScorer().score(
            Self.candidate("/works/OL5W", "Untitled Draft", ["Jane Doe"]), for: MatchQuery(title: "Untitled Draft"))))
    }

    @Test("An identical ISBN is decisive when the author agrees, even if the title differs")
    func isbnDecisive() {
        let query = MatchQuery(title: "Hunger", authors: ["Collins, Suzanne"], isbns: ["=\"0439023483\""])
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL1W", "Hunger", ["Someone"], year: 2000),
            Self.candidate("/works/OL2W", "The Hunger Games", ["Suzanne Collins"], isbns: ["9780439023481"]),
        ])
        guard case .accept(let chosen) = decision else {
            Issue.record("expected accept, got \(decision)")
            return
        }
        #expect(chosen.workKey == "/works/OL2W")
        #expect(chosen.breakdown["isbn"] == 100)
    }

    @Test("An ISBN whose book contradicts both title and author is a wrong ISBN, not a match")
    func wrongISBNIsNotAccepted() {
        let query = MatchQuery(title: "Hunger", authors: ["Knut Hamsun"], isbns: ["9780439023481"])
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL2W", "The Hunger Games", ["Suzanne Collins"], isbns: ["9780439023481"]),
        ])
        // Title and author both disagree: nothing a person needs to be asked (the enricher flags
        // the ISBN instead); the candidate is kept for `show`.
        guard case .belowAcceptance(let candidates) = decision else {
            Issue.record("expected belowAcceptance, got \(decision)")
            return
        }
        #expect(candidates.map(\.workKey) == ["/works/OL2W"])
        // Without corroboration the old rule (the ISBN alone decides) is still available.
        var policy = MatchPolicy()
        policy.isbnNeedsCorroboration = false
        #expect(MatchScorer(policy: policy).decide(for: query, candidates: candidates).acceptedWorkKey == "/works/OL2W")
    }

    @Test("Two different works claiming the row's ISBN need selection")
    func isbnConflict() {
        let query = MatchQuery(title: "The Hunger Games", isbns: ["9780439023481"])
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL2W", "The Hunger Games", ["Suzanne Collins"], isbns: ["9780439023481"]),
            Self.candidate("/works/OL3W", "Catching Fire", ["Suzanne Collins"], isbns: ["9780439023481"]),
        ])
        guard case .needsSelection = decision else {
            Issue.record("expected needsSelection, got \(decision)")
            return
        }
    }

    @Test("ISBN is not decisive when the policy says so")
    func isbnNotDecisive() {
        let scorer = MatchScorer(policy: MatchPolicy(isbnIsDecisive: false))
        let query = MatchQuery(title: "Hunger", authors: ["Someone"], isbns: ["0439023483"])
        let decision = scorer.decide(for: query, candidates: [
            Self.candidate("/works/OL2W", "The Hunger Games", ["Suzanne Collins"], isbns: ["9780439023481"]),
        ])
        // The ISBN's 100 points alone, with no title agreement, is not worth a person's question.
        guard case .belowAcceptance = decision else {
            Issue.record("expected belowAcceptance, got \(decision)")
            return
        }
        // With the title agreeing, the same ISBN (not decisive) leaves a question: the author disagrees.
        let titled = scorer.decide(for: MatchQuery(title: "The Hunger Games", authors: ["Someone"], isbns: ["0439023483"]),
                                   candidates: [Self.candidate("/works/OL2W", "The Hunger Games", ["Suzanne Collins"],
                                                               isbns: ["9780439023481"])])
        guard case .needsSelection = titled else {
            Issue.record("expected needsSelection, got \(titled)")
            return
        }
    }

    @Test("Only questions worth asking need selection: below the acceptance score, or with no title agreement, the row is not found and its candidates are kept")
    func belowAcceptanceIsNotAQuestion() {
        // The flood seen on a 1,500-row import: `The Paper Road` offered `The Road` scoring 0.
        let paperRoad = MatchScorer().decide(for: MatchQuery(title: "The Paper Road", authors: ["Mary Vonnegut"]), candidates: [
            Self.candidate("/works/OL9W", "The Road", ["Cormac McCarthy"], year: 2006),
        ])
        guard case .belowAcceptance(let kept) = paperRoad else {
            Issue.record("expected belowAcceptance, got \(paperRoad)")
            return
        }
        #expect(kept.map(\.workKey) == ["/works/OL9W"])
        #expect(kept.first?.score == 0)
        // Author and year agree (80 points) but the title does not: another book by the author.
        let sameAuthor = MatchScorer().decide(for: MatchQuery(title: "Emma", authors: ["Jane Austen"], year: 1815), candidates: [
            Self.candidate("/works/OL1W", "Persuasion", ["Jane Austen"], year: 1815),
        ])
        guard case .belowAcceptance = sameAuthor else {
            Issue.record("expected belowAcceptance, got \(sameAuthor)")
            return
        }
        // Title exact but the author disagrees (100 points): a safety rule stopped it; ask.
        let otherAuthor = MatchScorer().decide(for: MatchQuery(title: "Emma", authors: ["Jane Austen"]), candidates: [
            Self.candidate("/works/OL2W", "Emma", ["Alexander McCall Smith"]),
        ])
        guard case .needsSelection = otherAuthor else {
            Issue.record("expected needsSelection, got \(otherAuthor)")
            return
        }
    }

    /// Best score vs runner-up score (a different work) and whether the lead suffices.
    @Test("Acceptance needs a lead over the best different work", arguments: [
        // best: exact title + exact author + exact year = 180
        (1986, 1986, 180, 180, false),   // runner-up identical in score: no lead
        (1986, 1987, 180, 165, false),   // 15 points: not enough
        (1986, 1990, 180, 150, true),    // 30 points: exactly the margin
    ])
    func leadMargin(rowYear: Int, runnerYear: Int, bestScore: Int, runnerScore: Int, accepted: Bool) {
        let query = MatchQuery(title: "The Shining", authors: ["Stephen King"], year: rowYear)
        let best = Self.candidate("/works/OL1W", "The Shining", ["Stephen King"], year: 1986)
        // Another work key with the same title and author: a near-duplicate (Open Library keeps some).
        let runner = Self.candidate("/works/OL2W", "The Shining", ["Stephen King"], year: runnerYear)
        let scorer = MatchScorer()
        #expect(scorer.score(best, for: query).score == bestScore)
        #expect(scorer.score(runner, for: query).score == runnerScore)
        // Same title and author: near-duplicate works are not a conflict, so this always accepts…
        guard case .accept(let chosen) = scorer.decide(for: query, candidates: [runner, best]) else {
            Issue.record("near-duplicates must not block acceptance")
            return
        }
        #expect(chosen.workKey == "/works/OL1W")
        // …while a different work (different title) with the runner-up's score is a conflict.
        let other = Candidate(workKey: "/works/OL3W", title: "The Shining Girls", authors: ["Stephen King"],
                              source: "x", score: 0)
        var policy = MatchPolicy()
        policy.titleContains = runnerScore - 50  // make the other work score exactly runnerScore
        let tuned = MatchScorer(policy: policy)
        #expect(tuned.score(other, for: query).score == runnerScore)
        let decision = tuned.decide(for: query, candidates: [other, best])
        #expect((decision == .accept(tuned.score(best, for: query))) == accepted)
    }

    @Test("The lead margin is configurable")
    func configurableMargin() {
        let query = MatchQuery(title: "Emma", authors: ["Jane Austen"])
        let candidates = [
            Self.candidate("/works/OL7W", "Emma", ["Jane Austen"]),
            Self.candidate("/works/OL9W", "Emma", ["Emma Tennant"]),
        ]
        // 150 vs 100: a 50-point lead.
        #expect(MatchScorer(policy: MatchPolicy(minimumLead: 50)).decide(for: query, candidates: candidates)
            .acceptedKey == "/works/OL7W")
        #expect(MatchScorer(policy: MatchPolicy(minimumLead: 51)).decide(for: query, candidates: candidates)
            .acceptedKey == nil)
    }

    @Test("Near-duplicate works with the same title and author pick the better one deterministically")
    func nearDuplicates() {
        let query = MatchQuery(title: "Gideon the Ninth (The Locked Tomb #1)", authors: ["Tamsyn Muir"], year: 2019)
        let first = Self.candidate("/works/OL20639540W", "Gideon the Ninth", ["Tamsyn Muir"], year: 2019)
        let second = Self.candidate("/works/OL19859295W", "Gideon The Ninth", ["Tamsyn Muir"], year: 2019)
        let forward = MatchScorer().decide(for: query, candidates: [first, second])
        let backward = MatchScorer().decide(for: query, candidates: [second, first])
        #expect(forward == backward)
        #expect(forward.acceptedKey == "/works/OL19859295W")
    }

    @Test("Author and year alone never accept: the title must agree")
    func titleRequired() {
        let query = MatchQuery(title: "The Hobbit", authors: ["J.R.R. Tolkien"], year: 1937)
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL1W", "Roverandom", ["J.R.R. Tolkien"], year: 1937),
        ])
        #expect(decision.acceptedKey == nil)
    }

    @Test("Below the threshold nothing is accepted")
    func belowThreshold() {
        let scorer = MatchScorer(policy: MatchPolicy(acceptAt: 151))
        let query = MatchQuery(title: "Emma", authors: ["Jane Austen"])
        #expect(scorer.decide(for: query, candidates: [Self.candidate("/works/OL7W", "Emma", ["Jane Austen"])])
            .acceptedKey == nil)
    }

    @Test("Needs-selection keeps at most five candidates, best first")
    func shortlist() {
        let query = MatchQuery(title: "Emma")
        let candidates = (1...8).map { Self.candidate("/works/OL\($0)W", "Emma", ["Author \($0)"], year: 1800 + $0) }
        guard case .needsSelection(let list) = MatchScorer().decide(for: query, candidates: candidates) else {
            Issue.record("expected needsSelection")
            return
        }
        #expect(list.count == 5)
        #expect(list.map(\.score) == list.map(\.score).sorted(by: >))
    }

    @Test("Deciding for a record uses its normalised forms")
    func decidesForRecord() {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "h", row: 1, line: 2),
                                title: "Dune (Dune, #1)", authors: ["Herbert, Frank"], rawISBNs: ["=\"\""], year: 1965)
        Normalizer.normalize(&record, currentYear: 2026)
        let decision = MatchScorer().decide(for: record, candidates: [
            Self.candidate("/works/OL893415W", "Dune", ["Frank Herbert"], year: 1965),
            Self.candidate("/works/OL893416W", "Dune Messiah", ["Frank Herbert"], year: 1969),
        ])
        #expect(decision.acceptedKey == "/works/OL893415W")
    }

    @Test("The policy round-trips through JSON with the documented defaults")
    func policyCodable() throws {
        let data = try JSONEncoder().encode(MatchPolicy.default)
        let decoded = try JSONDecoder().decode(MatchPolicy.self, from: data)
        #expect(decoded == .default)
        #expect(decoded.titleExact == 100 && decoded.titleContains == 50)
        #expect(decoded.authorExact == 50 && decoded.authorPartial == 25)
        #expect(decoded.yearExact == 30 && decoded.yearNear == 15 && decoded.yearNearWindow == 2)
        #expect(decoded.acceptAt == 60)
    }

    @Test("A policy with only some keys takes the defaults for the rest")
    func policyPartial() throws {
        let decoded = try JSONDecoder().decode(MatchPolicy.self, from: Data(#"{"acceptAt": 80, "minimumLead": 10}"#.utf8))
        #expect(decoded == MatchPolicy(acceptAt: 80, minimumLead: 10))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MatchPolicy.self, from: Data(#"{"acceptAt": "high"}"#.utf8))
        }
    }
}

extension MatchDecision {
    /// The accepted work key, or nil.
    var acceptedKey: String? {
        if case .accept(let candidate) = self { return candidate.workKey }
        return nil
    }
}

extension MatchDecision {
    /// The accepted work's key, or nil when nothing was accepted.
    var acceptedWorkKey: String? {
        if case .accept(let candidate) = self { return candidate.workKey }
        return nil
    }
}

@Suite struct SequelSafetyTests {
    private static func candidate(_ key: String, _ title: String, _ authors: [String], year: Int? = nil) -> Candidate {
        Candidate(workKey: key, title: title, authors: authors, year: year, source: "catalog")
    }

    @Test("A sequel's title (a prefix like 'Return to', or a volume number) does not contain the first book's",
          arguments: ["Return to the Silent Hollow", "Beyond the Silent Hollow", "After the Silent Hollow",
                      "The Silent Hollow II", "The Silent Hollow 2"])
    func sequelIsNotContained(rowTitle: String) {
        let query = MatchQuery(title: rowTitle, authors: ["Ada Brook"], year: 2001)
        let decision = MatchScorer().decide(for: query, candidates: [
            Self.candidate("/works/OL1W", "The Silent Hollow", ["Ada Brook"], year: 2000),
        ])
        #expect(decision.acceptedWorkKey == nil, "\(rowTitle) must not be accepted as The Silent Hollow")
    }

    @Test("Edition noise after the title still counts as 'contains', and is accepted when the year agrees")
    func editionNoiseWithYear() {
        let query = MatchQuery(title: "Klara and the Sun: A Novel", authors: ["Kazuo Ishiguro"], year: 2021)
        let candidate = Self.candidate("/works/OL2W", "Klara and the Sun", ["Kazuo Ishiguro"], year: 2021)
        #expect(MatchScorer().decide(for: query, candidates: [candidate]).acceptedWorkKey == "/works/OL2W")
    }

    @Test("A title that only contains the other is not accepted on the author alone: the year must agree")
    func containsNeedsYear() {
        let row = MatchQuery(title: "The Silent Hollow Omnibus Edition", authors: ["Ada Brook"], year: 1990)
        let candidate = Self.candidate("/works/OL1W", "The Silent Hollow Omnibus", ["Ada Brook"], year: 2010)
        let decision = MatchScorer().decide(for: row, candidates: [candidate])
        guard case .needsSelection(let kept) = decision else {
            Issue.record("expected needsSelection, got \(decision)")
            return
        }
        #expect(kept.first?.breakdown["title"] == 50)
        var policy = MatchPolicy()
        policy.containsNeedsCorroboration = false
        #expect(MatchScorer(policy: policy).decide(for: row, candidates: [candidate]).acceptedWorkKey == "/works/OL1W")
    }
}
