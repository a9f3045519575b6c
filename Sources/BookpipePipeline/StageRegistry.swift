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

    /// Creates a parameter set.
    public init(_ values: [String: ParameterValue] = [:]) { self.values = values }

    /// A text parameter (nil when absent).
    public func string(_ name: String) -> String? {
        if case .string(let value)? = values[name] { return value }
        return nil
    }
    /// A whole-number parameter.
    public func integer(_ name: String) -> Int? {
        if case .integer(let value)? = values[name] { return value }
        return nil
    }
    /// A number parameter (whole numbers are accepted).
    public func number(_ name: String) -> Double? {
        switch values[name] {
        case .number(let value)?: return value
        case .integer(let value)?: return Double(value)
        default: return nil
        }
    }
    /// A boolean parameter.
    public func boolean(_ name: String) -> Bool? {
        if case .boolean(let value)? = values[name] { return value }
        return nil
    }
    /// A duration parameter.
    public func duration(_ name: String) -> Duration? {
        if case .duration(let value)? = values[name] { return value }
        return nil
    }
    /// A list parameter.
    public func stringList(_ name: String) -> [String]? {
        if case .stringList(let value)? = values[name] { return value }
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
    /// The parameters it takes.
    public var parameters: [ParameterSpec]
    /// Makes the stage from checked parameters.
    public var make: @Sendable (StageParameters) throws -> StageInstance

    /// Creates a descriptor.
    public init(
        name: String, summary: String, kind: Kind, parameters: [ParameterSpec] = [],
        make: @escaping @Sendable (StageParameters) throws -> StageInstance
    ) {
        self.name = name
        self.summary = summary
        self.kind = kind
        self.parameters = parameters
        self.make = make
    }
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

    /// Checks a pipeline file against the catalogue without running anything: stage names,
    /// parameters and their types, and that each step takes what the step before it produces.
    /// References such as `$inputs` need no value here.
    /// - Throws: ``PipelineFileError`` for the first problem found.
    public func validate(_ file: PipelineFile, arguments: [String: ParameterValue] = [:]) throws(PipelineFileError) {
        _ = try build(file, arguments: arguments, requireArguments: false)
    }

    /// Builds the pipeline a file describes, type-checked.
    /// - Parameters:
    ///   - file: the parsed file.
    ///   - arguments: values for `$name` references (`$inputs` is the command line's inputs).
    /// - Throws: ``PipelineFileError`` for a bad stage, parameter, reference or step order, or when a
    ///   factory fails.
    public func build(_ file: PipelineFile, arguments: [String: ParameterValue]) throws(PipelineFileError) -> Pipeline {
        try build(file, arguments: arguments, requireArguments: true)
    }

    private func build(_ file: PipelineFile, arguments: [String: ParameterValue],
                       requireArguments: Bool) throws(PipelineFileError) -> Pipeline {
        let (sourceDescriptor, sourceParameters) = try checked(file.source, kind: .source, file: file,
                                                               arguments: arguments, requireArguments: requireArguments)
        let source: PipelineSource
        switch try make(sourceDescriptor, sourceParameters, at: file.source.location) {
        case .source(let stage):
            source = PipelineSource(stage, location: file.source.location, parameters: planParameters(sourceParameters))
        case .stage:
            throw PipelineFileError(location: file.source.location,
                                    message: "stage '\(sourceDescriptor.name)' does not read input, so it cannot be the source")
        }
        var steps: [PipelineStep] = []
        var produced: (type: any Any.Type, by: String) = (source.outputType, sourceDescriptor.name)
        for step in file.steps {
            let (descriptor, parameters) = try checked(step, kind: .step, file: file, arguments: arguments,
                                                       requireArguments: requireArguments)
            guard case .stage(let stage) = try make(descriptor, parameters, at: step.location) else {
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
        return Pipeline(name: file.name, source: source, steps: steps)
    }

    /// A type as a person reads it in an error: `BookRecord batches`.
    static func describe(_ type: any Any.Type) -> String {
        "\(type) batches"
    }

    private func make(_ descriptor: StageDescriptor, _ parameters: StageParameters,
                      at location: SourceLocation) throws(PipelineFileError) -> StageInstance {
        do {
            return try descriptor.make(parameters)
        } catch let error as PipelineFileError {
            throw error
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
        for (name, raw) in entry.parameters {
            guard let spec = descriptor.parameters.first(where: { $0.name == name }) else {
                let known = descriptor.parameters.map(\.name)
                throw PipelineFileError(
                    location: raw.keyLocation,
                    message: "stage '\(descriptor.name)' has no parameter '\(name)'",
                    suggestion: Suggestions.closest(to: name, among: known).map { "did you mean '\($0)'?" }
                        ?? (known.isEmpty ? "it takes no parameters" : "its parameters: \(known.joined(separator: ", "))"))
            }
            if let value = try raw.value.checked(as: spec, arguments: arguments, requireArguments: requireArguments,
                                                 location: raw.valueLocation) {
                values[name] = value
            }
        }
        for spec in descriptor.parameters where values[spec.name] == nil {
            if let defaultValue = spec.defaultValue {
                values[spec.name] = defaultValue
            } else if requireArguments {
                throw PipelineFileError(location: entry.stageLocation,
                                        message: "stage '\(descriptor.name)' needs parameter '\(spec.name)' (\(spec.type.rawValue)): \(spec.summary)")
            }
        }
        return (descriptor, StageParameters(values))
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

