import BookpipeCore

/// A source followed by steps: an inspectable value that prints its plan and runs in a
/// ``PipelineRunner``.
///
/// Build one with the result builder (the compiler checks that each step's output feeds the next
/// step's input) or load one from a pipeline file with ``StageRegistry``; both give the same value.
///
/// ```swift
/// let pipeline = Pipeline("csv-import") {
///     ReadCSV(paths: ["export.csv"], store: store)
///     NormalizeRecords().concurrency(2)
///     StoreRecords(store: store)
/// }
/// print(pipeline.plan)
/// ```
public struct Pipeline: Sendable {
    /// The pipeline's name.
    public let name: String
    /// The source step.
    public let source: PipelineSource
    /// The steps after the source, in order.
    public let steps: [PipelineStep]

    /// Creates a pipeline from already erased parts (the registry and the builder use this).
    public init(name: String, source: PipelineSource, steps: [PipelineStep]) {
        self.name = name
        self.source = source
        self.steps = steps
    }

    /// Builds a pipeline with the DSL.
    public init<Output>(_ name: String, @PipelineBuilder _ build: () -> PipelineSegment<Output>) {
        let segment = build()
        self.init(name: name, source: segment.source, steps: segment.steps)
    }

    /// The same pipeline without the steps `isLeftOut` picks.
    func leavingOut(_ isLeftOut: (PipelineStep) -> Bool) -> Pipeline {
        Pipeline(name: name, source: source, steps: steps.filter { !isLeftOut($0) })
    }

    /// A human-readable plan: one line per step with its location, concurrency and failure mode.
    public var plan: String {
        var lines = ["pipeline \(name)"]
        lines.append("  source  \(source.name)\(Self.describe(source.parameters))  (\(source.location))")
        for (index, step) in steps.enumerated() {
            let concurrency = step.concurrency > 1 ? ", \(step.concurrency) workers" : ""
            lines.append("  \(index + 1).\(index + 1 < 10 ? " " : "") \(step.name)\(Self.describe(step.parameters))"
                         + "  [on failure: \(step.failureMode.rawValue)\(concurrency)]  (\(step.location))")
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ parameters: [(String, String)]) -> String {
        parameters.isEmpty ? "" : " " + parameters.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }
}

/// A type-erased source step.
public struct PipelineSource: Sendable {
    /// The step's name.
    public var name: String
    /// Where it was declared.
    public var location: SourceLocation
    /// Parameters as shown in the plan.
    public var parameters: [(String, String)]
    /// What the source emits (checked against the first step's input).
    public let outputType: any Any.Type
    let run: @Sendable (_ emit: @escaping @Sendable (any Sendable) async throws -> Void,
                        _ event: @escaping @Sendable (PipelineEvent) async throws -> Void, StageContext) async throws -> Void

    /// Erases a source stage.
    public init<S: SourceStage>(_ source: S, location: SourceLocation, parameters: [(String, String)] = []) {
        self.name = source.name
        self.location = location
        self.parameters = parameters
        self.outputType = S.Output.self
        self.run = { emit, event, context in
            try await source.produce(into: BatchEmitter({ batch in try await emit(batch) }, events: event), in: context)
        }
    }
}

/// A type-erased step with its policies.
public struct PipelineStep: Sendable {
    /// The step's name.
    public var name: String
    /// The stage's own name (``Stage/name``), whatever the step is called.
    public let stageName: String
    /// Where it was declared.
    public var location: SourceLocation
    /// Parameters as shown in the plan.
    public var parameters: [(String, String)]
    /// How many batches the step works on at once (≥ 1). Order is kept only with 1.
    public var concurrency: Int
    /// What happens when the step throws for a batch.
    public let failureMode: FailureMode
    /// What the step takes.
    public let inputType: any Any.Type
    /// What the step produces.
    public let outputType: any Any.Type
    let process: @Sendable (consuming any Sendable, StageContext) async throws -> any Sendable
    let finish: @Sendable (StageContext) async throws -> any Sendable
    let observe: @Sendable (PipelineEvent, StageContext) async throws -> [PipelineEvent]
    let start: @Sendable (StageContext) async throws -> Void
    let end: @Sendable (RunOutcome, StageContext) async -> Void
    /// True when the stage passes everything on unchanged in this run (``Stage/isPassThrough(in:)``,
    /// only for stages whose input and output types are the same).
    let isPassThrough: @Sendable (StageContext) -> Bool

