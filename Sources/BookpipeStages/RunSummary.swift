import BookpipeCore
import BookpipeLibrary
import BookpipePipeline

/// The summary of a run, made from its report: per input, what was read and what was stored.
public struct RunSummary {
    /// What the run did with one input.
    public struct Input {
        /// The input as named.
        public var path: String
        /// The input as its source announced it.
        public var started: InputFile?
        /// Data rows the source read.
        public var rowsRead: Int?
        /// Rows that could not be read.
        public var rejected: [RejectedRow] = []
        /// Repairs made while reading.
        public var repairs: [String] = []
        /// How the source read what the input did not say.
        public var notes: [String] = []
        /// Why the input could not be read at all.
        public var failure: String?
        /// What a sink stored of it.
        public var storage: InputStorage?
    }

    /// The inputs, in the order the run first named them.
    public private(set) var inputs: [Input] = []
    /// What steps told the person running the command (`filter`: how many records passed).
    public private(set) var notes: [String] = []
    /// True when some step stored what it read.
    public let hasStorage: Bool

    /// The summary of `report`'s events.
    public init(report: RunReport) {
        hasStorage = report.hasStorage
        var byPath: [String: Int] = [:]
        func update(_ path: String, _ change: (inout Input) -> Void) {
            if let index = byPath[path] {
                change(&inputs[index])
            } else {
                var input = Input(path: path)
                change(&input)
                byPath[path] = inputs.count
                inputs.append(input)
            }
        }
        var pathByHash: [String: String] = [:]
        for event in report.events {
            switch event {
            case .inputStarted(let file):
                pathByHash[file.fileHash] = file.path
                update(file.path) { $0.started = file }
            case .inputFinished(let file, let rowsRead):
                update(file.path) { $0.rowsRead = rowsRead }
            case .inputFailed(let path, let reason):
                update(path) { $0.failure = reason }
            case .rowsRejected(let rows):
                for row in rows { update(pathByHash[row.fileHash] ?? row.file) { $0.rejected.append(row) } }
            case .inputRepaired(let path, let repairs):
                update(path) { $0.repairs += repairs }
            case .inputNoted(let path, let notes):
                update(path) { $0.notes += notes }
            case .inputStored(let storage):
                update(storage.path) { $0.storage = storage }
            case .inputDiscarded(let file, _):
                update(file.path) { $0.storage = nil }
            case .note(let note):
                notes.append(note)
            case .scanJob, .recordsLookedUp, .recordsLeft, .recordsChanged, .sourcesUsed, .scanPhoto, .findingsCounted:
                break   // enrichment's, scans' and findings' events: ``EnrichmentSummary``, ``ScanTally``, ``FindingTally``
            }
        }
    }

    /// Inputs that could not be read at all.
    public var failedInputs: Int { inputs.filter { $0.failure != nil }.count }

    /// The summary's lines: one per input (what was read and stored, or why it was not), then
    /// its rejected rows, repairs and notes, then `extra`'s lines for it.
    /// - Parameters:
    ///   - dryRun: The run stored nothing on purpose (`import --dry-run`).
    ///   - extra: More lines about an input that was read.
    public func lines(dryRun: Bool = false, extra: (Input) -> [String] = { _ in [] }) -> [String] {
        var lines: [String] = []
        for input in inputs {
            if input.failure != nil {
                // The error itself was printed when it happened.
                lines.append("\(input.path): not imported (see the error above)")
                continue
            }
            if let storage = input.storage, storage.wasAlreadyImported, storage.stored == 0 {
                let earlier = [storage.earlierRows.map { "\($0) rows" },
                               storage.earlierPath.flatMap { $0 == input.path ? nil : "same content as \($0)" }]
                    .compactMap { $0 }.joined(separator: ", ")
                lines.append("\(input.path): already imported" + (earlier.isEmpty ? "" : " (\(earlier))") + "; nothing changed.")
                continue
            }
            let rowsRead = input.rowsRead ?? 0
            var line = "\(input.path): \(input.started?.formatDescription ?? "?"), \(input.started?.encoding ?? "?"): \(rowsRead) rows read, "
            if let storage = input.storage, storage.isReimport {
                line += ReimportSummary.counts(storage)
            } else if let storage = input.storage {
                line += storage.wasReread ? "\(storage.replaced) stored again with the new columns"
                    : storage.isDryRun ? "\(storage.stored) new (none stored: dry run)" : "\(storage.stored) imported"
                if storage.alreadyStored > 0 && !storage.wasReread {
                    line += ", \(storage.alreadyStored) already stored by an earlier run"
                }
            } else if dryRun {
                line += "none stored (dry run)"
            } else {
                line += "none stored (the pipeline has no store step)"
            }
            line += ", \(input.rejected.count) rejected"
            lines.append(line)
            if let storage = input.storage { lines += ReimportSummary.details(storage) }
            if rowsRead == 0 { lines.append("  the file has a header but no data rows") }
            for rejected in input.rejected.prefix(20) { lines.append("  rejected \(rejected.location): \(rejected.reason)") }
            if input.rejected.count > 20 { lines.append("  … and \(input.rejected.count - 20) more (see `bookpipe export`)") }
            for repair in input.repairs { lines.append("  repaired: \(repair)") }
            for note in input.notes { lines.append("  note: \(note)") }
            lines += extra(input)
        }
        lines += notes
        // File names and rejected rows' reasons quote the data: shown as escapes, never acted on.
        return lines.map(TerminalText.inert)
    }
}

