import Foundation
import Yams

/// A pipeline file (YAML) as written, with the location of everything in it.
///
/// ```yaml
/// name: csv-import
/// description: Read CSV exports, normalise and store every row.
/// source:
///   stage: read-csv
///   with:
///     files: $inputs
/// steps:
///   - stage: normalize-records
///     concurrency: 2
///   - stage: store-records
///     on-failure: stop
/// ```
///
/// Parsing checks the file's shape; ``StageRegistry`` checks stage names and parameters.
public struct PipelineFile: Sendable {
    /// One `stage:` entry with its options.
    public struct StageEntry: Sendable {
        /// The stage's catalogue name.
        public var stage: String
        /// Where the entry starts.
        public var location: SourceLocation
        /// Where the stage name is written.
        public var stageLocation: SourceLocation
        /// A name for plans and logs, when given (`name:`).
        public var name: String?
        /// Workers (`concurrency:`).
        public var concurrency: Int?
        /// Failure mode (`on-failure: mark|stop`).
        public var failureMode: FailureMode?
        /// Parameters under `with:`, in file order.
        public var parameters: [(String, RawParameter)]
    }

    /// A parameter as written, before checking its type.
    public struct RawParameter: Sendable {
        /// Where the parameter's name is written.
        public var keyLocation: SourceLocation
        /// Where its value is written.
        public var valueLocation: SourceLocation
        /// The value.
        public var value: RawValue
    }

    /// A YAML value: one scalar or a list of scalars.
    public enum RawValue: Sendable, Hashable {
        /// A scalar; `isQuoted` keeps `"42"` a string.
        case scalar(String, isQuoted: Bool)
        /// A list of scalars.
        case list([String])
    }

    /// The file name used in messages.
    public var fileName: String
    /// The pipeline's name.
    public var name: String
    /// What it does, for `bookpipe pipelines list`.
    public var description: String
    /// The source entry.
    public var source: StageEntry
    /// The steps after the source.
    public var steps: [StageEntry]

    private static let topKeys = ["name", "description", "source", "steps"]
    private static let entryKeys = ["stage", "name", "with", "concurrency", "on-failure"]

    /// Parses pipeline-file text.
    /// - Parameters:
    ///   - text: the YAML text.
    ///   - fileName: the name used in messages (`pipelines/csv-import.yaml`).
    /// - Throws: ``PipelineFileError`` with the line and column of the first problem.
    public static func parse(_ text: String, fileName: String) throws(PipelineFileError) -> PipelineFile {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw PipelineFileError(yamlError: error, fileName: fileName)
        } catch {
            throw PipelineFileError(location: SourceLocation(file: fileName, line: 1, column: 1),
                                    message: "cannot read the file as YAML: \(error)")
        }
        let start = SourceLocation(file: fileName, line: 1, column: 1)
        guard let root, let mapping = root.mapping else {
            throw PipelineFileError(location: start, message: "a pipeline file is a mapping with keys name, source and steps",
                                    suggestion: "see pipelines/csv-import.yaml for an example")
        }
        func location(_ node: Node) -> SourceLocation {
            node.mark.map { SourceLocation(file: fileName, line: $0.line, column: $0.column) } ?? start
        }
        var name: String?
        var description = ""
        var source: StageEntry?
        var steps: [StageEntry] = []
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            switch key {
            case "name":
                name = try scalarText(value, what: "name", location: location(value))
            case "description":
                description = try scalarText(value, what: "description", location: location(value))
            case "source":
                source = try entry(value, location: location)
            case "steps":
                guard let sequence = value.sequence else {
                    throw PipelineFileError(location: location(value), message: "'steps' must be a list of stages",
                                            suggestion: "write each step as '- stage: NAME'")
                }
                steps = try sequence.map { node throws(PipelineFileError) in try entry(node, location: location) }
            default:
                throw PipelineFileError(location: location(keyNode), message: "unknown key '\(key)'",
                                        suggestion: Suggestions.closest(to: key, among: topKeys).map { "did you mean '\($0)'?" }
                                            ?? "known keys: \(topKeys.joined(separator: ", "))")
            }
        }
        guard let name, !name.isEmpty else {
            throw PipelineFileError(location: start, message: "the pipeline has no 'name'", suggestion: "add 'name: my-pipeline'")
        }
        guard let source else {
            throw PipelineFileError(location: start, message: "the pipeline has no 'source'",
                                    suggestion: "add 'source:' with 'stage: read-csv' (see `bookpipe pipelines show csv-import`)")
        }
        return PipelineFile(fileName: fileName, name: name, description: description, source: source, steps: steps)
    }

    private static func scalarText(_ node: Node, what: String, location: SourceLocation) throws(PipelineFileError) -> String {
        guard let scalar = node.scalar else {
            throw PipelineFileError(location: location, message: "'\(what)' must be a single value")
        }
        return scalar.string
    }

    private static func entry(_ node: Node, location: (Node) -> SourceLocation) throws(PipelineFileError) -> StageEntry {
        guard let mapping = node.mapping else {
            throw PipelineFileError(location: location(node), message: "a stage entry is a mapping with a 'stage' key",
                                    suggestion: "write '- stage: NAME'")
        }
        var entry = StageEntry(stage: "", location: location(node), stageLocation: location(node), name: nil,
                               concurrency: nil, failureMode: nil, parameters: [])
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            switch key {
            case "stage":
                entry.stage = try scalarText(value, what: "stage", location: location(value))
                entry.stageLocation = location(value)
            case "name":
                entry.name = try scalarText(value, what: "name", location: location(value))
            case "concurrency":
                guard let workers = value.int, workers >= 1, workers <= 64 else {
                    throw PipelineFileError(location: location(value),
                                            message: "'concurrency' must be a whole number from 1 to 64, not '\(value.string ?? "a list")'")
                }
                entry.concurrency = workers
            case "on-failure":
                let text = try scalarText(value, what: "on-failure", location: location(value))
                guard let mode = FailureMode(rawValue: text) else {
                    throw PipelineFileError(location: location(value), message: "'on-failure' must be 'mark' or 'stop', not '\(text)'",
                                            suggestion: "'mark' flags the batch's records and goes on; 'stop' ends the run")
                }
                entry.failureMode = mode
            case "with":
                guard let parameters = value.mapping else {
                    throw PipelineFileError(location: location(value), message: "'with' must map parameter names to values")
                }
                for (parameterKey, parameterValue) in parameters {
                    let raw: RawValue
                    if let scalar = parameterValue.scalar {
                        raw = .scalar(scalar.string, isQuoted: scalar.style == .singleQuoted || scalar.style == .doubleQuoted)
                    } else if let sequence = parameterValue.sequence {
                        raw = .list(try sequence.map { item throws(PipelineFileError) in
                            try scalarText(item, what: parameterKey.string ?? "", location: location(item))
                        })
                    } else {
                        throw PipelineFileError(location: location(parameterValue),
                                                message: "parameter '\(parameterKey.string ?? "")' must be a value or a list of values")
                    }
                    entry.parameters.append((parameterKey.string ?? "", RawParameter(
                        keyLocation: location(parameterKey), valueLocation: location(parameterValue), value: raw)))
                }
            default:
                throw PipelineFileError(location: location(keyNode), message: "unknown key '\(key)' in a stage entry",
                                        suggestion: Suggestions.closest(to: key, among: entryKeys).map { "did you mean '\($0)'?" }
                                            ?? "known keys: \(entryKeys.joined(separator: ", "))")
            }
        }
        if entry.stage.isEmpty {
            throw PipelineFileError(location: entry.location, message: "this entry has no 'stage'", suggestion: "add 'stage: NAME'")
        }
        return entry
    }
}

