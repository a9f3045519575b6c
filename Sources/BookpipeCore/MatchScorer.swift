/// The points and thresholds the ``MatchScorer`` uses. The defaults are the documented ones.
///
/// A wrong match is worse than no match, so beyond the score threshold an automatic
/// acceptance also needs the title to agree, the author to agree (when the row names one) and a
/// clear lead over the best candidate that is a different work.
public struct MatchPolicy: Sendable, Hashable, Codable {
    /// Points when the titles are the same (see ``MatchScorer`` for what counts as the same).
    public var titleExact: Int
    /// Points when one title contains the other as a substantial run of whole words.
    public var titleContains: Int
    /// Points when an author has the same key.
    public var authorExact: Int
    /// Points when an author agrees partially (see ``AuthorNormalizer/agreement(_:_:)``).
    public var authorPartial: Int
    /// Points when the years are equal.
    public var yearExact: Int
    /// Points when the years differ by at most ``yearNearWindow``.
    public var yearNear: Int
    /// The largest year difference that still earns ``yearNear``.
    public var yearNearWindow: Int
    /// Points when the candidate has one of the row's ISBNs.
    public var isbnMatch: Int
    /// The lowest score accepted without a person.
    public var acceptAt: Int
    /// The lead (in points) the best candidate needs over the best candidate that is a
    /// different work.
    public var minimumLead: Int
    /// When true, a candidate with one of the row's ISBNs is accepted whatever its score
    /// (see ``isbnNeedsCorroboration``).
    public var isbnIsDecisive: Bool
    /// When true, an ISBN is decisive only when the candidate's title or author agrees with the
    /// row as well: an export's ISBN column is sometimes another book's (a mistyped digit that
    /// still passes the checksum, a copy-paste from the wrong row), and a wrong match is worse
    /// than none.
    public var isbnNeedsCorroboration: Bool
    /// When true, a title that only *contains* the other (no exact title) is accepted only when
    /// the year (exact or near) or an ISBN agrees too: a sequel or companion book by the same
    /// author looks exactly like that ("The Fox of Vell" in "The Fox of Vell II"), and a wrong
    /// match is worse than none.
    public var containsNeedsCorroboration: Bool
    /// When true, automatic acceptance needs author agreement if the row names an author.
    public var requiresAuthorAgreement: Bool
    /// When true, automatic acceptance needs title points (an author and year alone never accept).
    public var requiresTitleAgreement: Bool
    /// For "contains": the contained title's share of the longer title's words (0…1).
    public var containsMinimumShare: Double
    /// For "contains": the fewest letters and digits the contained title must have.
    public var containsMinimumCharacters: Int
    /// How many candidates a "needs selection" decision keeps.
    public var maximumCandidates: Int

    /// Creates a policy; every parameter defaults to the documented value.
    public init(
        titleExact: Int = 100, titleContains: Int = 50, authorExact: Int = 50, authorPartial: Int = 25,
        yearExact: Int = 30, yearNear: Int = 15, yearNearWindow: Int = 2, isbnMatch: Int = 100,
        acceptAt: Int = 60, minimumLead: Int = 30, isbnIsDecisive: Bool = true, isbnNeedsCorroboration: Bool = true,
        containsNeedsCorroboration: Bool = true,
        requiresAuthorAgreement: Bool = true, requiresTitleAgreement: Bool = true,
        containsMinimumShare: Double = 0.6, containsMinimumCharacters: Int = 4, maximumCandidates: Int = 5
    ) {
        self.titleExact = titleExact
        self.titleContains = titleContains
        self.authorExact = authorExact
        self.authorPartial = authorPartial
        self.yearExact = yearExact
        self.yearNear = yearNear
        self.yearNearWindow = yearNearWindow
        self.isbnMatch = isbnMatch
        self.acceptAt = acceptAt
        self.minimumLead = minimumLead
        self.isbnIsDecisive = isbnIsDecisive
        self.isbnNeedsCorroboration = isbnNeedsCorroboration
        self.containsNeedsCorroboration = containsNeedsCorroboration
        self.requiresAuthorAgreement = requiresAuthorAgreement
        self.requiresTitleAgreement = requiresTitleAgreement
        self.containsMinimumShare = containsMinimumShare
        self.containsMinimumCharacters = containsMinimumCharacters
        self.maximumCandidates = maximumCandidates
    }

