import BookpipeCore
import Foundation
import BookpipePipeline
import BookpipeLibrary
import Synchronization

/// The stages that read from and write to the library: the run resource ``LibraryStore`` must be
/// given by the command (`--library`).
public enum LibraryStages {
    /// `store-records`, `library-records` and `save-enrichment`.
    public static let descriptors: [StageDescriptor] = [
        StageDescriptor(
            name: "store-records",
            summary: "Stores new records and rejected rows, registers inputs and marks them complete.",
            kind: .step, contract: StageContract(reads: [.records], writes: [.records, .storedRecords])
        ) { _ in .stage(StoreRecords()) },
        StageDescriptor(
            name: "library-records", summary: "Reads stored records to (re-)enrich: pending, or the statuses the command asks for.",
            kind: .source,
            parameters: [
                ParameterSpec("batchSize", .integer, default: .integer(100), summary: "records per batch"),
                ParameterSpec("catalogueBatchSize", .integer, default: .integer(100),
                              summary: "records per batch when the run asks only the local catalogue (--offline, --sources catalog)"),
                ParameterSpec("statuses", .stringList, default: .stringList([]),
                              summary: "statuses to (re-)enrich ([]: the command's; pending, failed, notFound, needsCandidateSelection, enriched)"),
                ParameterSpec("stale", .duration, default: .duration(.zero),
                              summary: "also records whose answers are older than this (0: none; the command's --stale wins)"),
                ParameterSpec("maxDuration", .duration, default: .duration(.zero),
                              summary: "stop reading and asking after this long (0: no limit; the command's --until/--max-duration win)"),
            ],
            contract: StageContract(reads: [.storedRecords], writes: [.records])
        ) { parameters in
            var statuses: [RecordStatus]?
            if let names = parameters.stringList("statuses"), !names.isEmpty {
                statuses = try names.map { name in
                    guard let status = RecordStatus(rawValue: name) else {
                        throw LibraryRecordsError.unknownStatus(name)
                    }
                    return status
                }
            }
            return .source(LibraryRecords(batchSize: parameters.integer("batchSize") ?? 100,
                                          catalogueBatchSize: parameters.integer("catalogueBatchSize") ?? 100, statuses: statuses,
                                          staleAfter: parameters.duration("stale").flatMap { $0 > .zero ? $0 : nil },
                                          maxDuration: parameters.duration("maxDuration").flatMap { $0 > .zero ? $0 : nil }))
        },
        StageDescriptor(
            name: "save-enrichment", summary: "Stores each batch's outcomes, matches, candidates and matched works.",
            kind: .step, contract: StageContract(reads: [.storedRecords], writes: [.records, .enrichment])
        ) { _ in .stage(SaveEnrichment()) },
    ]

    /// True when a later step writes the records it is given to a file (`write-export`): the
    /// store step then passes on every row of its inputs, the stored version of a row an earlier
    /// run stored, not only the new rows and those waiting for enrichment — the export of a file
    /// imported before holds the file's rows, not nothing.
    static func passesEveryRow(_ context: StageContext) -> Bool {
        context.stageNames.contains(ExportStages.writeExportName)
    }

    /// The statuses whose records the run (re-)enriches: none when the run does not enrich (no
    /// ``EnrichmentSettings``, `--no-enrich`, or no `enrich-records` step in the pipeline).
    static func statusesToEnrich(_ context: StageContext) -> [RecordStatus] {
        guard let settings = context.resource(EnrichmentSettings.self), settings.isEnabled,
              context.stageNames.contains(EnrichRecords.stageName) else { return [] }
        return settings.statuses
    }
}

/// The sink of an import: stores each input's new records and rejected rows in the library.
///
/// What it does with the events of a source:
/// - ``PipelineEvent/inputStarted(_:)``: registers the input; learns which of its rows an earlier
///   run stored (those are skipped, or — when they still wait for enrichment — their stored
///   versions are passed on); an input imported before with other columns (another `--map`,
///   `--format`, `--delimiter`) is read again and its records replaced; a large input into an
///   empty library turns on bulk mode (``LibraryStore/prepareForBulkInsert(expectedRows:)``).
/// - ``PipelineEvent/rowsRejected(_:)``: stores the rejected rows.
/// - ``PipelineEvent/inputFinished(_:rowsRead:)``: marks the input complete once every row is
///   stored or rejected.
/// - ``PipelineEvent/inputDiscarded(_:reason:)``: deletes what is stored of the input (after what
///   was submitted before); its rows count as new again (a scan job sent once more).
///
/// At the end of the run, whatever the outcome, it commits what was submitted, makes a bulk
/// import durable, records the run's status, and reports an ``PipelineEvent/inputStored(_:)``
/// for each input: only these make a summary say rows were imported.
///
/// Commit contract. A batch leaves this step once its new records are **submitted** to the
/// library's writer (``LibraryStore/submitInsert(_:runID:)``), which commits every write in
/// submission order, in transactions of thousands of records. So:
/// - every write a later step makes through the library (``SaveEnrichment``'s update, a review
///   decision) is committed after these records, never before — nothing is ever written about a
///   row that is not stored;
/// - a later step that must *read* the records from the file waits with
///   ``LibraryStore/flushWrites()`` (or a ticket's ``LibraryStore/committed(_:)``);
/// - when the run ends, however it ends, everything submitted is committed before the run's status
///   is recorded (``end(_:in:)``); a process killed at any instant keeps whole transactions, and
///   the same import run again stores the rest exactly once.
/// The step never blocks a thread: submitting suspends only while the writer is behind.
public struct StoreRecords: Stage {
    private let state = SinkState()
    /// Records of a newer export whose writes may wait until it is read whole (see
    /// ``OlderExportError``); beyond, they are written at once and the file is not checked.
    let heldWritesLimit: Int

    /// Creates the stage.
    /// - Parameter heldWritesLimit: New and changed records of a newer export that may wait until
    ///   the file is read whole, so that an export older than the list is refused before anything
    ///   of it is written (about 2 KB of memory a record).
    public init(heldWritesLimit: Int = 50_000) {
        self.heldWritesLimit = heldWritesLimit
    }

