import Foundation

/// The type of a stage parameter in a pipeline file.
public enum ParameterType: String, Sendable, Hashable, CaseIterable {
    /// Text.
    case string
    /// A whole number.
    case integer
    /// A number.
    case number
    /// `true` or `false`.
    case boolean
    /// A duration such as `500ms`, `30s`, `2m`, `1h`, `30d`.
    case duration
    /// A list of texts (a YAML sequence, or one text).
    case stringList = "list of strings"
}

/// A parameter value, after checking against its ``ParameterType``.
public enum ParameterValue: Sendable, Hashable, CustomStringConvertible {
    /// Text.
    case string(String)
    /// A whole number.
    case integer(Int)
    /// A number.
    case number(Double)
    /// A boolean.
    case boolean(Bool)
    /// A duration.
    case duration(Duration)
    /// A list of texts.
    case stringList([String])

    /// The value as written in a plan.
    public var description: String {
        switch self {
        case .string(let value): return value
        case .integer(let value): return String(value)
        case .number(let value): return String(value)
        case .boolean(let value): return String(value)
        case .duration(let value): return DurationSyntax.format(value)
        case .stringList(let values): return "[" + values.joined(separator: ", ") + "]"
        }
    }
}

/// Declares one parameter a stage takes.
public struct ParameterSpec: Sendable {
    /// The name as written in the pipeline file (`acceptAt`, `batchSize`).
    public var name: String
    /// Its type.
    public var type: ParameterType
    /// The default; nil makes the parameter required.
    public var defaultValue: ParameterValue?
    /// One line for `bookpipe pipelines show` and error messages.
    public var summary: String

    /// Creates a parameter declaration.
    public init(_ name: String, _ type: ParameterType, default defaultValue: ParameterValue? = nil, summary: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.summary = summary
    }
}

/// The checked parameters handed to a stage factory.
public struct StageParameters: Sendable {
    /// Values by name, defaults filled in.
    public var values: [String: ParameterValue]
    /// The names the stage declares (its ``StageDescriptor/parameters``); empty when the set was
    /// made in code rather than by the registry.
    public var declared: Set<String>

    /// Creates a parameter set.
    /// - Parameter declared: the names the stage declares; reading another is a programming error
    ///   (the declaration and the reading would have drifted apart).
    public init(_ values: [String: ParameterValue] = [:], declared: [String] = []) {
        self.values = values
        self.declared = Set(declared)
    }

    private func declaredValue(_ name: String) -> ParameterValue? {
        precondition(declared.isEmpty || declared.contains(name), "a stage reads parameter '\(name)' it does not declare")
        return values[name]
    }

    /// A text parameter (nil when absent).
    public func string(_ name: String) -> String? {
        if case .string(let value)? = declaredValue(name) { return value }
        return nil
    }
    /// A whole-number parameter.
    public func integer(_ name: String) -> Int? {
        if case .integer(let value)? = declaredValue(name) { return value }
        return nil
    }
    /// A number parameter (whole numbers are accepted).
    public func number(_ name: String) -> Double? {
        switch declaredValue(name) {
        case .number(let value)?: return value
        case .integer(let value)?: return Double(value)
        default: return nil
        }
    }
    /// A boolean parameter.
    public func boolean(_ name: String) -> Bool? {
        if case .boolean(let value)? = declaredValue(name) { return value }
        return nil
    }
    /// A duration parameter.
    public func duration(_ name: String) -> Duration? {
        if case .duration(let value)? = declaredValue(name) { return value }
        return nil
    }
    /// A list parameter.
    public func stringList(_ name: String) -> [String]? {
        if case .stringList(let value)? = declaredValue(name) { return value }
        return nil
    }
}

/// What a registry factory makes: a source or a step.
public enum StageInstance: Sendable {
    /// A source stage.
    case source(any SourceStage)
    /// A processing stage.
    case stage(any Stage)
}

