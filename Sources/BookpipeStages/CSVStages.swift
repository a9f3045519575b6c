import BookpipeCore
import BookpipeIngest
import BookpipePipeline

/// The stages that read and normalise CSV/TSV exports.
public enum CSVStages {
    /// `read-csv` and `normalize-records`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: "read-csv", summary: "Reads CSV/TSV exports (format detected) and emits their rows as records.",
            kind: .source,
            parameters: [
                ParameterSpec("files", .stringList, summary: "the input files"),
                ParameterSpec("batchSize", .integer, default: .integer(1024), summary: "records per batch"),
                ParameterSpec("format", .string, default: .string(""),
                              summary: "the format, instead of detecting it (goodreads, storygraph, …, generic); \"\": detect"),
                ParameterSpec("map", .stringList, default: .stringList([]),
                              summary: "field=Header pairs naming the columns (title=Titel, author=Autor)"),
                ParameterSpec("delimiter", .string, default: .string(""),
                              summary: "the field delimiter (one character, or tab); \"\": sniffed"),
                ParameterSpec("key", .string, default: .string(""),
                              summary: "the column holding the list's ids (rows with the same id update one entry); \"\": none"),
                ParameterSpec("list", .string, default: .string(""),
                              summary: "the name of the list the files are exports of; \"\": the format's"),
            ],
            contract: StageContract(reads: [.inputFiles], writes: [.records], filesParameter: "files")
        ) { parameters in
            // The same reading options as `bookpipe import --format --map --delimiter --key --list`,
            // checked when the file is validated; a command's own flags win over them.
            func given(_ name: String) -> String? { parameters.string(name).flatMap { $0.isEmpty ? nil : $0 } }
            let options: ImportOptions
            do throws(ImportOptionsError) {
                options = try ImportOptions.parsing(format: given("format"), map: parameters.stringList("map") ?? [],
                                                    delimiter: given("delimiter"), key: given("key"), list: given("list"))
                try options.checkNames()
            } catch {
                throw StageParameterError(parameter: error.setting, problem: error.problem)
            }
            return .source(ReadCSV(files: parameters.stringList("files") ?? [],
                                   batchSize: max(1, parameters.integer("batchSize") ?? 1024), options: options))
        },
        StageDescriptor(
            name: "normalize-records",
            summary: "Derives search titles, comparison keys, author forms and ISBN-13s; flags invalid data.",
            kind: .step
        ) { _ in .stage(NormalizeRecords()) },
    ]
}

/// Reads CSV/TSV exports in batches. It only produces: for each input an
/// ``PipelineEvent/inputStarted(_:)`` (format, encoding, header, size, estimated rows), its
/// records, its rejected rows and repairs as events, and ``PipelineEvent/inputFinished(_:rowsRead:)``
/// at its end. A file that cannot be read at all is reported (``PipelineEvent/inputFailed(path:reason:)``)
/// and the other files go on. What to keep is the sinks' business (``StoreRecords`` skips rows an
/// earlier run stored).
///
/// How to read (a forced format, a column map, a delimiter, the id column, the list) comes from
/// the stage's parameters, and from the run's ``ImportOptions`` resource when the command gives one
/// (its values win).
public struct ReadCSV: SourceStage {
    /// The input files.
    public var files: [String]
    /// Records per batch.
    public var batchSize: Int
    /// How to read, as the pipeline file says (`format`, `map`, `delimiter`, `key`, `list`); the
    /// run's ``ImportOptions`` resource (a command's flags) overrides what it sets.
    public var options: ImportOptions

    /// Creates the source.
    public init(files: [String], batchSize: Int = 1024, options: ImportOptions = ImportOptions()) {
        self.files = files
        self.batchSize = batchSize
        self.options = options
    }

    /// Emits every file's records and events.
    /// - Throws: `CancellationError`.
    public func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        let options = context.resource(ImportOptions.self).map(self.options.overridden(by:)) ?? self.options
        for path in files {
            try Task.checkCancellation()
            let reader: CSVRecordReader
            do {
                reader = try CSVRecordReader(path: path, options: options)
            } catch {
                context.progress.emit(.message("error: \(error.description)"))
                try await emit.event(.inputFailed(path: path, reason: error.description))
                continue
            }
            context.progress.emit(.message("\(path): detected \(reader.format.description)"))
            context.progress.emit(.inputStarted(file: path, totalBytes: reader.totalBytes))
            var input = InputFile(path: path, fileHash: reader.fileHash, format: reader.format.name,
                                  formatDescription: reader.format.description, header: reader.format.header,
                                  encoding: reader.format.encoding, size: reader.totalBytes,
                                  reading: reader.format.reading, entryColumn: reader.format.entryColumn,
                                  list: reader.format.list)
            var hasStarted = false
            while let batch = try reader.nextBatch(maxRecords: batchSize) {
                try Task.checkCancellation()
                if !hasStarted {
                    hasStarted = true
                    // The first batch tells how many rows the file holds, about.
                    input.estimatedRows = reader.bytesRead > 0
                        ? Int(Double(reader.totalBytes) / Double(reader.bytesRead) * Double(reader.rowsRead))
                        : reader.rowsRead
                    input.encoding = reader.format.encoding
                    try await emit.event(.inputStarted(input))
                }
                if !batch.rejected.isEmpty { try await emit.event(.rowsRejected(batch.rejected)) }
                if !batch.repairs.isEmpty { try await emit.event(.inputRepaired(path: path, repairs: batch.repairs)) }
                if !batch.notes.isEmpty { try await emit.event(.inputNoted(path: path, notes: batch.notes)) }
                context.progress.emit(.inputAdvanced(file: path, bytesRead: reader.bytesRead,
                                                     totalBytes: reader.totalBytes, rowsRead: reader.rowsRead))
                try await emit(batch.records)
            }
            input.encoding = reader.format.encoding
            if !hasStarted { try await emit.event(.inputStarted(input)) }
            try await emit.event(.inputFinished(input, rowsRead: reader.rowsRead))
        }
    }
}

/// Derives search titles, comparison keys, author forms and validated ISBN-13s, and raises
/// findings (invalid ISBN, impossible year, …) on each record. Never fails for a batch, so the
/// runner hands each batch over and it is changed in place (no record is copied).
public struct NormalizeRecords: Stage {
    /// Creates the stage.
    public init() {}

    /// Normalising is pure and cannot fail.
    public var mayFailForBatch: Bool { false }

    /// Normalises each record of the batch, in place.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let year = Normalizer.currentYear()
        var records = consume batch
        for index in records.indices {
            Normalizer.normalize(&records[index], currentYear: year)
        }
        return records
    }
}
