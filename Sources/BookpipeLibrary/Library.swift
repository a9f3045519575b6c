import BookpipeCore
import Foundation

/// A library as every module above the store sees it: the contract an engine implements (SQLite
/// today, PostgreSQL next), in small protocols by concern, composed into ``Library``.
///
/// What crosses it: the project's own values (``BookRecord``, ``SourceFileInfo``, record ids
/// `<file hash>:<row>` as strings, ``Date``s, ``Duration``s). No engine type, SQL text, rowid or
/// packed key does. Every requirement is `async`: an engine over a network waits, and so does an
/// engine whose writes go through one writer. Errors are ``StoreError``s (the messages name the
/// library and what failed); a review action may also throw ``ReviewError``.
///
/// The product's rules — what a review decision changes (``ReviewRules``), what a re-enrichment
/// may overwrite (``ReenrichmentRules``), which rows a run may take (``ClaimOwner``, leases) — are
/// plain Swift in this module: an engine applies them in one transaction each, it does not
/// restate them in its own query language. A new engine is done when the contract suite
/// (`Tests/BookpipeLibraryContractTests`) passes against it.
///
/// Cancellation: cancelling a task waiting on a requirement does not undo a write that has begun;
/// a write is all or nothing (its transaction commits whole or not at all).
public protocol Library: LibraryRecordStore, LibraryEnrichmentStore, LibraryClaims, LibraryReviewStore,
    LibraryRunStore, LibraryScanJobStore, LibrarySearchStore, LibraryReportStore, LibraryListEntryStore,
    LibraryListingStore, LibraryBookStore, LibraryPhotoStore {
    /// Where the library is, as the user named it (a file path today; a URL for a server), for messages.
    var location: String { get }

    /// Commits what is pending and leaves the library whole for others (SQLite: the write-ahead
    /// log folded into the file and truncated). A best effort when another process holds it; the
    /// library must not be used afterwards.
    /// - Throws: ``StoreError`` when pending writes cannot be committed.
    func close() async throws(StoreError)
}

/// Source files, their rows as records, and rejected rows.
public protocol LibraryRecordStore: Sendable {
    /// The input file with this content fingerprint, when the library knows it.
    func sourceFile(hash: String) async throws(StoreError) -> SourceFileInfo?
    /// Every input file imported, in import order.
    func sourceFiles() async throws(StoreError) -> [SourceFileInfo]
    /// Records an input file (or its new path) before its rows are stored.
    func registerSourceFile(_ info: SourceFileInfo, runID: Int64?) async throws(StoreError)
    /// Marks a file complete when every row of it is stored or rejected, or matched an entry of
    /// its list that another file brought (`matchedRows`: a newer export); returns whether it is.
    func finishSourceFile(hash: String, rowsTotal: Int, reading: String?, matchedRows: Int) async throws(StoreError) -> Bool
    /// The rows of a file already stored or rejected (a resumed import skips them).
    func finishedRows(fileHash: String) async throws(StoreError) -> RowSet
    /// Removes a file's rejected rows (before it is read again).
    func deleteRejections(fileHash: String) async throws(StoreError)
    /// Stores rows that could not be read, with the reason.
    func insertRejections(_ rejections: [RejectedRow], runID: Int64?) async throws(StoreError)
    /// Every rejected row, in file, line, column and row order.
    func rejections() async throws(StoreError) -> [RejectedRow]
    /// Queues records for insertion through the library's one writer; inserting a record whose id
    /// is stored already changes nothing (idempotent). Returns a ticket to wait on.
    func submitInsert(_ records: [BookRecord], runID: Int64?) async throws(StoreError) -> WriteTicket
    /// Waits until the write behind `ticket` has committed.
    func committed(_ ticket: WriteTicket) async throws(StoreError)
    /// Waits until every write submitted so far has committed.
    func flushWrites() async throws(StoreError)
    /// Tells the engine a bulk insert of about `expectedRows` new rows begins (it may relax
    /// durability until ``finishBulkInsert()``; a crash still loses no committed batch's order).
    func prepareForBulkInsert(expectedRows: Int) async throws(StoreError)
    /// Ends a bulk insert: what was written is durable when this returns.
    func finishBulkInsert() async throws(StoreError)
    /// Replaces stored records by id (their normalised forms, findings, enrichment, review state).
    func update(_ records: [BookRecord], runID: Int64?) async throws(StoreError)
    /// The records with these ids, in the order given; unknown ids are skipped.
    func records(ids: [String]) async throws(StoreError) -> [BookRecord]
    /// Calls `body` with every stored record (of one status, when given), in library order, one
    /// at a time: memory stays bounded whatever the library's size.
    func forEachRecord(where status: RecordStatus?, _ body: (BookRecord) throws -> Void) async throws
    /// How many records the library holds, by status.
    func counts() async throws(StoreError) -> LibraryCounts
    /// How many records are in one of `statuses` (of these files, when given).
    func countRecords(statuses: [RecordStatus], fileHashes: [String]?) async throws(StoreError) -> Int
    /// What the library holds, for `bookpipe stats`.
    func statistics() async throws(StoreError) -> LibraryStatistics
    /// Of some rows of a scan file, those stored as detections that name no managed photo copy.
    func storedRowsWithoutScanPhoto(fileHash: String, rows: [Int]) async throws(StoreError) -> Set<Int>
    /// Removes a scan file's records (a scan photo read again from scratch); returns how many.
    func discardRecords(fileHash: String) async throws(StoreError) -> Int
}