    /// Submits the batch's new records and passes them on (with the stored versions of rows an
    /// earlier run stored that still wait for enrichment).
    /// - Throws: ``StoreError`` when a write failed (nothing more is written), or
    ///   ``PipelineError/missingResource(step:resource:)`` when no library is open.
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let store = try context.require((any Library).self, for: name)
        guard let first = batch.first else { return [] }
        // A source's batch holds rows of one input; split only when it does not.
        let hash = first.origin.fileHash
        let groups: [(String, [BookRecord])] = batch.allSatisfy { $0.origin.fileHash == hash }
            ? [(hash, batch)] : Dictionary(grouping: batch, by: \.origin.fileHash).map { ($0.key, $0.value) }
        var passOn: [BookRecord] = []
        for (hash, records) in groups {
            if state.file(hash) == nil {
                // The input's announcement has not arrived yet (a step before this one works on
                // batches in parallel): hold its records until it does.
                state.hold(records, for: hash)
            } else {
                let submitted = try await submit(records, fileHash: hash, store: store, context: context)
                if passOn.isEmpty { passOn = submitted } else { passOn += submitted }
            }
        }
        if state.hasReleased { passOn += state.takeReleased() }
        return passOn
    }

    /// Acts on the inputs' events (see the type's discussion) and passes them on.
    public func observe(_ event: PipelineEvent, in context: StageContext) async throws -> [PipelineEvent] {
        let store = try context.require((any Library).self, for: name)
        switch event {
        case .inputStarted(let input):
            try await start(input, store: store, context: context)
            for records in state.releaseHeld(for: input.fileHash) {
                state.release(try await submit(records, fileHash: input.fileHash, store: store, context: context))
            }
        case .rowsRejected(let rejected):
            for row in rejected { state.update(row.fileHash) { $0.rejectedSeen += 1 } }
            guard context.resource(ReimportOptions.self)?.dryRun != true else { break }
            let runID = try await runID(store, context)
            var fresh: [RejectedRow] = []
            for row in rejected {
                if let rowNumber = row.row, state.file(row.fileHash)?.finished.contains(rowNumber) == true { continue }
                fresh.append(row)
            }
            try await store.insertRejections(fresh, runID: runID)
            for row in fresh { state.update(row.fileHash) { $0.tally.rejectedStored += 1 } }
        case .inputFinished(let input, let rowsRead):
            state.update(input.fileHash) { $0.rowsRead = rowsRead }
            try await markComplete(input.fileHash, store: store)
            // Read whole and every row here: a later export of the same list in this run sees
            // which entries this one left out (and counts the ones it holds present again).
            if hasEveryRow(input.fileHash) {
                try await settle(input.fileHash, store: store, context: context)
                try await markGone(input.fileHash, store: store, context: context)
            }
        case .inputDiscarded(let input, _):
            guard context.resource(ReimportOptions.self)?.dryRun != true else { break }
            // Deleted in order after the records submitted before; the input's rows are new again.
            _ = try await store.discardRecords(fileHash: input.fileHash)
            state.update(input.fileHash) { file in
                file = SinkState.File(tally: InputStorage(path: input.path, fileHash: input.fileHash), reading: file.reading)
            }
        default:
            break
        }
        return [event]
    }

    /// Waits for every submitted record to commit, marks finished inputs complete, makes a bulk
    /// import durable, and passes on records released after the last batch.
    /// - Throws: ``StoreError`` when a write failed.
    public func finish(in context: StageContext) async throws -> [BookRecord] {
        let store = try context.require((any Library).self, for: name)
        let isDryRun = context.resource(ReimportOptions.self)?.dryRun == true
        // Every record submitted is in, so repeated ids are read back with their rows.
        if !isDryRun { try await store.flushWrites() }
        for hash in state.fileHashes {
            try await markRepeatedIDs(hash, store: store, context: context)
            try await settle(hash, store: store, context: context)
            try await markGone(hash, store: store, context: context)
        }
        try await prune(store: store, context: context)
        guard !isDryRun else { return state.takeReleased() }
        try await store.flushWrites()
        for hash in state.fileHashes { try await markComplete(hash, store: store) }
        try await store.finishBulkInsert()
        return state.takeReleased()
    }

    /// Commits what was submitted (also after Ctrl-C: those are whole rows), makes a bulk import
    /// durable, records the run's status and reports what was stored of each input.
    public func end(_ outcome: RunOutcome, in context: StageContext) async {
        guard let store = context.resource((any Library).self) else { return }
        if context.resource(ReimportOptions.self)?.dryRun == true {
            for file in state.files { context.report(.inputStored(file.tally)) }
            return
        }
        if case .finished = outcome {} else {
            if (try? await store.flushWrites()) != nil {
                for hash in state.fileHashes { try? await markComplete(hash, store: store) }
            }
            try? await store.finishBulkInsert()
        }
        for file in state.files { context.report(.inputStored(file.tally)) }
        await context.resource(LibraryRun.self)?.end(outcome, in: store)
    }

    private func runID(_ store: any Library, _ context: StageContext) async throws -> Int64? {
        try await context.resource(LibraryRun.self)?.id(in: store, pipeline: context.pipelineName)
    }

    private func start(_ input: InputFile, store: any Library, context: StageContext) async throws {
        let options = context.resource(ReimportOptions.self) ?? ReimportOptions()
        let runID = options.dryRun ? nil : try await runID(store, context)
        var file = SinkState.File(tally: InputStorage(path: input.path, fileHash: input.fileHash))
        file.reading = input.reading
        file.tally.isDryRun = options.dryRun
        let known = try await store.sourceFile(hash: input.fileHash)
        if let storedReading = known?.reading, storedReading != input.reading {
            context.progress.emit(.message(
                "\(input.path): imported before with other columns; reading all its rows again as \(input.formatDescription) "
                    + "and replacing what was stored (enrichment of these rows starts over)."))
            if !options.dryRun { try await store.deleteRejections(fileHash: input.fileHash) }
            file.isReread = true
            file.tally.wasReread = true
        } else {
            file.finished = try await store.finishedRows(fileHash: input.fileHash)
            let statuses = options.dryRun ? [] : LibraryStages.statusesToEnrich(context)
            let unfinished = statuses.isEmpty ? 0 : try await store.countRecords(statuses: statuses, fileHashes: [input.fileHash])
            if let known, known.isComplete {
                // The summary says it once at the end; live, only the work that is left is worth a line.
                file.tally.wasAlreadyImported = true
                file.tally.earlierPath = known.path
                file.tally.earlierRows = known.rowsTotal
                file.skipsAll = true
                // Complete already: counted again here, a newer export's rows that matched entries
                // of other files would not be counted (none is compared), and the file would be
                // marked incomplete.
                file.tally.isComplete = true
                if unfinished > 0 {
                    context.progress.emit(.message(
                        "\(input.path): already imported (same content as \(known.path)); enriching the \(unfinished) rows an earlier run left unfinished."))
                }
            } else if unfinished > 0 {
                context.progress.emit(.message("\(input.path): enriching \(unfinished) stored rows an earlier run left unfinished."))
            }
        }
        if let list = input.list {
            file.list = list
            file.tally.list = list
            file.entryColumn = input.entryColumn
            if !file.skipsAll {
                // Entries of the list that other files brought: this file is a newer export of it.
                // An earlier file of this run may still be on its way into the library: wait for it.
                if !options.dryRun { try await store.flushWrites() }
                let entries = try await store.listEntries(list: list, excludingFile: input.fileHash)
                if !entries.isEmpty {
                    file.matcher = ListMatcher(list: list, entries: entries, personEdits: try await store.personEditedFields())
                    // Read again with other columns, the summary says what was stored again.
                    file.tally.isReimport = !file.isReread
                    file.holdsWrites = !file.isReread && !options.confirmed && !options.dryRun
                }
            }
        }
        let isNew = file.finished.count == 0 && !file.isReread && file.matcher == nil
        state.begin(input.fileHash, file)
        guard !options.dryRun else { return }
        try await store.registerSourceFile(
            SourceFileInfo(hash: input.fileHash, path: input.path, format: input.format, header: input.header,
                           encoding: input.encoding, size: input.size, reading: input.reading),
            runID: runID)
        if isNew, let expected = input.estimatedRows {
            try await store.prepareForBulkInsert(expectedRows: expected)
        }
    }

    /// Submits the records' writes; returns the records to pass on.
    private func submit(_ records: [BookRecord], fileHash: String, store: any Library,
                        context: StageContext) async throws -> [BookRecord] {
        guard let file = state.file(fileHash) else { return [] }
        let options = context.resource(ReimportOptions.self) ?? ReimportOptions()
        let runID = options.dryRun ? nil : try await runID(store, context)
        var records = records
        let lacksEntries = records.withUnsafeBufferPointer { buffer in
            buffer.indices.contains { buffer[$0].listEntry == nil }
        }
        if let list = file.list, lacksEntries {
            // Rows without a list id (the reader gives those theirs): the ISBN-13, else title and author.
            for index in records.indices where records[index].listEntry == nil {
                records[index].listEntry = ListIdentity.entry(of: records[index], list: list, idColumn: nil)?.entry
            }
        }
        if file.isReread {
            // Rows that are entries other files of the list brought update those (as a newer
            // export's rows do); the rest replace this file's own records, entry and digest too.
            var own = records
            var updates: [ImportedUpdate] = []
            var present: [String] = []
            var unchangedIDs: [String] = []
            if let matcher = file.matcher {
                let compared = try await compare(&own, with: matcher, file: file, store: store, at: Date(),
                                                 listsUnchanged: LibraryStages.passesEveryRow(context))
                updates = compared.updates
                present = compared.present
                unchangedIDs = compared.unchanged
            }
            state.update(fileHash) { $0.tally.replaced += own.count }
            guard !options.dryRun else { return [] }
            try await store.applyImportedUpdates(
                own.map { ImportedUpdate(record: $0, digest: ListIdentity.readDigest(of: $0), changes: []) }, runID: runID, at: Date())
            _ = try await store.submitInsert(own, runID: runID)
            try await store.applyImportedUpdates(updates, runID: runID, at: Date())
            try await store.markPresent(recordIDs: present)
            guard LibraryStages.passesEveryRow(context) else { return own + updates.map(\.record).filter { $0.status == .pending } }
            return try await store.records(ids: unchangedIDs) + own + updates.map(\.record)
        }
        if file.skipsAll {
            state.update(fileHash) { $0.tally.alreadyStored += records.count }
            return options.dryRun ? [] : try await unfinishedStored(records, fileHash: fileHash, store: store, context: context)
        }
        var fresh = file.finished.count == 0 ? records : records.filter { !file.finished.contains($0.origin.row) }
        let skipped = records.count - fresh.count
        var passOn: [BookRecord] = []
        if skipped > 0 && !options.dryRun {
            passOn = try await unfinishedStored(records.filter { file.finished.contains($0.origin.row) }, fileHash: fileHash,
                                                store: store, context: context)
        }
        var updates: [ImportedUpdate] = []
        var present: [String] = []
        if let matcher = file.matcher {
            let everyRow = LibraryStages.passesEveryRow(context)
            let compared = try await compare(&fresh, with: matcher, file: file, store: store, at: Date(), listsUnchanged: everyRow)
            updates = compared.updates
            present = compared.present
            if everyRow, !options.dryRun { passOn += try await store.records(ids: compared.unchanged) }
            // Another person's books under colliding ids: most matched rows name another book (title,
            // authors or ISBN). A month's shelf, rating and date changes are no sign of it.
            if compared.matched > 0, matcher.takeFirstCheck(), !options.confirmed, compared.matched >= 10,
               compared.renamed * 2 > compared.matched {
                throw OtherListError(path: file.tally.path, list: matcher.list, matched: compared.matched, changed: compared.renamed)
            }
            let changedOn = LibraryStages.passesEveryRow(context) ? updates.map(\.record)
                : updates.map(\.record).filter { $0.status == .pending }
            if !options.confirmed {
                // An older export? Known once the file is read: until then its writes wait (``settle``).
                let duplicates = fresh.filter { $0.findings.contains { $0.code == Self.duplicateIDCode } }.count
                // Counted and held at once: the file read whole, the writes that wait are taken.
                let writes = HeldWrites(fresh: fresh, updates: updates, present: present, passOn: changedOn + fresh)
                let holding = state.count(fileHash, holding: options.dryRun ? nil : writes) { file in
                    file.addedDates.note(records)
                    file.tally.stored += fresh.count
                    file.tally.alreadyStored += skipped
                    file.tally.duplicateIDs += duplicates
                }
                if holding {
                    try await releaseHeldWritesIfTooMany(fileHash, store: store, runID: runID)
                    return passOn
                }
                if options.dryRun { return [] }
                try await writeImported(fresh: fresh, updates: updates, present: present, store: store, runID: runID)
                return passOn + changedOn + fresh
            }
            passOn += changedOn
        } else if let list = file.list {
            // First import of a list: each id is noted with its row; repeated ones get their
            // finding once the file is read (``markRepeatedIDs``).
            let idPrefix = list.utf8.count + 1
            var ids: [(hash: UInt64, row: Int)] = []
            ids.reserveCapacity(fresh.count)
            // Through a pointer: a `for record in` loop, or even `fresh[index].origin.row`, copied
            // each record or its origin (every field retained and released).
            fresh.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                for index in 0..<buffer.count {
                    let record = base + index
                    guard let entry = record.pointee.listEntry,
                          entry.utf8.dropFirst(idPrefix).starts(with: "id:".utf8) else { continue }
                    ids.append((ListIdentity.stableHash(entry), record.pointee.origin.row))
                }
            }
            state.noteIDs(ids, fileHash: fileHash)
        }
        // Re-import: rows whose key an earlier row of the file has got their finding in `compare`.
        let duplicates = file.matcher == nil ? 0 : fresh.filter { $0.findings.contains { $0.code == Self.duplicateIDCode } }.count
        state.update(fileHash) {
            $0.tally.stored += fresh.count
            $0.tally.alreadyStored += skipped
            $0.tally.duplicateIDs += duplicates
        }
        guard !options.dryRun else { return [] }
        _ = try await store.submitInsert(fresh, runID: runID)
        try await store.applyImportedUpdates(updates, runID: runID, at: Date())
        try await store.markPresent(recordIDs: present)
        return passOn.isEmpty ? fresh : passOn + fresh
    }

    /// The fields that say which book a row is: most of a file's matched rows changing them is
    /// the sign of another person's list under colliding ids.
    static let identityFields: Set<String> = ["title", "authors", "isbn"]

    /// The finding on a row whose list id an earlier row of the same file has.
    static let duplicateIDCode = "entry.duplicate-id"

    private static func duplicateFinding(_ key: String) -> Finding {
        Finding(code: duplicateIDCode, severity: .warning, field: nil,
                message: "An earlier row of this file has the same id (\(key)); both rows are kept as books of their own.")
    }

    /// Compares a newer export's rows with the list's stored entries: `records` keeps the rows
    /// that are new entries; the rest become updates or count as unchanged (their records' ids in
    /// `unchanged` when `listsUnchanged`: a later step wants every row).
    private func compare(_ records: inout [BookRecord], with matcher: ListMatcher, file: SinkState.File,
                         store: any Library, at time: Date, listsUnchanged: Bool = false)
        async throws -> (updates: [ImportedUpdate], present: [String], matched: Int, changed: Int, renamed: Int,
                         unchanged: [String]) {
        var newRows: [Int] = []
        var toCompare: [(incoming: BookRecord, stored: StoredListEntry)] = []
        var present: [String] = []
        var unchanged = 0
        var unchangedIDs: [String] = []
        // By index: a `for record in` loop copies each record (every field retained and released).
        for index in records.indices {
            guard let entry = records[index].listEntry else {
                newRows.append(index)
                continue
            }
            switch matcher.match(entry: entry) {
            case .new(let duplicate):
                if duplicate {
                    records[index].addFinding(Self.duplicateFinding(String(decoding: entry.utf8.dropFirst(matcher.keyOffset), as: UTF8.self)))
                }
                newRows.append(index)
            case .stored(let stored):
                let digest = records.withUnsafeBufferPointer { ListIdentity.readDigest(of: $0.baseAddress! + index) }
                if stored.digest == digest {
                    unchanged += 1
                    if listsUnchanged { unchangedIDs.append(stored.recordID) }
                    if stored.isGone { present.append(stored.recordID) }
                } else {
                    toCompare.append((records[index], stored))
                }
            }
        }
        var new = newRows.map { records[$0] }
        let storedRecords = Dictionary(
            try await store.records(ids: toCompare.map(\.stored.recordID)).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var updates: [ImportedUpdate] = []
        var changedFields: [String: Int] = [:]
        var changed = 0
        var renamed = 0
        var kept = 0
        for (incoming, entry) in toCompare {
            guard let stored = storedRecords[entry.recordID] else {
                new.append(incoming)
                continue
            }
            let edits = matcher.personEdits(stored.id)
            let result = ImportedChanges.update(stored: stored, incoming: incoming, personEdits: edits, file: file.tally.path,
                                                at: time, listValues: try await Self.listValues(of: stored.id, fields: edits, in: store))
            updates.append(result.update)
            if result.changed.isEmpty {
                unchanged += 1
            } else {
                changed += 1
                if result.changed.contains(where: Self.identityFields.contains) || result.kept.contains(where: Self.identityFields.contains) {
                    renamed += 1
                }
                for field in result.changed { changedFields[field, default: 0] += 1 }
            }
            kept += result.kept.count
        }
        records = new
        let matched = unchanged + changed
        state.update(file.tally.fileHash) { file in
            file.tally.unchanged += unchanged
            file.tally.changed += changed
            file.tally.editsKept += kept
            file.tally.changedFields.merge(changedFields, uniquingKeysWith: +)
        }
        return (updates, present, matched, changed, renamed, unchangedIDs)
    }

    /// For fields a person edited, the value the list gave last: the file's value of the latest
    /// import that logged the field, else the value before the person's first review action.
    /// Empty when the record has no person's edit (the common case: nothing is read).
    static func listValues(of recordID: String, fields: Set<String>, in store: any Library)
        async throws(StoreError) -> [String: String?] {
        let edited = fields.intersection(ListIdentity.personEditableFields)
        guard !edited.isEmpty else { return [:] }
        let changes = try await store.recordChanges(recordID: recordID)
        let firstAction = try await store.reviewActions(recordID: recordID)?.first
        var values: [String: String?] = [:]
        for field in edited {
            if let last = changes.last(where: { $0.field == field && ($0.kind == .imported || $0.kind == .editKept) }) {
                values[field] = .some(last.new)
            } else if let before = firstAction?.before {
                values[field] = .some(ReviewRules.snapshotValue(before, field: field))
            }
        }
        return values
    }

    /// Of rows an earlier run stored, the stored versions of those still waiting for enrichment.
    private func unfinishedStored(_ records: [BookRecord], fileHash: String, store: any Library,
                                  context: StageContext) async throws -> [BookRecord] {
        let statuses = LibraryStages.statusesToEnrich(context)
        let everyRow = LibraryStages.passesEveryRow(context)
        guard !statuses.isEmpty || everyRow, !records.isEmpty else { return [] }
        let stored = try await store.records(ids: records.map(\.id))
        let unfinished = statuses.isEmpty ? [] : stored.filter { statuses.contains($0.status) }
        state.update(fileHash) { $0.tally.unfinishedResent += unfinished.count }
        return everyRow ? stored : unfinished
    }

    /// Gives the finding of a repeated list id to each row of a first import whose id an earlier
    /// row of the file has (both rows are kept as records of their own).
    private func markRepeatedIDs(_ hash: String, store: any Library, context: StageContext) async throws {
        guard let file = state.file(hash), file.matcher == nil, file.rowsRead != nil else { return }
        let rows = state.takeRepeatedIDRows(fileHash: hash)
        guard !rows.isEmpty else { return }
        state.update(hash) { $0.tally.duplicateIDs += rows.count }
        guard context.resource(ReimportOptions.self)?.dryRun != true else { return }
        let records = try await store.records(ids: rows.map { "\(hash):\($0)" })
        let flagged = records.map { record in
            var record = record
            let entry = record.listEntry ?? ""
            let key = entry[entry.index(after: entry.firstIndex(of: ListIdentity.separator) ?? entry.startIndex)...]
            record.addFinding(Self.duplicateFinding(String(key)))
            return record
        }
        try await store.update(flagged, runID: try await runID(store, context))
    }

    /// Marks the list's entries that a newer export read whole no longer holds (and removes them
    /// with `--prune`), once.
    /// Once a newer export of a list is read whole (every row here): refuses it when it is older
    /// than the list in the library (``OlderExportError``: none of its writes, which waited, is
    /// made), else makes its writes and passes their records on. Without `--yes` only.
    private func settle(_ hash: String, store: any Library, context: StageContext) async throws {
        guard let file = state.file(hash), let matcher = file.matcher, !file.isReread, !file.settled,
              file.rowsRead != nil, hasEveryRow(hash) else { return }
        let options = context.resource(ReimportOptions.self) ?? ReimportOptions()
        state.update(hash) { $0.settled = true }
        guard !options.confirmed else { return }
        if let older = try await olderExport(file, matcher: matcher, store: store) {
            _ = state.takeHeldWrites(hash)
            throw older
        }
        let runID = options.dryRun ? nil : try await runID(store, context)
        try await releaseHeldWrites(hash, store: store, runID: runID)
    }

    /// The refusal of a newer export that is older than the list in the library: books of the
    /// list that it does not hold were added after every book it holds (at least 3, and at least
    /// 1 % of the list). Nil when the file gives no readable date added, or when it holds the
    /// list's newest books. The dates are compared only with the records of entries the file
    /// lacks, read here (a current export lacks few: those removed from the list since).
    private func olderExport(_ file: SinkState.File, matcher: ListMatcher, store: any Library) async throws -> OlderExportError? {
        guard let newest = file.addedDates.newest else { return nil }
        let threshold = max(Self.olderExportMinimum, matcher.size / 100)
        let missing = matcher.unmatched.filter { !$0.isGone }.map(\.recordID)
        guard missing.count >= threshold else { return nil }
        var later = 0
        var start = missing.startIndex
        while start < missing.endIndex {
            let end = min(start + 10_000, missing.endIndex)
            for record in try await store.records(ids: Array(missing[start..<end])) {
                if let day = AddedDates.day(record.dateAdded), day > newest.day { later += 1 }
            }
            start = end
        }
        guard later >= threshold else { return nil }
        return OlderExportError(path: file.tally.path, list: matcher.list, newestAdded: newest.text, laterMissing: later)
    }

    /// Books of a list that an older export must lack (added after its newest book) before it is
    /// refused, at the least; a current export lacks such a book only when it was added and
    /// removed again since the last import and nothing was added after it.
    static let olderExportMinimum = 3

    /// Writes that wait past ``heldWritesLimit`` records are made at once (the check for an older
    /// export is then not made for the file: ``InputStorage/olderCheckSkipped``), so memory stays
    /// bounded.
    private func releaseHeldWritesIfTooMany(_ hash: String, store: any Library, runID: Int64?) async throws {
        guard state.heldWriteRecords(hash) > heldWritesLimit else { return }
        try await releaseHeldWrites(hash, store: store, runID: runID)
        state.update(hash) { $0.tally.olderCheckSkipped = true }
    }

    /// Makes the writes of a newer export that waited, in the order they came, and passes their
    /// records on; later batches write at once.
    private func releaseHeldWrites(_ hash: String, store: any Library, runID: Int64?) async throws {
        guard let held = state.takeHeldWrites(hash), held.records > 0 else { return }
        try await writeImported(fresh: held.fresh, updates: held.updates, present: held.present, store: store, runID: runID)
        state.release(held.passOn)
    }

    /// Submits a newer export's writes in order: its new entries, its changes, and the entries it
    /// holds again.
    private func writeImported(fresh: [BookRecord], updates: [ImportedUpdate], present: [String], store: any Library,
                               runID: Int64?) async throws {
        _ = try await store.submitInsert(fresh, runID: runID)
        try await store.applyImportedUpdates(updates, runID: runID, at: Date())
        try await store.markPresent(recordIDs: present)
    }

    private func markGone(_ hash: String, store: any Library, context: StageContext) async throws {
        guard let file = state.file(hash), let matcher = file.matcher, file.rowsRead != nil, !file.goneMarked else { return }
        let options = context.resource(ReimportOptions.self) ?? ReimportOptions()
        guard file.rejectedSeen == 0 else {
            // A rejected row may be an entry the export still holds: nothing is called gone.
            state.update(hash) {
                $0.goneMarked = true
                $0.tally.goneUnknown = true
            }
            return
        }
        let unmatched = matcher.unmatched
        let newlyGone = unmatched.filter { !$0.isGone }.map(\.recordID)
        state.update(hash) {
            $0.goneMarked = true
            $0.tally.gone = unmatched.count
        }
        guard !options.dryRun, !newlyGone.isEmpty else { return }
        try await store.markGone(recordIDs: newlyGone, fileHash: hash, at: Date())
    }

    /// True when every row of the file reached this step (its batches and its rejected rows).
    private func hasEveryRow(_ hash: String) -> Bool {
        guard let file = state.file(hash), let rowsRead = file.rowsRead else { return false }
        let tally = file.tally
        return tally.stored + tally.alreadyStored + tally.changed + tally.unchanged + file.rejectedSeen >= rowsRead
    }

    /// `--prune`: removes the entries that the newest export of each list read whole in this run
    /// no longer holds (the last such file of the list: an earlier file's missing entry may be in
    /// a later one). More than half the list is not removed without `--yes`.
    private func prune(store: any Library, context: StageContext) async throws {
        let options = context.resource(ReimportOptions.self) ?? ReimportOptions()
        guard options.prune else { return }
        var newest: [String: String] = [:]
        for hash in state.fileHashes {
            if let file = state.file(hash), file.matcher != nil, let list = file.list { newest[list] = hash }
        }
        for hash in newest.values {
            guard let file = state.file(hash), let matcher = file.matcher, file.goneMarked, !file.tally.goneUnknown else { continue }
            let gone = matcher.unmatched.map(\.recordID)
            guard !gone.isEmpty else { continue }
            if gone.count * 2 > matcher.size && !options.confirmed {
                state.update(hash) { $0.tally.pruneRefused = true }
                continue
            }
            state.update(hash) { $0.tally.pruned = gone.count }
            guard !options.dryRun else { continue }
            // Logged as removed by `import --prune`, like every removal.
            _ = try await store.removeRecords(ids: gone, command: "import --prune", at: Date())
        }
    }

    private func markComplete(_ hash: String, store: any Library) async throws {
        guard let file = state.file(hash), let rowsRead = file.rowsRead, !file.tally.isComplete, !file.tally.isDryRun else { return }
        let isComplete = try await store.finishSourceFile(hash: hash, rowsTotal: rowsRead, reading: file.reading,
                                                          matchedRows: file.tally.changed + file.tally.unchanged)
        state.update(hash) { $0.tally.isComplete = isComplete }
    }
}

