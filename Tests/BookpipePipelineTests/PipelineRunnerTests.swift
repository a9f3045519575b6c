import BookpipeCore
import Synchronization
import Testing
@testable import BookpipePipeline

/// Emits `count` numbered records in batches of `batchSize`.
struct CountingSource: SourceStage {
    let count: Int
    let batchSize: Int
    func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        var batch: [BookRecord] = []
        for row in 1...count {
            batch.append(BookRecord(origin: RecordOrigin(file: "t.csv", fileHash: "h", row: row, line: row + 1),
                                    title: "Book \(row)"))
            if batch.count == batchSize {
                try await emit(batch)
                batch.removeAll()
            }
        }
        try await emit(batch)
    }
}

struct AppendToTitle: Stage {
    let suffix: String
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        batch.map { var record = $0; record.title += suffix; return record }
    }
}

struct FailOnRow: Stage {
    let row: Int
    struct Boom: Error, CustomStringConvertible { var description: String { "boom" } }
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        if batch.contains(where: { $0.origin.row == row }) { throw Boom() }
        return batch
    }
}

/// Keeps every record it sees.
final class Collector: Sendable {
    let records = Mutex<[BookRecord]>([])
}

struct Collect: Stage {
    let collector: Collector
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        collector.records.withLock { $0.append(contentsOf: batch) }
        return batch
    }
}

/// Never finishes a batch until cancelled.
struct Hang: Stage {
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        try await Task.sleep(for: .seconds(3600))
        return batch
    }
}

/// Tells, as an event, the stages a step sees in the run.
struct ReportStageNames: Stage {
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        context.report(.note(context.stageNames.joined(separator: ",")))
        return batch
    }
}

/// Switched off for every run.
struct AlwaysOff: Stage {
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] { batch }
    func isPassThrough(in context: StageContext) -> Bool { true }
}

@Suite struct PipelineRunnerTests {
    @Test("A step knows the stages of the run by their own names, renamed steps too, switched-off ones left out")
    func stageNames() async throws {
        let report = try await PipelineRunner().run(Pipeline("names") {
            CountingSource(count: 3, batchSize: 3)
            AppendToTitle(suffix: "!").named("shout")
            AlwaysOff()
            ReportStageNames()
        }, context: StageContext(pipelineName: "names"))
        #expect(report.events == [.note("append-to-title,report-stage-names")])
    }

    @Test("Every record flows through every stage exactly once, with several workers")
    func everyRecordOnce() async throws {
        let collector = Collector()
        let pipeline = Pipeline("test") {
            CountingSource(count: 1000, batchSize: 7)
            AppendToTitle(suffix: "!").concurrency(3)
            Collect(collector: collector)
        }
        let counts = try await PipelineRunner(channelCapacity: 2).run(pipeline, context: StageContext(pipelineName: "test"))
        let rows = collector.records.withLock { $0.map(\.origin.row) }.sorted()
        #expect(rows == Array(1...1000))
        #expect(collector.records.withLock { $0.allSatisfy { $0.title.hasSuffix("!") } })
        #expect(counts.recordsByStep["append-to-title"] == 1000)
    }

    @Test("A failing batch is marked and flows on by default")
    func markAndContinue() async throws {
        let collector = Collector()
        let pipeline = Pipeline("test") {
            CountingSource(count: 10, batchSize: 5)
            FailOnRow(row: 3)
            Collect(collector: collector)
        }
        try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: "test"))
        let records = collector.records.withLock { $0 }
        #expect(records.count == 10)
        let marked = records.filter { $0.findings.contains { $0.code == "stage.failed" } }.map(\.origin.row).sorted()
        #expect(marked == [1, 2, 3, 4, 5])
        #expect(records.first { $0.origin.row == 3 }?.findings.first?.message
                == "step fail-on-row failed for this record's batch: boom")
    }

    @Test("A failing stage with on-failure stop ends the run with its location")
    func stopRun() async throws {
        let pipeline = Pipeline("test") {
            CountingSource(count: 10, batchSize: 5)
            FailOnRow(row: 3).onFailure(.stopRun)
        }
        await #expect(throws: PipelineError.self) {
            try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: "test"))
        }
    }

    @Test("Cancelling the run stops a stage stuck in a long wait", .timeLimit(.minutes(5)))
    func cancellation() async throws {
        let pipeline = Pipeline("test") {
            CountingSource(count: 100, batchSize: 1)
            Hang()
        }
        let task = Task { try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: "test")) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
    }

    @Test("The plan lists each step with where it was declared")
    func plan() {
        let pipeline = Pipeline("recipe") {
            CountingSource(count: 1, batchSize: 1)
            AppendToTitle(suffix: "?").concurrency(2).named("shout")
        }
        let lines = pipeline.plan.split(separator: "\n").map(String.init)
        #expect(lines[0] == "pipeline recipe")
        #expect(lines[1].hasPrefix("  source  counting-source  (BookpipePipelineTests/PipelineRunnerTests.swift:"))
        #expect(lines[2].hasPrefix("  1.  shout  [on failure: mark, 2 workers]  (BookpipePipelineTests/PipelineRunnerTests.swift:"))
    }
}

