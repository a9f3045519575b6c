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
        StageDescriptor(
            name: "library-records", summary: "Reads stored records to (re-)enrich: pending, or the statuses the command asks for.",
            kind: .source,
            parameters: [ParameterSpec("batchSize", .integer, default: .integer(100), summary: "records per batch")]
        ) { parameters, environment in
            .source(LibraryRecords(batchSize: parameters.integer("batchSize") ?? 100, environment: environment))
        },
        StageDescriptor(
            name: "enrich-records",
            summary: "Looks records up in the chain of sources (cache first, rate-limited, retried) and scores the candidates.",
            kind: .step, parameters: SourceChain.parameters
        ) { parameters, environment in
            .stage(EnrichRecords(enricher: try SourceChain.enricher(parameters, environment: environment),
                                 environment: environment))
        },
        StageDescriptor(
            name: "save-enrichment", summary: "Stores each batch's outcomes, matches, candidates and matched works.",
            kind: .step
        ) { _, environment in .stage(SaveEnrichment(environment: environment)) },
    ])
}

/// The pipeline files that ship inside the binary (the same text as the files in `pipelines/`;
/// a test keeps them identical).
public enum BuiltinPipelines {
    /// Name → YAML text.
    public static let files: [String: String] = ["csv-import": csvImport, "enrich": enrich]

    /// `pipelines/csv-import.yaml`.
    public static let csvImport = """
        # What `bookpipe import` runs. Guide: pipelines/csv-import.md
        name: csv-import
        description: Read CSV/TSV exports, normalise and validate every row, store it, and enrich it from the sources.
        source:
          stage: read-csv
          with:
            files: $inputs
            batchSize: 512
        steps:
          # Normalising cannot fail for a batch; "stop" also lets it work on each batch in place.
          # One worker: the reader is the serial stage, and on two cores a second normaliser only added
          # hand-offs (1M rows: 3-5 % more CPU with 2).
          - stage: normalize-records
            concurrency: 1
            on-failure: stop
          - stage: store-records
            on-failure: stop
          # Skipped by `bookpipe import --no-enrich`.
          - stage: enrich-records
            concurrency: 4
            with:
              sources: [catalog, openlibrary, googlebooks]
              openlibraryRate: 3
              googlebooksRate: 1
              isbnBatchSize: 25
              rateLimitedBackoff: 1s
              rateLimitedRetries: 4
              unavailableDelay: 30s
              transportAttempts: 3
              requestTimeout: 30s
              maxCacheAge: 90d
              acceptAt: 60
          - stage: save-enrichment
            on-failure: stop

        """

    /// `pipelines/enrich.yaml`.
    public static let enrich = """
        # What `bookpipe enrich` runs. Guide: pipelines/enrich.md
        name: enrich
        description: Enrich stored records that are pending (with --failed, --unmatched or --all, those too).
        source:
          stage: library-records
          with:
            batchSize: 100
        steps:
          - stage: enrich-records
            concurrency: 4
            with:
              sources: [catalog, openlibrary, googlebooks]
              openlibraryRate: 3
              googlebooksRate: 1
              isbnBatchSize: 25
              rateLimitedBackoff: 1s
              rateLimitedRetries: 4
              unavailableDelay: 30s
              transportAttempts: 3
              requestTimeout: 30s
              maxCacheAge: 90d
              acceptAt: 60
          - stage: save-enrichment
            on-failure: stop

        """
}
