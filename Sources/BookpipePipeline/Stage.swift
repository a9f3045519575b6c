import BookpipeCore
import Synchronization

/// One step of a pipeline with one job: it turns a batch of inputs into a batch of outputs.
///
/// Stages are small `Sendable` values configured in their initializer. A stage works on a batch
/// (batches keep the per-record cost of async hand-offs low and let enrichment batch requests).
/// A problem with one record belongs on the record (a ``Finding``), not in a thrown error; throw
/// only when the whole batch cannot be processed.
///
/// ```swift
/// struct UppercaseTitles: Stage {
///     func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
///         batch.map { var r = $0; r.title = r.title.uppercased(); return r }
///     }
/// }
/// ```
public protocol Stage<Input, Output>: Sendable {
    /// What the stage consumes.
    associatedtype Input: Sendable
    /// What the stage produces.
    associatedtype Output: Sendable

    /// The stable name used in logs, progress, plans and error messages (`normalize-records`).
    var name: String { get }

    /// Processes one batch.
    /// - Parameters:
    ///   - batch: the inputs, in arrival order. The batch is handed over (`consuming`): when the
    ///     step's failure mode keeps nothing for after a failure (`on-failure: stop`, or inputs
    ///     other than records), the stage holds its only reference and may change it in place.
    ///   - context: the run's services (progress, clock).
    /// - Returns: the outputs for the batch (usually one per input, in order).
    /// - Throws: any error when the batch as a whole cannot be processed; what happens then is
    ///   the step's ``FailureMode``. Cancellation: throw `CancellationError` promptly.
    func process(_ batch: consuming [Input], in context: StageContext) async throws -> [Output]

    /// Called once after the step's last batch, when every worker of the step is done: a stage
    /// that holds work back (for example records waiting for their transaction) completes it here.
    /// What it returns goes downstream like one more batch. Not called when the run fails or is
    /// cancelled. The default does nothing.
    /// - Throws: any error when the held-back work cannot be completed (the step's failure mode
    ///   does not apply: the run fails).
    func finish(in context: StageContext) async throws -> [Output]

    /// Called for every ``PipelineEvent`` that reaches the step, in order with the batches when the
    /// step and the steps before it have one worker each (with more, an event may pass a batch
    /// that was sent before it). Returns the events to send on; the default sends the event on
    /// unchanged. A sink acts on the events it needs (a store registers an input it is told about).
    /// - Throws: any error that stops the run.
    func observe(_ event: PipelineEvent, in context: StageContext) async throws -> [PipelineEvent]

    /// Called once for every step before the run reads anything, in step order: the place to set
    /// up what the step needs from the context and to tell the person what it is going to do.
    /// The default does nothing.
    /// - Throws: any error that stops the run before it starts.
    func start(in context: StageContext) async throws

    /// Called once for every step when the run has ended, whatever the outcome, after every step's
    /// task has returned: the place to commit what is complete, record the run's status and report
    /// (with ``StageContext/report(_:)``) what the step did. Runs even when the run was cancelled;
    /// it must not wait for anything but its own resources. The default does nothing.
    func end(_ outcome: RunOutcome, in context: StageContext) async

    /// False when ``process(_:in:)`` never throws for a batch (only for cancellation): the runner
    /// then always hands the batch over (`consuming`), whatever the step's failure mode. True by
    /// default: with failure mode `mark` the runner keeps the batch to mark its records.
    var mayFailForBatch: Bool { get }

    /// True when, in this run, the step would hand every batch and every event on unchanged and
    /// do nothing at start, finish or end: a step the run's settings switch off (enrichment under
    /// `import --no-enrich`). The runner then leaves the step out of the run, so batches make one
    /// hand-off less and do not wait in its channel. Honoured only when the stage's input and
    /// output types are the same. The default is false.
    func isPassThrough(in context: StageContext) -> Bool
}

extension Stage {
    /// The default name: the type's name in kebab case (`NormalizeTitles` → `normalize-titles`).
    public var name: String { StageNaming.kebabCase(String(describing: Self.self)) }

    /// Nothing to complete.
    public func finish(in context: StageContext) async throws -> [Output] { [] }

    /// Sends the event on unchanged.
    public func observe(_ event: PipelineEvent, in context: StageContext) async throws -> [PipelineEvent] { [event] }

    /// Nothing to set up.
    public func start(in context: StageContext) async throws {}

    /// Nothing to do.
    public func end(_ outcome: RunOutcome, in context: StageContext) async {}

    /// A stage may fail for a batch unless it says otherwise.
    public var mayFailForBatch: Bool { true }

    /// A stage does its work unless it says otherwise.
    public func isPassThrough(in context: StageContext) -> Bool { false }
}

/// The first step of a pipeline: it reads from the outside world and emits batches.
public protocol SourceStage<Output>: Sendable {
    /// What the source emits.
    associatedtype Output: Sendable

    /// The stable name used in logs, progress, plans and error messages (`read-csv`).
    var name: String { get }

    /// Emits every batch, in order, then returns.
    /// - Parameters:
    ///   - emit: sends one batch downstream; suspends while downstream is busy (back-pressure).
    ///   - context: the run's services.
    /// - Throws: when the source cannot go on (a file vanished, the run was cancelled).
    func produce(into emit: BatchEmitter<Output>, in context: StageContext) async throws
}

extension SourceStage {
    /// The default name: the type's name in kebab case.
    public var name: String { StageNaming.kebabCase(String(describing: Self.self)) }
}