    /// Decodes a policy; every missing key takes its default, so a pipeline file names only
    /// what it changes (`acceptAt: 80`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let base = MatchPolicy()
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try container.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        self.init(
            titleExact: try value(.titleExact, base.titleExact),
            titleContains: try value(.titleContains, base.titleContains),
            authorExact: try value(.authorExact, base.authorExact),
            authorPartial: try value(.authorPartial, base.authorPartial),
            yearExact: try value(.yearExact, base.yearExact),
            yearNear: try value(.yearNear, base.yearNear),
            yearNearWindow: try value(.yearNearWindow, base.yearNearWindow),
            isbnMatch: try value(.isbnMatch, base.isbnMatch),
            acceptAt: try value(.acceptAt, base.acceptAt),
            minimumLead: try value(.minimumLead, base.minimumLead),
            isbnIsDecisive: try value(.isbnIsDecisive, base.isbnIsDecisive),
            isbnNeedsCorroboration: try value(.isbnNeedsCorroboration, base.isbnNeedsCorroboration),
            containsNeedsCorroboration: try value(.containsNeedsCorroboration, base.containsNeedsCorroboration),
            requiresAuthorAgreement: try value(.requiresAuthorAgreement, base.requiresAuthorAgreement),
            requiresTitleAgreement: try value(.requiresTitleAgreement, base.requiresTitleAgreement),
            containsMinimumShare: try value(.containsMinimumShare, base.containsMinimumShare),
            containsMinimumCharacters: try value(.containsMinimumCharacters, base.containsMinimumCharacters),
            maximumCandidates: try value(.maximumCandidates, base.maximumCandidates))
    }

    /// The documented defaults: title exact +100 / contains +50, author exact +50 / partial +25,
    /// year exact +30 / within 2 years +15, ISBN +100, accept at 60 with a 30-point lead.
    public static let `default` = MatchPolicy()
}

/// What a row is matched with: its normalised title, author keys, year and ISBN-13s.
public struct MatchQuery: Sendable, Hashable {
    /// The row's title forms.
    public var title: NormalizedTitle
    /// The row's author keys (``AuthorNormalizer/key(_:)``); empty when the row names none.
    public var authorKeys: [String]
    /// The row's year.
    public var year: Int?
    /// The row's valid ISBN-13s.
    public var isbn13s: [String]

    /// Creates a query from values as read.
    ///
    /// - Parameters:
    ///   - title: The title as read.
    ///   - authors: The authors as read (any order; "Last, First" is understood).
    ///   - year: The publication year.
    ///   - isbns: ISBN values as read; invalid ones are ignored.
    public init(title: String, authors: [String] = [], year: Int? = nil, isbns: [String] = []) {
        self.title = TitleNormalizer.normalize(title)
        self.authorKeys = authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        self.year = year
        self.isbn13s = Normalizer.readISBNs(isbns).all
    }

    /// Creates a query from a record, using its normalised forms when present.
    public init(record: BookRecord) {
        self.title = TitleNormalizer.normalize(record.title)
        if let normalized = record.normalized {
            self.authorKeys = normalized.authorKeys
            self.isbn13s = normalized.allISBN13s
        } else {
            self.authorKeys = record.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
            self.isbn13s = Normalizer.readISBNs(record.rawISBNs).all
        }
        self.year = record.year
    }
}

