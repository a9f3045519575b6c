import BookpipeCore
import BookpipeImaging
import BookpipeIngest
import BookpipePipeline
import BookpipeLibrary
import Synchronization

/// The stages of a bookshelf-scan import (`pipelines/scan-import.yaml`): `read-scans`,
/// `route-for-review` and `copy-scan-photos`.
public enum ScanStages {
    /// `read-scans`, `route-for-review` and `copy-scan-photos`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: "read-scans",
            summary: "Reads bookshelf scan results (JSON) and emits one record per detection.",
            kind: .source,
            parameters: [
                ParameterSpec("files", .stringList, summary: "the scan result files"),
                ParameterSpec("batchSize", .integer, default: .integer(512), summary: "records per batch"),
            ],
            contract: StageContract(reads: [.inputFiles], writes: [.records], filesParameter: "files")
        ) { parameters in
            .source(ReadScans(files: parameters.stringList("files") ?? [],
                              batchSize: max(1, parameters.integer("batchSize") ?? 512)))
        },
        StageDescriptor(
            name: "route-for-review",
            summary: "Sends detections below the confidence threshold (or with an invalid confidence) to review.",
            kind: .step,
            parameters: [
                ParameterSpec("threshold", .number, default: .number(ReviewRouting.defaultThreshold),
                              summary: "detections with a confidence below this go to review (0…1)"),
            ]
        ) { parameters in
            .stage(RouteForReview(routing: try ReviewRouting(threshold: parameters.number("threshold") ?? ReviewRouting.defaultThreshold)))
        },
        StageDescriptor(
            name: "copy-scan-photos",
            summary: "Copies each scan's photo (checked as JPEG) into the library's managed photo folder.",
            kind: .step, contract: StageContract(reads: [.records], writes: [.records, .managedPhotos])
        ) { _ in .stage(CopyScanPhotos()) },
    ]
}

/// How the command asks scans to be read: the photo for scans that name none (`--photo`).
public struct ScanReadOptions: Sendable, Hashable {
    /// The photo for scans that name none, relative to the current directory.
    public var photo: String?

    /// Creates options.
    /// - Parameter photo: The photo for scans that name none (`--photo`).
    public init(photo: String? = nil) {
        self.photo = photo
    }
}

/// Reads bookshelf scan result files (``ScanResultFile``). It only produces: for each file an
/// ``PipelineEvent/inputStarted(_:)`` (format `scan`), its records in batches, its rejected scans
/// and detections as ``PipelineEvent/rowsRejected(_:)``, and ``PipelineEvent/inputFinished(_:rowsRead:)``.
/// A file that cannot be read at all (truncated JSON, not a scan result) is reported with line and
/// column (``PipelineEvent/inputFailed(path:reason:)``) and the other files go on.
///
/// The photo for scans that name none comes from the run's ``ScanReadOptions`` resource.
public struct ReadScans: SourceStage {
    /// The scan result files.
    public var files: [String]
    /// Records per batch.
    public var batchSize: Int

    /// Creates the source.
    public init(files: [String], batchSize: Int = 512) {
        self.files = files
        self.batchSize = batchSize
    }

    /// Emits every file's records and events.
    /// - Throws: `CancellationError`.
    public func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        let options = ScanResultFile.Options(photo: context.resource(ScanReadOptions.self)?.photo)
        for path in files {
            try Task.checkCancellation()
            let scan: ScanResultFile
            do {
                scan = try ScanResultFile(path: path, options: options)
            } catch {
                context.progress.emit(.message("error: \(error.description)"))
                try await emit.event(.inputFailed(path: path, reason: error.description))
                continue
            }
            context.progress.emit(.message("\(path): \(scan.shapeDescription)"))
            for summary in scan.scans {
                if let problem = summary.photoError {
                    context.progress.emit(.message("warning: \(problem.description)"))
                }
            }
            context.progress.emit(.inputStarted(file: path, totalBytes: scan.size))
            try await emit.event(.inputStarted(scan.input))
            if !scan.rejected.isEmpty { try await emit.event(.rowsRejected(scan.rejected)) }
            var start = 0
            while start < scan.records.count {
                try Task.checkCancellation()
                let end = min(scan.records.count, start + batchSize)
                try await emit(Array(scan.records[start..<end]))
                start = end
            }
            context.progress.emit(.inputAdvanced(file: path, bytesRead: scan.size, totalBytes: scan.size,
                                                 rowsRead: scan.rowCount))
            try await emit.event(.inputFinished(scan.input, rowsRead: scan.rowCount))
        }
    }
}

/// Routes scan detections with ``ReviewRouting``: below the threshold, or with an invalid
/// confidence, a detection becomes `needsReview`. Other records pass unchanged. Cannot fail.
public struct RouteForReview: Stage {
    /// The routing rules and threshold.
    public var routing: ReviewRouting

    /// Creates the stage.
    /// - Parameter routing: The rules (``ReviewRouting/standard``: 0.60).
    public init(routing: ReviewRouting = .standard) {
        self.routing = routing
    }

    /// Routing is pure and cannot fail.
    public var mayFailForBatch: Bool { false }

    /// Routes each record of the batch, in place.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        var records = consume batch
        for index in records.indices { routing.route(&records[index]) }
        return records
    }
}