/// Hands a source's batches and events to the first stage.
public struct BatchEmitter<Element: Sendable>: Sendable {
    let sendBatch: @Sendable ([Element]) async throws -> Void
    let sendEvent: @Sendable (PipelineEvent) async throws -> Void

    /// Creates an emitter around send functions (the runner makes these; tests may too).
    public init(_ send: @escaping @Sendable ([Element]) async throws -> Void,
                events: @escaping @Sendable (PipelineEvent) async throws -> Void = { _ in }) {
        self.sendBatch = send
        self.sendEvent = events
    }

    /// Sends one batch downstream, suspending while downstream is full.
    /// - Throws: `CancellationError` when the run is cancelled.
    public func callAsFunction(_ batch: [Element]) async throws {
        guard !batch.isEmpty else { return }
        try await sendBatch(batch)
    }

    /// Sends an event downstream, in order with the batches.
    /// - Throws: `CancellationError` when the run is cancelled.
    public func event(_ event: PipelineEvent) async throws {
        try await sendEvent(event)
    }
}

/// What a run gives every stage: where to report progress, which clock to wait on, the run's
/// resources (the library, the import settings, …) and where to report what it did.
///
/// Stages take what they need from here, never from globals: a stage that needs the library asks
/// for it with ``resource(_:)`` (or ``require(_:for:)``), so the same stage value can be built,
/// planned and validated without any library open.
public struct StageContext: Sendable {
    /// The pipeline's name.
    public let pipelineName: String
    /// Where stages report progress and messages.
    public let progress: any ProgressSink
    /// The clock every wait uses (a manual clock in tests).
    public let clock: any Clock<Duration>
    /// The run's resources by type.
    public let resources: StageResources
    /// Collects what steps report at the end of the run (the runner owns it).
    let reports: ReportCollector
    /// The stages of the run's steps (``PipelineStep/stageName``), in order, steps switched off
    /// for the run left out: what a step may know of the others (`store-records` passes stored
    /// rows that wait for enrichment on only when an `enrich-records` step runs). Empty outside a run.
    public private(set) var stageNames: [String] = []

    /// The same context for a run of these stages.
    func running(stages: [String]) -> StageContext {
        var context = self
        context.stageNames = stages
        return context
    }

    /// Creates a context.
    public init(pipelineName: String, progress: any ProgressSink = NullProgressSink(),
                clock: any Clock<Duration> = ContinuousClock(), resources: StageResources = StageResources()) {
        self.pipelineName = pipelineName
        self.progress = progress
        self.clock = clock
        self.resources = resources
        self.reports = ReportCollector()
    }

    /// The run's resource of this type, when the command provided one.
    public func resource<Resource: Sendable>(_ type: Resource.Type) -> Resource? {
        resources[type]
    }

    /// The run's resource of this type.
    /// - Throws: ``PipelineError/missingResource(step:resource:)`` when the command provided none.
    public func require<Resource: Sendable>(_ type: Resource.Type, for step: String) throws -> Resource {
        guard let resource = resources[type] else {
            throw PipelineError.missingResource(step: step, resource: String(describing: type))
        }
        return resource
    }

    /// Adds an event to the run's report (for facts no later step acts on, such as a sink's tally).
    public func report(_ event: PipelineEvent) {
        reports.append(event)
    }
}

/// The resources of a run, by type: the library, settings, shared counters. Commands fill it in;
/// stages read it through ``StageContext/resource(_:)``.
public struct StageResources: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    /// Creates an empty set.
    public init() {}

    /// The resource of a type.
    public subscript<Resource: Sendable>(_ type: Resource.Type) -> Resource? {
        get { values[ObjectIdentifier(type)] as? Resource }
        set { values[ObjectIdentifier(type)] = newValue }
    }

    /// Every resource held.
    var allValues: [any Sendable] { Array(values.values) }

    /// Returns a copy holding `resource` as well (replacing one of the same type).
    public func adding<Resource: Sendable>(_ resource: Resource) -> StageResources {
        var copy = self
        copy[Resource.self] = resource
        return copy
    }
}

/// The events steps report at the end of a run.
final class ReportCollector: Sendable {
    private let events = Mutex<[PipelineEvent]>([])
    func append(_ event: PipelineEvent) { events.withLock { $0.append(event) } }
    func drain() -> [PipelineEvent] { events.withLock { events in defer { events = [] }; return events } }
}

/// What to do when a stage throws for a batch.
public enum FailureMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Mark every record of the batch with a `stage.failed` finding and pass it on (default):
    /// one bad batch never aborts an import.
    case markAndContinue = "mark"
    /// Stop the run with the error.
    case stopRun = "stop"
}

/// Where a step was declared: a Swift file and line, or a pipeline file, line and column.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// File name (`pipelines/csv-import.yaml` or a `#fileID`).
    public var file: String
    /// 1-based line.
    public var line: Int
    /// 1-based column, when known.
    public var column: Int?

    /// Creates a location.
    public init(file: String, line: Int, column: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`.
    public var description: String {
        column.map { "\(file):\(line):\($0)" } ?? "\(file):\(line)"
    }
}

/// Naming helpers shared by stages and the registry.
public enum StageNaming {
    /// `NormalizeTitles` → `normalize-titles`; generic arguments are dropped.
    public static func kebabCase(_ typeName: String) -> String {
        let base = typeName.split(separator: "<").first.map(String.init) ?? typeName
        var result = ""
        var previousWasLower = false
        for character in base {
            if character.isUppercase {
                if previousWasLower { result.append("-") }
                result.append(Character(character.lowercased()))
                previousWasLower = false
            } else {
                result.append(character)
                previousWasLower = character.isLowercase || character.isNumber
            }
        }
        return result
    }
}
