import BookpipeCore
import BookpipeLibrary
import BookpipeTesting
import Testing

/// An engine's listing and the query as a rule over values (``LibraryQuery/matches(_:isGone:)``,
/// what a pipeline's `filter` step applies) agree: for generated libraries of awkward records and
/// generated queries, each engine lists exactly the records the rule accepts (issue 25).
@Suite struct ListingRuleTests {
    /// Draws from the seeded generator (SplitMix64), so a failure names a seed that reproduces it.
    struct Generator {
        var numbers: SplitMix64
        init(state seed: UInt64) { numbers = SplitMix64(seed: seed) }
        mutating func next() -> UInt64 { numbers.next() }
        mutating func pick<T>(_ choices: [T]) -> T { choices[Int(next() % UInt64(choices.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }
    }

    /// Titles and names with what folding and word splitting must agree on: apostrophes, `ß`, `ø`,
    /// `Ł`, ligatures, accents composed and not, capitals, digits inside words, CJK, single letters.
    static let titles = [
        "Dune", "Children of Dune", "The Reader’s Book", "A Reader's Digest", "Straße der Ölsardinen", "Ørsted og Øen",
        "Łódź Stories", "ﬁsh & Chips", "Les Misérables", "Les Mise\u{301}rables", "CAFÉ SOCIETY", "1Q84", "It", "A",
        "日本語の本", "Émile, ou De l'éducation", "O'Brien's Way", "naïve-art (Vol. 2)", "Œuvres complètes", "X-Men #1",
    ]
    static let authors = [
        "Frank Herbert", "Ursula K. Le Guin", "Gabriel García Márquez", "Haruki Murakami", "J.R.R. Tolkien",
        "Søren Kierkegaard", "Stanisław Lem", "Flann O'Brien", "Émile Zola", "", "JANE AUSTEN", "村上春樹",
    ]
    static let shelves: [String?] = ["to-read", "Read", "currently-reading", "to_read", "Lu", nil]
    static let isbns: [String?] = ["0441013597", "9780441013593", "978-0-375-70402-4", "0441013598", "12345", "", nil]
    static let editionKeys: [String?] = ["/books/OL12M", "/books/OL12W", "googlebooks:abc", "OLM", "xOL9xM", nil]
    static let findingCodes = ["isbn.checksum", "isbn.leading-zero-restored", "date.unparseable", "isbn.10-13-disagree",
                               "title.empty", "year.impossible"]

    static func records(seed: UInt64, count: Int) -> [BookRecord] {
        var generator = Generator(state: seed)
        return (1...count).map { row in
            let file = generator.chance(30) ? "beef00" : "c0ffee"
            var record = BookRecord(
                origin: RecordOrigin(file: file == "c0ffee" ? "exports/goodreads_library_export.csv" : "Bücher.csv",
                                     fileHash: file, row: row, line: row + 1, format: file == "c0ffee" ? "goodreads" : "generic",
                                     rawFields: ["x"]),
                title: generator.pick(titles), authors: generator.chance(15) ? [] : [generator.pick(authors)],
                rawISBNs: generator.pick(isbns).map { [$0] } ?? [],
                year: generator.chance(20) ? nil : generator.pick([1450, 1965, 1969, 1970, 2001, 2026, 3020]))
            if generator.chance(30) { record.authors.append(generator.pick(authors)) }
            record.shelf = generator.pick(shelves)
            record.rating = generator.chance(30) ? nil : generator.pick([0, 1, 3, 3.5, 4, 5])
            record.publisher = generator.chance(30) ? nil : "Ace"
            record.pageCount = generator.chance(30) ? nil : 300
            Normalizer.normalize(&record, currentYear: 2026)
            if generator.chance(20) {
                record.findings.append(Finding(code: generator.pick(findingCodes), severity: .warning, field: "isbn", message: "m"))
            }
            let status = generator.pick(RecordStatus.allCases)
            if status != .pending {
                let match = status == .enriched
                    ? Match(workKey: "/works/OL1W", editionKey: generator.pick(editionKeys), title: record.title,
                            authors: record.authors, score: 150, source: "catalog") : nil
                record.enrichment = EnrichmentResult(status: status, match: match)
            }
            record.reviewStatus = generator.pick(ReviewStatus.allCases)
            return record
        }
    }

    /// A query of one to three tokens, some negated, from words the records hold (whole, cut short,
    /// as typed with accents and apostrophes, a single letter) and every field.
    static func query(_ generator: inout Generator) -> [String] {
        let words = ["dune", "du", "d", "a", "readers", "reader", "reader’s", "Straße", "strasse", "Ørsted", "orsted", "lodz",
                     "Łódź", "fish", "miserables", "misérables", "cafe", "1q84", "1q", "it", "日本語の本", "emile", "obrien",
                     "o'brien", "naive", "oeuvres", "herbert", "le", "guin", "garcia", "márquez", "tolkien", "j", "r",
                     "soren", "stanislaw", "austen", "村上春樹", "zola"]
        let fields = [
            "title:\(generator.pick(words))", "author:\(generator.pick(words))", "isbn:978044", "isbn:9780441013593",
            "isbn:0441013597", "year:1960..1970", "year:>=2001", "year:1450", "year:..1969", "rating:>=4", "rating:3..5",
            "rating:<1", "shelf:to-read", "shelf:READ", "shelf:currently reading", "status:\(generator.pick(RecordStatus.allCases).rawValue)",
            "review:\(generator.pick(LibraryQuery.ReviewState.allCases).rawValue)", "file:goodreads", "file:bucher",
            "file:generic", "gone:no", "gone:yes", "isbn:invalid", "missing:\(generator.pick(LibraryQuery.MissingValue.allCases).rawValue)",
            "finding:isbn", "finding:date.unparseable", "finding:title",
        ]
        return (0..<(1 + Int(generator.next() % 3))).map { _ in
            let token = generator.chance(45) ? generator.pick(words) : generator.pick(fields)
            return generator.chance(25) ? "^" + token : token
        }
    }

    @Test("Each engine lists exactly the records the query's rule over values accepts (generated records and queries)",
          arguments: LibraryEngine.all)
    func listingAgreesWithTheRule(_ engine: LibraryEngine) async throws {
        let seed: UInt64 = 0x25_2026_1127
        let (library, _) = try engine.make()
        for (hash, path, format) in [("c0ffee", "exports/goodreads_library_export.csv", "goodreads"), ("beef00", "Bücher.csv", "generic")] {
            try await library.registerSourceFile(SourceFileInfo(hash: hash, path: path, format: format, header: ["x"],
                                                                encoding: "utf-8", size: 10), runID: nil)
        }
        try await library.committed(try await library.submitInsert(Self.records(seed: seed, count: 160), runID: nil))
        // The records as the engine gives them back, with what only it knows (gone).
        var stored: [(record: BookRecord, isGone: Bool)] = []
        try await library.listRecords(LibraryQuery(), order: [], limit: nil) { stored.append(($0.record, $0.isGone)) }
        #expect(stored.count == 160)
        var generator = Generator(state: seed)
        var nonEmpty = 0
        for _ in 0..<250 {
            let tokens = Self.query(&generator)
            let query = try LibraryQuery.parse(tokens)
            var listed: [String] = []
            try await library.listRecords(query, order: [], limit: nil) { listed.append($0.record.id) }
            let accepted = stored.filter { query.matches($0.record, isGone: $0.isGone) }.map(\.record.id)
            let onlyListed = Set(listed).subtracting(accepted).sorted().prefix(5)
            let onlyAccepted = Set(accepted).subtracting(listed).sorted().prefix(5)
            #expect(Set(listed) == Set(accepted),
                    "\(engine) \(tokens): listed \(listed.count), the rule accepts \(accepted.count); only listed: \(onlyListed), only accepted: \(onlyAccepted)")
            if !accepted.isEmpty { nonEmpty += 1 }
        }
        // The generated queries do select something most of the time (a test of empty sets proves little).
        #expect(nonEmpty > 100)
    }
}