/// Takes each scan photo into the library once (``LibraryPhotoStore/storeScanPhoto(at:scanFolder:scan:prepare:validate:)``:
/// SQLite keeps it in the managed folder beside the library, PostgreSQL in the database, written
/// with the detections that name it), re-encoded without loss with a restart marker every MCU row
/// (``RowRestarts``, so a spine crop decodes only the rows it needs), checked as a JPEG first (``ImageDecoder/header(of:file:)``: an
/// empty, non-JPEG or oversized photo is refused before any pixel memory is allocated; the
/// re-encode then refuses a photo whose data is cut off or damaged), and
/// points the detections' ``ScanDetection/photoPath`` at the copy. A refused photo is reported by
/// name; its detections keep no photo (review is text only) and get a finding saying why.
/// Nothing outside the scan folder is opened (``ManagedPhotos/readScanPhoto(at:scanFolder:scan:maxPhotoBytes:validate:)``
/// checks the real path again). Never fails for a batch.
///
/// **Only a photo some detection needs is copied.** A detection an earlier run stored is not
/// stored again (`store-records` passes its stored version on), so when every detection of a photo
/// in the batch is already stored without a photo (reviewed and its copy deleted, or refused
/// before: ``LibraryStore/storedRowsWithoutScanPhoto(fileHash:rows:)``), no copy is made: no record
/// would name it, and the cleanup, which deletes only copies that detections name, would never
/// delete it. Stored detections that still name their copy count as needing it, so a rerun puts
/// back a copy that went missing. (Deleting copies no record names at the start of a run instead
/// would race with an import in another process: its copy exists before its records commit.)
public struct CopyScanPhotos: Stage {
    private let copies = PhotoCopies()

    /// Creates the stage.
    public init() {}

    /// A refused photo is data on its records, not a failure.
    public var mayFailForBatch: Bool { false }

    /// Copies the photos of the batch's detections and repoints them.
    /// - Throws: ``PipelineError/missingResource(step:resource:)`` when no library is open.
    public func process(_ batch: consuming [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let store = try context.require((any Library).self, for: name)
        var records = consume batch
        // The batch's records by the photo they name, in first-seen order.
        var photoOrder: [String] = []
        var recordsOfPhoto: [String: [Int]] = [:]
        for index in records.indices {
            guard let source = records[index].scan?.photoPath, !store.isManagedPhotoPath(source) else { continue }
            if recordsOfPhoto[source] == nil { photoOrder.append(source) }
            recordsOfPhoto[source, default: []].append(index)
        }
        for source in photoOrder {
            let indices = recordsOfPhoto[source] ?? []
            let known = copies.state.withLock { $0[source] }
            if known == nil, await !needsCopy(indices.map { records[$0].origin }, store: store) {
                // Already stored without a photo: these records are not stored again.
                for index in indices { records[index].scan?.photoPath = nil }
                continue
            }
            let origin = records[indices[0]].origin
            let outcome: Result<String, ManagedPhotoError>
            if let known { outcome = known } else { outcome = await copy(source, origin: origin, store: store, context: context) }
            for index in indices {
                switch outcome {
                case .success(let path):
                    records[index].scan?.photoPath = path
                case .failure(let error):
                    records[index].scan?.photoPath = nil
                    records[index].addFinding(Finding(code: ScanFindingCode.photoRefused, severity: .warning, field: "photo",
                                                      message: error.description))
                }
            }
        }
        return records
    }

    /// Whether any of these detections will be stored naming the copy, or is stored naming it
    /// (true when the library cannot be read: then the copy is made, as it always was).
    private func needsCopy(_ origins: [RecordOrigin], store: any Library) async -> Bool {
        for (fileHash, rows) in Dictionary(grouping: origins, by: \.fileHash) {
            guard let storedWithout = try? await store.storedRowsWithoutScanPhoto(fileHash: fileHash, rows: rows.map(\.row)) else {
                return true
            }
            if rows.contains(where: { !storedWithout.contains($0.row) }) { return true }
        }
        return false
    }

    private func copy(_ source: String, origin: RecordOrigin, store: any Library,
                      context: StageContext) async -> Result<String, ManagedPhotoError> {
        let folder: String
        if let slash = origin.file.lastIndex(of: "/") {
            let prefix = String(origin.file[..<slash])
            folder = prefix.isEmpty ? "/" : prefix
        } else {
            folder = "."
        }
        let decoder = ImageDecoder()
        let outcome: Result<String, ManagedPhotoError>
        do {
            // Stored with a restart marker every MCU row, so a spine crop decodes only its rows (the
            // same pixels). The re-encode reads every coded byte, so it is also the check that the
            // photo is whole: a cut-off or damaged photo is refused (its detections import without
            // it). Only a photo read whole whose re-encode failed is stored as it is.
            let copy = try await store.storeScanPhoto(at: source, scanFolder: folder, scan: origin.scan ?? origin.file,
                                                      prepare: { bytes, name throws(ImagingError) -> [UInt8] in
                do throws(ImagingError) {
                    return try RowRestarts.addingRowRestarts(to: bytes, file: name)
                } catch where error.code == .encodeFailed {
                    return bytes
                }
            }, validate: { bytes, name in
                _ = try decoder.header(of: bytes, file: name)
            })
            outcome = .success(copy.path)
        } catch {
            // Named by the scan file, as the reader's warnings are (`s/scan.json: scan "b": photo …`); a
            // scan without an id of its own is named by its file already (`scan "scan.json": photo …`).
            let fileName = origin.file.split(separator: "/").last.map(String.init) ?? origin.file
            let namesFile = origin.scan == nil || origin.scan == fileName
            context.progress.emit(.message("warning: " + (namesFile ? "" : "\(origin.file): ") + error.description))
            outcome = .failure(error)
        }
        copies.state.withLock { $0[source] = outcome }
        return outcome
    }
}

/// The photos one run copied (or refused), by source path: each photo is read once per run.
final class PhotoCopies: Sendable {
    let state = Mutex<[String: Result<String, ManagedPhotoError>]>([:])
}
