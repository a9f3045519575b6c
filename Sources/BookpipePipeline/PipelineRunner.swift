import Synchronization

/// Runs a ``Pipeline``: every step is a child task of one `withThrowingTaskGroup`, joined to the
/// next by a bounded ``BatchChannel`` (back-pressure keeps memory bounded), with as many workers
/// per step as the step declares. When a step's input ends, its last worker calls the stage's
/// ``Stage/finish(in:)`` (held-back work, such as records queued for a large transaction), sends
/// what it returns on, and closes the next channel.
///
/// Cancellation: cancelling the task that calls ``run(_:context:)`` cancels every step; batches in
/// flight are dropped (resumption relies on what sinks committed), and `run` throws
/// `CancellationError`. An error from any step (with failure mode `stop`) cancels the others and
/// is rethrown.
public struct PipelineRunner: Sendable {
    /// How many batches may wait between two steps.
    public var channelCapacity: Int

    /// Creates a runner.
    public init(channelCapacity: Int = 4) {
        self.channelCapacity = channelCapacity
    }

    /// Runs the pipeline to completion.
    /// - Returns: how many records each step produced.
    /// - Throws: ``PipelineError`` when a step fails with failure mode `stop`, the source's error
    ///   when it cannot go on, or `CancellationError` when cancelled.
    @discardableResult
    public func run(_ pipeline: Pipeline, context: StageContext) async throws -> RunCounts {
        let channels = (0...pipeline.steps.count).map { _ in BatchChannel<any Sendable>(capacity: channelCapacity) }
        let counts = CountsBox()
        let progress = context.progress

        try await withThrowingTaskGroup(of: Void.self) { group in
            let source = pipeline.source
            group.addTask {
                try await source.run({ batch in try await channels[0].send(batch) }, context)
                channels[0].finish()
            }
            for (index, step) in pipeline.steps.enumerated() {
                let box = WorkerCountdown(workers: step.concurrency)
                // The last step's output goes nowhere: it is dropped by the worker that made it (freeing
                // a batch on the thread that just touched it is cheaper than on another).
                let isLast = index == pipeline.steps.count - 1
                for _ in 0..<step.concurrency {
                    group.addTask {
                        while let batch = try await channels[index].receive() {
                            let output = try await step.process(consume batch, context)
                            let produced = (output as? any Collection)?.count ?? 0
                            counts.value.withLock { $0.recordsByStep[step.name, default: 0] += produced }
                            progress.emit(.batchDone(step: step.name, records: produced))
                            if !isLast { try await channels[index + 1].send(output) }
                        }
                        if box.workerFinished() {
                            // The last worker: let the stage complete held-back work, then close.
                            let output = try await step.finish(context)
                            if let produced = (output as? any Collection)?.count, produced > 0 {
                                counts.value.withLock { $0.recordsByStep[step.name, default: 0] += produced }
                                progress.emit(.batchDone(step: step.name, records: produced))
                                if !isLast { try await channels[index + 1].send(output) }
                            }
                            channels[index + 1].finish()
                        }
                    }
                }
            }
            let last = channels[pipeline.steps.count]
            group.addTask {
                while try await last.receive() != nil {}
            }
            // `next()` rethrows the first error at once; leaving the body then cancels the other steps.
            // (`waitForAll()` would first wait for every task, and a step stuck behind the failed one never ends.)
            while try await group.next() != nil {}
        }
        return counts.value.withLock { $0 }
    }
}

/// How many records each step produced in one run.
public struct RunCounts: Sendable, Hashable {
    /// Records produced, by step name.
    public var recordsByStep: [String: Int] = [:]
}

/// Counts down the workers of one step; the last one to finish closes the next channel.
private final class WorkerCountdown: Sendable {
    private let remaining: Atomic<Int>
    init(workers: Int) { self.remaining = Atomic(workers) }
    func workerFinished() -> Bool { remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
}

private final class CountsBox: Sendable {
    let value = Mutex(RunCounts())
}
