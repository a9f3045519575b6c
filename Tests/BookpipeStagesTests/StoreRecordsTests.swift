import BookpipeCore
import BookpipeIngest
import BookpipePipeline
import BookpipeStore
import Foundation
import Synchronization
import Testing
@testable import BookpipeStages

/// Writes a small Goodreads-shaped export of `rows` books (and `rejected` rows with an unclosed
/// quote at the end) and returns its path.
func writeExport(rows: Int, badRows: Int = 0) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-stages-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var text = "Book Id,Title,Author,ISBN,ISBN13,Year Published\n"
    for row in 1...rows {
        text += "\(row),Book Number \(row),Author \(row % 97),,,\(1950 + row % 70)\n"
    }
    for row in 0..<badRows { text += "\(rows + row + 1),\"Unclosed,Someone,,,2000\n" }
    let path = directory.appendingPathComponent("export.csv").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

func temporaryLibrary() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-stages-\(UUID().uuidString).sqlite").path
}

/// Checks, for every batch it gets, that each record is in the library once the writes submitted
/// so far are committed (the store step's contract), and that a write it makes lands after them.
struct CheckCommitted: Stage {
    let seen: Counter
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let store = try context.require((any Library).self, for: name)
        // A later step's write through the library is committed after the rows: an update finds them.
        var updated = batch
        for index in updated.indices { updated[index].enrichment = EnrichmentResult(status: .notFound) }
        try await store.update(updated)
        let stored = try await store.records(ids: batch.map(\.id)).filter { $0.status == .notFound }
        seen.add(batch.count, missing: batch.count - stored.count)
        return batch
    }
}

final class Counter: Sendable {
    private let value = Mutex<(records: Int, missing: Int)>((0, 0))
    func add(_ records: Int, missing: Int) { value.withLock { $0.records += records; $0.missing += missing } }
    var records: Int { value.withLock { $0.records } }
    var missing: Int { value.withLock { $0.missing } }
}

