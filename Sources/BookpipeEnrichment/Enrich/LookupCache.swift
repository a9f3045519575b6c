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
        let isbnQuestions = missing.filter { if case .isbn = $0 { return true } else { return false } }
        let titleQuestions = missing.filter { if case .title = $0 { return true } else { return false } }
        guard usesCache, let store else {
            fresh = try await Self.ask(isbnQuestions, from: source)
            for question in titleQuestions { fresh[question] = try await source.answer(question) }
            return answers.merging(fresh) { _, new in new }
        }
        // Each question is asked by one asker at a time across every run on the library (every
        // process, every machine): the ISBNs in one go, then each title search just before it is sent.
        let asker = ClaimOwner.thisProcess(command: "lookup").id
        if !isbnQuestions.isEmpty {
            fresh.merge(try await askOnce(isbnQuestions, from: source, store: store, asker: asker)) { _, new in new }
        }
        for question in titleQuestions {
            fresh.merge(try await askOnce([question], from: source, store: store, asker: asker)) { _, new in new }
        }
        answers.merge(fresh) { _, new in new }
        return answers
    }

    /// How long a question taken stays this asker's without an answer: after that another run
    /// takes it over (the asker died). The claims' lease (``EnrichmentClaim``): 30 s.
    var questionLease: Duration = .seconds(30)

    /// How often a run waiting for another's answer looks in the cache.
    static let answerPoll: Duration = .milliseconds(250)

    /// Asks `questions` that no other run is asking (``LibraryEnrichmentStore/takeQuestions(source:_:asker:lease:)``),
    /// caches the definite answers, gives the questions up, and waits for the answers of those
    /// another run holds — asking them itself when that run gives them up unanswered or its lease
    /// runs out. Answers another run brought count as cache hits.
    private func askOnce(_ questions: [LookupQuestion], from source: any MetadataSource,
                         store: any LibraryEnrichmentStore, asker: String) async throws -> [LookupQuestion: LookupAnswer] {
        var result: [LookupQuestion: LookupAnswer] = [:]
        var left = questions
        let startedAt = Date()
        while !left.isEmpty {
            let taken = try await store.takeQuestions(source: source.name, left.map(\.cacheKey), asker: asker, lease: questionLease)
            let mine = left.filter { taken.contains($0.cacheKey) }
            if !mine.isEmpty {
                let asked: [LookupQuestion: LookupAnswer]
                do {
                    asked = try await Self.ask(mine, from: source)
                    try await cache(asked, from: source, in: store)
                } catch {
                    try? await store.releaseQuestions(source: source.name, mine.map(\.cacheKey), asker: asker)
                    throw error
                }
                try await store.releaseQuestions(source: source.name, mine.map(\.cacheKey), asker: asker)
                result.merge(asked) { _, new in new }
            }
            left = left.filter { !taken.contains($0.cacheKey) }
            guard !left.isEmpty else { break }
            // A question held by a process of this host that no longer runs is free at once
            // (another host's process cannot be checked: its lease decides).
            let askers = try await store.questionAskers(source: source.name, left.map(\.cacheKey))
            var freed = false
            for (question, holder) in askers where Self.askerIsGone(holder) {
                try await store.releaseQuestions(source: source.name, [question], asker: holder)
                freed = true
            }
            if freed { continue }
            // Another run is asking these: its answers reach the cache.
            try await Task.sleep(for: Self.answerPoll)
            let notBefore = refresh ? startedAt : maximumAge.map { Date().addingTimeInterval(-$0.timeInterval) }
            let cached = try await store.cachedAnswers(source: source.name, questions: left.map(\.cacheKey), notBefore: notBefore)
            let decoder = JSONDecoder()
            var hits = 0
            left = left.filter { question in
                guard let hit = cached[question.cacheKey],
                      let answer = try? decoder.decode(LookupAnswer.self, from: Data(hit.answerJSON.utf8)) else { return true }
                result[question] = Self.withWorkKeysOnly(answer)
                hits += 1
                return false
            }
            if hits > 0 { source.statistics.update { $0.cacheHits += hits } }
        }
        return result
    }

    /// True when `asker` (a ``ClaimOwner`` id, `<host>:<pid>:<random>`) is a process of this host
    /// that no longer runs.
    static func askerIsGone(_ asker: String) -> Bool {
        let parts = asker.split(separator: ":")
        guard parts.count >= 3, let processID = Int32(parts[parts.count - 2]) else { return false }
        let host = parts.dropLast(2).joined(separator: ":")
        return ClaimOwner(id: asker, host: host, processID: processID, command: "lookup", startedAt: Date()).isGoneFromThisHost
    }

    /// Asks the source: ISBNs in one call (which the source batches), titles one by one.
    private static func ask(_ questions: [LookupQuestion], from source: any MetadataSource) async throws
        -> [LookupQuestion: LookupAnswer] {
        var fresh: [LookupQuestion: LookupAnswer] = [:]
        let isbns = questions.compactMap { question -> String? in
            if case .isbn(let isbn) = question { return isbn }
            return nil
        }
        if !isbns.isEmpty {
            let byISBN = try await source.lookUp(isbns: isbns)
            for isbn in isbns {
                fresh[.isbn(isbn)] = byISBN[isbn] ?? .failed(reason: "\(source.name) gave no answer for ISBN \(isbn)")
            }
        }
        for question in questions {
            guard case .title = question else { continue }
            fresh[question] = try await source.answer(question)
        }
        return fresh
    }

    /// Stores the definite answers (found, not found); failures never are.
    private func cache(_ fresh: [LookupQuestion: LookupAnswer], from source: any MetadataSource,
                       in store: any LibraryEnrichmentStore) async throws {
        let definite = fresh.filter { $0.value.isDefinite }.compactMap { question, answer -> (String, String)? in
            guard let data = try? Self.encoder.encode(answer) else { return nil }
            return (question.cacheKey, String(decoding: data, as: UTF8.self))
        }
        try await store.cacheAnswers(source: source.name, definite.map { (question: $0.0, answerJSON: $0.1) }, fetchedAt: Date())
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