/// The outcome of matching one row against its candidates.
public enum MatchDecision: Sendable, Hashable {
    /// One candidate is safe to accept; it carries its score and breakdown.
    case accept(Candidate)
    /// Candidates exist but none is safe to accept; the best (at most
    /// ``MatchPolicy/maximumCandidates``), best first, for a person to choose from.
    case needsSelection([Candidate])
    /// Candidates exist, but none is a question worth asking a person: the best stays below
    /// ``MatchPolicy/acceptAt``, or agrees with the row only in author, year or ISBN and not in
    /// title. The row is not found; these candidates (at most ``MatchPolicy/maximumCandidates``,
    /// best first) are kept so that `show` can explain why.
    case belowAcceptance([Candidate])
    /// No candidates at all.
    case noCandidates
}

/// Scores candidate works against a row and decides whether one can be accepted.
///
/// **Scores** (``MatchPolicy/default``), computed on normalised forms:
///
/// | field | points |
/// |---|---|
/// | `title` | exact +100, contains +50 |
/// | `author` | exact +50, partial +25 (best pair of row and candidate authors) |
/// | `year` | exact +30, within 2 years +15 |
/// | `isbn` | +100 when the candidate has one of the row's ISBNs |
///
/// **Title exact**: the keys are equal; or equal once a leading "the", "a" or "an" is dropped
/// from both; or one side has a subtitle the other lacks and the main titles agree
/// (`Range: Why Generalists Triumph…` vs `Range`). Two different subtitles on the same main
/// title are only "contains".
///
/// **Title contains** compares whole words, never characters, so `It` is not in `Iteration`
/// and `Emma` is not in `Emmanuel`: the shorter key's words must appear as a consecutive run
/// in the longer key's words, make up at least ``MatchPolicy/containsMinimumShare`` of them
/// (default 0.6: more than half), and have at least ``MatchPolicy/containsMinimumCharacters`` letters and
/// digits. So `It` is not contained in `It Ends with Us`, `Dune` is not contained in
/// `Dune Messiah` (half the words: a different book), and `Klara and the Sun` is contained in
/// `Klara and the Sun A Novel`. The extra words must follow the shorter title (only an article
/// may precede it: `Return to X`, `Beyond X` are other books) and must not number a volume
/// (`X II`, `X 2`).
///
/// **Decision**:
/// 1. No candidates → ``MatchDecision/noCandidates``.
/// 2. A candidate with one of the row's ISBNs is decisive (when ``MatchPolicy/isbnIsDecisive``):
///    accepted, unless candidates of *different* works claim the row's ISBNs, which a person
///    must sort out. With ``MatchPolicy/isbnNeedsCorroboration`` (the default) the candidate's
///    title or author must also agree with the row's; an ISBN whose book contradicts both is
///    treated as a wrong ISBN, not as a match.
/// 3. Otherwise the best candidate is accepted only when its score ≥ ``MatchPolicy/acceptAt``,
///    it has title points (a mere "contains" also needs the year or an ISBN to agree, see
///    ``MatchPolicy/containsNeedsCorroboration``), it has author points when the row names an
///    author, and it leads the
///    best candidate of a different work by ≥ ``MatchPolicy/minimumLead``. Candidates with the
///    same work key, or the same title key and agreeing authors (Open Library's near-duplicate
///    works), are the same work, not a conflict.
/// 4. Otherwise, when the best candidate reaches ``MatchPolicy/acceptAt`` and agrees in title, a
///    safety rule stopped it (author disagreement, a runner-up too close, an uncorroborated
///    "contains", or candidates of different works claiming the row's ISBN): a question worth a
///    person's time → ``MatchDecision/needsSelection(_:)``.
/// 5. Otherwise → ``MatchDecision/belowAcceptance(_:)``: nothing worth asking about, the row is not
///    found (a shortlist nobody needs to answer is what flooded the review queue: `The Paper Road`
///    offered `The Road` with a score of 0).
///
/// Ties are broken deterministically: higher score, then ISBN points, then more ISBNs, then
/// the smaller work key, then the source name, then the smaller edition key.
///
/// **Editions of one work are one candidate**: in a shortlist, and in an accepted candidate,
/// the best-ranked edition of a work is kept and the others' edition keys are listed in
/// ``Candidate/otherEditions``; never rivals.
public struct MatchScorer: Sendable, Hashable {
    /// The points and thresholds.
    public var policy: MatchPolicy