/// A set of 64-bit id hashes (``ListIdentity/stableHash(_:)``, already well mixed), open
/// addressing with linear probing: a sixth of the instructions of `Set<UInt64>`, which hashes
/// every element again (200,000 rows: 16 M against 100 M).
private struct IDHashSet: Sendable {
    /// Slots; 0 marks an empty one (the hash 0 is kept in `holdsZero`).
    private var slots = [UInt64](repeating: 0, count: 1024)
    private var count = 0
    private var holdsZero = false

    /// Adds `hash`; false when it was there already.
    mutating func insert(_ hash: UInt64) -> Bool {
        if hash == 0 {
            defer { holdsZero = true }
            return !holdsZero
        }
        if (count + 1) * 2 > slots.count { grow() }
        let inserted = slots.withUnsafeMutableBufferPointer { Self.insert(hash, into: $0) }
        if inserted { count += 1 }
        return inserted
    }

    private static func insert(_ hash: UInt64, into slots: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        while slots[index] != 0 {
            if slots[index] == hash { return false }
            index = (index + 1) & mask
        }
        slots[index] = hash
        return true
    }

    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: slots.count * 2)
        larger.withUnsafeMutableBufferPointer { larger in
            for hash in slots where hash != 0 { _ = Self.insert(hash, into: larger) }
        }
        slots = larger
    }
}

