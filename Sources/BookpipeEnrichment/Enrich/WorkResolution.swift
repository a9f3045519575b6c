import BookpipeCore

/// Ties candidates that name no work (a Google Books volume is an edition) to their Open Library
/// work through their ISBNs, so editions of one work are one candidate (``MatchScorer`` groups
/// them) and a match names its work.
///
/// **Where the works come from.** The sources of the chain that name works
/// (``MetadataSource/namesWorks``), in the order ``WorkResolution/resolvers(in:)`` gives: the
/// local catalogue first when one is configured, then Open Library's Books API, whose
/// ``MetadataSource/lookUp(isbns:)`` batches about 25 ISBNs a request. The questions go through the
/// lookup cache like every other, so an ISBN the chain already asked costs nothing, and none is
/// asked twice.
///
/// **When a candidate is tied.** Its ISBN-13s (Google's `ISBN_10`s converted) are looked up; the
/// candidate gets a work only when the ISBNs agree: at least one names a work, every one that
/// names a work names the same one, and no lookup of its ISBNs failed (a failure might have
/// named another). The work's own record (the resolver's candidate for that ISBN) must also be
/// the same book: its authors agree with the candidate's, or, when either names none, its title.
/// A volume without ISBNs, or whose ISBNs name several works, stays without one.
///
/// ```swift
/// let works = try await WorkResolution.works(for: ["9780140328721"], resolvers: [openLibrary], cache: cache)
/// WorkResolution.work(of: googleVolume, in: works)   // "/works/OL45804W", or nil when the ISBNs disagree
/// ```
enum WorkResolution {
    /// What the resolvers said about one ISBN.
    struct ISBNWorks: Sendable {
        /// The works its editions belong to, with the resolver's candidate for each.
        var works: [String: Candidate] = [:]
        /// True when a resolver's lookup failed (nothing can be concluded from the others).
        var failed = false
    }

    /// The sources of `chain` that name works, in the order they are asked: non-remote (the local
    /// catalogue) before remote (Open Library).
    static func resolvers(in chain: [any MetadataSource]) -> [any MetadataSource] {
        let naming = chain.filter(\.namesWorks)
        return naming.filter { !$0.isRemote } + naming.filter(\.isRemote)
    }

    /// Asks `resolvers` about `isbns`: each resolver only for the ISBNs the earlier ones did not
    /// tie to a work. A lookup stopped by the run's deadline leaves the ISBNs it asked unknown.
    /// - Throws: `CancellationError`; ``StoreError`` when the cache cannot be read or written.
    static func works(for isbns: [String], resolvers: [any MetadataSource], cache: LookupCache) async throws
        -> [String: ISBNWorks] {
        var result: [String: ISBNWorks] = [:]
        var open = isbns
        for resolver in resolvers where !open.isEmpty {
            let answers: [LookupQuestion: LookupAnswer]
            do {
                answers = try await cache.answers(open.map { .isbn($0) }, from: resolver)
            } catch is RequestDeadlineReached {
                for isbn in open { result[isbn, default: ISBNWorks()].failed = true }
                break
            }
            var stillOpen: [String] = []
            for isbn in open {
                switch answers[.isbn(isbn)] {
                case .found(let candidates)?:
                    for candidate in candidates where WorkKey.isWork(candidate.workKey) {
                        result[isbn, default: ISBNWorks()].works[candidate.workKey] = candidate
                    }
                    if result[isbn]?.works.isEmpty ?? true { stillOpen.append(isbn) }
                case .failed?, nil:
                    result[isbn, default: ISBNWorks()].failed = true
                    stillOpen.append(isbn)
                case .notFound?:
                    stillOpen.append(isbn)
                }
            }
            open = stillOpen
        }
        return result
    }

    /// The work `candidate` belongs to by its ISBNs (see the type's rule), or nil.
    static func work(of candidate: Candidate, in works: [String: ISBNWorks]) -> String? {
        guard candidate.workKey.isEmpty, !candidate.isbn13s.isEmpty else { return nil }
        var named: [String: Candidate] = [:]
        for isbn in candidate.isbn13s {
            guard let answer = works[isbn] else { continue }
            if answer.failed && answer.works.isEmpty { return nil }
            for (key, record) in answer.works { named[key] = record }
        }
        guard named.count == 1, let (key, record) = named.first, isSameBook(candidate, record) else { return nil }
        return key
    }

    /// True when the work's record and the edition agree on the authors, or, when either names
    /// none, on the title's comparison key.
    static func isSameBook(_ edition: Candidate, _ work: Candidate) -> Bool {
        let left = edition.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        let right = work.authors.map(AuthorNormalizer.key).filter { !$0.isEmpty }
        if !left.isEmpty, !right.isEmpty { return AuthorNormalizer.bestAgreement(keys: left, right) != .none }
        return TitleNormalizer.normalize(edition.title).key == TitleNormalizer.normalize(work.title).key
    }
}
