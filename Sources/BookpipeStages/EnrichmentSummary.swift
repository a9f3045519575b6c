import BookpipeCore
import BookpipeLibrary
import BookpipePipeline

/// What a run's enrichment did, computed from the run's events alone: the rows looked up and how
/// each ended (``PipelineEvent/recordsLookedUp(_:)``), what a re-enrichment changed
/// (``PipelineEvent/recordsChanged(byField:matchesByKind:)``), the rows left for a later run and
/// why (``PipelineEvent/recordsLeft(_:because:)``), and what each source did
/// (``PipelineEvent/sourcesUsed(_:)``). The command prints it; nothing is read back from the stages.
public struct EnrichmentSummary: Sendable {
    /// Rows looked up in this run, by the status they ended with.
    public private(set) var outcomes: [RecordStatus: Int] = [:]
    /// Records changed by field (`year`, `match`, …); a record counts once per field.
    public private(set) var changesByField: [String: Int] = [:]
    /// Matches changed, by kind (moved to another work, lost, found, repaired).
    public private(set) var matchChanges: [RecordChange.Kind: Int] = [:]
    /// True when the deadline stopped the run before every selected row was asked.
    public private(set) var stoppedAtDeadline = false
    /// Rows the deadline left for the next run.
    public private(set) var rowsLeftAtDeadline = 0
    /// Rows not asked because no source of the chain could be reached any more.
    public private(set) var rowsLeftUnreachable = 0
    /// What each source did, in chain order; empty when no enrichment step ran.
    public private(set) var sources: [SourceOutcome] = []

    /// The summary of `report`'s enrichment events.
    public init(report: RunReport) {
        for event in report.events {
            switch event {
            case .recordsLookedUp(let byStatus):
                for (status, count) in byStatus { outcomes[status, default: 0] += count }
            case .recordsChanged(let byField, let byKind):
                for (field, count) in byField { changesByField[field, default: 0] += count }
                for (name, count) in byKind {
                    if let kind = RecordChange.Kind(rawValue: name) { matchChanges[kind, default: 0] += count }
                }
            case .recordsLeft(let count, .deadline):
                stoppedAtDeadline = true
                rowsLeftAtDeadline += count
            case .recordsLeft(let count, .noSourceReachable):
                rowsLeftUnreachable += count
            case .sourcesUsed(let used):
                sources = used
            default:
                break
            }
        }
    }

    /// Rows looked up in this run.
    public var rowsDone: Int { outcomes.values.reduce(0, +) }

    /// True when an enrichment step ran (it tells what its sources did at the run's end, also
    /// when it looked nothing up).
    public var enrichmentRan: Bool { !sources.isEmpty }

    /// True when every source of the chain was given up as unreachable.
    public var noSourceLeft: Bool { !sources.isEmpty && sources.allSatisfy { $0.unreachable != nil } }

    /// What the run says when no source could be reached: which hosts, what to check, the rows
    /// left, and, when a local catalogue is configured, `--offline`; nil while a source was left.
    ///
    /// - Parameter catalogPath: the configured catalogue (`--catalog`), if any.
    public func noSourceLeftMessage(catalogPath: String?) -> String? {
        guard noSourceLeft else { return nil }
        let hosts = sources.compactMap { source in
            source.unreachable.map { "\(source.counters.name) at \($0.host) (\($0.cause))" }
        }
        var text = "error: no source could be reached: " + hosts.joined(separator: ", ") + ". "
        if rowsLeftUnreachable > 0 {
            text += "\(rowsLeftUnreachable.formatted()) rows were not asked and stay as they were. "
        }
        text += "Check the network connection (a proxy, a firewall, DNS) and the sources' base URLs "
            + "(--openlibrary-url, --googlebooks-url), then run the same command again; "
            + "bookpipe enrich --failed retries the rows whose lookups failed."
        if let catalogPath {
            text += " A local catalogue is configured (\(catalogPath)): add --offline to look rows up in it alone, with no network."
        }
        return text
    }

    /// The message for a run in which rows were looked up and every lookup failed (the network or
    /// the sources are down), or nil.
    public var everyLookupFailedMessage: String? {
        let done = rowsDone, failed = outcomes[.failed] ?? 0
        guard done > 0, failed == done else { return nil }
        return "error: every lookup of this run failed (\(done) \(done == 1 ? "row" : "rows")): is the network or the source down? "
            + "The rows are kept as failed; run `bookpipe enrich --failed` once the sources answer."
    }

    /// The summary's enrichment lines: rows by outcome, each source's figures, then what a
    /// re-enrichment changed, the sources given up, and the rows a deadline left.
    public func lines() -> [String] {
        let parts = [RecordStatus.enriched, .needsCandidateSelection, .notFound, .failed].compactMap { status in
            outcomes[status].map { "\($0) \(status.rawValue)" }
        }
        var lines = ["enriched in this run: \(rowsDone) rows" + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")]
        for source in sources.map(\.counters) {
            var line = "  \(source.name): \(source.requests) requests, \(source.cacheHits) cache hits, "
                + "\(source.retries) retries, \(source.rateLimited) × 429, \(source.failures) failed lookups"
            if let latency = source.meanLatencyMilliseconds { line += ", mean latency \(Int(latency.rounded())) ms" }
            lines.append(line)
        }
        if (outcomes[.failed] ?? 0) > 0 {
            lines.append("  failed lookups are kept as failed (never as not found); retry them with `bookpipe enrich --failed`.")
        }
        return lines + changeLines
    }

    /// The lines for a re-enrichment: what changed (records by field, matches moved and lost
    /// named), the sources given up, and, when the deadline stopped the run, the rows left and how
    /// to go on.
    public var changeLines: [String] {
        var lines: [String] = []
        if !changesByField.isEmpty {
            let parts = RecordChange.fields.compactMap { field -> String? in
                guard let count = changesByField[field] else { return nil }
                var text = "\(field) \(count.formatted())"
                if field == "match" {
                    let detail = [(RecordChange.Kind.moved, "to another work"), (.lost, "lost"), (.found, "found"),
                                  (.repaired, "edition key → work key")]
                        .compactMap { kind, label in matchChanges[kind].map { "\($0.formatted()) \(label)" } }
                    if !detail.isEmpty { text += ": " + detail.joined(separator: ", ") }
                }
                return text
            }
            lines.append("changed records by field: " + parts.joined(separator: ", "))
            if (matchChanges[.moved] ?? 0) + (matchChanges[.lost] ?? 0) > 0 {
                lines.append("  matches moved or lost carry a finding (enrich.match-moved, enrich.match-lost; "
                             + "bookpipe show ID tells the record's story); the change log keeps old and new values")
            }
        }
        for source in sources {
            guard let unreachable = source.unreachable else { continue }
            lines.append("  \(source.counters.name): \(unreachable.host) could not be reached (\(unreachable.cause)) for "
                         + "\(unreachable.lookupsInARow) lookups in a row, so it was not asked again; its lookups are failed "
                         + "(retryable), the other sources went on")
        }
        let remote = sources.filter(\.isRemote)
        if !remote.isEmpty, remote.allSatisfy({ $0.unreachable != nil }), sources.contains(where: { !$0.isRemote }) {
            lines.append("  no remote source could be reached: only the local catalogue answered; with --offline a run asks "
                         + "it alone, and rows it does not hold are notFound instead of failed")
        }
        if stoppedAtDeadline {
            lines.append("stopped at the deadline: \(rowsLeftAtDeadline.formatted()) rows left; run the same command again to continue "
                         + "(failed lookups due first, then never enriched, then the stalest).")
        }
        return lines
    }
}
