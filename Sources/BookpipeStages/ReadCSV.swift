import BookpipeCore
import BookpipeIngest
import BookpipePipeline
import BookpipeStore

/// Reads CSV/TSV exports in batches, skipping rows an earlier run already stored, and stores
/// rejected rows with their reasons. A file that cannot be read at all is reported in the
/// summary and the other files go on.
public struct ReadCSV: SourceStage {
    /// The input files.
    public var files: [String]
    /// Records per batch.
    public var batchSize: Int
    /// The run's environment.
    public var environment: ImportEnvironment

    /// Creates the source.
    public init(files: [String], batchSize: Int = 512, environment: ImportEnvironment) {
        self.files = files
        self.batchSize = batchSize
        self.environment = environment
    }

    /// Emits every not-yet-stored record of every file.
    /// - Throws: ``StoreError`` when the library cannot be written; `CancellationError`.
    public func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        let store = environment.store
        let summary = environment.summary
        for path in files {
            try Task.checkCancellation()
            let reader: CSVRecordReader
            do {
                reader = try CSVRecordReader(path: path, options: environment.options)
            } catch {
                summary.update(path) { $0.error = error.description }
                context.progress.emit(.message("error: \(error.description)"))
                continue
            }
            let hash = reader.fileHash
            summary.update(path) {
                $0.fileHash = hash
                $0.format = reader.format.description
                $0.encoding = reader.format.encoding
                $0.reading = reader.format.reading
            }
            let known = try store.sourceFile(hash: hash)
            // Stored with other columns (another --map, --format or --delimiter): every row is read
            // again and its record replaced. The file's reading changes only once all are stored, so
            // an interrupted re-read starts over.
            if let storedReading = known?.reading, storedReading != reader.format.reading {
                context.progress.emit(.message(
                    "\(path): imported before with other columns; reading all its rows again as \(reader.format.description) "
                        + "and replacing what was stored (enrichment of these rows starts over)."))
                environment.rereadFiles.insert(hash)
                try store.deleteRejections(fileHash: hash)
                summary.update(path) { $0.wasReread = true }
            }
            let isReread = environment.rereadFiles.contains(hash)
            let unfinished = environment.enrichment.isEnabled && !isReread
                ? try store.countRecords(statuses: environment.enrichment.statuses, fileHashes: [hash]) : 0
            if let known, known.isComplete, !isReread {
                summary.update(path) { $0.wasAlreadyImported = true }
                if unfinished > 0 {
                    context.progress.emit(.message(
                        "\(path): already imported (same content as \(known.path)); enriching the \(unfinished) rows an earlier run left unfinished."))
                    try await replayUnfinished(fileHash: hash, into: emit)
                } else {
                    context.progress.emit(.message(
                        "\(path): already imported (\(known.rowsTotal ?? 0) rows, same content as \(known.path)); nothing changed."))
                }
                continue
            }
            if unfinished > 0 {
                context.progress.emit(.message("\(path): enriching \(unfinished) stored rows an earlier run left unfinished."))
                try await replayUnfinished(fileHash: hash, into: emit)
            }
            context.progress.emit(.message("\(path): detected \(reader.format.description)"))
            try store.registerSourceFile(
                SourceFileInfo(hash: hash, path: path, format: reader.format.name, header: reader.format.header,
                               encoding: reader.format.encoding, size: reader.totalBytes, reading: reader.format.reading),
                runID: environment.runID)
            let finished = isReread ? RowSet() : try store.finishedRows(fileHash: hash)
            context.progress.emit(.inputStarted(file: path, totalBytes: reader.totalBytes))
            var isFirstBatch = true
            while let batch = try reader.nextBatch(maxRecords: batchSize) {
                try Task.checkCancellation()
                if isFirstBatch {
                    isFirstBatch = false
                    // A large file into an empty library: commits need not wait for the disk.
                    let rows = reader.rowsRead
                    let expected = reader.bytesRead > 0
                        ? Int(Double(reader.totalBytes) / Double(reader.bytesRead) * Double(rows)) : rows
                    try store.prepareForBulkInsert(expectedRows: expected - finished.count)
                }
                let fresh = finished.count == 0 ? batch.records : batch.records.filter { !finished.contains($0.origin.row) }
                let newRejections = batch.rejected.filter { rejected in rejected.row.map { !finished.contains($0) } ?? true }
                try store.insertRejections(newRejections, runID: environment.runID)
                let skipped = batch.records.count - fresh.count
                summary.update(path) {
                    $0.rowsRead = reader.rowsRead
                    $0.rowsAlreadyStored += skipped
                    $0.rejected += newRejections
                    $0.repairs += batch.repairs
                }
                context.progress.emit(.inputAdvanced(file: path, bytesRead: reader.bytesRead,
                                                     totalBytes: reader.totalBytes, rowsRead: reader.rowsRead))
                try await emit(fresh)
            }
            summary.update(path) {
                $0.rowsRead = reader.rowsRead
                $0.encoding = reader.format.encoding
                $0.isReadCompletely = true
            }
        }
    }

    /// Emits the stored records of a file that enrichment has not finished (an earlier run was
    /// interrupted after storing them), so this run finishes them.
    private func replayUnfinished(fileHash: String, into emit: BatchEmitter<BookRecord>) async throws {
        try await LibraryRecords.emitStored(from: environment.store, statuses: environment.enrichment.statuses,
                                            fileHashes: [fileHash], batchSize: batchSize, into: emit)
    }
}

/// Derives search titles, comparison keys, author forms and validated ISBN-13s, and raises
/// findings (invalid ISBN, impossible year, …) on each record.
public struct NormalizeRecords: Stage {
    /// Creates the stage.
    public init() {}

    /// Normalises each record of the batch.
    /// The batch is changed in place: when the step stops on failure (`on-failure: stop`), the
    /// pipeline hands over its only reference, so no record is copied.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let year = Normalizer.currentYear()
        var records = consume batch
        for index in records.indices {
            Normalizer.normalize(&records[index], currentYear: year)
        }
        return records
    }
}

/// Stores records in the library (idempotent: a row stored before is left as it is).
///
/// Batches are queued to the store's writer thread, which commits them in transactions of
/// thousands of records while the pipeline goes on (``LibraryStore/enqueueInsert(_:runID:)``);
/// the store commits queued records before any of its methods reads or updates records, so later
/// stages see them. After the last batch the stage commits the rest and makes the import durable
/// (``LibraryStore/finishBulkInsert()``).
public struct StoreRecords: Stage {
    /// The run's environment.
    public var environment: ImportEnvironment

    /// Creates the stage.
    public init(environment: ImportEnvironment) {
        self.environment = environment
    }

    /// Queues the batch for insertion and passes it on. Records of files read again with other
    /// columns (``ImportEnvironment/rereadFiles``) replace the stored ones.
    /// - Throws: ``StoreError`` when an earlier transaction failed (it was rolled back).
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let reread = environment.rereadFiles
        if !reread.isEmpty {
            let replacing = batch.filter { reread.contains($0.origin.fileHash) }
            if !replacing.isEmpty { try environment.store.update(replacing, runID: environment.runID) }
        }
        // Rows stored before are left as they are (or were just replaced); new rows are added.
        try await environment.store.enqueueInsert(batch, runID: environment.runID)
        return batch
    }

    /// Commits what is queued and syncs it to the disk.
    /// - Throws: ``StoreError`` when a write fails.
    public func finish(in context: StageContext) async throws -> [BookRecord] {
        try environment.store.finishBulkInsert()
        return []
    }
}