    /// Creates a scorer.
    public init(policy: MatchPolicy = .default) {
        self.policy = policy
    }

    /// Scores one candidate.
    ///
    /// - Returns: The candidate with ``Candidate/score`` and ``Candidate/breakdown``
    ///   (`title`, `author`, `year`, `isbn`) filled in.
    public func score(_ candidate: Candidate, for query: MatchQuery) -> Candidate {
        var scored = candidate
        let candidateTitle = TitleNormalizer.normalize(candidate.title)
        let title = titlePoints(query.title, candidateTitle)
        let candidateAuthorKeys = candidate.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        let author: Int = switch AuthorNormalizer.bestAgreement(keys: query.authorKeys, candidateAuthorKeys) {
        case .exact: policy.authorExact
        case .partial: policy.authorPartial
        case .none: 0
        }
        var year = 0
        if let rowYear = query.year, let candidateYear = candidate.year {
            let difference = abs(rowYear - candidateYear)
            year = difference == 0 ? policy.yearExact : difference <= policy.yearNearWindow ? policy.yearNear : 0
        }
        let candidateISBNs = Normalizer.readISBNs(candidate.isbn13s).all
        let isbn = query.isbn13s.contains(where: candidateISBNs.contains) ? policy.isbnMatch : 0
        scored.breakdown = ["title": title, "author": author, "year": year, "isbn": isbn]
        scored.score = title + author + year + isbn
        return scored
    }

    /// Scores every candidate and decides.
    ///
    /// - Parameters:
    ///   - query: The row.
    ///   - candidates: The candidates from every source, in any order.
    /// - Returns: The decision; candidates in it carry their scores and breakdowns.
    public func decide(for query: MatchQuery, candidates: [Candidate]) -> MatchDecision {
        guard !candidates.isEmpty else { return .noCandidates }
        let ranked = candidates.map { score($0, for: query) }.sorted(by: Self.ranksBefore)
        // Editions of one work are one candidate: the best-ranked kept, the others listed.
        let shortlist = Array(Self.groupedByWork(ranked).prefix(max(1, policy.maximumCandidates)))

        if policy.isbnIsDecisive {
            let isbnMatches = ranked.filter { ($0.breakdown["isbn"] ?? 0) > 0 }
            // Nothing to corroborate with (a row with only an ISBN): the ISBN decides alone.
            let corroborationNeeded = policy.isbnNeedsCorroboration
                && !(query.title.key.isEmpty && query.authorKeys.isEmpty)
            let decisive = isbnMatches.filter { candidate in
                !corroborationNeeded
                    || (candidate.breakdown["title"] ?? 0) > 0 || (candidate.breakdown["author"] ?? 0) > 0
            }
            if let best = decisive.first {
                let conflicting = isbnMatches.contains { !isSameWork(best, $0) }
                return conflicting ? .needsSelection(shortlist) : .accept(Self.listingOtherEditions(best, in: ranked))
            }
        }

        guard let best = ranked.first else { return .noCandidates }
        let titleAgrees = !policy.requiresTitleAgreement || (best.breakdown["title"] ?? 0) > 0
        let authorAgrees = !policy.requiresAuthorAgreement || query.authorKeys.isEmpty
            || (best.breakdown["author"] ?? 0) > 0
        let runnerUp = ranked.dropFirst().first { !isSameWork(best, $0) }
        let leads = runnerUp.map { best.score - $0.score >= policy.minimumLead } ?? true
        let titleIsExact = (best.breakdown["title"] ?? 0) >= policy.titleExact
        let corroborated = !policy.containsNeedsCorroboration || titleIsExact
            || (best.breakdown["year"] ?? 0) > 0 || (best.breakdown["isbn"] ?? 0) > 0
        guard isWorthAsking(best) else { return .belowAcceptance(shortlist) }
        if titleAgrees, authorAgrees, leads, corroborated {
            return .accept(Self.listingOtherEditions(best, in: ranked))
        }
        return .needsSelection(shortlist)
    }