/// One entry of the stage catalogue: a name, its parameters and a factory.
///
/// A factory gets only the checked parameters: what a stage needs at run time (the library, the
/// command's settings) it takes from its ``StageContext``. So every stage can be built — and a
/// pipeline planned and type-checked — with nothing open.
public struct StageDescriptor: Sendable {
    /// Whether the stage reads input (must come first) or processes batches.
    public enum Kind: String, Sendable { case source, step }

    /// The name used in pipeline files (`normalize-records`).
    public var name: String
    /// One line for the catalogue.
    public var summary: String
    /// Source or step.
    public var kind: Kind
    /// The parameters it takes: the one list both validation and the factory read them from.
    public var parameters: [ParameterSpec]
    /// What it reads and writes and what it needs from the command.
    public var contract: StageContract
    /// Makes the stage from checked parameters.
    public var make: @Sendable (StageParameters) throws -> StageInstance

    /// Creates a descriptor.
    /// - Parameter contract: what it reads and writes (default: a step that reads records and passes them on).
    public init(
        name: String, summary: String, kind: Kind, parameters: [ParameterSpec] = [], contract: StageContract = StageContract(),
        make: @escaping @Sendable (StageParameters) throws -> StageInstance
    ) {
        self.name = name
        self.summary = summary
        self.kind = kind
        self.parameters = parameters
        self.contract = contract
        self.make = make
    }

    /// The parameters a pipeline file must give (those without a default).
    public var requiredParameters: [ParameterSpec] { parameters.filter { $0.defaultValue == nil } }
}

/// The stage catalogue: turns a parsed pipeline file into a ``Pipeline``.
///
/// The catalogue is open: each module offers the descriptors of its own stages (for example
/// `IngestStages.descriptors`), and a registry is made of those lists; a module that adds stages
/// adds its list, and no central list of stages changes. Every problem is a ``PipelineFileError``
/// pointing at `file:line:column`, with a suggestion for a misspelt stage or parameter name.
public struct StageRegistry: Sendable {
    /// The catalogue, in the order it was given.
    public let descriptors: [StageDescriptor]

    /// Creates a registry from the modules' lists of descriptors.
    /// - Precondition: stage names are unique (a programming error otherwise).
    public init(_ descriptors: [StageDescriptor]) {
        var seen = Set<String>()
        for descriptor in descriptors {
            precondition(seen.insert(descriptor.name).inserted, "two stages are named '\(descriptor.name)'")
        }
        self.descriptors = descriptors
    }

    /// A registry with more descriptors (a module's stages).
    public func adding(_ more: [StageDescriptor]) -> StageRegistry {
        StageRegistry(descriptors + more)
    }

    /// The descriptor with this name.
    public func descriptor(named name: String) -> StageDescriptor? {
        descriptors.first { $0.name == name }
    }

    /// Checks a pipeline file against the catalogue and the stages' contracts without running
    /// anything: stage names, parameters (every required one given, each of its type), that each
    /// step takes what the step before it produces, that a step needing stored records comes after
    /// a store step, that rows read are stored (or the pipeline ends in a step that writes output),
    /// and that the command can give every resource a stage needs. References such as `$inputs`
    /// need no value here.
    /// - Parameter provided: the resources the command can give; nil checks none.
    /// - Throws: ``PipelineFileError`` for the first problem found.
    public func validate(_ file: PipelineFile, arguments: [String: ParameterValue] = [:],
                         provided: Set<StageResource>? = nil) throws(PipelineFileError) {
        _ = try build(file, arguments: arguments, requireArguments: false, provided: provided)
    }

    /// Builds the pipeline a file describes, checked as ``validate(_:arguments:provided:)`` does; a
    /// source that reads files and is given none is an error too.
    /// - Parameters:
    ///   - file: the parsed file.
    ///   - arguments: values for `$name` references (`$inputs` is the command line's inputs).
    ///   - provided: the resources the command gives this run; nil checks none.
    /// - Throws: ``PipelineFileError`` for a bad stage, parameter, reference or step order, a broken
    ///   contract, or when a factory fails.
    public func build(_ file: PipelineFile, arguments: [String: ParameterValue],
                      provided: Set<StageResource>? = nil) throws(PipelineFileError) -> Pipeline {
        try build(file, arguments: arguments, requireArguments: true, provided: provided)
    }

