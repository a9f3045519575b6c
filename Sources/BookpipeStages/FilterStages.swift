import BookpipeCore
import BookpipeLibrary
import BookpipePipeline
import Synchronization

/// The stages that pass on only some records: `filter` (the `bookpipe list` query language) and
/// `dedupe-records` (one record per book).
///
/// Both drop records, so in a pipeline that reads files they stand after `store-records` (every
/// row is stored; later steps — enrichment, an export — see only what passes) or in a pipeline
/// that stores nothing and ends in `write-export`. ``StageRegistry`` refuses them before a store.
public enum FilterStages {
    /// `filter` and `dedupe-records`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: "filter",
            summary: "Passes on the records a `bookpipe list` query matches (the same rule as `list`).",
            kind: .step,
            parameters: [
                ParameterSpec("query", .string,
                              summary: "field queries and words, as `bookpipe list` takes them (\"shelf:to-read ^rating:<3\"; "
                                  + "quote a value with spaces: title:\"left hand\")"),
            ],
            contract: StageContract(dropsRecords: true)
        ) { parameters in
            let text = parameters.string("query") ?? ""
            let query: LibraryQuery
            do throws(LibraryQueryError) {
                query = try LibraryQuery.parse(LibraryQuery.tokens(text))
            } catch {
                throw StageParameterError(parameter: "query", problem: "cannot be read: \(error.description)")
            }
            guard !query.isEmpty else {
                throw StageParameterError(parameter: "query", problem: "names nothing to look for (every record would pass)")
            }
            if query.conditions.contains(where: { if case .gone = $0.test { true } else { false } }) {
                throw StageParameterError(parameter: "query", problem: "names gone:, which only a library's lists know; "
                                          + "use `bookpipe list gone:yes`")
            }
            return .stage(FilterRecords(query: query, text: text))
        },
        StageDescriptor(
            name: "dedupe-records",
            summary: "Passes on the first record of each book; later records of the same book are dropped.",
            kind: .step,
            parameters: [
                ParameterSpec("by", .stringList, default: .stringList(DuplicateKind.allCases.map(\.stepName)),
                              summary: "what makes two records one book: "
                                  + DuplicateKind.allCases.map(\.stepName).joined(separator: ", ")),
            ],
            contract: StageContract(dropsRecords: true, isSequential: true)
        ) { parameters in
            var kinds: [DuplicateKind] = []
            for name in parameters.stringList("by") ?? [] {
                guard let kind = DuplicateKind.allCases.first(where: { $0.stepName == name }) else {
                    throw StageParameterError(parameter: "by", problem: "takes "
                                              + DuplicateKind.allCases.map(\.stepName).joined(separator: ", ") + ", not \"\(name)\"")
                }
                if !kinds.contains(kind) { kinds.append(kind) }
            }
            guard !kinds.isEmpty else {
                throw StageParameterError(parameter: "by", problem: "names none of "
                                          + DuplicateKind.allCases.map(\.stepName).joined(separator: ", "))
            }
            return .stage(DedupeRecords(by: kinds))
        },
    ]
}

/// Passes on the records a ``LibraryQuery`` matches, by the query's rule over values
/// (``LibraryQuery/matches(_:isGone:)``), the rule every engine's listing is held to: the step and
/// `bookpipe list` with the same query agree on the same records. At the end it tells how many passed.
public struct FilterRecords: Stage {
    /// The stage's name in a built pipeline (``PipelineStep/stageName``; files name it `filter`).
    public static let stageName = "filter-records"
    /// What a record must match.
    public var query: LibraryQuery
    /// The query as written, for the run's summary.
    public var text: String
    private let tally = StepState((passed: 0, seen: 0))

    /// Creates the step.
    public init(query: LibraryQuery, text: String) {
        self.query = query
        self.text = text
    }

    /// Matching is pure and cannot fail.
    public var mayFailForBatch: Bool { false }

    /// The batch's records that match.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        var records = consume batch
        let seen = records.count
        let settings = context.resource(EnrichmentSettings.self)
        var passedOver = 0
        records.removeAll { record in
            guard !query.matches(record) else { return false }
            // A row the run would look up, dropped before its lookup: progress no longer waits for it.
            if let settings, settings.isEnabled, !record.thisRun.lookedUp,
               record.thisRun.chosenForLookup || settings.statuses.contains(record.status) {
                passedOver += 1
            }
            return true
        }
        settings?.run.passOver(rows: passedOver)
        let passed = records.count
        tally.value.withLock { $0.passed += passed; $0.seen += seen }
        return records
    }

    /// Tells the run how many records passed.
    public func finish(in context: StageContext) async throws -> [BookRecord] {
        let (passed, seen) = tally.value.withLock { ($0.passed, $0.seen) }
        context.report(.note("filter \(text): \(CountText.number(passed)) of \(CountText.counted(seen, "record")) passed"))
        return []
    }
}

/// Passes on the first record of each book and drops the later ones: two records are one book
/// when they share a key of one of the chosen ``DuplicateKind``s (the report's duplicate rules),
/// directly or through records between them. At the end it tells how many it dropped, and why.
public struct DedupeRecords: Stage {
    /// What makes two records one book.
    public var kinds: [DuplicateKind]
    private let state = StepState(State())

    private struct State {
        var seen: [DuplicateKind: Set<String>] = [:]
        var dropped: [DuplicateKind: Int] = [:]
        var total = 0
    }

    /// Creates the step.
    public init(by kinds: [DuplicateKind]) {
        self.kinds = kinds
    }

    /// Deduplicating cannot fail.
    public var mayFailForBatch: Bool { false }

    /// The batch's records that are no earlier record's book.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        var records = consume batch
        state.value.withLock { state in
            state.total += records.count
            records.removeAll { record in
                let keys = kinds.map { ($0, $0.key(of: record)) }
                let earlier = keys.first { kind, key in key.map { state.seen[kind, default: []].contains($0) } ?? false }
                // Every key of the record joins the book's, kept or not: a third record that shares
                // only this one's title is the same book too.
                for case let (kind, key?) in keys { state.seen[kind, default: []].insert(key) }
                if let earlier { state.dropped[earlier.0, default: 0] += 1 }
                return earlier != nil
            }
        }
        return records
    }

    /// Tells the run how many records it dropped, by reason.
    public func finish(in context: StageContext) async throws -> [BookRecord] {
        let (dropped, total) = state.value.withLock { ($0.dropped, $0.total) }
        let count = dropped.values.reduce(0, +)
        let reasons = kinds.compactMap { kind in dropped[kind].map { "\(kind.phrase) \(CountText.number($0))" } }
        context.report(.note("dedupe-records: \(CountText.number(count)) of \(CountText.counted(total, "record")) dropped as the same book "
                             + "as an earlier one" + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")))
        return []
    }
}

/// A step's state across the batches of one run, shared by the copies of the step the runner makes.
private final class StepState<Value: Sendable>: Sendable {
    let value: Mutex<Value>

    init(_ initial: Value) {
        value = Mutex(initial)
    }
}
