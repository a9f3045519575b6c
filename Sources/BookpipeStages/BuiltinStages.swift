import BookpipeCore
import BookpipePipeline

/// The stage catalogue that pipeline files are built from.
public enum BuiltinStages {
    /// Every built-in stage.
    public static let registry = StageRegistry<ImportEnvironment>([
        StageDescriptor(
            name: "read-csv", summary: "Reads CSV/TSV exports (format detected), skipping rows already stored.",
            kind: .source,
            parameters: [
                ParameterSpec("files", .stringList, summary: "the input files"),
                ParameterSpec("batchSize", .integer, default: .integer(512), summary: "records per batch"),
            ]
        ) { parameters, environment in
            .source(ReadCSV(files: parameters.stringList("files") ?? [], batchSize: max(1, parameters.integer("batchSize") ?? 512),
                            environment: environment))
        },
        StageDescriptor(
            name: "normalize-records",
            summary: "Derives search titles, comparison keys, author forms and ISBN-13s; flags invalid data.",
            kind: .step
        ) { _, _ in .stage(NormalizeRecords()) },
        StageDescriptor(
            name: "store-records", summary: "Stores each batch in the library in one transaction.", kind: .step
        ) { _, environment in .stage(StoreRecords(environment: environment)) },
    ])
}

/// The pipeline files that ship inside the binary (the same text as the files in `pipelines/`;
/// a test keeps them identical).
public enum BuiltinPipelines {
    /// Name → YAML text.
    public static let files: [String: String] = ["csv-import": csvImport]

    /// `pipelines/csv-import.yaml`.
    public static let csvImport = """
        # What `bookpipe import` runs. Guide: pipelines/csv-import.md
        name: csv-import
        description: Read CSV/TSV exports, normalise and validate every row, and store it in the library.
        source:
          stage: read-csv
          with:
            files: $inputs
            batchSize: 512
        steps:
          - stage: normalize-records
            concurrency: 2
          - stage: store-records
            on-failure: stop

        """
}