/// The store step's per-run state: what it knows of each input, records held until their input
/// is announced, and held records released (submitted) but not yet passed on.
private final class SinkState: Sendable {
    struct File: Sendable {
        var tally: InputStorage
        var finished = RowSet()
        var isReread = false
        var rowsRead: Int?
        var reading: String?
        /// The list the input belongs to, and the column of its ids.
        var list: String?
        var entryColumn: Int?
        /// Every row was stored by an earlier run (the same bytes imported before).
        var skipsAll = false
        /// The list's entries from other files, when it has any (a newer export).
        var matcher: ListMatcher?
        /// The list's entries no longer in the file were marked (once, when it was read whole).
        var goneMarked = false
        /// Rejected rows of the file that reached this step (stored now or by an earlier run).
        var rejectedSeen = 0
        /// A newer export's writes wait until it is known not to be older than the list
        /// (``SinkState/count(_:holding:_:)``); false: written at once.
        var holdsWrites = false
        /// The newest date added of the file's rows so far (a newer export).
        var addedDates = AddedDates()
        /// The file was read whole and checked (``StoreRecords/settle``).
        var settled = false
    }

    private struct State {
        var files: [String: File] = [:]
        var order: [String] = []
        var held: [String: [[BookRecord]]] = [:]
        /// Newer exports' writes that wait (kept apart from ``File``: a copy of a file's state
        /// taken while a batch is handled would make every append copy what is held).
        var heldWrites: [String: HeldWrites] = [:]
        var released: [BookRecord] = []
        /// Hashes of the list ids of each file's rows, with their rows (first import of a list).
        var ids: [String: [(hash: UInt64, row: Int)]] = [:]
        /// Each file's id hashes seen so far, and those seen more than once: the rows to look at
        /// once the file is read, found while it is read (at the end, sorting a million hashes
        /// kept one core busy with the other idle).
        var seenIDs: [String: IDHashSet] = [:]
        var repeatedIDs: [String: Set<UInt64>] = [:]
    }