@Suite struct BatchChannelTests {
    @Test("A full channel makes the sender wait until a batch is taken")
    func backPressure() async throws {
        let channel = BatchChannel<Int>(capacity: 2)
        try await channel.send(1)
        try await channel.send(2)
        let sent = Flag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await channel.send(3)
                sent.set()
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(sent.isSet == false)
            #expect(try await channel.receive() == 1)
            try await group.waitForAll()
            #expect(sent.isSet == true)
        }
        channel.finish()
        #expect(try await channel.receive() == 2)
        #expect(try await channel.receive() == 3)
        #expect(try await channel.receive() == nil)
    }
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

/// Announces its input before its records and says when it has read it all.
struct AnnouncingSource: SourceStage {
    let count: Int
    func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        let input = InputFile(path: "t.csv", fileHash: "h", format: "test", formatDescription: "test")
        try await emit.event(.inputStarted(input))
        try await emit((1...count).map { BookRecord(origin: RecordOrigin(file: "t.csv", fileHash: "h", row: $0, line: $0 + 1)) })
        try await emit.event(.inputFinished(input, rowsRead: count))
    }
}

/// Records what it sees, in order: events and batch sizes; reports at the end.
final class Journal: Sendable {
    let lines = Mutex<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

struct Watch: Stage {
    let journal: Journal
    func start(in context: StageContext) async throws { journal.add("start") }
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        journal.add("batch \(batch.count)")
        return batch
    }
    func observe(_ event: PipelineEvent, in context: StageContext) async throws -> [PipelineEvent] {
        if case .inputStarted = event { journal.add("started") }
        if case .inputFinished(_, let rows) = event { journal.add("finished \(rows)") }
        return [event]
    }
    func end(_ outcome: RunOutcome, in context: StageContext) async {
        journal.add("end \(outcome)")
        context.report(.note("watched"))
    }
}

@Suite struct PipelineLifecycleTests {
    @Test("Events reach each step in order with the batches, and every event ends up in the report")
    func eventsInOrder() async throws {
        let journal = Journal()
        let pipeline = Pipeline("events") {
            AnnouncingSource(count: 3)
            Watch(journal: journal)
            AppendToTitle(suffix: "!")
        }
        let report = try await PipelineRunner().run(pipeline, context: StageContext(pipelineName: "events"))
        #expect(journal.lines.withLock { $0 } == ["start", "started", "batch 3", "finished 3", "end finished"])
        #expect(report.events.count == 3)
        #expect(report.events.last == .note("watched"))
        #expect(!report.hasStorage, "no step stored anything")
    }

    @Test("A failed run still calls every step's end with the outcome and returns its report")
    func endAfterFailure() async throws {
        let journal = Journal()
        let pipeline = Pipeline("fails") {
            CountingSource(count: 10, batchSize: 5)
            Watch(journal: journal)
            FailOnRow(row: 3).onFailure(.stopRun)
        }
        let result = await PipelineRunner().execute(pipeline, context: StageContext(pipelineName: "fails"))
        guard case .failed(let message) = result.outcome else {
            Issue.record("expected a failure, got \(result.outcome)")
            return
        }
        #expect(message.contains("boom"))
        #expect(journal.lines.withLock { $0.last } == "end failed(\"\(message)\")")
        #expect(result.report.events == [.note("watched")])
    }