/// What enrichment keeps: the lookup cache, host quotas, results and the change log.
public protocol LibraryEnrichmentStore: Sendable {
    /// The cached answers of `source` to these questions (fetched at or after `notBefore`), by question.
    func cachedAnswers(source: String, questions: [String], notBefore: Date?) async throws(StoreError)
        -> [String: CachedAnswer]
    /// Stores answers (an answer already cached for a question is replaced).
    func cacheAnswers(source: String, _ answers: [(question: String, answerJSON: String)], fetchedAt: Date)
        async throws(StoreError)
    /// How many answers the cache holds.
    func cachedAnswerCount() async throws(StoreError) -> Int
    /// Takes, for `asker`, the questions to `source` that no other asker is asking now, for
    /// `lease` (on the library's clock; PostgreSQL: the server's), and returns those taken: the
    /// questions this asker may send. A question another asker holds is left to it (its answer
    /// reaches the cache); one whose lease ran out (its asker died) is taken over. This is how
    /// workers on several machines never ask one question twice, even at the same instant.
    func takeQuestions(source: String, _ questions: [String], asker: String, lease: Duration) async throws(StoreError)
        -> Set<String>
    /// Gives up questions `asker` took (answered and cached, or failed: then another may ask).
    func releaseQuestions(source: String, _ questions: [String], asker: String) async throws(StoreError)
    /// Who holds each of these questions to `source` now (leases run out left out), by question.
    func questionAskers(source: String, _ questions: [String]) async throws(StoreError) -> [String: String]
    /// The cached lookups for these questions, from every source.
    func cachedLookups(questions: [String]) async throws(StoreError) -> [CachedLookup]
    /// The stored block on a host, when one is stored.
    func hostQuota(host: String) async throws(StoreError) -> StoredHostQuota?
    /// Stores a block on a host (the later end wins).
    func saveHostQuota(_ quota: StoredHostQuota) async throws(StoreError)
    /// Takes a token from `host`'s bucket, one for every run on the library (every process, every
    /// machine): refilled at `rate` per second up to `burst`, on one clock (PostgreSQL: the
    /// server's). Returns zero when the request may go now (the token is taken), else how long to
    /// wait before asking again; a pause (``pauseHost(_:for:reason:)``) makes every run wait.
    func takeHostToken(_ host: String, rate: Double, burst: Double) async throws(StoreError) -> Duration
    /// Pauses every run's requests to `host` for `duration` from now (a 429's Retry-After); a
    /// longer pause already set stands, and the bucket is emptied.
    func pauseHost(_ host: String, for duration: Duration, reason: String) async throws(StoreError)
    /// Saves what enrichment found, applying ``ReenrichmentRules`` to each record in one transaction.
    /// With `owner`, completion is fenced: only records this owner's claim still holds are written
    /// (a run whose lease expired and whose rows another run took writes nothing for them).
    func saveEnrichment(_ records: [BookRecord], runID: Int64?, at time: Date, owner: ClaimOwner?)
        async throws(StoreError) -> EnrichmentSave
    /// Each source's share of looked-up rows (see ``EnrichmentSelection``), nil with too little history.
    func lookupReach(chain: [String], minimum: Int) async throws(StoreError) -> [String: Double]?
    /// The change log of one record, oldest first.
    func recordChanges(recordID: String) async throws(StoreError) -> [RecordChange]
    /// When each of these records was last enriched (absent: never).
    func enrichedAt(recordIDs: [String]) async throws(StoreError) -> [String: Date]
    /// Keeps a run's per-source request figures.
    func recordRunSources(_ counters: [SourceCounters], runID: Int64) async throws(StoreError)
}