    private func build(_ file: PipelineFile, arguments: [String: ParameterValue],
                       requireArguments: Bool, provided: Set<StageResource>?) throws(PipelineFileError) -> Pipeline {
        let (sourceDescriptor, sourceParameters) = try checked(file.source, kind: .source, file: file,
                                                               arguments: arguments, requireArguments: requireArguments)
        try checkResources(of: sourceDescriptor, at: file.source.stageLocation, provided: provided)
        if requireArguments, let filesParameter = sourceDescriptor.contract.filesParameter,
           sourceParameters.stringList(filesParameter)?.isEmpty ?? true {
            let written = file.source.parameters.first { $0.0 == filesParameter }?.1
            throw PipelineFileError(
                location: written?.valueLocation ?? file.source.stageLocation,
                message: "stage '\(sourceDescriptor.name)' reads \(filesParameter), but none are given",
                suggestion: written?.value == .scalar("$inputs", isQuoted: false)
                    ? "pass them after the pipeline: bookpipe run \(file.fileName) INPUT…" : "list them under '\(filesParameter):'")
        }
        let source: PipelineSource
        switch try make(sourceDescriptor, sourceParameters, at: file.source.location, entry: file.source) {
        case .source(let stage):
            source = PipelineSource(stage, location: file.source.location, parameters: planParameters(sourceParameters))
        case .stage:
            throw PipelineFileError(location: file.source.location,
                                    message: "stage '\(sourceDescriptor.name)' does not read input, so it cannot be the source")
        }
        var steps: [PipelineStep] = []
        var produced: (type: any Any.Type, by: String) = (source.outputType, sourceDescriptor.name)
        // Records a source reads from the library are stored already; rows from files are not yet.
        var storedBy: String? = sourceDescriptor.contract.reads.contains(.storedRecords) ? sourceDescriptor.name : nil
        var lastStep: (descriptor: StageDescriptor, entry: PipelineFile.StageEntry)?
        // A step before any store that passes on only some of the rows read from files.
        var droppedBy: (name: String, location: SourceLocation)?
        for step in file.steps {
            let (descriptor, parameters) = try checked(step, kind: .step, file: file, arguments: arguments,
                                                       requireArguments: requireArguments)
            try checkResources(of: descriptor, at: step.stageLocation, provided: provided)
            if descriptor.contract.needsStoredRecords, storedBy == nil {
                throw PipelineFileError(
                    location: step.stageLocation,
                    message: "stage '\(descriptor.name)' needs its records stored in the library, but no step before it stores them",
                    suggestion: "put '- stage: \(storeStageNames.first ?? "store-records")' before it")
            }
            if descriptor.contract.storesRecords, let dropper = droppedBy {
                throw PipelineFileError(
                    location: step.stageLocation,
                    message: "stage '\(descriptor.name)' would store only the rows '\(dropper.name)' passes on, so no file "
                        + "it reads would ever be stored whole (resuming, importing again and marking entries gone "
                        + "need every row)",
                    suggestion: "put '\(dropper.name)' after '\(descriptor.name)', or end the pipeline with 'write-export' "
                        + "instead of storing")
            }
            if descriptor.contract.dropsRecords, storedBy == nil, droppedBy == nil, readsRows(sourceDescriptor) {
                droppedBy = (descriptor.name, step.stageLocation)
            }
            if descriptor.contract.isSequential, let concurrency = step.concurrency, concurrency > 1 {
                throw PipelineFileError(
                    location: step.stageLocation,
                    message: "stage '\(descriptor.name)' takes its batches one at a time, in order (what it keeps depends "
                        + "on the records before), so it cannot run with concurrency \(concurrency)",
                    suggestion: "remove 'concurrency:' from this step")
            }
            if descriptor.contract.storesRecords { storedBy = descriptor.name }
            lastStep = (descriptor, step)
            guard case .stage(let stage) = try make(descriptor, parameters, at: step.location, entry: step) else {
                throw PipelineFileError(location: step.location,
                                        message: "stage '\(descriptor.name)' reads input; it can only be the source")
            }
            var built = PipelineStep(stage, location: step.location, parameters: planParameters(parameters),
                                     concurrency: step.concurrency ?? 1, failureMode: step.failureMode ?? .markAndContinue)
            guard built.inputType == produced.type else {
                throw PipelineFileError(
                    location: step.stageLocation,
                    message: "stage '\(descriptor.name)' takes \(Self.describe(built.inputType)) but '\(produced.by)' "
                        + "before it produces \(Self.describe(produced.type))",
                    suggestion: "put a step that turns \(Self.describe(produced.type)) into "
                        + "\(Self.describe(built.inputType)) between them, or reorder the steps")
            }
            produced = (built.outputType, descriptor.name)
            if let name = step.name { built.name = name }
            steps.append(built)
        }
        // Rows read from outside (files, photos) are stored, or reported on by the last step.
        if readsRows(sourceDescriptor), storedBy == nil, !(lastStep?.descriptor.contract.writesOutput ?? false) {
            let outputs = descriptors.filter { $0.contract.writesOutput }.map(\.name)
            throw PipelineFileError(
                location: lastStep?.entry.stageLocation ?? file.source.stageLocation,
                message: "pipeline '\(file.name)' reads rows with '\(sourceDescriptor.name)' but no step stores them, "
                    + "and it does not end in a step that writes output",
                suggestion: "add '- stage: \(storeStageNames.first ?? "store-records")' to keep the rows"
                    + (outputs.isEmpty ? "" : ", or end with \(outputs.map { "'\($0)'" }.joined(separator: " or ")) to only report on them"))
        }
        return Pipeline(name: file.name, source: source, steps: steps)
    }