    @Test("A cancelled run calls every step's end with cancelled")
    func endAfterCancellation() async throws {
        let journal = Journal()
        let pipeline = Pipeline("hangs") {
            CountingSource(count: 100, batchSize: 1)
            Watch(journal: journal)
            Hang()
        }
        let task = Task { await PipelineRunner().execute(pipeline, context: StageContext(pipelineName: "hangs")) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        let result = await task.value
        #expect(result.error is CancellationError)
        #expect(journal.lines.withLock { $0.last } == "end cancelled")
    }

    @Test("A stage that never fails for a batch is handed the batch even with failure mode mark")
    func infallibleStagesConsume() async throws {
        struct Infallible: Stage {
            var mayFailForBatch: Bool { false }
            func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] { batch }
        }
        struct Fallible: Stage {
            func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] { batch }
        }
        // The stage's own answer decides, not the failure mode (which only says what a failure does).
        #expect(Infallible().mayFailForBatch == false)
        #expect(Fallible().mayFailForBatch == true)
        let collector = Collector()
        try await PipelineRunner().run(Pipeline("x") {
            CountingSource(count: 5, batchSize: 5)
            Infallible()
            Collect(collector: collector)
        }, context: StageContext(pipelineName: "x"))
        #expect(collector.records.withLock { $0.count } == 5)
    }

    @Test("A step switched off for the run is left out: never started, handed a batch or ended; the others see every record")
    func passThroughStepsAreLeftOut() async throws {
        /// Switched off when the run's resources hold `true`; journals everything it is asked to do.
        struct Switchable: Stage {
            let journal: Journal
            func isPassThrough(in context: StageContext) -> Bool { context.resource(Bool.self) ?? false }
            func start(in context: StageContext) async throws { journal.add("start") }
            func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
                journal.add("batch")
                return batch.map { var record = $0; record.title += "?"; return record }
            }
            func end(_ outcome: RunOutcome, in context: StageContext) async { journal.add("end") }
        }
        /// Changes the type: a stage whose output is not its input is never left out.
        struct Titles: Stage {
            func isPassThrough(in context: StageContext) -> Bool { true }
            func process(_ batch: [BookRecord], in context: StageContext) async throws -> [String] { batch.map(\.title) }
        }
        for switchedOff in [true, false] {
            let journal = Journal()
            let titles = Journal()
            /// Keeps the titles that reach the end.
            struct Keep: Stage {
                let titles: Journal
                func process(_ batch: [String], in context: StageContext) async throws -> [String] {
                    titles.lines.withLock { $0 += batch }
                    return batch
                }
            }
            let pipeline = Pipeline("switch") {
                CountingSource(count: 7, batchSize: 3)
                Switchable(journal: journal)
                Titles()
                Keep(titles: titles)
            }
            let context = StageContext(pipelineName: "switch", resources: StageResources().adding(switchedOff))
            let report = try await PipelineRunner().run(pipeline, context: context)
            let kept = titles.lines.withLock { $0 }
            #expect(kept.count == 7, "every record reaches the end either way")
            #expect(report.recordsByStep["titles"] == 7, "the step that changes the type runs although it says pass-through")
            if switchedOff {
                #expect(journal.lines.withLock { $0 }.isEmpty)
                #expect(kept.allSatisfy { !$0.hasSuffix("?") })
                #expect(report.recordsByStep["switchable"] == nil)
            } else {
                #expect(journal.lines.withLock { $0 } == ["start", "batch", "batch", "batch", "end"])
                #expect(kept.allSatisfy { $0.hasSuffix("?") })
            }
        }
    }

    @Test("A step that needs a resource the command did not give fails with a message naming both")
    func missingResource() async throws {
        struct NeedsNumber: Stage {
            func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
                _ = try context.require(Int.self, for: name)
                return batch
            }
        }
        await #expect(throws: PipelineError.self) {
            try await PipelineRunner().run(Pipeline("x") {
                CountingSource(count: 1, batchSize: 1)
                NeedsNumber().onFailure(.stopRun)
            }, context: StageContext(pipelineName: "x"))
        }
        let context = StageContext(pipelineName: "x", resources: StageResources().adding(42))
        #expect(context.resource(Int.self) == 42)
        #expect(context.resource(String.self) == nil)
        #expect(PipelineError.missingResource(step: "needs-number", resource: "LibraryStore").description
                == "step needs-number needs LibraryStore, which this command does not provide")
    }
}