/// Claims with leases: which run works on which records. See ``ClaimOwner``.
public protocol LibraryClaims: Sendable {
    /// Takes, for `owner`, the records `selection` names that no live claim holds (in the
    /// selection's order, at most `limit` when given), with a lease of `lease`; claims of owners
    /// that are gone (lease expired, or a process of this host that no longer runs) are taken
    /// over. One transaction: two runs claiming at once never both get a record.
    ///
    /// Without a limit the whole selection is claimed, and the records `owner` already holds come
    /// first (claiming again is harmless). With a limit, a claim takes the *next* records: those
    /// `owner` already holds are not returned again, so a run claims batch by batch (claim, work,
    /// save, claim the next) and several runs on one library share the work.
    /// - Returns: the ids claimed, in order, and who holds the records left to others. A batch
    ///   claim that took all it asked for counts no holders (``RecordClaim/heldElsewhere`` is
    ///   empty): the count matters when a claim comes back short, and with several workers it was
    ///   the claim's largest cost on a server (docs/decisions/0037).
    func claimRecords(_ selection: EnrichmentSelection, owner: ClaimOwner, lease: Duration, limit: Int?)
        async throws(StoreError) -> RecordClaim
    /// How many records `selection` names that no live claim holds: what is left for a run to
    /// claim (for progress and the rows a deadline leaves).
    func countClaimable(_ selection: EnrichmentSelection) async throws(StoreError) -> Int
    /// Extends `owner`'s lease (a heartbeat). Returns false when its claims were taken over meanwhile.
    func renewClaims(owner: ClaimOwner, lease: Duration) async throws(StoreError) -> Bool
    /// Gives up every claim `owner` holds (the run ended, however it ended).
    func releaseClaims(owner: ClaimOwner) async throws(StoreError)
    /// The live claims, by owner.
    func claimHolders() async throws(StoreError) -> [ClaimHolder]
}

