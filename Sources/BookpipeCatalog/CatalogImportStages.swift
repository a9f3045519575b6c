import BookpipeEnrichment
import BookpipeCore
import BookpipePipeline
import Foundation
import GRDB
import Synchronization

/// One transaction's worth of dump lines, as read.
struct DumpChunk: Sendable {
    var lines: [DumpParseJob.RawLine]
    var bytesRead: Int
}

/// Reads a dump file in chunks of ``LocalCatalog/linesPerTransaction`` lines (at most 32 MiB).
struct ReadDumpLines: SourceStage {
    /// The reader, handed over to this source (only its task reads from it).
    private let reader: HeldReader

    var name: String { "read-dump-lines" }

    init(reader: sending DumpLineReader) {
        self.reader = HeldReader(reader)
    }

    func produce(into emit: BatchEmitter<DumpChunk>, in context: StageContext) async throws {
        while true {
            try Task.checkCancellation()
            let chunk = try reader.value.withLock { reader throws(CatalogError) -> DumpChunk? in
                var lines: [DumpParseJob.RawLine] = []
                lines.reserveCapacity(LocalCatalog.linesPerTransaction)
                var bytes = 0
                while lines.count < LocalCatalog.linesPerTransaction, bytes < 32 << 20, let line = try reader.nextLine() {
                    lines.append(DumpParseJob.RawLine(number: line.number, bytes: Array(line.bytes),
                                                      isTruncated: line.isTruncated))
                    bytes += line.bytes.count
                }
                return lines.isEmpty ? nil : DumpChunk(lines: lines, bytesRead: reader.bytesRead)
            }
            guard let chunk else { return }
            try await emit([chunk])
        }
    }
}

/// A dump reader behind a lock, so the source that owns it is `Sendable`.
private final class HeldReader: Sendable {
    let value: Mutex<DumpLineReader>
    init(_ reader: sending DumpLineReader) { value = Mutex(reader) }
}

/// Decodes the JSON of each chunk's lines into records and problems.
struct ParseDumpLines: Stage {
    var name: String { "parse-dump-lines" }
    var mayFailForBatch: Bool { false }

    func process(_ batch: consuming [DumpChunk], in context: StageContext) async throws -> [DumpParseJob.Result] {
        batch.map { DumpParseJob.parse($0.lines, bytesRead: $0.bytesRead) }
    }
}

/// Stores each parsed chunk in one transaction, then rebuilds the search entries and records the
/// import. Refuses a file whose lines are not dump lines before storing anything.
struct WriteCatalogChunks: Stage {
    let catalog: LocalCatalog
    let file: String
    let isCompressed: Bool
    let fileSize: Int?
    let progress: @Sendable (CatalogImportProgress) -> Void
    private let state: ImportState

    var name: String { "write-catalog-chunks" }

    init(catalog: LocalCatalog, file: String, isCompressed: Bool, fileSize: Int, hasRemovedKeys: Bool, isFresh: Bool,
         progress: @escaping @Sendable (CatalogImportProgress) -> Void) {
        self.catalog = catalog
        self.file = file
        self.isCompressed = isCompressed
        self.fileSize = isCompressed ? nil : fileSize
        self.progress = progress
        var importer = DumpImporter(file: file, isCompressed: isCompressed)
        importer.hasRemovedKeys = hasRemovedKeys
        importer.isFresh = isFresh
        self.state = ImportState(importer)
    }

    /// What the import has read, stored and skipped so far.
    var summary: CatalogImportSummary { state.value.withLock { $0.importer.summary } }
    /// Lines whose transaction has committed.
    var linesCommitted: Int { state.value.withLock { $0.linesCommitted } }

    func process(_ batch: [DumpParseJob.Result], in context: StageContext) async throws -> [Int] {
        for parsed in batch { try commit(parsed) }
        return []
    }

    private func commit(_ parsed: DumpParseJob.Result) throws(CatalogError) {
        var current = state.value.withLock { $0 }
        current.importer.merge(parsed)
        if !current.sawDumpLine { current.sawDumpLine = parsed.sawDumpLine }
        if current.firstProblem == nil { current.firstProblem = parsed.firstProblem }
        guard current.sawDumpLine else {
            throw .notADump(path: file, reason: current.firstProblem ?? "no line starts with a record type (/type/…)")
        }
        if !parsed.entries.isEmpty {
            var importer = current.importer
            try catalog.write("lines up to \(importer.summary.lines) of \(file)") { db in
                try importer.apply(parsed.entries, in: db)
            }
            current.importer = importer
        }
        current.linesCommitted = current.importer.summary.lines
        state.value.withLock { [current] in $0 = current }
        progress(CatalogImportProgress(
            file: file, phase: .reading, lines: current.importer.summary.lines, bytesRead: parsed.bytesRead,
            totalBytes: fileSize, searchUnitsRebuilt: 0, searchUnitsPending: 0))
    }

    func finish(in context: StageContext) async throws -> [Int] {
        var current = state.value.withLock { $0 }
        if !current.sawDumpLine {
            throw CatalogError.notADump(path: file, reason: current.importer.summary.lines == 0
                                        ? "the file is empty" : (current.firstProblem ?? "no line starts with a record type (/type/…)"))
        }
        let started = ContinuousClock.now
        current.importer.summary.searchUnitsRebuilt = try catalog.rebuildPendingSearchEntries(file: file, progress: progress)
        current.importer.summary.duration = current.importer.summary.duration + (ContinuousClock.now - started)
        let summary = current.importer.summary
        let summaryJSON = (try? JSONEncoder().encode(summary)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let finishedAt = ISO8601DateFormatter().string(from: Date())
        try catalog.write("the import record of \(file)") { db in
            try db.execute(sql: "INSERT INTO imports (path, finished_at, summary) VALUES (?, ?, ?)",
                           arguments: [file, finishedAt, summaryJSON])
        }
        state.value.withLock { [current] in $0 = current }
        return []
    }

    func start(in context: StageContext) async throws {
        state.value.withLock { $0.started = ContinuousClock.now }
    }

    func end(_ outcome: RunOutcome, in context: StageContext) async {
        state.value.withLock { state in
            if let started = state.started { state.importer.summary.duration = ContinuousClock.now - started }
        }
    }

    final class ImportState: Sendable {
        struct Value: Sendable {
            var importer: DumpImporter
            var sawDumpLine = false
            var firstProblem: String?
            var linesCommitted = 0
            var started: ContinuousClock.Instant?
        }
        let value: Mutex<Value>
        init(_ importer: DumpImporter) { value = Mutex(Value(importer: importer)) }
    }
}
