import BookpipeCore
import BookpipeLibrary
import Foundation
import GRDB
import Synchronization
#if os(Linux)
import CLinuxFileIO
#endif

/// The library's one writer for pipelines: work submitted by sinks (record inserts, rejected rows,
/// input registrations, updates) is committed **in submission order** on GRDB's writer queue — a
/// thread of its own — behind an async interface. No caller ever blocks a thread: submitting
/// suspends only while too many records wait (back-pressure), and waiting for a commit suspends
/// on a continuation.
///
/// Transactions: when the writer is idle, everything waiting goes into one transaction as soon as
/// ``commitRows`` records wait, or somebody waits for a commit (``committed(_:)``, and every write
/// other than record inserts, which its caller waits for). So a large import commits thousands of
/// records at a time (SQLite works while the pipeline prepares the next batches) and leaves the
/// database free between transactions for other processes (an export, a second import), while a
/// small one commits when its sink asks.
///
/// What is committed, and when (the contract sinks rely on):
/// - a submitted job is in the library once ``committed(_:)`` for its ticket returns, and not
///   before; every job submitted before it is committed too (order is kept);
/// - each transaction is atomic: a process killed at any instant leaves whole transactions or
///   nothing of them; inserts are idempotent, so a rerun stores what is missing exactly once;
/// - after a failed transaction (rolled back) nothing more is written and every waiter gets the
///   error.
final class LibraryWriter: Sendable {
    enum Job: Sendable {
        case records(EncodedRecords, runID: Int64?)
        case work(@Sendable (Database) throws -> Void)

        var rows: Int {
            if case .records(let records, _) = self { return records.count }
            return 0
        }
    }

    private struct State {
        var pending: [Job] = []
        var pendingRows = 0
        var isWriting = false
        var submitted = 0
        var committed = 0
        var failure: StoreError?
        var spaceWaiters: [CheckedContinuation<Void, Never>] = []
        var commitWaiters: [(target: Int, continuation: CheckedContinuation<StoreError?, Never>)] = []
    }

    /// Records that make a transaction worth starting without anybody waiting.
    let commitRows: Int
    /// Records that may wait (beyond the transaction being written) before submitters wait.
    let maxPendingRows: Int
    private let pool: DatabasePool
    private let commit: @Sendable ([Job], Database) throws -> Void
    private let state = Mutex(State())
    /// Fault injection for tests of resuming (``signalAfterCommitsVariables``): the signal the
    /// process sends itself right after this many of its transactions have committed.
    private let signalAfterCommits: (signal: Int32, transactions: Int)?
    /// Transactions committed so far (counted only when ``signalAfterCommits`` is set).
    private let transactionsCommitted = Atomic<Int>(0)

    /// The environment variables that make a process send itself a signal right after its N-th
    /// committed transaction of pipeline writes: SIGKILL (a crash, `kill -9`) or SIGINT (Ctrl-C).
    /// A test of resuming then knows the signal landed between two transactions of the run,
    /// whatever the machine's speed. Not for use outside tests.
    static let signalAfterCommitsVariables: [(name: String, signal: Int32)] = [
        ("BOOKPIPE_TEST_CRASH_AFTER_COMMITS", SIGKILL), ("BOOKPIPE_TEST_INTERRUPT_AFTER_COMMITS", SIGINT),
    ]

    init(pool: DatabasePool, commitRows: Int = 8192, maxPendingRows: Int = 16_384,
         commit: @escaping @Sendable ([Job], Database) throws -> Void) {
        self.pool = pool
        self.commitRows = commitRows
        self.maxPendingRows = maxPendingRows
        self.commit = commit
        let environment = ProcessInfo.processInfo.environment
        signalAfterCommits = Self.signalAfterCommitsVariables.lazy.compactMap { variable in
            environment[variable.name].flatMap(Int.init).map { (variable.signal, $0) }
        }.first
    }