    /// Erases a stage.
    public init<S: Stage>(
        _ stage: S, location: SourceLocation, parameters: [(String, String)] = [],
        concurrency: Int = 1, failureMode: FailureMode = .markAndContinue
    ) {
        self.name = stage.name
        self.stageName = stage.name
        self.location = location
        self.parameters = parameters
        self.concurrency = max(1, concurrency)
        self.failureMode = failureMode
        self.inputType = S.Input.self
        self.outputType = S.Output.self
        let name = stage.name
        let mode = self.failureMode
        // The batch is handed over unless it may be needed after a failure: only when the stage may
        // fail for a batch, its failure mode is `mark`, and the batch holds records to mark.
        let keepsBatch = stage.mayFailForBatch && mode == .markAndContinue && S.Input.self == BookRecord.self
        self.finish = { context in
            do {
                return try await stage.finish(in: context)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw PipelineError.stepFailed(step: name, location: location, underlying: error)
            }
        }
        self.observe = { event, context in
            do {
                return try await stage.observe(event, in: context)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw PipelineError.stepFailed(step: name, location: location, underlying: error)
            }
        }
        self.end = { outcome, context in await stage.end(outcome, in: context) }
        let passesTypeOn = S.Input.self == S.Output.self
        self.isPassThrough = { (context: StageContext) -> Bool in passesTypeOn && stage.isPassThrough(in: context) }
        self.start = { context in
            do {
                try await stage.start(in: context)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw PipelineError.stepFailed(step: name, location: location, underlying: error)
            }
        }
        self.process = { input, context in
            let inputType = type(of: input)
            guard let batch = (consume input) as? [S.Input] else {
                throw PipelineError.typeMismatch(step: name, expected: "\(S.Input.self)", got: "\(inputType)")
            }
            if !keepsBatch {
                // Nothing of the batch is needed after a failure: the stage gets the only reference
                // to it and can change it in place, copying nothing.
                do {
                    return try await stage.process(consume batch, in: context)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw PipelineError.stepFailed(step: name, location: location, underlying: error)
                }
            }
            do {
                return try await stage.process(batch, in: context)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // Records carry their problems: mark each one and let it flow on.
                if let records = batch as? [BookRecord] {
                    let marked = records.map { record -> BookRecord in
                        var copy = record
                        copy.addFinding(Finding(code: "stage.failed", severity: .error, field: nil,
                                                message: "step \(name) failed for this record's batch: \(error)"))
                        return copy
                    }
                    if let output = marked as? [S.Output] { return output }
                }
                throw PipelineError.stepFailed(step: name, location: location, underlying: error)
            }
        }
    }
}

/// Errors of the pipeline engine itself.
public enum PipelineError: Error, Sendable, CustomStringConvertible {
    /// A step received batches of a type it does not take (only possible with hand-erased steps).
    case typeMismatch(step: String, expected: String, got: String)
    /// A step failed and its failure mode is `stop`.
    case stepFailed(step: String, location: SourceLocation, underlying: any Error)
    /// A step needs a resource (the library, settings) that the command running it did not provide.
    case missingResource(step: String, resource: String)

