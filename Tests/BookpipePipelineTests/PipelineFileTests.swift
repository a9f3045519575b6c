import BookpipeCore
import Testing
@testable import BookpipePipeline

/// Turns records into their titles: a step whose output is not records.
struct TitlesOnly: Stage {
    func process(_ batch: [BookRecord], in context: StageContext) async throws -> [String] { batch.map(\.title) }
}

let testRegistry = StageRegistry([
    StageDescriptor(name: "counting-source", summary: "numbers", kind: .source,
                    parameters: [ParameterSpec("count", .integer, summary: "how many records"),
                                 ParameterSpec("files", .stringList, default: .stringList([]), summary: "inputs")]) { parameters in
        .source(CountingSource(count: parameters.integer("count") ?? 0, batchSize: 10))
    },
    StageDescriptor(name: "append-to-title", summary: "adds text", kind: .step,
                    parameters: [ParameterSpec("suffix", .string, default: .string("!"), summary: "text to add"),
                                 ParameterSpec("timeout", .duration, default: .duration(.seconds(30)), summary: "a wait")]) { parameters in
        .stage(AppendToTitle(suffix: parameters.string("suffix") ?? ""))
    },
    StageDescriptor(name: "titles-only", summary: "records to titles", kind: .step) { _ in .stage(TitlesOnly()) },
])

@Suite struct PipelineFileTests {
    @Test("A valid file builds the same pipeline the DSL would, with file:line locations")
    func builds() throws {
        let text = """
            name: demo
            description: a test
            source:
              stage: counting-source
              with:
                count: 5
                files: $inputs
            steps:
              - stage: append-to-title
                concurrency: 2
                with:
                  suffix: "?"
                  timeout: 2m
            """
        let file = try PipelineFile.parse(text, fileName: "demo.yaml")
        let pipeline = try testRegistry.build(file, arguments: ["inputs": .stringList(["a.csv"])])
        #expect(pipeline.name == "demo")
        #expect(pipeline.steps.count == 1)
        #expect(pipeline.steps[0].concurrency == 2)
        #expect(pipeline.steps[0].location.description == "demo.yaml:9:5")
        #expect(pipeline.plan.contains("append-to-title suffix=? timeout=2m"))
    }

    static let errorCases: [(String, String)] = [
        ("name: x\nsource:\n  stage: counting-source\n  with:\n    count: 1\nsteps:\n  - stage: apend-to-title\n",
         "x.yaml:7:12: error: unknown stage 'apend-to-title'\n  did you mean 'append-to-title'?"),
        ("name: x\nsource:\n  stage: counting-source\n  with:\n    count: 1\nsteps:\n  - stage: append-to-title\n    with:\n      sufix: a\n",
         "x.yaml:9:7: error: stage 'append-to-title' has no parameter 'sufix'\n  did you mean 'suffix'?"),
        ("name: x\nsource:\n  stage: counting-source\n  with:\n    count: many\n",
         "x.yaml:5:12: error: parameter 'count' takes a whole number, not 'many'\n  how many records"),
        ("name: x\nsource:\n  stage: counting-source\n  with:\n    count: 1\nsteps:\n  - stage: append-to-title\n    concurency: 2\n",
         "x.yaml:8:5: error: unknown key 'concurency' in a stage entry\n  did you mean 'concurrency'?"),
        ("name: x\nsource:\n  stage: append-to-title\n",
         "x.yaml:3:10: error: stage 'append-to-title' does not read input, so it cannot be the source"),
        ("name: x\nsource:\n  stage: counting-source\n  with:\n    count: 1\nsteps:\n  - stage: append-to-title\n    with:\n      timeout: soon\n",
         "x.yaml:9:16: error: parameter 'timeout' takes a duration such as 500ms, 30s, 2m, 1h or 30d, not 'soon'\n  a wait"),
        ("name: x\nsource: [oops\n", "x.yaml:3:1: error: not valid YAML: did not find expected ',' or ']'"),
        ("name: x\nsource:\n  stage: counting-source\n",
         "x.yaml:3:10: error: stage 'counting-source' needs parameter 'count' (integer): how many records\n  add it under 'with:'; required: count"),
        ("name: x\nsource:\n  stage: counting-source\n  with:\n    count: 1\nsteps:\n  - stage: titles-only\n  - stage: append-to-title\n",
         "x.yaml:8:12: error: stage 'append-to-title' takes BookRecord batches but 'titles-only' before it produces String batches\n"
            + "  put a step that turns String batches into BookRecord batches between them, or reorder the steps"),
    ]

    @Test("Validation type-checks the steps before anything runs, and needs no values for references")
    func validationTypeChecks() throws {
        let good = try PipelineFile.parse(
            "name: x\nsource:\n  stage: counting-source\n  with:\n    count: $n\nsteps:\n  - stage: append-to-title\n  - stage: titles-only\n",
            fileName: "x.yaml")
        try testRegistry.validate(good)
        let bad = try PipelineFile.parse(
            "name: x\nsource:\n  stage: counting-source\n  with:\n    count: 1\nsteps:\n  - stage: titles-only\n  - stage: titles-only\n",
            fileName: "bad.yaml")
        #expect(throws: PipelineFileError.self) { try testRegistry.validate(bad) }
        do {
            try testRegistry.validate(bad)
        } catch {
            #expect(error.description.hasPrefix("bad.yaml:8:12: error: stage 'titles-only' takes BookRecord batches"))
        }
    }

    @Test("A wrong file gives file:line:column, what is wrong and a suggestion", arguments: errorCases)
    func errors(text: String, expected: String) {
        do {
            let file = try PipelineFile.parse(text, fileName: "x.yaml")
            _ = try testRegistry.build(file, arguments: [:])
            Issue.record("expected an error")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test("Durations read and print in the units people write", arguments: [
        ("500ms", Duration.milliseconds(500)), ("30s", .seconds(30)), ("2m", .seconds(120)), ("30d", .seconds(30 * 86_400)),
    ])
    func durations(text: String, duration: Duration) {
        #expect(DurationSyntax.parse(text) == duration)
        #expect(DurationSyntax.format(duration) == text)
    }
}