    private let state = Mutex(State())

    func file(_ hash: String) -> File? { state.withLock { $0.files[hash] } }

    func begin(_ hash: String, _ file: File) {
        state.withLock { state in
            if state.files[hash] == nil { state.order.append(hash) }
            state.files[hash] = file
        }
    }

    func update(_ hash: String, _ change: (inout File) -> Void) {
        state.withLock { state in
            if state.files[hash] != nil { change(&state.files[hash]!) }
        }
    }

    /// Changes a file's state and, when its writes wait, adds `writes` to them, in one step.
    /// - Returns: true when `writes` wait (the caller does not write them).
    func count(_ hash: String, holding writes: HeldWrites?, _ change: (inout File) -> Void) -> Bool {
        state.withLock { state in
            guard state.files[hash] != nil else { return false }
            change(&state.files[hash]!)
            guard let writes, state.files[hash]!.holdsWrites else { return false }
            state.heldWrites[hash, default: HeldWrites()].add(fresh: writes.fresh, updates: writes.updates,
                                                             present: writes.present, passOn: writes.passOn)
            return true
        }
    }

    var fileHashes: [String] { state.withLock { $0.order } }

    /// Notes the hashes of list ids of a file's rows.
    func noteIDs(_ ids: [(hash: UInt64, row: Int)], fileHash: String) {
        guard !ids.isEmpty else { return }
        state.withLock { state in
            state.ids[fileHash, default: []].append(contentsOf: ids)
            // Taken out and put back: changed in place, not copied.
            var seen = state.seenIDs.removeValue(forKey: fileHash) ?? IDHashSet()
            var repeated: [UInt64] = []
            for id in ids where !seen.insert(id.hash) { repeated.append(id.hash) }
            state.seenIDs[fileHash] = seen
            if !repeated.isEmpty { state.repeatedIDs[fileHash, default: []].formUnion(repeated) }
        }
    }