    /// Whether a source reads rows from outside (files, photos), which a store step must keep whole.
    private func readsRows(_ source: StageDescriptor) -> Bool {
        !Set(source.contract.reads).isDisjoint(with: [.inputFiles, .photos])
    }

    /// The steps that store records (`store-records`).
    private var storeStageNames: [String] {
        descriptors.filter { $0.kind == .step && $0.contract.storesRecords }.map(\.name)
    }

    private func checkResources(of descriptor: StageDescriptor, at location: SourceLocation,
                                provided: Set<StageResource>?) throws(PipelineFileError) {
        guard let provided else { return }
        for resource in descriptor.contract.resources where !provided.contains(resource) {
            throw PipelineFileError(location: location,
                                    message: "stage '\(descriptor.name)' needs \(resource.name), which this command is not given",
                                    suggestion: "give \(resource.howToGive)")
        }
    }

    /// A type as a person reads it in an error: `BookRecord batches`.
    static func describe(_ type: any Any.Type) -> String {
        "\(type) batches"
    }

    private func make(_ descriptor: StageDescriptor, _ parameters: StageParameters, at location: SourceLocation,
                      entry: PipelineFile.StageEntry) throws(PipelineFileError) -> StageInstance {
        do {
            return try descriptor.make(parameters)
        } catch let error as PipelineFileError {
            throw error
        } catch let error as StageParameterError {
            // Pointed at the value as written (a default that is wrong points at the stage).
            let written = entry.parameters.first { $0.0 == error.parameter }?.1.valueLocation
            throw PipelineFileError(location: written ?? location,
                                    message: "stage '\(descriptor.name)': '\(error.parameter)' \(error.problem)")
        } catch {
            throw PipelineFileError(location: location, message: "cannot set up stage '\(descriptor.name)': \(error)")
        }
    }

    private func planParameters(_ parameters: StageParameters) -> [(String, String)] {
        parameters.values.keys.sorted().compactMap { key in parameters.values[key].map { (key, $0.description) } }
    }

