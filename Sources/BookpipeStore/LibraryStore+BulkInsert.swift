import BookpipeCore
import Foundation
import GRDB

/// Writes queued records on a thread of its own, in transactions of ``commitRows`` records (or
/// whatever is queued once the oldest queued record waited ``maxDelay``), so the pipeline never
/// waits for SQLite and SQLite never waits for the pipeline.
///
/// Each transaction is atomic: a process killed at any instant leaves whole transactions or
/// nothing of them, and inserts are idempotent, so a rerun stores the missing rows exactly once.
/// Queued records are not in the library until they are committed; ``flush()`` waits for that.
final class InsertQueue: @unchecked Sendable {
    typealias Batch = (records: EncodedRecords, runID: Int64?)
    typealias Writer = @Sendable ([Batch]) throws(StoreError) -> Void

    /// Records per transaction.
    let commitRows: Int
    /// Records that may wait (beyond the transaction being written) before producers wait.
    let maxQueuedRows: Int
    /// The longest a queued record waits for its transaction.
    let maxDelay: TimeInterval

    private let writer: Writer
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var queued: [Batch] = []
    private var queuedRows = 0
    private var oldestQueued: Date?
    private var enqueuedBatches = 0
    private var committedBatches = 0
    private var flushRequested = false
    private var failure: StoreError?
    private var isClosing = false
    private var threadStarted = false
    private var threadFinished = false
    private var spaceWaiters: [CheckedContinuation<Void, Never>] = []

    init(commitRows: Int = 8192, maxQueuedRows: Int = 16_384, maxDelay: TimeInterval = 0.25, writer: @escaping Writer) {
        self.commitRows = commitRows
        self.maxQueuedRows = maxQueuedRows
        self.maxDelay = maxDelay
        self.writer = writer
    }