    /// The rows of a file whose list id an earlier row has (by hash: two different ids of a
    /// million-row file share a 64-bit hash with a chance of about one in 10^7; the ids
    /// themselves would take 70 MB), and forgets the file's ids.
    func takeRepeatedIDRows(fileHash: String) -> [Int] {
        let (ids, repeatedHashes) = state.withLock { state in
            state.seenIDs[fileHash] = nil
            return (state.ids.removeValue(forKey: fileHash) ?? [], state.repeatedIDs.removeValue(forKey: fileHash) ?? [])
        }
        // Only the rows of hashes seen more than once can be repeats.
        guard !repeatedHashes.isEmpty else { return [] }
        var sorted = ids.filter { repeatedHashes.contains($0.hash) }
        guard sorted.count > 1 else { return [] }
        sorted.sort { $0.hash != $1.hash ? $0.hash < $1.hash : $0.row < $1.row }
        var repeated: [Int] = []
        for index in 1..<sorted.count where sorted[index].hash == sorted[index - 1].hash {
            repeated.append(sorted[index].row)
        }
        return repeated.sorted()
    }
    var files: [File] { state.withLock { state in state.order.compactMap { state.files[$0] } } }

    func hold(_ records: [BookRecord], for hash: String) {
        state.withLock { $0.held[hash, default: []].append(records) }
    }