    private func checked(_ entry: PipelineFile.StageEntry, kind: StageDescriptor.Kind, file: PipelineFile,
                         arguments: [String: ParameterValue], requireArguments: Bool) throws(PipelineFileError)
        -> (StageDescriptor, StageParameters) {
        guard let descriptor = descriptor(named: entry.stage) else {
            let names = descriptors.filter { $0.kind == kind }.map(\.name)
            throw PipelineFileError(
                location: entry.stageLocation,
                message: "unknown stage '\(entry.stage)'",
                suggestion: Suggestions.closest(to: entry.stage, among: names).map { "did you mean '\($0)'?" }
                    ?? "known \(kind == .source ? "sources" : "stages"): \(names.joined(separator: ", "))")
        }
        guard descriptor.kind == kind else {
            throw PipelineFileError(
                location: entry.stageLocation,
                message: kind == .source
                    ? "stage '\(descriptor.name)' does not read input, so it cannot be the source"
                    : "stage '\(descriptor.name)' reads input; it can only be the pipeline's source")
        }
        var values: [String: ParameterValue] = [:]
        var given = Set<String>()
        for (name, raw) in entry.parameters {
            guard let spec = descriptor.parameters.first(where: { $0.name == name }) else {
                let known = descriptor.parameters.map(\.name)
                throw PipelineFileError(
                    location: raw.keyLocation,
                    message: "stage '\(descriptor.name)' has no parameter '\(name)'",
                    suggestion: Suggestions.closest(to: name, among: known).map { "did you mean '\($0)'?" }
                        ?? (known.isEmpty ? "it takes no parameters" : "its parameters: \(known.joined(separator: ", "))"))
            }
            given.insert(name)
            if let value = try raw.value.checked(as: spec, arguments: arguments, requireArguments: requireArguments,
                                                 location: raw.valueLocation) {
                values[name] = value
            }
        }
        for spec in descriptor.parameters where !given.contains(spec.name) {
            guard let defaultValue = spec.defaultValue else {
                throw PipelineFileError(location: entry.stageLocation,
                                        message: "stage '\(descriptor.name)' needs parameter '\(spec.name)' (\(spec.type.rawValue)): \(spec.summary)",
                                        suggestion: "add it under 'with:'; required: "
                                            + descriptor.requiredParameters.map(\.name).joined(separator: ", "))
            }
            values[spec.name] = defaultValue
        }
        return (descriptor, StageParameters(values, declared: descriptor.parameters.map(\.name)))
    }
}

/// Finds the closest name for "did you mean" suggestions.
public enum Suggestions {
    /// The candidate within a small edit distance of `word`, if any.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    /// The edit distance between `a` and `b`: insertions, deletions, substitutions and swaps of two
    /// neighbouring characters each count 1 (Damerau–Levenshtein, optimal string alignment), so
    /// `imprt` is 1 from `import` and `improt` is 1 from it too.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows: the one before the previous is needed for swaps.
        var beforePrevious = Array(repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}

/// Reads and writes durations as `500ms`, `30s`, `2m`, `1h`, `30d`.
public enum DurationSyntax {
    /// Parses a duration; nil when the text is not one.
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, seconds) in units where trimmed.hasSuffix(suffix) {
            let number = trimmed.dropLast(suffix.count)
            if let value = Double(number), value >= 0, value.isFinite {
                return .milliseconds(Int64((value * seconds * 1000).rounded()))
            }
        }
        return nil
    }

    /// Formats a duration in the largest unit that keeps it whole.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        for (suffix, unit) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000)]
        where milliseconds >= unit && milliseconds % unit == 0 {
            return "\(milliseconds / unit)\(suffix)"
        }
        return "\(milliseconds)ms"
    }
}


/// A parameter value a stage cannot use, thrown by a ``StageDescriptor``'s `make`: the file's
/// error then points at the value as written.
public struct StageParameterError: Error, Sendable, Hashable {
    /// The parameter's name.
    public var parameter: String
    /// What it takes, and what it was given: `takes one character (…) or 'tab', not 'ab'`.
    public var problem: String

    /// Creates the error.
    public init(parameter: String, problem: String) {
        self.parameter = parameter
        self.problem = problem
    }
}
