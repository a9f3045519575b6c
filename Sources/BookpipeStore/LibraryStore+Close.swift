import Foundation
import GRDB

extension LibraryStore {
    /// Finishes a command's work with the library, so that the library file alone holds it:
    /// waits until every submitted write is committed, copies the write-ahead log into the file and
    /// empties it (`PRAGMA wal_checkpoint(TRUNCATE)`, synced), then closes the library's connections
    /// (SQLite removes the `-wal` and `-shm` files when no other connection has the library open).
    /// After this returns, copying `library.sqlite` alone copies the whole library.
    ///
    /// Another process using the library at the same moment (an export reading it, a second run
    /// writing it) never makes this fail: the checkpoint waits for it at most
    /// ``closeCheckpointWait``, then is a best effort — it copies every change no reader still
    /// needs, and the rest stays in the `-wal` until the last writing command closes. A store opened
    /// for reading only closes without a checkpoint (it cannot write).
    ///
    /// Every use of the store after `close()` fails with ``StoreError``. Calling it twice is harmless.
    /// Cancellation is not checked: the writes already submitted are finished either way.
    /// - Throws: ``StoreError`` when one of the submitted writes failed (it was rolled back), as
    ///   ``flushWrites()`` does; the connections are closed all the same.
    public func close() async throws(StoreError) {
        var failure: StoreError?
        do {
            try await flushWrites()
        } catch {
            failure = error
        }
        if !pool.configuration.readonly {
            let hadUnsyncedCommits = unsyncedBulkInsert.withLock { $0 }
            let wait = Int(Self.closeCheckpointWait.components.seconds * 1000)
            _ = try? await pool.writeWithoutTransaction { db in
                // Commits of a bulk insert that never finished were not synced: the checkpoint syncs.
                if hadUnsyncedCommits { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                try db.execute(sql: "PRAGMA busy_timeout = \(wait)")
                // Busy (another process reads an older snapshot or writes): SQLite has then copied
                // what it could, as a passive checkpoint does, and the -wal keeps the rest.
                _ = try? db.checkpoint(.truncate)
            }
            unsyncedBulkInsert.withLock { $0 = false }
            bulkWriteback.end()
        }
        // Fails only while a statement is still open somewhere; the connections then close when the
        // store is released, and the log is empty either way. Once closed, the checkpoint above
        // fails at once (a second close does nothing).
        // Readers first (GRDB's close() closes the writer first): the writer, closing last, is the
        // connection that lets SQLite remove the -wal and -shm; a read-only connection cannot.
        pool.releaseMemory()
        try? pool.close()
        if let failure { throw failure }
    }

    /// How long ``close()`` waits for another process's readers or writer before it settles for a
    /// best-effort checkpoint (1 s).
    public static let closeCheckpointWait = Duration.seconds(1)
}

extension LibraryStore {
    /// Deletes the library file at `path` when it holds no record and no rejected row and no
    /// other connection has it open — what a first import that failed and stored nothing does,
    /// so that it leaves no empty library behind. Call it after ``close()``.
    ///
    /// It never deletes a `-wal` itself: it first turns the library's write-ahead log off
    /// (`PRAGMA journal_mode = DELETE`), which SQLite does only for the library's one connection,
    /// copying the log into the file and removing it; then, holding the file's exclusive lock,
    /// it checks that nothing is stored and removes the file. A library another process has open
    /// (a second import of the same new file), or one that holds anything, is left as it is.
    /// - Returns: true when the file was removed.
    @discardableResult
    public static func removeIfEmpty(path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        guard let queue = try? DatabaseQueue(path: path) else { return false }
        defer { try? queue.close() }
        let removed = (try? queue.writeWithoutTransaction { db -> Bool in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")
            guard mode?.lowercased() == "delete" else { return false }
            try db.execute(sql: "BEGIN EXCLUSIVE")
            defer { try? db.execute(sql: "ROLLBACK") }
            let holdsSomething = try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM records) OR EXISTS (SELECT 1 FROM rejected_rows)
                """) ?? true
            if holdsSomething { return false }
            return unlink(path) == 0
        }) ?? false
        if !removed { _ = try? queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") } }
        return removed
    }
}