    /// Records (new and updated) of a file's writes that wait.
    func heldWriteRecords(_ hash: String) -> Int {
        state.withLock { $0.heldWrites[hash]?.records ?? 0 }
    }

    /// Takes a file's writes that wait, and stops holding its later ones.
    func takeHeldWrites(_ hash: String) -> HeldWrites? {
        state.withLock { state in
            if state.files[hash] != nil { state.files[hash]!.holdsWrites = false }
            return state.heldWrites.removeValue(forKey: hash)
        }
    }

    func releaseHeld(for hash: String) -> [[BookRecord]] {
        state.withLock { $0.held.removeValue(forKey: hash) ?? [] }
    }

    func release(_ records: [BookRecord]) {
        state.withLock { $0.released += records }
    }

    var hasReleased: Bool { state.withLock { !$0.released.isEmpty } }

    func takeReleased() -> [BookRecord] {
        state.withLock { state in
            defer { state.released = [] }
            return state.released
        }
    }
}

/// Stores what enrichment found (status, match, candidates, findings) and the matched works.
public struct SaveEnrichment: Stage {
    /// Creates the stage.
    public init() {}

    /// Saves the batch's records enriched in this run in one transaction (through the library's
    /// writer, ``LibraryStore/saveEnrichment(_:runID:at:)``): outcomes, matches, candidates, the
    /// matched works, when each record was enriched, and what a re-enrichment changed (counted for
    /// the summary). Fields a person supplied are never overwritten (title and authors are not
    /// written; a match a person chose is kept); a failed lookup never replaces an earlier answer.
    /// - Throws: ``StoreError`` when the write fails (nothing of the batch is written).
    public func process(_ batch: [BookRecord], in context: StageContext) async throws -> [BookRecord] {
        let settings = context.resource(EnrichmentSettings.self)
        guard settings?.isEnabled ?? true else { return batch }
        let store = try context.require((any Library).self, for: name)
        // The records a step looked up in this run (marked on them); without settings (a library
        // user's pipeline), every record that carries an enrichment.
        let changed = settings == nil ? batch.filter { $0.enrichment != nil } : batch.filter(\.thisRun.lookedUp)
        guard !changed.isEmpty else { return batch }
        let runID = try await context.resource(LibraryRun.self)?.id(in: store, pipeline: context.pipelineName)
        let saved = try await store.saveEnrichment(changed, runID: runID, at: Date(),
                                                   owner: context.resource(EnrichmentClaim.self)?.owner)
        if let counted = Self.counted(saved.changes) { context.report(counted) }
        if !saved.fencedOut.isEmpty {
            context.progress.emit(.message("\(saved.fencedOut.count) result\(saved.fencedOut.count == 1 ? " was" : "s were") "
                + "not saved: another run took those records after this run's claim lapsed, and its results stand."))
        }
        return batch
    }

    /// What a re-enrichment changed, as the event the summary counts: records by field (a record
    /// counts once per field) and matches by kind; nil when nothing changed.
    static func counted(_ changes: [RecordChange]) -> PipelineEvent? {
        guard !changes.isEmpty else { return nil }
        var byField: [String: Int] = [:]
        var byKind: [String: Int] = [:]
        var seen = Set<String>()
        for change in changes where seen.insert("\(change.recordID)|\(change.field)").inserted {
            byField[change.field, default: 0] += 1
            if let kind = change.kind { byKind[kind.rawValue, default: 0] += 1 }
        }
        return .recordsChanged(byField: byField, matchesByKind: byKind)
    }

    /// Records how the run ended, and gives up the run's claims on records it did not save
    /// (rows left at a deadline or by an interruption are left as they were, for the next run).
    public func end(_ outcome: RunOutcome, in context: StageContext) async {
        guard let store = context.resource((any Library).self) else { return }
        if let claim = context.resource(EnrichmentClaim.self) {
            try? await store.releaseClaims(owner: claim.owner)
        }
        await context.resource(LibraryRun.self)?.end(outcome, in: store)
    }
}