    /// Whether a row whose best candidate is `best` (scored) is a question worth a person's time:
    /// the candidate reaches ``MatchPolicy/acceptAt`` and agrees with the row in title (or, where
    /// the title does not agree, its ISBN is the row's and its author agrees). Applies to stored
    /// shortlists too, whose candidates carry their scores.
    public func isWorthAsking(_ best: Candidate) -> Bool {
        let title = best.breakdown["title"] ?? 0
        let isbnAndAuthor = (best.breakdown["isbn"] ?? 0) > 0 && (best.breakdown["author"] ?? 0) > 0
        return best.score >= policy.acceptAt && (!policy.requiresTitleAgreement || title > 0 || isbnAndAuthor)
    }

    /// Scores and decides for a record (normalised or not).
    public func decide(for record: BookRecord, candidates: [Candidate]) -> MatchDecision {
        decide(for: MatchQuery(record: record), candidates: candidates)
    }

    // MARK: - Title

    /// Title points for a row title and a candidate title.
    func titlePoints(_ row: NormalizedTitle, _ candidate: NormalizedTitle) -> Int {
        guard !row.key.isEmpty, !candidate.key.isEmpty else { return 0 }
        if Self.sameTitle(row.key, candidate.key) { return policy.titleExact }
        // A subtitle on one side only: compare the other side's full title with this main title.
        if row.hasSubtitle != candidate.hasSubtitle,
           Self.sameTitle(row.mainKey, candidate.mainKey) {
            return policy.titleExact
        }
        if contains(row.key, candidate.key) { return policy.titleContains }
        if row.hasSubtitle, candidate.hasSubtitle, Self.sameTitle(row.mainKey, candidate.mainKey),
           TextFolding.letterCount(row.mainKey) >= policy.containsMinimumCharacters {
            return policy.titleContains
        }
        if row.hasSubtitle || candidate.hasSubtitle, contains(row.mainKey, candidate.mainKey) {
            return policy.titleContains
        }
        return 0
    }

    private static let articles: Set<Substring> = ["the", "a", "an"]

    /// Equal keys, or equal once a leading English article is dropped.
    static func sameTitle(_ lhs: String, _ rhs: String) -> Bool {
        if lhs == rhs { return true }
        func dropArticle(_ key: String) -> ArraySlice<Substring> {
            let words = TextFolding.split(key, separator: " ")[...]
            if words.count > 1, let first = words.first, articles.contains(first) { return words.dropFirst() }
            return words
        }
        let left = dropArticle(lhs)
        return !left.isEmpty && left == dropArticle(rhs)
    }

    /// Whole-word containment with a substantial share: see the type's documentation.
    func contains(_ lhs: String, _ rhs: String) -> Bool {
        let left = TextFolding.split(lhs, separator: " ")
        let right = TextFolding.split(rhs, separator: " ")
        let (shorter, longer) = left.count <= right.count ? (left, right) : (right, left)
        guard !shorter.isEmpty, shorter.count < longer.count else { return false }
        guard Double(shorter.count) / Double(longer.count) >= policy.containsMinimumShare else { return false }
        let characters = shorter.reduce(0) { $0 + $1.unicodeScalars.count(where: { $0.properties.isAlphabetic
            || $0.properties.numericType != nil }) }
        guard characters >= policy.containsMinimumCharacters else { return false }
        for start in 0...(longer.count - shorter.count)
        where longer[start..<(start + shorter.count)].elementsEqual(shorter) {
            // Words before the shorter title make another book ("Return to X", "Beyond X",
            // "Children of Dune"); edition noise and subtitles come after. Only articles may precede.
            guard longer[..<start].allSatisfy({ Self.articles.contains($0) }) else { return false }
            // "The Fox of Vell II", "Dune 2": the extra words number a sequel, a different book.
            return !longer[(start + shorter.count)...].contains(where: Self.isVolumeNumber)
        }
        return false
    }

