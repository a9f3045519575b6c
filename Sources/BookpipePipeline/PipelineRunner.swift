import Synchronization

/// Runs a ``Pipeline``: every step is a child task of one `withThrowingTaskGroup`, joined to the
/// next by a bounded ``BatchChannel`` (back-pressure keeps memory bounded), with as many workers
/// per step as the step declares. Batches and ``PipelineEvent``s travel the same channels, so an
/// event reaches each step in order with the batches sent before it (when every step before it
/// has one worker). When a step's input ends, its last worker calls the stage's
/// ``Stage/finish(in:)`` (held-back work, such as records waiting for their transaction), sends
/// what it returns on, and closes the next channel. When the run has ended, however it ended,
/// every stage's ``Stage/end(_:in:)`` is called in step order (and before anything is read, every
/// stage's ``Stage/start(in:)``): that is where sinks commit what is
/// complete and record the run's status. The run's lifecycle belongs here, not to the command.
///
/// Cancellation: cancelling the task that calls ``run(_:context:)`` cancels every step; batches in
/// flight are dropped (resumption relies on what sinks committed), the steps' `end` is called with
/// ``RunOutcome/cancelled``, and `run` throws `CancellationError`. An error from any step (with
/// failure mode `stop`) cancels the others and is rethrown after the steps' `end`.
public struct PipelineRunner: Sendable {
    /// How many batches may wait between two steps.
    public var channelCapacity: Int

    /// Creates a runner.
    public init(channelCapacity: Int = 4) {
        self.channelCapacity = channelCapacity
    }

    /// How a run ended, with its report.
    public struct Result: Sendable {
        /// Records per step and every event of the run (also when it failed or was cancelled).
        public var report: RunReport
        /// How it ended.
        public var outcome: RunOutcome
        /// The error that ended it (`CancellationError` when cancelled), nil when it finished.
        public var error: (any Error)?
    }

    /// Runs the pipeline to completion.
    /// - Returns: what the run did (``RunReport``).
    /// - Throws: ``PipelineError`` when a step fails with failure mode `stop`, the source's error
    ///   when it cannot go on, or `CancellationError` when cancelled.
    @discardableResult
    public func run(_ pipeline: Pipeline, context: StageContext) async throws -> RunReport {
        let result = await execute(pipeline, context: context)
        if let error = result.error { throw error }
        return result.report
    }

    /// Runs the pipeline to its end and says how it ended, with the report also when it failed.
    public func execute(_ pipeline: Pipeline, context: StageContext) async -> Result {
        // Steps switched off for this run (``Stage/isPassThrough(in:)``) are left out.
        let pipeline = pipeline.leavingOut { $0.isPassThrough(context) }
        let context = context.running(stages: pipeline.steps.map(\.stageName))
        let channels = (0...pipeline.steps.count).map { _ in BatchChannel<PipelineMessage>(capacity: channelCapacity) }
        let report = ReportBox()
        let progress = context.progress
        var failure: (any Error)?
        do {
            for step in pipeline.steps { try await step.start(context) }
            try await withCompanions(context) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let source = pipeline.source
                    group.addTask {
                        try await source.run({ batch in try await channels[0].send(.batch(batch)) },
                                             { event in try await channels[0].send(.event(event)) }, context)
                        channels[0].finish()
                    }
                    for (index, step) in pipeline.steps.enumerated() {
                        let box = WorkerCountdown(workers: step.concurrency)
                        // The last step's output goes nowhere: it is dropped by the worker that made it (freeing
                        // a batch on the thread that just touched it is cheaper than on another).
                        let isLast = index == pipeline.steps.count - 1
                        let next = channels[index + 1]
                        @Sendable func forward(_ events: [PipelineEvent]) async throws {
                            for event in events {
                                if isLast { report.append(event) } else { try await next.send(.event(event)) }
                            }
                        }
                        @Sendable func forward(_ output: any Sendable) async throws {
                            let produced = (output as? any Collection)?.count ?? 0
                            report.count(step.name, produced)
                            progress.emit(.batchDone(step: step.name, records: produced))
                            if !isLast && produced > 0 { try await next.send(.batch(output)) }
                        }
                        for _ in 0..<step.concurrency {
                            group.addTask {
                                while let message = try await channels[index].receive() {
                                    switch consume message {
                                    case .batch(let batch):
                                        try await forward(try await step.process(consume batch, context))
                                    case .event(let event):
                                        try await forward(try await step.observe(event, context))
                                    }
                                }
                                if box.workerFinished() {
                                    // The last worker: let the stage complete held-back work, then close.
                                    let output = try await step.finish(context)
                                    if let produced = (output as? any Collection)?.count, produced > 0 {
                                        try await forward(output)
                                    }
                                    next.finish()
                                }
                            }
                        }
                    }
                    // The tail: the last step's events (or the source's, without steps) go into the report.
                    let last = channels[pipeline.steps.count]
                    group.addTask {
                        while let message = try await last.receive() {
                            if case .event(let event) = message { report.append(event) }
                        }
                    }
                    // `next()` rethrows the first error at once; leaving the body then cancels the other steps.
                    // (`waitForAll()` would first wait for every task, and a step stuck behind the failed one never ends.)
                    while try await group.next() != nil {}
                }
            }
        } catch {
            failure = error
        }
        let outcome: RunOutcome
        switch failure {
        case nil: outcome = .finished
        case is CancellationError: outcome = .cancelled
        case let error?: outcome = Task.isCancelled ? .cancelled : .failed("\(error)")
        }
        for step in pipeline.steps {
            await step.end(outcome, context)
        }
        var result = report.snapshot
        result.events += context.reports.drain()
        return Result(report: result, outcome: outcome, error: failure)
    }
}

/// Runs `body` with the run's companions (``RunCompanion``) beside it, as child tasks cancelled
/// when `body` returns or throws.
private func withCompanions(_ context: StageContext, _ body: () async throws -> Void) async throws {
    let companions = context.resources.companions
    guard !companions.isEmpty else { return try await body() }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for companion in companions {
            group.addTask { await companion.accompany(in: context) }
        }
        do {
            try await body()
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

/// What travels between two steps: a batch, or an event in order with the batches.
enum PipelineMessage: Sendable {
    case batch(any Sendable)
    case event(PipelineEvent)
}

/// Counts down the workers of one step; the last one to finish closes the next channel.
private final class WorkerCountdown: Sendable {
    private let remaining: Atomic<Int>
    init(workers: Int) { self.remaining = Atomic(workers) }
    func workerFinished() -> Bool { remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
}

/// The report being built while the run goes on.
private final class ReportBox: Sendable {
    private let value = Mutex(RunReport())
    func count(_ step: String, _ records: Int) { value.withLock { $0.recordsByStep[step, default: 0] += records } }
    func append(_ event: PipelineEvent) { value.withLock { $0.events.append(event) } }
    var snapshot: RunReport { value.withLock { $0 } }
}