/// Reads records from the library in batches (for `bookpipe enrich`): every record in one of the
/// statuses the run enriches (``EnrichmentSettings/statuses``), the stale ones (`--stale`) and
/// matches to repair, in the overnight order (``EnrichmentSelection``), until the deadline.
public struct LibraryRecords: SourceStage {
    /// Records per batch.
    public var batchSize: Int
    /// Records per batch when the run asks only the local catalogue (the command's sources are
    /// `catalog`: `--offline`, `--sources catalog`). Nothing waits on a host's rate there, so a
    /// larger claim shares the work as well, and each claim and save costs the library about the
    /// same for 100 records as for 25: on PostgreSQL the server's CPU a row fell by a third
    /// (benchmarks/workers/README.md, session 18).
    public var catalogueBatchSize: Int
    /// The statuses to (re-)enrich when the command does not say (nil: the command's).
    public var statuses: [RecordStatus]?
    /// Also records whose answers are older than this, when the command does not say.
    public var staleAfter: Duration?
    /// How long the run may read and ask, when the command gives no deadline.
    public var maxDuration: Duration?

    /// Creates the source.
    public init(batchSize: Int, catalogueBatchSize: Int = 100, statuses: [RecordStatus]? = nil, staleAfter: Duration? = nil,
                maxDuration: Duration? = nil) {
        self.batchSize = max(1, batchSize)
        self.catalogueBatchSize = max(1, catalogueBatchSize)
        self.statuses = statuses
        self.staleAfter = staleAfter
        self.maxDuration = maxDuration
    }

    /// Emits the records in the order the run asks them (``EnrichmentSelection``): failed lookups
    /// whose retry time has come, then records never enriched, then the stalest (with `--stale`,
    /// also records whose answers are older), and stored matches that name an edition where the
    /// work belongs. Stops reading when the run's deadline has passed, noting the rows left.
    /// - Throws: ``StoreError`` when the library cannot be read; `CancellationError`.
    public func produce(into emit: BatchEmitter<BookRecord>, in context: StageContext) async throws {
        let store = try context.require((any Library).self, for: name)
        var settings = context.resource(EnrichmentSettings.self)
        // The command's deadline was in the plan `enrich-records` showed; the file's is told here.
        var deadlineFromFile = false
        if var adjusted = settings {
            // The pipeline file's values where the command gave none.
            if adjusted.statuses == [.pending], let statuses { adjusted.statuses = statuses }
            adjusted.staleAfter = adjusted.staleAfter ?? staleAfter
            if adjusted.deadline == nil, let maxDuration {
                adjusted.deadline = EnrichmentDeadline(after: maxDuration)
                adjusted.run.setDeadline(adjusted.deadline)
                deadlineFromFile = true
            }
            settings = adjusted
        }
        var selection = settings?.selection() ?? EnrichmentSelection(statuses: statuses ?? [.pending], staleBefore:
            staleAfter.map { Date().addingTimeInterval(-$0.timeInterval) })
        // The records are claimed batch by batch (docs/decisions/0029): a claim takes the next
        // `batchSize` records no run holds, they are asked and saved (each save gives up its
        // record's claim), and the next claim follows, so runs on other machines share the work.
        // The claim's lease is kept by ``EnrichmentClaim``'s heartbeat while batches are asked.
        // Without a claim resource (a library user's pipeline) nothing keeps a lease: the run claims
        // its whole selection at once with none (it skips what other runs hold) and reads it in batches.
        let batchSize = settings?.sources == ["catalog"] ? catalogueBatchSize : self.batchSize
        let claimant = context.resource(EnrichmentClaim.self)
        let owner = claimant?.owner ?? ClaimOwner.thisProcess(command: context.pipelineName)
        let lease = claimant?.lease ?? .zero
        let expected = try await store.countClaimable(selection)
        settings?.run.expect(rows: expected)
        var described = selection.statuses.map(\.rawValue).joined(separator: ", ")
        if let stale = settings?.staleAfter { described += "; answers older than \(DurationText.describe(seconds: stale.timeInterval))" }
        let holders = try await store.claimHolders()
        for holder in holders {
            context.progress.emit(.message(holder.description + "; they are left to it, and it shares what is left."))
        }
        let others = holders.isEmpty ? "" : " (shared with the runs above, a batch at a time)"
        // A filter step before the lookups passes only some of these on: they are chosen, not all enriched.
        let filteredBeforeLookups = context.stageNames.prefix { $0 != EnrichRecords.stageName }.contains(FilterRecords.stageName)
        context.progress.emit(.message(filteredBeforeLookups
            ? "\(expected) records\(holders.isEmpty ? "" : " left") chosen (status \(described))\(others); the filter steps pass those to enrich."
            : "\(expected) records\(holders.isEmpty ? "" : " left") to enrich (status \(described))\(others)."))
        if deadlineFromFile, let settings, let deadline = settings.deadline, let fits = settings.run.fits(deadline: deadline) {
            context.progress.emit(.message(fits))
        }
        // Records this run has emitted: a record saved here may still be in the selection (a
        // failed re-lookup keeps the old answer and its age); claimed again, it is not asked twice
        // but stays held by this run until it ends, so no later claim returns it.
        var emitted = Set<String>()
        // Without a heartbeat: the whole selection, claimed once (the old way), read in batches.
        var whole = claimant == nil ? try await store.claimRecords(selection, owner: owner, lease: lease, limit: nil).ids[...] : nil
        while true {
            try Task.checkCancellation()
            if let deadline = settings?.deadline, deadline.hasPassed {
                var left = whole?.count ?? 0
                if whole == nil { left = (try? await store.countClaimable(selection)) ?? 0 }
                context.report(.recordsLeft(left, because: .deadline))
                return
            }
            let ids: [String]
            if let rest = whole {
                ids = Array(rest.prefix(batchSize))
                whole = rest.dropFirst(ids.count)
            } else {
                selection.now = Date()
                ids = try await store.claimRecords(selection, owner: owner, lease: lease, limit: batchSize).ids
            }
            guard !ids.isEmpty else { return }
            let fresh = ids.filter { emitted.insert($0).inserted }
            guard !fresh.isEmpty else { continue }
            let batch = try await store.records(ids: fresh)
            guard !batch.isEmpty else { continue }
            // Chosen for this run whatever their status: `enrich-records` asks about them (stale
            // answers past the cache).
            try await emit(batch.map { record in
                var chosen = record
                chosen.thisRun.chosenForLookup = true
                return chosen
            })
        }
    }

}

/// A `library-records` parameter that is wrong.
public enum LibraryRecordsError: Error, Sendable, CustomStringConvertible {
    /// A status name that is not one.
    case unknownStatus(String)

    public var description: String {
        switch self {
        case .unknownStatus(let name):
            return "unknown status '\(name)'; known: " + RecordStatus.allCases.map(\.rawValue).joined(separator: ", ")
        }
    }
}
