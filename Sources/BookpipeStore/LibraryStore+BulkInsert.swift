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
    /// Queued records are committed by ``flushQueuedInserts()``, within
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

    /// Gets a library that holds no record yet ready for a large import of about `expectedRows`
    /// records: until ``finishBulkInsert()``, commits are not synced to the disk
    /// (`PRAGMA synchronous = OFF`). Measured on a million rows, SQLite then needs a fifth less
    /// CPU time and a third less wall time for the inserts.
    ///
    /// What this risks, and why only an empty library does it: a killed process (`kill -9`,
    /// Ctrl-C, a crash) loses nothing either way, because its writes are in the operating
    /// system's hands; a power cut or an operating system crash during the import may leave the
    /// file damaged, and then only this import's rows are in it, so importing again into a new
    /// file recovers everything. A library that already holds records keeps synchronous commits.
    /// Does nothing for imports smaller than ``bulkInsertThreshold`` rows.
    /// - Throws: ``StoreError`` when the library cannot be read or configured.
    public func prepareForBulkInsert(expectedRows: Int) throws(StoreError) {
        guard expectedRows >= Self.bulkInsertThreshold else { return }
        let isEmpty = try write("bulk insert") { db in
            try Int64.fetchOne(db, sql: "SELECT key FROM records LIMIT 1") == nil
        }
        guard isEmpty else { return }
        do {
            // The setting belongs to the writer connection, which the insert queue writes with.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        } catch {
            throw StoreError.writeFailed(path: path, what: "bulk insert settings", reason: Self.reason(error))
        }
        unsyncedBulkInsert.withLock { $0 = true }
    }

    /// Commits every queued record and, after ``prepareForBulkInsert(expectedRows:)`` turned
    /// synced commits off, turns them on again and checkpoints the write-ahead log with syncs,
    /// so everything imported is on the disk when this returns. Safe to call any number of times.
    /// - Throws: ``StoreError`` when a write fails.
    public func finishBulkInsert() throws(StoreError) {
        try flushQueuedInserts()
        guard unsyncedBulkInsert.withLock({ $0 }) else { return }
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                try db.checkpoint(.full)
            }
        } catch {
            throw StoreError.writeFailed(path: path, what: "the end of the import", reason: Self.reason(error))
        }
        unsyncedBulkInsert.withLock { $0 = false }
    }

    /// Imports expecting fewer rows than this keep synced commits (they finish in seconds anyway).
    static let bulkInsertThreshold = 10_000
}