/// The review queue and a person's decisions.
public protocol LibraryReviewStore: Sendable {
    /// The queued items (newest file first), of one kind when given, a page at a time.
    func reviewQueue(kind: ReviewKind?, limit: Int?, offset: Int) async throws(StoreError) -> [ReviewItem]
    /// The queue as `review list` shows it (no record decoded).
    func reviewQueueEntries(kind: ReviewKind?) async throws(StoreError) -> [ReviewQueueEntry]
    /// How many items wait, of one kind when given.
    func reviewQueueCount(kind: ReviewKind?) async throws(StoreError) -> Int
    /// How many records of one file wait for review.
    func reviewCount(fileHash: String) async throws(StoreError) -> Int
    /// One record as the queue shows it (also when no longer queued).
    func reviewItem(id: String) async throws(StoreError) -> ReviewItem?
    /// The fields a person supplied for a record.
    func recordEdits(id: String) async throws(StoreError) -> [RecordEdit]
    /// The fields a person supplied, by record id.
    func personEditedFields() async throws(StoreError) -> [String: Set<String>]
    /// Every logged review decision, oldest first.
    func reviewActions() async throws(StoreError) -> [ReviewAction]
    /// Applies a decision (``ReviewRules``) to each record in one transaction: the records, their
    /// locks, edits, change log and the action log commit together, or nothing does. The action log
    /// keeps, with each decision, what ``undoReview(actionIDs:at:)`` needs to put the record back.
    /// - Parameter versions: For optimistic concurrency (two tabs on one queue): record id → the
    ///   ``ReviewRules/version(of:)`` the decider saw. Checked inside the transaction; a record that
    ///   changed since throws ``ReviewError/changedSince(id:now:)`` and nothing is written. Ids
    ///   absent from the map are not checked (the command line).
    /// - Returns: For each id, the logged action's number and the record as stored after.
    /// - Throws: ``ReviewError`` (nothing written for any id) or ``StoreError``.
    func applyReview(_ decision: ReviewDecision, ids: [String], at time: Date, versions: [String: String]) async throws
        -> [ReviewReceipt]
    /// Undoes logged decisions (``ReviewReceipt/actionID``), in one transaction: each record goes
    /// back exactly as it was before the decision (its stored values, locks, field edits; the change
    /// log the decision wrote is removed), the decision is marked undone and an `undo` action is
    /// logged. The photo copy is not brought back if a cleanup deleted it meanwhile.
    /// - Returns: The records as stored after.
    /// - Throws: ``ReviewError/changedSince(id:now:)`` when a record changed after the decision (it
    ///   is not undone: the later change would be lost), ``ReviewError/notUndoable(actionID:)`` for
    ///   an unknown, already undone or pre-undo action; nothing is written then. ``StoreError``.
    func undoReview(actionIDs: [Int64], at time: Date) async throws -> [BookRecord]
    /// The review and processing status of every detection naming each of these managed photo
    /// copies (by the copy's file name); a copy no detection names is absent.
    func detectionStates(photoNames: [String]) async throws(StoreError) -> [String: [DetectionState]]
    /// In one transaction: of `names`, those `isDue` still says may go (asked again with the
    /// detections as they are now) get their detections' photo path and box cleared and are noted
    /// as pending deletion. Returns every copy pending deletion (these and earlier failures).
    func releaseDetectionPhotos(names: [String], isDue: @escaping @Sendable ([DetectionState]) -> Bool)
        async throws(StoreError) -> [String]
    /// The copies noted as pending deletion (deleted by an earlier clean-up that failed or was cut).
    func pendingPhotoDeletions() async throws(StoreError) -> [String]
    /// Notes which pending deletions were done and which failed (with the reason; retried later).
    func recordPhotoDeletions(deleted: [String], failed: [(name: String, reason: String)]) async throws(StoreError)
}

/// Runs: what was started, and how it ended.
public protocol LibraryRunStore: Sendable {
    /// Records a run's start; returns its id.
    func beginRun(command: String, pipeline: String) async throws(StoreError) -> Int64
    /// Records how a run ended.
    func finishRun(_ id: Int64, status: RunStatus, summary: String?) async throws(StoreError)
    /// Every run, newest first.
    func runs() async throws(StoreError) -> [RunEntry]
}

/// Scan jobs of the vision backend, per photo.
public protocol LibraryScanJobStore: Sendable {
    /// Stores a photo's scan job state.
    func saveScanJob(_ state: ScanJobState, runID: Int64?) async throws(StoreError)
    /// The state of a photo's scan job, by the photo's content fingerprint.
    func scanJob(photoHash: String) async throws(StoreError) -> ScanJobState?
    /// Every scan job.
    func scanJobs() async throws(StoreError) -> [ScanJobState]
}

/// What a data-quality report and a record's story ask of a library: aggregates each engine
/// computes its own way (``QualityFigures``), and a record's review history and duplicates.
public protocol LibraryReportStore: Sendable {
    /// The report's figures for `scope`, in one snapshot; `acceptsDate` is the date rule (records
    /// with a date it refuses are listed).
    func qualityFigures(_ scope: QualityScope, acceptsDate: @escaping @Sendable (String) -> Bool)
        async throws(StoreError) -> QualityFigures
    /// The titles (as read) of these records, by id.
    func recordTitles(ids: [String]) async throws(StoreError) -> [String: String]
    /// A record's review decisions, oldest first; nil when the library keeps no review log.
    func reviewActions(recordID: String) async throws(StoreError) -> [ReviewAction]?
    /// The records the report counts as duplicates of this one, by kind.
    func duplicates(ofRecord recordID: String) async throws(StoreError) -> [RecordDuplicates]
    /// Keeps a report's headline figures (``ReportHistoryEntry``); returns the entry's id.
    func saveReportHistory(generatedAt: Date, scope: String, figures: [String: Double]) async throws(StoreError) -> Int64
    /// The saved reports' figures, oldest first: the last `limit` of them when given.
    func reportHistory(limit: Int?) async throws(StoreError) -> [ReportHistoryEntry]
}