    /// Queues a batch; suspends while too many records wait.
    /// - Throws: the error of an earlier transaction (nothing more is written after a failure).
    func enqueue(_ batch: Batch) async throws(StoreError) {
        guard !batch.records.isEmpty else { return }
        while true {
            let state = condition.withLock { () -> (mustWait: Bool, failure: StoreError?) in
                if let failure { return (false, failure) }
                if queuedRows >= maxQueuedRows { return (true, nil) }
                startThreadIfNeeded()
                queued.append(batch)
                queuedRows += batch.records.count
                enqueuedBatches += 1
                if oldestQueued == nil { oldestQueued = Date() }
                condition.broadcast()
                return (false, nil)
            }
            if let failure = state.failure { throw failure }
            guard state.mustWait else { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = condition.withLock { () -> Bool in
                    if failure != nil || queuedRows < maxQueuedRows || isClosing { return true }
                    spaceWaiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Waits until every batch queued so far is committed.
    /// - Throws: the error of a failed transaction.
    func flush() throws(StoreError) {
        condition.lock()
        defer { condition.unlock() }
        let target = enqueuedBatches
        if committedBatches < target && failure == nil {
            flushRequested = true
            condition.broadcast()
            while committedBatches < target && failure == nil { condition.wait() }
        }
        if let failure { throw failure }
    }

    /// Writes what is queued and stops the thread.
    func close() {
        condition.lock()
        isClosing = true
        condition.broadcast()
        while threadStarted && !threadFinished { condition.wait() }
        condition.unlock()
    }

    private func startThreadIfNeeded() {
        guard !threadStarted else { return }
        threadStarted = true
        let thread = Thread { [self] in run() }
        thread.name = "bookpipe.store.writer"
        thread.start()
    }

    private func run() {
        condition.lock()
        while true {
            while failure == nil && !isDue() && !(isClosing && queued.isEmpty) {
                if let oldest = oldestQueued {
                    _ = condition.wait(until: oldest.addingTimeInterval(maxDelay))
                } else {
                    condition.wait()
                }
            }
            if failure != nil || queued.isEmpty { break }
            let batches = queued
            queued = []
            queuedRows = 0
            oldestQueued = nil
            let waiters = spaceWaiters
            spaceWaiters = []
            condition.unlock()
            for waiter in waiters { waiter.resume() }
            var error: StoreError?
            do {
                try writer(batches)
            } catch let caught {
                error = caught
            }
            condition.lock()
            committedBatches += batches.count
            if let error { failure = error }
            if committedBatches >= enqueuedBatches { flushRequested = false }
            condition.broadcast()
        }
        threadFinished = true
        let waiters = spaceWaiters
        spaceWaiters = []
        condition.broadcast()
        condition.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// True when queued records should be written now.
    private func isDue() -> Bool {
        guard !queued.isEmpty else { return false }
        if queuedRows >= commitRows || flushRequested || isClosing { return true }
        if let oldest = oldestQueued, Date().timeIntervalSince(oldest) >= maxDelay { return true }
        return false
    }
}

extension LibraryStore {
    /// Queues records for insertion and returns once they are queued (suspending while the
    /// writer is behind). A thread of the store writes them in transactions of several thousand
    /// records, so SQLite works while the caller prepares the next batch. Inserts are idempotent
    /// like ``insert(_:runID:)``.
    ///
    /// Queued records are committed by ``flushQueuedInserts()`` or ``finishBulkInsert()``, within
    /// a quarter of a second when no more records come, and before any other method of the store
    /// reads or writes records. A process killed before that loses them, and the same import
    /// stores them again when it is rerun.
    /// - Throws: ``StoreError`` when an earlier transaction of the queue failed.
    public func enqueueInsert(_ records: [BookRecord], runID: Int64? = nil) async throws(StoreError) {
        for encoded in RecordEncoder.encode(records) {
            try await insertQueue.enqueue((encoded, runID))
        }
    }

    /// Waits until every record queued with ``enqueueInsert(_:runID:)`` is committed.
    /// - Throws: ``StoreError`` when one of their transactions failed.
    public func flushQueuedInserts() throws(StoreError) {
        try insertQueue.flush()
    }

    /// Gets the library ready for a large import of about `expectedRows` new records: when they
    /// are many compared with the records already stored, the ISBN and title-key indexes of
    /// `records` are dropped, to be built again by ``finishBulkInsert()``. Building an index once
    /// over a million rows takes a fraction of the time of updating it a million times in random
    /// order.
    ///
    /// The library notes which process dropped them; if that process dies first (`kill -9`), the
    /// next ``LibraryStore`` opened on the file builds them again.
    /// - Throws: ``StoreError`` when the library cannot be written.
    public func prepareForBulkInsert(expectedRows: Int) throws(StoreError) {
        guard expectedRows >= Self.bulkInsertThreshold, !deferredIndexes.withLock({ $0 }) else { return }
        let pid = String(getpid())
        let deferred = try write("bulk insert") { db -> Bool in
            if let owner = try String.fetchOne(db, sql: "SELECT value FROM library_state WHERE name = 'deferred-indexes'"),
               owner == pid || Self.isProcessAlive(owner) {
                return false  // another import of this process or of a live one is on it
            }
            let existing = try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
            guard existing <= 4 * expectedRows else { return false }
            for index in Schema.deferrableRecordIndexes {
                try db.execute(sql: "DROP INDEX IF EXISTS \(index.name)")
            }
            try db.execute(sql: "INSERT OR REPLACE INTO library_state (name, value) VALUES ('deferred-indexes', ?)",
                           arguments: [pid])
            return true
        }
        if deferred { deferredIndexes.withLock { $0 = true } }
    }

    /// Commits every queued record and, if ``prepareForBulkInsert(expectedRows:)`` dropped the
    /// secondary indexes, builds them again. Safe to call any number of times.
    /// - Throws: ``StoreError`` when a write fails.
    public func finishBulkInsert() throws(StoreError) {
        try flushQueuedInserts()
        guard deferredIndexes.withLock({ $0 }) else { return }
        try buildRecordIndexes()
        deferredIndexes.withLock { $0 = false }
    }

    /// Imports expecting fewer rows than this keep the indexes up to date row by row.
    static let bulkInsertThreshold = 10_000

    /// Builds missing record indexes (sorting on two threads) and clears the deferral note.
    func buildRecordIndexes() throws(StoreError) {
        do {
            try pool.writeWithoutTransaction { db in
                // SQLite sorts index entries in chunks of cache_size; with a helper thread, two
                // chunks are sorted at a time.
                let helpers = max(0, min(3, ProcessInfo.processInfo.activeProcessorCount - 1))
                try db.execute(sql: "PRAGMA threads = \(helpers); PRAGMA cache_size = -4000")
                defer { try? db.execute(sql: "PRAGMA threads = 0; PRAGMA cache_size = -2000") }
                try db.inTransaction {
                    for index in Schema.deferrableRecordIndexes {
                        try db.execute(sql: index.sql)
                    }
                    try db.execute(sql: "DELETE FROM library_state WHERE name = 'deferred-indexes'")
                    return .commit
                }
            }
        } catch {
            throw StoreError.writeFailed(path: path, what: "record indexes", reason: Self.reason(error))
        }
    }

    /// Builds the record indexes when an import dropped them and died (or they are missing).
    func recoverRecordIndexes() throws(StoreError) {
        let needed = try read("record indexes") { db -> Bool in
            let present = try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records'"))
            if Schema.deferrableRecordIndexes.allSatisfy({ present.contains($0.name) }) {
                return try String.fetchOne(db, sql: "SELECT value FROM library_state WHERE name = 'deferred-indexes'") != nil
            }
            if let owner = try String.fetchOne(db, sql: "SELECT value FROM library_state WHERE name = 'deferred-indexes'"),
               Self.isProcessAlive(owner) {
                return false  // an import is running and will build them
            }
            return true
        }
        if needed { try buildRecordIndexes() }
    }

    /// True when a process with this id (as text) exists on this machine.
    static func isProcessAlive(_ pid: String) -> Bool {
        guard let number = Int32(pid), number > 0 else { return false }
        return kill(number, 0) == 0 || errno == EPERM
    }
}
