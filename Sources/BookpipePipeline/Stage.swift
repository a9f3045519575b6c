import BookpipeCore

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
    /// that holds work back (for example to write it in larger transactions) completes it here.
    /// What it returns goes downstream like one more batch. Not called when the run fails or is
    /// cancelled. The default does nothing.
    /// - Throws: any error when the held-back work cannot be completed (the step's failure mode
    ///   does not apply: the run fails).
    func finish(in context: StageContext) async throws -> [Output]
}

extension Stage {
    /// The default name: the type's name in kebab case (`NormalizeTitles` → `normalize-titles`).
    public var name: String { StageNaming.kebabCase(String(describing: Self.self)) }

    /// Nothing to complete.
    public func finish(in context: StageContext) async throws -> [Output] { [] }
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

/// Hands a source's batches to the first stage.
public struct BatchEmitter<Element: Sendable>: Sendable {
    let sendBatch: @Sendable ([Element]) async throws -> Void

    /// Creates an emitter around a send function (the runner makes these; tests may too).
    public init(_ send: @escaping @Sendable ([Element]) async throws -> Void) {
        self.sendBatch = send
    }

    /// Sends one batch downstream, suspending while downstream is full.
    /// - Throws: `CancellationError` when the run is cancelled.
    public func callAsFunction(_ batch: [Element]) async throws {
        guard !batch.isEmpty else { return }
        try await sendBatch(batch)
    }
}

/// What a run gives every stage: where to report progress and which clock to wait on.
public struct StageContext: Sendable {
    /// The pipeline's name.
    public let pipelineName: String
    /// Where stages report progress and messages.
    public let progress: any ProgressSink
    /// The clock every wait uses (a manual clock in tests).
    public let clock: any Clock<Duration>

    /// Creates a context.
    public init(pipelineName: String, progress: any ProgressSink = NullProgressSink(),
                clock: any Clock<Duration> = ContinuousClock()) {
        self.pipelineName = pipelineName
        self.progress = progress
        self.clock = clock
    }
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
