import BookpipeCore
import Testing
@testable import BookpipePipeline

/// A registry whose stages declare contracts like the built-in ones: a source of files that needs
/// a resource, a store step, a step that needs stored records and a report step.
let contractRegistry = StageRegistry([
    StageDescriptor(name: "read-files", summary: "files", kind: .source,
                    parameters: [ParameterSpec("files", .stringList, summary: "the input files")],
                    contract: StageContract(reads: [.inputFiles], writes: [.records], filesParameter: "files",
                                            resources: [StageResource("the test backend", howToGive: "--test-backend")])) { parameters in
        .source(CountingSource(count: parameters.stringList("files")?.count ?? 0, batchSize: 10))
    },
    StageDescriptor(name: "stored-records", summary: "the library's records", kind: .source,
                    contract: StageContract(reads: [.storedRecords], writes: [.records])) { _ in
        .source(CountingSource(count: 1, batchSize: 10))
    },
    StageDescriptor(name: "keep", summary: "stores", kind: .step,
                    contract: StageContract(reads: [.records], writes: [.records, .storedRecords])) { _ in
        .stage(AppendToTitle(suffix: ""))
    },
    StageDescriptor(name: "after-keep", summary: "needs stored records", kind: .step,
                    contract: StageContract(reads: [.storedRecords], writes: [.records])) { _ in
        .stage(AppendToTitle(suffix: ""))
    },
    StageDescriptor(name: "report", summary: "writes a report", kind: .step,
                    contract: StageContract(reads: [.records, .library], writes: [.reportFiles])) { _ in
        .stage(AppendToTitle(suffix: ""))
    },
    StageDescriptor(name: "pass", summary: "passes records on", kind: .step) { _ in .stage(AppendToTitle(suffix: "")) },
])

@Suite struct StageContractTests {
    static let backend: Set<StageResource> = [StageResource("the test backend", howToGive: "--test-backend")]

    static func file(source: String = "read-files", _ steps: [String]) throws(PipelineFileError) -> PipelineFile {
        let with = source == "read-files" ? "  with:\n    files: $inputs\n" : ""
        return try PipelineFile.parse("name: p\nsource:\n  stage: \(source)\n\(with)steps:\n"
                                      + steps.map { "  - stage: \($0)\n" }.joined(), fileName: "p.yaml")
    }

    static func error(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return "\(error)" }
        return nil
    }

    @Test("A step that needs stored records must come after a store step; a library source counts as stored")
    func storedRecordsOrder() throws {
        let before = try Self.file(["after-keep", "keep"])
        #expect(Self.error { try contractRegistry.validate(before, provided: Self.backend) }
                == "p.yaml:7:12: error: stage 'after-keep' needs its records stored in the library, but no step before it stores them\n"
                    + "  put '- stage: keep' before it")
        try contractRegistry.validate(try Self.file(["keep", "after-keep"]), provided: Self.backend)
        try contractRegistry.validate(try Self.file(source: "stored-records", ["after-keep"]))
    }

    @Test("Rows read from files are stored, or the pipeline ends in a step that writes output")
    func rowsAreStoredOrReported() throws {
        #expect(Self.error { try contractRegistry.validate(try Self.file(["pass"]), provided: Self.backend) }
                == "p.yaml:7:12: error: pipeline 'p' reads rows with 'read-files' but no step stores them, and it does not end in "
                    + "a step that writes output\n  add '- stage: keep' to keep the rows, or end with 'report' to only report on them")
        #expect(Self.error { try contractRegistry.validate(try Self.file(["report", "pass"]), provided: Self.backend) } != nil,
                "the report must be the last step")
        try contractRegistry.validate(try Self.file(["pass", "report"]), provided: Self.backend)
        try contractRegistry.validate(try Self.file(source: "stored-records", ["pass"]))
    }

    @Test("A resource the command does not give is named at the stage, with how to give it")
    func resources() throws {
        let file = try Self.file(["keep"])
        #expect(Self.error { try contractRegistry.validate(file, provided: []) }
                == "p.yaml:3:10: error: stage 'read-files' needs the test backend, which this command is not given\n  give --test-backend")
        try contractRegistry.validate(file, provided: Self.backend)
        try contractRegistry.validate(file)
    }

    @Test("Building with no files for a source that reads files is an error at the reference")
    func noFiles() throws {
        let file = try Self.file(["keep"])
        #expect(Self.error { _ = try contractRegistry.build(file, arguments: ["inputs": .stringList([])], provided: Self.backend) }
                == "p.yaml:5:12: error: stage 'read-files' reads files, but none are given\n"
                    + "  pass them after the pipeline: bookpipe run p.yaml INPUT…")
        _ = try contractRegistry.build(file, arguments: ["inputs": .stringList(["a.csv"])], provided: Self.backend)
    }

    @Test("The registry hands a factory the declared parameters, defaults filled in")
    func declaredParameters() throws {
        let registry = StageRegistry([StageDescriptor(
            name: "source", summary: "s", kind: .source,
            parameters: [ParameterSpec("count", .integer, default: .integer(3), summary: "n")]) { parameters in
                .source(CountingSource(count: parameters.integer("count") ?? 0, batchSize: 1))
            }])
        let pipeline = try registry.build(try PipelineFile.parse("name: q\nsource:\n  stage: source\n", fileName: "q.yaml"),
                                          arguments: [:])
        #expect(pipeline.source.parameters.map { "\($0.0)=\($0.1)" } == ["count=3"])
    }

    @Test("Reading a parameter the stage does not declare is a programming error")
    func undeclaredParameterStops() async {
        await #expect(processExitsWith: .failure) {
            _ = StageParameters(["count": .integer(1)], declared: ["count"]).integer("cuont")
        }
    }
}