/// The summary's words for a newer export of a list already in the library.
public enum ReimportSummary {
    /// `12 new, 31 changed (title 3, shelf 27, rating 4), 1,458 unchanged, 2 no longer in the export`.
    public static func counts(_ storage: InputStorage) -> String {
        let number = CountText.number
        var parts: [String] = []
        parts.append("\(number(storage.stored)) new")
        var changed = "\(number(storage.changed)) changed"
        if !storage.changedFields.isEmpty {
            let fields = ListIdentity.fields.compactMap { field in storage.changedFields[field].map { "\(field) \(number($0))" } }
            changed += " (" + fields.joined(separator: ", ") + ")"
        }
        parts.append(changed)
        parts.append("\(number(storage.unchanged)) unchanged")
        if storage.alreadyStored > 0 { parts.append("\(number(storage.alreadyStored)) already stored by an earlier run") }
        var gone = "\(number(storage.gone)) no longer in the export"
        if storage.pruned > 0 { gone += " (\(number(storage.pruned)) removed)" }
        parts.append(gone)
        return parts.joined(separator: ", ") + (storage.isDryRun ? " (dry run: nothing written)" : "")
    }

    /// Lines under the input's line: kept edits, duplicate ids, gone entries.
    public static func details(_ storage: InputStorage) -> [String] {
        var lines: [String] = []
        let list = storage.list.map { " of the list \"\($0)\"" } ?? ""
        if storage.editsKept > 0 {
            lines.append("  kept: \(CountText.number(storage.editsKept)) fields a person edited that the file gives another value "
                         + "(see `bookpipe show ID`; the file's value is logged, not applied)")
        }
        if storage.duplicateIDs > 0 {
            lines.append("  \(CountText.number(storage.duplicateIDs)) rows have the id of an earlier row of the file; "
                         + "both are kept (finding entry.duplicate-id)")
        }
        if storage.goneUnknown {
            lines.append("  \(CountText.number(storage.rejectedStored)) rows were rejected, so no entry\(list) is called gone "
                         + "(a rejected row may be one of them); fix the rows and import again")
        }
        if storage.olderCheckSkipped {
            lines.append("  note: too many new and changed rows to hold until the file was read whole, so whether it is older "
                         + "than the list\(list) in the library was not checked")
        }
        if storage.pruneRefused {
            lines.append("  not removed: more than half of the list\(list) is missing from this export; "
                         + "if that is right, import it again with --prune --yes")
        }
        if storage.gone > storage.pruned && !storage.isDryRun {
            let goneCount = storage.gone - storage.pruned
            lines.append("  \(CountText.counted(goneCount, "entry", "entries"))\(list) \(goneCount == 1 ? "is" : "are") not in this export: kept and marked gone "
                         + "(`bookpipe list gone:yes`; import with --prune to remove them)")
        }
        return lines
    }
}