@Suite(.timeLimit(.minutes(5)))
struct StoreRecordsTests {
    @Test("The ten-line pipeline of docs/pipelines.md imports a file, marks it complete and reports what it stored")
    func readmeExample() async throws {
        let path = try writeExport(rows: 59)
        let libraryPath = temporaryLibrary()
        let pipeline = Pipeline("csv-import") {
            ReadCSV(files: [path])
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
        }
        #expect(pipeline.plan.hasPrefix("pipeline csv-import\n  source  read-csv"))
        let library = StageResources().adding(try LibraryStore(path: libraryPath))
        let report = try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: pipeline.name, resources: library))
        let stored = report.events.compactMap { event -> InputStorage? in
            if case .inputStored(let storage) = event { return storage } else { return nil }
        }
        #expect(stored.count == 1)
        #expect(stored.first?.stored == 59)
        #expect(stored.first?.isComplete == true)
        let store = try LibraryStore(path: libraryPath)
        #expect(try store.counts().records == 59)
        #expect(try store.sourceFiles().first?.isComplete == true)
    }

    @Test("Every write after store-records lands after its rows: updates of passed-on rows always find them (20,000 rows)")
    func passesOnOnlyCommittedRecords() async throws {
        let path = try writeExport(rows: 20_000, badRows: 3)
        let libraryPath = temporaryLibrary()
        let counter = Counter()
        let pipeline = Pipeline("checked") {
            ReadCSV(files: [path], batchSize: 256)
            NormalizeRecords()
            StoreRecords().onFailure(.stopRun)
            CheckCommitted(seen: counter).onFailure(.stopRun)
        }
        let store = try LibraryStore(path: libraryPath)
        try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: "checked",
                                                                        resources: StageResources().adding(store)))
        #expect(counter.records == 20_000)
        #expect(counter.missing == 0)
        let counts = try store.counts()
        #expect(counts.records == 20_000)
        #expect(counts.byStatus[.notFound] == 20_000)
        #expect(counts.rejected == 3)
        #expect(try store.sourceFiles().first?.isComplete == true)
    }

    @Test("A newer export's writes wait until it is read whole, then pass on committed; past the limit they are written at once and the older-export check is skipped",
          arguments: [1, 50_000])
    func newerExportWritesWait(heldWritesLimit: Int) async throws {
        let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples")
        let store = try LibraryStore(path: temporaryLibrary())
        func run(_ name: String) async throws -> (InputStorage?, Counter) {
            let counter = Counter()
            let report = try await PipelineRunner().run(Pipeline("newer") {
                ReadCSV(files: [samples.appendingPathComponent(name).path], batchSize: 8)
                NormalizeRecords()
                StoreRecords(heldWritesLimit: heldWritesLimit)
                CheckCommitted(seen: counter)
            }, context: StageContext(pipelineName: "newer", resources: StageResources().adding(store)))
            let storage = report.events.compactMap { event -> InputStorage? in
                if case .inputStored(let storage) = event { return storage } else { return nil }
            }.first
            return (storage, counter)
        }
        _ = try await run("goodreads_library_export.csv")
        // A month later: one new book, one with a new shelf and rating (2 records written).
        let (storage, counter) = try await run("goodreads_library_export-december.csv")
        #expect(storage?.isReimport == true)
        #expect(storage?.stored == 1 && storage?.changed == 1)
        #expect(storage?.olderCheckSkipped == (heldWritesLimit < 2))
        #expect(storage?.isComplete == true)
        // The new record goes on to enrichment (the changed one's match stands), and was in the
        // library when it was passed on.
        #expect(counter.records == 1)
        #expect(counter.missing == 0)
        #expect(try store.counts().records == 60)
    }

    @Test("Importing again stores nothing new, says the file was imported, and passes on nothing to enrich")
    func secondImport() async throws {
        let path = try writeExport(rows: 40)
        let store = try LibraryStore(path: temporaryLibrary())
        func run() async throws -> (InputStorage?, Int) {
            let counter = Counter()
            let report = try await PipelineRunner().run(Pipeline("again") {
                ReadCSV(files: [path])
                NormalizeRecords()
                StoreRecords()
                CheckCommitted(seen: counter)
            }, context: StageContext(pipelineName: "again", resources: StageResources().adding(store)))
            let storage = report.events.compactMap { event -> InputStorage? in
                if case .inputStored(let storage) = event { return storage } else { return nil }
            }.first
            return (storage, counter.records)
        }
        let (first, passedFirst) = try await run()
        #expect(first?.stored == 40)
        #expect(passedFirst == 40)
        let (second, passedSecond) = try await run()
        #expect(second?.wasAlreadyImported == true)
        #expect(second?.stored == 0)
        #expect(second?.alreadyStored == 40)
        #expect(passedSecond == 0, "stored rows pass on only when the run enriches")
        #expect(try store.counts().records == 40)
    }

    @Test("Records that arrive before their input's announcement are held, then stored")
    func recordsBeforeAnnouncement() async throws {
        struct EarlySource: SourceStage {
            func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
                let input = InputFile(path: "early.csv", fileHash: "e4", format: "test", formatDescription: "test")
                try await emit((1...5).map { BookRecord(origin: RecordOrigin(file: "early.csv", fileHash: "e4", row: $0, line: $0 + 1),
                                                        title: "Early \($0)") })
                try await emit.event(.inputStarted(input))
                try await emit.event(.inputFinished(input, rowsRead: 5))
            }
        }
        let store = try LibraryStore(path: temporaryLibrary())
        let report = try await PipelineRunner().run(Pipeline("early") {
            EarlySource()
            StoreRecords()
        }, context: StageContext(pipelineName: "early", resources: StageResources().adding(store)))
        #expect(try store.counts().records == 5)
        #expect(try store.sourceFile(hash: "e4")?.isComplete == true)
        #expect(report.hasStorage)
    }

    @Test("save-enrichment stores the records marked as looked up in this run, and only those; the summary counts its events")
    func savesWhatWasLookedUp() async throws {
        struct LookedUpSource: SourceStage {
            func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
                try await emit((1...4).map { row in
                    var record = BookRecord(origin: RecordOrigin(file: "marks.csv", fileHash: "m1", row: row, line: row + 1),
                                            title: "Book \(row)")
                    record.enrichment = EnrichmentResult(status: .notFound)
                    // Rows 1 and 2 were looked up in this run; 3 and 4 carry an answer from before.
                    record.thisRun.lookedUp = row <= 2
                    return record
                })
            }
        }
        let store = try LibraryStore(path: temporaryLibrary())
        try store.insert((1...4).map { BookRecord(origin: RecordOrigin(file: "marks.csv", fileHash: "m1", row: $0, line: $0 + 1),
                                                  title: "Book \($0)") })
        let report = try await PipelineRunner().run(Pipeline("marks") {
            LookedUpSource()
            SaveEnrichment()
        }, context: StageContext(pipelineName: "marks", resources: StageResources().adding(store as any Library)
            .adding(EnrichmentSettings())))
        #expect(try store.counts().byStatus == [.notFound: 2, .pending: 2])
        #expect(try store.records(ids: ["m1:1", "m1:2"]).allSatisfy { $0.status == .notFound })
        // No enrich step ran: the summary has nothing to say about enrichment.
        #expect(!EnrichmentSummary(report: report).enrichmentRan)
    }

    @Test("Without a library, store-records fails the run naming what is missing")
    func needsALibrary() async throws {
        let path = try writeExport(rows: 3)
        let result = await PipelineRunner().execute(Pipeline("no-library") {
            ReadCSV(files: [path])
            StoreRecords().onFailure(.stopRun)
        }, context: StageContext(pipelineName: "no-library"))
        #expect("\(result.error.map { "\($0)" } ?? "")".contains("store-records needs Library, which this command does not provide"))
    }

    @Test("The library's run entry records the command, and how the run ended")
    func runEntry() async throws {
        let path = try writeExport(rows: 3)
        let libraryPath = temporaryLibrary()
        let store = try LibraryStore(path: libraryPath)
        let resources = StageResources().adding(store).adding(LibraryRun(command: "bookpipe import export.csv"))
        try await PipelineRunner().run(Pipeline("runs") {
            ReadCSV(files: [path])
            StoreRecords()
        }, context: StageContext(pipelineName: "runs", resources: resources))
        let runs = try store.runs()
        #expect(runs.map(\.command) == ["bookpipe import export.csv"])
        #expect(runs.map(\.status) == [.finished])
        #expect(runs.map(\.pipeline) == ["runs"])
    }
}