extension PipelineFile.RawValue {
    /// Checks the value against a parameter's type, resolving `$name` references.
    /// - Returns: nil when the value is a reference that is not given and not required yet.
    func checked(as spec: ParameterSpec, arguments: [String: ParameterValue], requireArguments: Bool,
                 location: SourceLocation) throws(PipelineFileError) -> ParameterValue? {
        if case .scalar(let text, false) = self, text.hasPrefix("$") {
            let reference = String(text.dropFirst())
            guard let value = arguments[reference] else {
                if !requireArguments { return nil }
                throw PipelineFileError(location: location, message: "'$\(reference)' is not given for parameter '\(spec.name)'",
                                        suggestion: reference == "inputs" ? "pass input files: bookpipe run FILE.yaml INPUT…" : nil)
            }
            if case .stringList(let list) = value, spec.type == .string, list.count == 1 { return .string(list[0]) }
            if case .string(let single) = value, spec.type == .stringList { return .stringList([single]) }
            return value
        }
        func fail(_ what: String) -> PipelineFileError {
            PipelineFileError(location: location, message: "parameter '\(spec.name)' takes \(what), not '\(self.display)'",
                              suggestion: spec.summary)
        }
        switch (spec.type, self) {
        case (.string, .scalar(let text, _)): return .string(text)
        case (.stringList, .scalar(let text, _)): return .stringList([text])
        case (.stringList, .list(let items)): return .stringList(items)
        case (.integer, .scalar(let text, _)):
            guard let value = Int(text) else { throw fail("a whole number") }
            return .integer(value)
        case (.number, .scalar(let text, _)):
            guard let value = Double(text), value.isFinite else { throw fail("a number") }
            return .number(value)
        case (.boolean, .scalar(let text, _)):
            switch text.lowercased() {
            case "true", "yes", "on": return .boolean(true)
            case "false", "no", "off": return .boolean(false)
            default: throw fail("true or false")
            }
        case (.duration, .scalar(let text, _)):
            guard let value = DurationSyntax.parse(text) else { throw fail("a duration such as 500ms, 30s, 2m, 1h or 30d") }
            return .duration(value)
        case (_, .list):
            throw fail("a single \(spec.type.rawValue)")
        }
    }

    private var display: String {
        switch self {
        case .scalar(let text, _): return text
        case .list(let items): return "[" + items.joined(separator: ", ") + "]"
        }
    }
}

/// A problem in a pipeline file, pointing at `file:line:column`.
public struct PipelineFileError: Error, Sendable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What is wrong.
    public var message: String
    /// What to do instead, when known (`did you mean 'normalize-records'?`).
    public var suggestion: String?

    /// Creates an error.
    public init(location: SourceLocation, message: String, suggestion: String? = nil) {
        self.location = location
        self.message = message
        self.suggestion = suggestion
    }

    init(yamlError: YamlError, fileName: String) {
        switch yamlError {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _):
            self.init(location: SourceLocation(file: fileName, line: mark.line, column: mark.column),
                      message: "not valid YAML: \(problem)")
        default:
            self.init(location: SourceLocation(file: fileName, line: 1, column: 1), message: "not valid YAML: \(yamlError)")
        }
    }

    /// `file:line:column: error: message` and, on a second line, the suggestion.
    public var description: String {
        var text = "\(location): error: \(message)"
        if let suggestion { text += "\n  \(suggestion)" }
        return text
    }
}