/// Search by title, author or ISBN, ignoring case and accents.
public protocol LibrarySearchStore: Sendable {
    /// The records matching `text`, best first.
    func search(_ text: String, limit: Int, ranking: Int) async throws(StoreError) -> SearchResults
    /// Whether the search index holds every record as it is.
    func searchIndexIsCurrent() async throws(StoreError) -> Bool
    /// Brings the search index up to date; returns how many records it (re)indexed.
    func refreshSearchIndex() async throws(StoreError) -> Int
}

extension LibraryRecordStore {
    /// Queues records for insertion outside any run.
    public func submitInsert(_ records: [BookRecord]) async throws(StoreError) -> WriteTicket {
        try await submitInsert(records, runID: nil)
    }

    /// Replaces stored records outside any run.
    public func update(_ records: [BookRecord]) async throws(StoreError) {
        try await update(records, runID: nil)
    }

    /// Calls `body` with every stored record, in library order.
    public func forEachRecord(_ body: (BookRecord) throws -> Void) async throws {
        try await forEachRecord(where: nil, body)
    }
}

extension LibraryEnrichmentStore {
    /// The cached answers of `source` to these questions, however old.
    public func cachedAnswers(source: String, questions: [String]) async throws(StoreError) -> [String: CachedAnswer] {
        try await cachedAnswers(source: source, questions: questions, notBefore: nil)
    }

    /// Saves what enrichment found, unfenced (no claim: a single run, or a test); returns the changes.
    public func saveEnrichment(_ records: [BookRecord], runID: Int64?, at time: Date = Date()) async throws(StoreError)
        -> [RecordChange] {
        try await saveEnrichment(records, runID: runID, at: time, owner: nil).changes
    }
}

extension LibraryReviewStore {
    /// Applies a decision with no version check (the command line): the records as stored after.
    /// - Throws: ``ReviewError`` (nothing written for any id) or ``StoreError``.
    @discardableResult
    public func applyReview(_ decision: ReviewDecision, ids: [String], at time: Date) async throws -> [BookRecord] {
        try await applyReview(decision, ids: ids, at: time, versions: [:]).map(\.record)
    }

    /// Marks records as checked by a person (``ReviewDecision/verify``).
    @discardableResult
    public func verify(ids: [String], at time: Date = Date()) async throws -> [BookRecord] {
        try await applyReview(.verify, ids: ids, at: time)
    }

    /// Replaces a record's title and/or authors with what a person typed (``ReviewDecision/edit(title:authors:)``).
    @discardableResult
    public func edit(id: String, title: String?, authors: [String]?, at time: Date = Date()) async throws -> BookRecord {
        try await applyReview(.edit(title: title, authors: authors), ids: [id], at: time)[0]
    }

    /// Accepts candidate `number` (1-based) as the record's match (``ReviewDecision/choose(_:)``).
    @discardableResult
    public func choose(id: String, candidate number: Int, at time: Date = Date()) async throws -> BookRecord {
        try await applyReview(.choose(number), ids: [id], at: time)[0]
    }

    /// Records that none of the candidates is the book (``ReviewDecision/none``).
    @discardableResult
    public func chooseNone(id: String, at time: Date = Date()) async throws -> BookRecord {
        try await applyReview(.none, ids: [id], at: time)[0]
    }

    /// Where each reviewed field of `record` came from: `file`, `person` or a source.
    public func provenance(of record: BookRecord) async throws(StoreError) -> [String: String] {
        ReviewRules.provenance(of: record, editedByPerson: Set(try await recordEdits(id: record.id).map(\.field)))
    }
}