    private static let romanNumerals: Set<Substring> = ["ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii"]

    /// A word that numbers a volume: digits or a Roman numeral from II to XII.
    static func isVolumeNumber(_ word: Substring) -> Bool {
        romanNumerals.contains(word) || (!word.isEmpty && word.allSatisfy(\.isASCII) && word.allSatisfy(\.isNumber))
    }

    // MARK: - Ranking

    /// The same work: the same work key, or the same title key with agreeing authors.
    func isSameWork(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
        if lhs.workKey == rhs.workKey && !lhs.workKey.isEmpty { return true }
        let leftTitle = TitleNormalizer.normalize(lhs.title)
        let rightTitle = TitleNormalizer.normalize(rhs.title)
        guard Self.sameTitle(leftTitle.key, rightTitle.key) else { return false }
        let leftAuthors = lhs.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        let rightAuthors = rhs.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        return AuthorNormalizer.bestAgreement(keys: leftAuthors, rightAuthors) != .none
    }

    /// `ranked` with the editions of each work made one candidate: the first (best-ranked) edition
    /// of a work is kept, in its place, and the edition keys of the others are listed in its
    /// ``Candidate/otherEditions``. Candidates without a work key are kept as they are.
    static func groupedByWork(_ ranked: [Candidate]) -> [Candidate] {
        var kept: [Candidate] = []
        var indexOfWork: [String: Int] = [:]
        for candidate in ranked {
            guard !candidate.workKey.isEmpty else {
                kept.append(candidate)
                continue
            }
            if let index = indexOfWork[candidate.workKey] {
                kept[index].addEdition(of: candidate)
            } else {
                indexOfWork[candidate.workKey] = kept.count
                kept.append(candidate)
            }
        }
        return kept
    }

    /// `chosen` with the other editions of its work in `ranked` listed.
    static func listingOtherEditions(_ chosen: Candidate, in ranked: [Candidate]) -> Candidate {
        guard !chosen.workKey.isEmpty else { return chosen }
        var listed = chosen
        for candidate in ranked where candidate.workKey == chosen.workKey && candidate.editionIdentity != chosen.editionIdentity {
            listed.addEdition(of: candidate)
        }
        return listed
    }

    /// Best first, deterministically.
    static func ranksBefore(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
        if lhs.score != rhs.score { return lhs.score > rhs.score }
        let leftISBN = lhs.breakdown["isbn"] ?? 0
        let rightISBN = rhs.breakdown["isbn"] ?? 0
        if leftISBN != rightISBN { return leftISBN > rightISBN }
        if lhs.isbn13s.count != rhs.isbn13s.count { return lhs.isbn13s.count > rhs.isbn13s.count }
        if lhs.identity != rhs.identity { return lhs.identity < rhs.identity }
        if lhs.source != rhs.source { return lhs.source < rhs.source }
        // Editions of one work: the smaller edition key, so the edition kept never depends on
        // the order the sources answered in.
        return lhs.editionIdentity < rhs.editionIdentity
    }
}

extension Candidate {
    /// The edition this candidate stands for: its edition key, else its source and title.
    var editionIdentity: String {
        if let editionKey, !editionKey.isEmpty { return editionKey }
        return "\(source):\(title)"
    }

    /// Lists `other` (an edition of the same work) among ``otherEditions``, with the editions it
    /// listed, each once and never this candidate's own edition.
    mutating func addEdition(of other: Candidate) {
        let own = editionIdentity
        for edition in [other.editionIdentity] + other.otherEditions
        where edition != own && !otherEditions.contains(edition) {
            otherEditions.append(edition)
        }
    }
}
