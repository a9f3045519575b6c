import BookpipeCore
import BookpipePipeline
import BookpipeReport
import BookpipeLibrary
import Foundation

/// The report stage: the run resource ``LibraryStore`` must be given by the command.
public enum ReportStages {
    /// `write-report`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: "write-report",
            summary: "At the end of the run, writes the library's data-quality report (HTML, JSON, CSV of problem rows).",
            kind: .step,
            parameters: [
                ParameterSpec("html", .string, summary: "the HTML page to write"),
                ParameterSpec("json", .string, summary: "the JSON report to write"),
                ParameterSpec("csv", .string, summary: "the CSV of problem rows to write"),
                ParameterSpec("scope", .string, default: .string("all"), summary: "all: the whole library; run: the records this run wrote"),
            ],
            contract: StageContract(reads: [.records, .library], writes: [.reportFiles])
        ) { parameters in
            let scope = parameters.string("scope") ?? "all"
            guard scope == "all" || scope == "run" else {
                throw ReportStageError.badScope(scope)
            }
            return .stage(WriteReport(
                destinations: ReportDestinations(html: parameters.string("html"), json: parameters.string("json"),
                                                 csv: parameters.string("csv")),
                runOnly: scope == "run"))
        },
    ]
}

/// A bad `write-report` parameter.
public enum ReportStageError: Error, Sendable, CustomStringConvertible {
    /// `scope` is neither `all` nor `run`.
    case badScope(String)

    /// A message for people.
    public var description: String {
        switch self {
        case .badScope(let scope): return "scope \"\(scope)\" is not one of: all, run"
        }
    }
}

/// A sink that passes records on untouched and, once the last batch has gone through, waits for
/// the library's writer to commit everything submitted before it and writes the data-quality
/// report (``QualityReportBuilder``) to the destinations. Put it last.
public struct WriteReport: Stage {
    /// Where the report goes.
    public let destinations: ReportDestinations
    /// True: only the records this run wrote; false: the whole library.
    public let runOnly: Bool

    /// Creates the stage.
    public init(destinations: ReportDestinations, runOnly: Bool = false) {
        self.destinations = destinations
        self.runOnly = runOnly
    }

    /// Passes the batch on.
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] { batch }

    /// Records pass through untouched.
    public var mayFailForBatch: Bool { false }

    /// Writes the report.
    /// - Throws: ``StoreError`` when the library cannot be read, ``ReportError`` when a file cannot be
    ///   written, ``PipelineError`` when no library is open.
    public func finish(in context: StageContext) async throws -> [BookRecord] {
        let store = try context.require((any Library).self, for: name)
        try await store.flushWrites()
        let runID = runOnly ? context.resource(LibraryRun.self)?.currentID : nil
        let now = Date()
        let composed = try await QualityReportBuilder(store: store, options: .init(runID: runID), now: now).compose()
        var report = composed.report
        // Compared with the previous report of its scope, then kept for the next one.
        try await ReportHistory.compare(&report, in: store)
        try await ReportHistory.save(report, in: store, at: now)
        try await destinations.write(report, findings: composed.findings)
        context.progress.emit(.message(ReportRenderer.terminalSummary(report)))
        return []
    }
}
