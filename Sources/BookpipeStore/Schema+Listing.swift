import GRDB

extension Schema {
    /// v14 (issue 22): the listing `bookpipe list` queries, and each record's number.
    ///
    /// Like the search index (v5), the listing is **not** kept by the import's inserts: any index
    /// on `records` more than doubles the cost of each insert (v3), and a query needs several. It is
    /// a table of its own, brought up to date before a listing (``LibraryStore/refreshListing()``):
    /// files whose record count (`record_counts`) differs from the count listed get their new rows
    /// listed; records whose listed fields an update changed are queued by a trigger (only for files
    /// already listed) and listed again. Title and author words are matched through the search
    /// index (`record_search`); every other field through an index of this table.
    ///
    /// `number` is the record's short name (`bookpipe show 12`): given once, in listing order, from
    /// a counter that only grows, so a number is never given to another record, even after removal.
    static func registerListingMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v14: listing") { db in
            try db.execute(sql: """
                CREATE TABLE record_listing (
                    key INTEGER PRIMARY KEY,         -- records.key
                    number INTEGER NOT NULL UNIQUE,  -- the record's number in listings; never reused
                    origin INTEGER NOT NULL,         -- records.origin: the file's path and format
                    title TEXT NOT NULL,             -- folded title (TextFolding.key), for sorting
                    author TEXT,                     -- folded first author, for sorting
                    isbn13 TEXT,
                    year INTEGER,
                    shelf TEXT,                      -- folded shelf
                    status TEXT NOT NULL,
                    review TEXT NOT NULL,            -- review status
                    rating REAL
                );
                CREATE INDEX record_listing_isbn13 ON record_listing(isbn13);
                CREATE INDEX record_listing_year ON record_listing(year);
                CREATE INDEX record_listing_shelf ON record_listing(shelf);
                CREATE INDEX record_listing_status ON record_listing(status);
                CREATE INDEX record_listing_review ON record_listing(review);
                CREATE INDEX record_listing_rating ON record_listing(rating);
                CREATE INDEX record_listing_origin ON record_listing(origin);
                CREATE TABLE record_listing_files (
                    file_id INTEGER PRIMARY KEY,     -- source_files.id
                    listed INTEGER NOT NULL          -- records of the file in record_listing
                );
                CREATE TABLE record_listing_stale (
                    key INTEGER PRIMARY KEY          -- records.key whose listed fields may be out of date
                );
                CREATE TABLE record_numbers (
                    next INTEGER NOT NULL            -- one row: the number the next record listed gets
                );
                INSERT INTO record_numbers (next) VALUES (1);
                CREATE TRIGGER record_listing_stale_on_update
                AFTER UPDATE OF fields, isbn13, status, review_status, origin ON records
                WHEN (new.fields IS NOT old.fields OR new.isbn13 IS NOT old.isbn13 OR new.status IS NOT old.status
                      OR new.review_status IS NOT old.review_status OR new.origin IS NOT old.origin)
                     AND EXISTS (SELECT 1 FROM record_listing_files WHERE file_id = new.key >> 32)
                BEGIN
                    INSERT OR IGNORE INTO record_listing_stale (key) VALUES (new.key);
                END;
                """)
        }
    }
}
