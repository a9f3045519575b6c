import BookpipeCore
import BookpipeExport
import BookpipePipeline
import Synchronization

/// The export stage: what `bookpipe export` writes, as a step of a pipeline.
public enum ExportStages {
    /// The export step's name in pipeline files (its stage's own name, ``Stage/name``).
    public static let writeExportName = "write-export"

    /// `write-export`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: writeExportName,
            summary: "Writes the records it is given in an export layout (as `bookpipe export` does); the file appears when the run ends.",
            kind: .step,
            parameters: [
                ParameterSpec("format", .string, summary: "the layout: " + ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")),
                ParameterSpec("output", .string, summary: "the file to write (replaced when the run ends), or - for standard output"),
            ],
            contract: StageContract(reads: [.records], writes: [.exportFile])
        ) { parameters in
            let name = parameters.string("format") ?? ""
            guard let format = ExportFormat(rawValue: name) else {
                throw StageParameterError(parameter: "format", problem: "takes one of "
                    + ExportFormat.allCases.map(\.rawValue).joined(separator: ", ") + ", not '\(name)'")
            }
            let output = parameters.string("output") ?? ""
            guard !output.isEmpty else {
                throw StageParameterError(parameter: "output", problem: "names the file to write (or - for standard output)")
            }
            return .stage(WriteExport(format: format, output: output))
        },
    ]
}

/// A step that writes every record it passes on to an export file: `read-csv → normalize-records →
/// write-export` turns an export into clean JSON Lines without a library. The file is written under
/// a temporary name and put in place when the run finishes, so a run that fails or is interrupted
/// leaves the file that was there as it was, and so does a run in which an input could not be read.
/// Records pass on untouched.
public struct WriteExport: Stage {
    /// The layout.
    public let format: ExportFormat
    /// The file, or `-`.
    public let output: String
    private let box = StreamBox()

    /// Creates the stage.
    public init(format: ExportFormat, output: String) {
        self.format = format
        self.output = output
    }

    /// Records pass through untouched.
    public var mayFailForBatch: Bool { false }

    /// Appends the batch to the export and passes it on.
    /// - Throws: ``ExportError`` when the file cannot be created.
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        try box.stream.withLock { stream throws(ExportError) in
            if stream == nil { stream = try ExportStream(format: format, path: output) }
            stream?.append(batch)
        }
        return batch
    }

    /// Notes an input that could not be read: the export would lack its rows, so the file at
    /// ``output`` is then left as it was.
    public func observe(_ event: PipelineEvent, in context: StageContext) async throws -> [PipelineEvent] {
        if case .inputFailed(let path, _) = event { box.failedInputs.withLock { $0.append(path) } }
        return [event]
    }

    /// Puts the file in place and says what was written; when an input could not be read, drops
    /// what was written and leaves the file as it was.
    /// - Throws: ``ExportError`` when the file cannot be written.
    public func finish(in context: StageContext) async throws -> [BookRecord] {
        let failed = box.failedInputs.withLock { $0 }
        guard failed.isEmpty else {
            box.stream.withLock { stream in
                stream?.discard()
                stream = nil
            }
            context.progress.emit(.message("\(output) was not written (left as it was): "
                + "\(failed.count == 1 ? failed[0] : "\(failed.count) inputs") could not be read"))
            return []
        }
        let summary = try box.stream.withLock { stream throws(ExportError) -> ExportSummary in
            if stream == nil { stream = try ExportStream(format: format, path: output) }
            defer { stream = nil }
            return try stream!.finish()
        }
        if output != "-" {
            context.progress.emit(.message("wrote \(output) (\(format.rawValue), \(summary.records) record\(summary.records == 1 ? "" : "s"))"))
        }
        return []
    }

    /// A run that failed or was interrupted drops the temporary file; the file at ``output`` stays as it was.
    public func end(_ outcome: RunOutcome, in context: StageContext) async {
        box.stream.withLock { stream in
            stream?.discard()
            stream = nil
        }
    }
}

/// The open export of one run (the stage is a value; its batches share this).
private final class StreamBox: Sendable {
    let stream = Mutex<ExportStream?>(nil)
    /// Inputs the source could not read.
    let failedInputs = Mutex<[String]>([])
}