    /// A message for people.
    public var description: String {
        switch self {
        case .typeMismatch(let step, let expected, let got):
            return "step \(step) takes batches of \(expected) but was given \(got)"
        case .stepFailed(let step, let location, let underlying):
            return "\(location): step \(step) failed: \(underlying)"
        case .missingResource(let step, let resource):
            return "step \(step) needs \(resource), which this command does not provide"
        }
    }
}

/// The builder's partial result: a source and the steps so far, whose last output is `Output`.
public struct PipelineSegment<Output: Sendable>: Sendable {
    /// The source.
    public let source: PipelineSource
    /// The steps so far.
    public let steps: [PipelineStep]
}

/// A stage with its policies attached by modifiers (`.concurrency(2)`, `.named("x")`, …).
public struct ConfiguredStage<Base: Stage>: Sendable {
    /// The stage.
    public var base: Base
    /// Name override.
    public var name: String?
    /// Workers.
    public var concurrency: Int = 1
    /// Failure mode.
    public var failureMode: FailureMode = .markAndContinue

    /// Runs the stage with `workers` concurrent batches.
    public func concurrency(_ workers: Int) -> Self { var copy = self; copy.concurrency = workers; return copy }
    /// Gives the step another name in plans and logs.
    public func named(_ name: String) -> Self { var copy = self; copy.name = name; return copy }
    /// Chooses what happens when the stage throws.
    public func onFailure(_ mode: FailureMode) -> Self { var copy = self; copy.failureMode = mode; return copy }
}

extension Stage {
    /// Runs the stage with `workers` concurrent batches (order of outputs is then not kept).
    public func concurrency(_ workers: Int) -> ConfiguredStage<Self> { ConfiguredStage(base: self).concurrency(workers) }
    /// Gives the step another name in plans, logs and errors.
    public func named(_ name: String) -> ConfiguredStage<Self> { ConfiguredStage(base: self).named(name) }
    /// Chooses what happens when the stage throws for a batch.
    public func onFailure(_ mode: FailureMode) -> ConfiguredStage<Self> { ConfiguredStage(base: self).onFailure(mode) }
}

/// The result builder behind ``Pipeline/init(_:_:)``. The first element must be a
/// ``SourceStage``; each following ``Stage`` must take what the previous one produces.
@resultBuilder
public enum PipelineBuilder {
    /// Captures where a source was declared.
    public static func buildExpression<S: SourceStage>(
        _ source: S, fileID: String = #fileID, line: Int = #line
    ) -> TypedSource<S.Output> {
        TypedSource(source: PipelineSource(source, location: SourceLocation(file: fileID, line: line)))
    }

    /// Captures where a stage was declared.
    public static func buildExpression<S: Stage>(
        _ stage: S, fileID: String = #fileID, line: Int = #line
    ) -> TypedStep<S.Input, S.Output> {
        TypedStep(step: PipelineStep(stage, location: SourceLocation(file: fileID, line: line)))
    }

    /// Captures where a configured stage was declared.
    public static func buildExpression<S: Stage>(
        _ stage: ConfiguredStage<S>, fileID: String = #fileID, line: Int = #line
    ) -> TypedStep<S.Input, S.Output> {
        var step = PipelineStep(stage.base, location: SourceLocation(file: fileID, line: line),
                                concurrency: stage.concurrency, failureMode: stage.failureMode)
        if let name = stage.name { step.name = name }
        return TypedStep(step: step)
    }

    /// Starts a pipeline with its source.
    public static func buildPartialBlock<Output>(first source: TypedSource<Output>) -> PipelineSegment<Output> {
        PipelineSegment(source: source.source, steps: [])
    }

    /// Appends a step whose input is what the previous step produces.
    public static func buildPartialBlock<Input, Output>(
        accumulated: PipelineSegment<Input>, next: TypedStep<Input, Output>
    ) -> PipelineSegment<Output> {
        PipelineSegment(source: accumulated.source, steps: accumulated.steps + [next.step])
    }
}

/// A source that remembers its output type for the builder.
@_documentation(visibility: internal)
public struct TypedSource<Output: Sendable>: Sendable {
    /// The erased source.
    public let source: PipelineSource
}

/// A step that remembers its input and output types for the builder.
@_documentation(visibility: internal)
public struct TypedStep<Input: Sendable, Output: Sendable>: Sendable {
    /// The erased step.
    public let step: PipelineStep
}