    /// Queues a job; suspends while too many records wait.
    /// - Returns: the job's ticket, for ``committed(_:)``.
    /// - Throws: the error of an earlier transaction (nothing more is written after a failure).
    func submit(_ job: Job) async throws(StoreError) -> Int {
        while true {
            enum Action { case queued(Int, start: [Job]?), wait, failed(StoreError) }
            let action = state.withLock { state -> Action in
                if let failure = state.failure { return .failed(failure) }
                if state.pendingRows >= maxPendingRows && job.rows > 0 { return .wait }
                state.pending.append(job)
                state.pendingRows += job.rows
                state.submitted += 1
                return .queued(state.submitted, start: takeWork(&state))
            }
            switch action {
            case .failed(let failure):
                throw failure
            case .queued(let ticket, let work):
                if let work { write(work) }
                return ticket
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        if state.failure != nil || state.pendingRows < maxPendingRows { return true }
                        state.spaceWaiters.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    /// Waits until the job with this ticket (and every job before it) is committed. Does not
    /// check for cancellation: the job is in the writer's hands either way, and a sink ending a
    /// cancelled run waits here for what it submitted.
    /// - Throws: the error of a failed transaction.
    func committed(_ ticket: Int) async throws(StoreError) {
        let failure = await withCheckedContinuation { (continuation: CheckedContinuation<StoreError?, Never>) in
            let (resume, work) = state.withLock { state -> (StoreError??, [Job]?) in
                if let failure = state.failure { return (.some(failure), nil) }
                if state.committed >= ticket { return (.some(nil), nil) }
                state.commitWaiters.append((ticket, continuation))
                return (nil, takeWork(&state))
            }
            if let resume { continuation.resume(returning: resume) }
            if let work { write(work) }
        }
        if let failure { throw failure }
    }

    /// True when the job with this ticket is committed (never waits).
    func isCommitted(_ ticket: Int) -> Bool {
        state.withLock { $0.committed >= ticket }
    }

    /// The ticket of the last job submitted (0 when none).
    var lastTicket: Int { state.withLock { $0.submitted } }

    /// Takes the waiting work when the writer is idle and a transaction is due: enough records
    /// wait, somebody waits for a commit, or a write other than an insert waits.
    private func takeWork(_ state: inout State) -> [Job]? {
        guard !state.isWriting, !state.pending.isEmpty, state.failure == nil else { return nil }
        let isDue = state.pendingRows >= commitRows || !state.commitWaiters.isEmpty
            || state.pending.contains { if case .work = $0 { return true } else { return false } }
        guard isDue else { return nil }
        state.isWriting = true
        defer {
            state.pending = []
            state.pendingRows = 0
        }
        return state.pending
    }

    private func write(_ jobs: [Job]) {
        let commit = self.commit
        pool.asyncWrite({ db in try commit(jobs, db) }, completion: { [self] _, result in
            var error: StoreError?
            if case .failure(let failure) = result {
                error = failure as? StoreError
                    ?? StoreError.writeFailed(path: pool.path, what: "records", reason: LibraryStore.reason(failure))
            } else if let signalAfterCommits,
                      transactionsCommitted.add(1, ordering: .relaxed).newValue == signalAfterCommits.transactions {
                kill(getpid(), signalAfterCommits.signal)
            }
            finished(jobs.count, error: error)
        })
    }

    private func finished(_ count: Int, error: StoreError?) {
        let (next, spaceWaiters, commitWaiters) = state.withLock { state in
            state.isWriting = false
            state.committed += count
            if let error, state.failure == nil { state.failure = error }
            let spaceWaiters = state.spaceWaiters
            state.spaceWaiters = []
            var ready: [(CheckedContinuation<StoreError?, Never>, StoreError?)] = []
            state.commitWaiters.removeAll { waiter in
                if let failure = state.failure {
                    ready.append((waiter.continuation, failure))
                    return true
                }
                if waiter.target <= state.committed {
                    ready.append((waiter.continuation, nil))
                    return true
                }
                return false
            }
            return (takeWork(&state), spaceWaiters, ready)
        }
        for waiter in spaceWaiters { waiter.resume() }
        for (continuation, failure) in commitWaiters { continuation.resume(returning: failure) }
        if let next { write(next) }
    }
}

extension LibraryStore {
    /// Queues new records for insertion by the library's writer and returns once they are
    /// queued (suspending while the writer is behind). They are committed in order with every
    /// other submitted write, idempotently like ``insert(_:runID:)``: a record whose id is stored
    /// already is left as it is. Use ``committed(_:)`` with the returned ticket to wait for them.
    /// - Returns: the ticket of the last queued part.
    /// - Throws: ``StoreError`` when an earlier transaction of the writer failed.
    public func submitInsert(_ records: [BookRecord], runID: Int64? = nil) async throws(StoreError) -> WriteTicket {
        var ticket = WriteTicket(value: writer.lastTicket)
        for encoded in RecordEncoder.encode(records) {
            ticket = WriteTicket(value: try await writer.submit(.records(encoded, runID: runID)))
        }
        return ticket
    }

    /// Queues a write for the library's writer, in order with every other submitted write.
    /// - Returns: the write's ticket.
    /// - Throws: ``StoreError`` when an earlier transaction failed.
    func submit(_ work: @escaping @Sendable (Database) throws -> Void) async throws(StoreError) -> WriteTicket {
        WriteTicket(value: try await writer.submit(.work(work)))
    }

    /// Runs a write through the library's writer, in order after everything submitted before it,
    /// and returns once it is committed.
    /// - Throws: ``StoreError`` when the write (or an earlier one) failed.
    func perform<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        let result = Mutex<T?>(nil)
        let ticket = try await submit { db in
            let value = try body(db)
            result.withLock { $0 = value }
        }
        try await committed(ticket)
        guard let value = result.withLock({ $0 }) else {
            throw StoreError.writeFailed(path: path, what: what, reason: "the write did not run")
        }
        return value
    }

    /// Waits until the write with this ticket, and every write submitted before it, is committed.
    /// Does not check for cancellation (see ``LibraryWriter``).
    /// - Throws: ``StoreError`` when one of their transactions failed (it was rolled back).
    public func committed(_ ticket: WriteTicket) async throws(StoreError) {
        try await writer.committed(ticket.value)
    }

    /// True when the write with this ticket is committed; never waits.
    public func isCommitted(_ ticket: WriteTicket) -> Bool {
        writer.isCommitted(ticket.value)
    }

    /// Waits until everything submitted so far is committed.
    /// - Throws: ``StoreError`` when a transaction failed.
    public func flushWrites() async throws(StoreError) {
        try await writer.committed(writer.lastTicket)
    }

    /// Gets a library that holds no record yet ready for a large import of about `expectedRows`
    /// records: until ``finishBulkInsert()``, commits are not synced to the disk
    /// (`PRAGMA synchronous = OFF`). Measured on a million rows, SQLite then needs a fifth less
    /// CPU time and a third less wall time for the inserts.
    ///
    /// Foreign keys are not checked until then either (`PRAGMA foreign_keys = OFF`): every
    /// record names its origin and its run, and checking them cost two more cursors and B-tree
    /// seeks per row (an eighth of SQLite's part of a first import) for parents the same writer
    /// made — `insertEncoded` gets the origin ids from the rows it inserts into `record_origins`
    /// in the same transaction, and the run is registered before the import's first batch. No table of the library deletes or updates through a foreign key
    /// (no `ON DELETE` or `ON UPDATE` actions), so no write changes what it does.
    ///
    /// What this risks, and why only an empty library does it: a killed process (`kill -9`,
    /// Ctrl-C, a crash) loses nothing either way, because its writes are in the operating
    /// system's hands; a power cut or an operating system crash during the import may leave the
    /// file damaged, and then only this import's rows are in it, so importing again into a new
    /// file recovers everything. A library that already holds records keeps synchronous commits.
    /// Does nothing for imports smaller than ``bulkInsertThreshold`` rows.
    /// - Throws: ``StoreError`` when the library cannot be read or configured.
    public func prepareForBulkInsert(expectedRows: Int) async throws(StoreError) {
        guard expectedRows >= Self.bulkInsertThreshold else { return }
        let isEmpty = try await perform("bulk insert") { db in
            try Int64.fetchOne(db, sql: "SELECT key FROM records LIMIT 1") == nil
        }
        guard isEmpty else { return }
        do {
            // The setting belongs to the writer connection, which the writer writes with; SQLite
            // refuses to change it inside a transaction, so it goes outside the writer's queue
            // order — which is harmless: only the durability and the checks of later commits change.
            try await outsideTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF; PRAGMA foreign_keys = OFF") }
        } catch {
            throw StoreError.writeFailed(path: path, what: "bulk insert settings", reason: Self.reason(error))
        }
        unsyncedBulkInsert.withLock { $0 = true }
        bulkWriteback.begin(path: path)
    }

    /// Commits everything submitted and, after ``prepareForBulkInsert(expectedRows:)`` turned
    /// synced commits off, turns them on again and checkpoints the write-ahead log with syncs,
    /// so everything imported is on the disk when this returns. Safe to call any number of times.
    /// - Throws: ``StoreError`` when a write fails.
    public func finishBulkInsert() async throws(StoreError) {
        try await flushWrites()
        guard unsyncedBulkInsert.withLock({ $0 }) else { return }
        bulkWriteback.end()
        do {
            try await outsideTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
                // A full checkpoint waits for readers of other processes (an export during the
                // import) only as long as the busy timeout; when one still holds the log, the
                // passive checkpoint copies what it can and the next checkpoints, synced now, do
                // the rest. Never a reason to fail an import whose rows are all committed.
                do {
                    try db.checkpoint(.full)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                    try db.checkpoint(.passive)
                }
            }
        } catch {
            throw StoreError.writeFailed(path: path, what: "the end of the import", reason: Self.reason(error))
        }
        unsyncedBulkInsert.withLock { $0 = false }
    }

    /// Runs `body` on the writer connection outside a transaction (settings, checkpoints), after
    /// what the writer is writing; suspends without checking for cancellation.
    private func outsideTransaction(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            pool.asyncWriteWithoutTransaction { db in
                do {
                    try body(db)
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }
        }
        if let result { throw result }
    }

    /// Imports expecting fewer rows than this keep synced commits (they finish in seconds anyway).
    static let bulkInsertThreshold = 10_000
}

/// Gets the operating system writing a bulk import's pages to the disk while the import goes on.
///
/// Bulk commits are not synced (``LibraryStore/prepareForBulkInsert(expectedRows:)``), and the
/// system keeps written pages in memory for up to 30 s, so until the synced checkpoint at the end
/// nothing of a fresh library reached the disk, and that checkpoint waited for all of it: 0.16–0.25 s
/// of a million-row import (420 MB) with both cores idle, against 5–14 ms when the pages were
/// written out during the import (benchmarks/import/README.md, item 32). Before each transaction the writer asks Linux to start writing the
/// library file's changed pages (`sync_file_range(SYNC_FILE_RANGE_WRITE)`), which does not wait
/// for the disk. It only starts writes the system would make anyway: durability still comes from
/// the synced checkpoint, and where the call is missing (not Linux) or fails, nothing changes.
final class BulkWriteback: Sendable {
    /// True where the system has `sync_file_range` (Linux).
    private static var isAvailable: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    /// A read-only descriptor of the library file while a bulk import runs, else -1.
    private let descriptor = Mutex<Int32>(-1)

    /// Starts asking for write-out of the file at `path` (a bulk import begins).
    func begin(path: String) {
        guard Self.isAvailable else { return }
        let opened = open(path, O_RDONLY | O_CLOEXEC)
        guard opened >= 0 else { return }
        let earlier = descriptor.withLock { descriptor in
            defer { descriptor = opened }
            return descriptor
        }
        if earlier >= 0 { close(earlier) }
    }

    /// Asks the system to start writing the file's changed pages; returns at once.
    func startWriting() {
        #if os(Linux)
        descriptor.withLock { descriptor in
            if descriptor >= 0 { _ = sync_file_range(descriptor, 0, 0, BOOKPIPE_SYNC_FILE_RANGE_WRITE) }
        }
        #endif
    }

    /// Stops (the bulk import ends).
    func end() {
        let earlier = descriptor.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
        if earlier >= 0 { close(earlier) }
    }

    deinit { end() }
}
