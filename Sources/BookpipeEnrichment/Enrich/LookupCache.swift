import BookpipeCore
import BookpipeLibrary
import Foundation

/// Answers questions from the library's cache first and asks a source only what the cache does
/// not know; definite answers (found, not found) are stored, failures never are, so a failed
/// lookup is asked again by the next run and a finished one never is.
struct LookupCache: Sendable {
    /// The library holding the cache; nil turns caching off.
    var store: (any LibraryEnrichmentStore)?
    /// Ignore cached answers (still store the new ones): `--refresh`.
    var refresh: Bool
    /// Cached answers older than this are asked again; nil keeps them forever.
    var maximumAge: Duration?

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// Answers for these questions from `source`: cached ones first, the rest asked (ISBNs in
    /// one call, which the source batches), definite new answers stored.
    func answers(_ questions: [LookupQuestion], from source: any MetadataSource) async throws
        -> [LookupQuestion: LookupAnswer] {
        var answers: [LookupQuestion: LookupAnswer] = [:]
        let usesCache = source.isRemote && store != nil
        var missing = questions
        if usesCache, let store, !refresh {
            let notBefore = maximumAge.map { Date().addingTimeInterval(-$0.timeInterval) }
            let cached = try await store.cachedAnswers(source: source.name, questions: questions.map(\.cacheKey),
                                                 notBefore: notBefore)
            let decoder = JSONDecoder()
            missing = []
            for question in questions {
                if let hit = cached[question.cacheKey],
                   let answer = try? decoder.decode(LookupAnswer.self, from: Data(hit.answerJSON.utf8)),
                   !Self.namesAnEditionAsWork(answer) {
                    answers[question] = Self.withWorkKeysOnly(answer)
                } else {
                    missing.append(question)
                }
            }
            let hits = questions.count - missing.count
            if hits > 0 { source.statistics.update { $0.cacheHits += hits } }
        }
        guard !missing.isEmpty else { return answers }

        var fresh: [LookupQuestion: LookupAnswer] = [:]
        let isbns = missing.compactMap { question -> String? in
            if case .isbn(let isbn) = question { return isbn }
            return nil
        }
        if !isbns.isEmpty {
            let byISBN = try await source.lookUp(isbns: isbns)
            for isbn in isbns {
                fresh[.isbn(isbn)] = byISBN[isbn] ?? .failed(reason: "\(source.name) gave no answer for ISBN \(isbn)")
            }
        }
        for question in missing {
            guard case .title = question else { continue }
            fresh[question] = try await source.answer(question)
        }
        if usesCache, let store {
            let definite = fresh.filter { $0.value.isDefinite }.compactMap { question, answer -> (String, String)? in
                guard let data = try? Self.encoder.encode(answer) else { return nil }
                return (question.cacheKey, String(decoding: data, as: UTF8.self))
            }
            try await store.cacheAnswers(source: source.name, definite.map { (question: $0.0, answerJSON: $0.1) }, fetchedAt: Date())
        }
        answers.merge(fresh) { _, new in new }
        return answers
    }
}

extension LookupCache {
    /// True for an answer cached before work keys were work keys (Open Library's `jscmd=data`
    /// answers named the edition `/books/OL…M` as the work): asked again, so the stored match is fixed.
    static func namesAnEditionAsWork(_ answer: LookupAnswer) -> Bool {
        guard case .found(let candidates) = answer else { return false }
        return candidates.contains { $0.source == "openlibrary" && $0.workKey.hasPrefix("/books/") }
    }

    /// A cached answer with every work key a work key: one cached before Google Books volumes
    /// stopped naming themselves as works (`googlebooks:<id>`) gets an empty work key, the volume
    /// as its edition key — what the source answers today, without asking it again.
    static func withWorkKeysOnly(_ answer: LookupAnswer) -> LookupAnswer {
        guard case .found(var candidates) = answer,
              candidates.contains(where: { !$0.workKey.isEmpty && !WorkKey.isWork($0.workKey) }) else { return answer }
        for index in candidates.indices where !candidates[index].workKey.isEmpty && !WorkKey.isWork(candidates[index].workKey) {
            if candidates[index].editionKey == nil { candidates[index].editionKey = candidates[index].workKey }
            candidates[index].workKey = ""
        }
        return .found(candidates)
    }
}
