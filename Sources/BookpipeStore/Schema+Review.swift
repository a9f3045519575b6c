import GRDB

extension Schema {
    /// v7 (review queue, issue 12): the log of review actions, per-field edits (provenance and edit
    /// locks) and the managed photo copies waiting to be deleted. New tables, so the import's insert
    /// path and the record columns stay as they are. The queue's partial index is not made here:
    /// any index on `records` costs every insert of a large import (measured: 3 % of a million-row
    /// import, empty as it is), so it is made on first use of the queue
    /// (``LibraryStore/ensureReviewQueueIndex()``), by libraries that have one.
    static func registerReviewMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v7: review queue, review actions, record edits, photo deletions") { db in
            try db.execute(sql: """
                CREATE TABLE review_actions (
                    id INTEGER PRIMARY KEY,
                    key INTEGER NOT NULL,            -- records.key
                    action TEXT NOT NULL,            -- verify, edit, choose, choose-none
                    before TEXT NOT NULL,            -- JSON: the reviewed fields before
                    after TEXT NOT NULL,             -- JSON: the reviewed fields after
                    acted_at REAL NOT NULL           -- seconds since 1970
                );
                CREATE INDEX review_actions_key ON review_actions(key);
                CREATE TABLE record_edits (
                    key INTEGER NOT NULL,            -- records.key
                    field TEXT NOT NULL,             -- title, authors, match
                    value TEXT,                      -- JSON: what the person gave
                    locked INTEGER NOT NULL,         -- 1: enrichment never overwrites the field
                    edited_by TEXT NOT NULL,         -- who supplied it: 'person'
                    edited_at REAL NOT NULL,         -- seconds since 1970
                    PRIMARY KEY (key, field)
                ) WITHOUT ROWID;
                CREATE TABLE photo_deletions (
                    name TEXT PRIMARY KEY,           -- a managed copy whose detections are all reviewed
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT                  -- why the last delete failed; retried at the next run
                ) WITHOUT ROWID;
                """)
        }
    }

    /// v16 (issue 26, `review serve`): undo. Each review action keeps what its decision changed
    /// (`restore`: the record's stored columns, locks and field edits before, the change-log rows it
    /// wrote, the version it left) and when it was undone; an undo is logged as its own action.
    static func registerReviewDecisionMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v16: review decisions") { db in
            try db.execute(sql: """
                ALTER TABLE review_actions ADD COLUMN restore TEXT;     -- JSON ReviewRestore; NULL: not undoable
                ALTER TABLE review_actions ADD COLUMN undone_at REAL;  -- seconds since 1970; NULL: stands
                """)
        }
    }
}
