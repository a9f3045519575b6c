import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    // MARK: - Record columns

    /// The columns of `records` written from a record, in ``recordColumnNames`` order after `id`,
    /// `file_id` and `row`.
    static let recordColumnNames = """
        data, status, review_status, entry, list_name, digest, isbn13, work_key, edition_key, title_key, author_key,
        year, shelf_key, rating, search_title, search_authors, search_isbns, photo, run_id, updated_at
        """

    /// The types of the `records` columns an update writes that are not `text`, and of its flags.
    static let recordColumnTypes: [String: String] = [
        "digest": "bigint", "year": "integer", "rating": "float8", "run_id": "bigint", "updated_at": "float8",
        "enriched_at": "float8", "retry_at": "float8", "imported": "boolean", "looked_up": "boolean",
    ]

    /// ' word word ': folded words (``RecordWords``), each between spaces, for prefix matches (`LIKE '% dun%'`).
    static func searchText(_ words: [String]) -> String {
        words.isEmpty ? " " : " " + words.joined(separator: " ") + " "
    }

    /// The values of ``recordColumnNames`` for `record`.
    func recordValues(_ record: BookRecord, runID: Int64?, at time: Date) throws(StoreError) -> [String?] {
        let match = record.enrichment?.match
        let isbns = record.normalized?.allISBN13s ?? []
        return [
            try encode(record), record.status.rawValue, record.reviewStatus.rawValue, record.listEntry,
            record.listEntry.map { String(ListIdentity.list(ofEntry: $0)) },
            record.listEntry == nil ? nil : String(ListIdentity.readDigest(of: record)),
            record.normalized?.isbn13, match?.workKey, match?.editionKey,
            TextFolding.key(record.title), record.authors.first.map(TextFolding.key),
            Self.text(record.year), record.shelf.map(TextFolding.key), record.rating.map { String($0) },
            Self.searchText(RecordWords.title(record)), Self.searchText(RecordWords.authors(record)),
            isbns.isEmpty ? " " : " " + isbns.joined(separator: " ") + " ", record.scan?.photoPath,
            Self.text(runID), Self.text(time),
        ]
    }

    /// `$first, $first+1, …` for `count` parameters.
    static func placeholders(from first: Int, count: Int) -> String {
        (first..<(first + count)).map { "$\($0)" }.joined(separator: ", ")
    }

    /// The id of the file with this hash, registering a bare row for it when unknown.
    static func fileID(hash: String, _ connection: PostgresConnection) throws -> String {
        if let id = try connection.execute("SELECT id FROM source_files WHERE hash = $1", [hash], what: "source file").scalar {
            return id
        }
        try connection.execute("INSERT INTO source_files (hash) VALUES ($1) ON CONFLICT (hash) DO NOTHING", [hash],
                               what: "source file")
        guard let id = try connection.execute("SELECT id FROM source_files WHERE hash = $1", [hash], what: "source file").scalar
        else { throw StoreError.writeFailed(path: connection.location, what: "source file", reason: "not stored") }
        return id
    }

    /// Inserts records; a record whose id is stored already is left as it is (as is a second
    /// record with the same id in `records`: the first wins). The rows go by `COPY` into a
    /// session's staging table (emptied at commit), then into `records` with one
    /// `INSERT … ON CONFLICT (id) DO NOTHING`: two round trips per batch, whatever its size.
    func insert(_ records: [BookRecord], runID: Int64?, _ connection: PostgresConnection) throws {
        guard !records.isEmpty else { return }
        let time = Date()
        var files: [String: String] = [:]
        var rows: [[String?]] = []
        rows.reserveCapacity(records.count)
        for record in records {
            let hash = record.origin.fileHash
            let fileID: String
            if let known = files[hash] { fileID = known } else {
                fileID = try Self.fileID(hash: hash, connection)
                files[hash] = fileID
            }
            rows.append([record.id, fileID, String(record.origin.row)] + (try recordValues(record, runID: runID, at: time)))
        }
        let columns = "id, file_id, row, \(Self.recordColumnNames)"
        try connection.execute("""
            CREATE TEMP TABLE IF NOT EXISTS records_staging (position bigserial, LIKE records INCLUDING DEFAULTS)
            ON COMMIT DELETE ROWS
            """, what: "\(records.count) records")
        try connection.copy("COPY records_staging (\(columns)) FROM STDIN", rows: rows, what: "\(records.count) records")
        try connection.execute("""
            INSERT INTO records (\(columns)) SELECT \(columns) FROM records_staging ORDER BY position
            ON CONFLICT (id) DO NOTHING
            """, what: "\(records.count) records")
        try connection.execute("TRUNCATE records_staging", what: "\(records.count) records")
    }

    /// One record to write over its stored row, with what the write sets beside the record's own columns.
    struct RecordUpdate {
        /// The record, whose columns replace the stored ones.
        var record: BookRecord
        /// An imported update's digest (what the list gave): set, and the record is present again
        /// (`gone_since` cleared). Nil: both are left as stored.
        var importedDigest: Int64? = nil
        /// An enrichment save's times: when the record was looked up, and when a failed lookup is due
        /// again. Nil: both are left as stored.
        var lookedUp: (at: Date, retryAt: Date?)? = nil
    }

    /// Replaces stored records (their listing is out of date until the next refresh). The list
    /// entry is kept when the record names none, and the digest (what the list gave last) is only
    /// changed by an imported update.
    func writeUpdates(_ records: [BookRecord], runID: Int64?, _ connection: PostgresConnection) throws {
        try writeUpdates(records.map { RecordUpdate(record: $0) }, runID: runID, connection)
    }

    /// Replaces stored records as the version over records does, each with
    /// its update's digest or lookup times. One `UPDATE … FROM unnest(…)` writes them all, each
    /// column's values one array parameter: one round trip per batch, not one per record. (A
    /// session's staging table filled by `COPY` took three more statements a batch, and truncating
    /// it at every commit was 3.5 % of the server's CPU in an enrichment run; docs/decisions/0037.)
    /// A record named twice is written twice, in order (a later round), as one statement each would.
    func writeUpdates(_ updates: [RecordUpdate], runID: Int64?, _ connection: PostgresConnection) throws {
        guard !updates.isEmpty else { return }
        let time = Date()
        let columns = Self.recordColumnNames.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let staged = ["id"] + columns + ["enriched_at", "retry_at", "imported", "looked_up"]
        let arrays = staged.enumerated().map { "$\($0.offset + 1)::\(Self.recordColumnTypes[$0.element] ?? "text")[]" }
        var assignments: [String] = []
        for column in columns {
            switch column {
            case "run_id", "entry", "list_name": assignments.append("\(column) = coalesce(s.\(column), r.\(column))")
            case "digest": assignments.append("digest = CASE WHEN s.imported THEN s.digest ELSE r.digest END")
            default: assignments.append("\(column) = s.\(column)")
            }
        }
        assignments += [
            "gone_since = CASE WHEN s.imported THEN NULL ELSE r.gone_since END",
            "enriched_at = CASE WHEN s.looked_up THEN s.enriched_at ELSE r.enriched_at END",
            "retry_at = CASE WHEN s.looked_up THEN s.retry_at ELSE r.retry_at END",
            "listed = false",
        ]
        let digestIndex = columns.firstIndex(of: "digest") ?? 0
        var pending = updates[...]
        while !pending.isEmpty {
            // A round holds each record once: `UPDATE … FROM` writes a row once, whatever the join gives.
            var round: [[String?]] = []
            var named = Set<String>()
            while let update = pending.first, named.insert(update.record.id).inserted {
                pending.removeFirst()
                var values = try recordValues(update.record, runID: runID, at: time)
                values[digestIndex] = update.importedDigest.map { String($0) }
                round.append([update.record.id] + values + [
                    update.lookedUp.map { Self.text($0.at) }, update.lookedUp?.retryAt.map(Self.text),
                    Self.text(update.importedDigest != nil), Self.text(update.lookedUp != nil),
                ])
            }
            let parameters = staged.indices.map { column in Self.array(round.map { $0[column] }) }
            try connection.execute("""
                UPDATE records r SET \(assignments.joined(separator: ", "))
                FROM unnest(\(arrays.joined(separator: ", "))) AS s(\(staged.joined(separator: ", "))) WHERE r.id = s.id
                """, parameters, what: "\(updates.count) records")
        }
    }

    /// Decodes the records of rows whose first column is `data`.
    func records(from rows: [[String?]], column: Int = 0) throws(StoreError) -> [BookRecord] {
        var records: [BookRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows { records.append(try decode(BookRecord.self, row[column], what: "a record")) }
        return records
    }

    // MARK: - Source files

    /// The input file with this content fingerprint, when the library knows it.
    public func sourceFile(hash: String) async throws(StoreError) -> SourceFileInfo? {
        try withConnection("source file") { connection in
            try connection.execute("SELECT \(Self.fileColumns) FROM source_files WHERE hash = $1 AND path IS NOT NULL",
                                   [hash], what: "source file", reading: true).rows.first.map(Self.sourceFileInfo)
        }
    }

    /// Every input file imported, in import order.
    public func sourceFiles() async throws(StoreError) -> [SourceFileInfo] {
        try withConnection("source files") { connection in
            try connection.execute("SELECT \(Self.fileColumns) FROM source_files WHERE path IS NOT NULL ORDER BY id",
                                   what: "source files", reading: true).rows.map(Self.sourceFileInfo)
        }
    }

    static let fileColumns = "hash, path, format, header, encoding, size, rows_total, completed_at, reading"

    static func sourceFileInfo(_ row: [String?]) -> SourceFileInfo {
        SourceFileInfo(hash: row[0] ?? "", path: row[1] ?? "", format: row[2] ?? "", header: JSONText.decodeArray(row[3]),
                       encoding: row[4] ?? "", size: row[5].flatMap { Int($0) } ?? 0, rowsTotal: row[6].flatMap { Int($0) },
                       completedAt: row[7], reading: row[8])
    }

    /// Records an input file (or its new path) before its rows are stored.
    public func registerSourceFile(_ info: SourceFileInfo, runID: Int64?) async throws(StoreError) {
        try withConnection("source file \(info.path)", reading: false) { connection in
            try connection.execute("""
                INSERT INTO source_files (hash, path, format, header, encoding, size, first_run_id, reading)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                ON CONFLICT (hash) DO UPDATE SET path = excluded.path, format = excluded.format,
                    header = excluded.header, encoding = excluded.encoding,
                    size = coalesce(source_files.size, excluded.size),
                    first_run_id = coalesce(source_files.first_run_id, excluded.first_run_id),
                    reading = coalesce(source_files.reading, excluded.reading)
                """, [info.hash, info.path, info.format, JSONText.array(info.header), info.encoding, String(info.size),
                      Self.text(runID), info.reading], what: "source file \(info.path)")
        }
    }

    /// Marks a file complete when every row of it is stored, rejected, removed or matched.
    public func finishSourceFile(hash: String, rowsTotal: Int, reading: String?, matchedRows: Int) async throws(StoreError) -> Bool {
        try transaction("source file completion") { connection in
            let counted = try connection.execute("""
                SELECT (SELECT count(*) FROM records r WHERE r.file_id = f.id)
                     + (SELECT count(*) FROM removed_rows d WHERE d.file_id = f.id)
                     + (SELECT count(*) FROM rejected_rows j WHERE j.file_hash = f.hash AND (j.row IS NULL OR NOT EXISTS
                           (SELECT 1 FROM records r WHERE r.file_id = f.id AND r.row = j.row)))
                FROM source_files f WHERE f.hash = $1
                """, [hash], what: "source file completion").scalar.flatMap { Int($0) }
            let finished = try counted ?? connection.execute("SELECT count(*) FROM rejected_rows WHERE file_hash = $1", [hash],
                                                             what: "source file completion").scalar.flatMap { Int($0) } ?? 0
            let isComplete = finished + matchedRows >= rowsTotal
            try connection.execute("""
                UPDATE source_files SET rows_total = $1,
                    completed_at = CASE WHEN $2::boolean THEN coalesce(completed_at, $3) ELSE NULL END,
                    reading = CASE WHEN $2::boolean AND $4::text IS NOT NULL THEN $4 ELSE reading END
                WHERE hash = $5
                """, [String(rowsTotal), Self.text(isComplete), Self.timestamp(), reading, hash], what: "source file completion")
            return isComplete
        }
    }

    /// The rows of a file already stored, rejected or removed.
    public func finishedRows(fileHash: String) async throws(StoreError) -> RowSet {
        try withConnection("stored rows") { connection in
            var rows = RowSet()
            let result = try connection.execute("""
                SELECT r.row FROM records r JOIN source_files f ON f.id = r.file_id WHERE f.hash = $1
                UNION ALL SELECT d.row FROM removed_rows d JOIN source_files f ON f.id = d.file_id WHERE f.hash = $1
                UNION ALL SELECT row FROM rejected_rows WHERE file_hash = $1 AND row IS NOT NULL
                """, [fileHash], what: "stored rows", reading: true)
            for row in result.rows { if let value = row[0].flatMap({ Int($0) }) { rows.insert(value) } }
            return rows
        }
    }

    // MARK: - Rejected rows

    /// Removes a file's rejected rows.
    public func deleteRejections(fileHash: String) async throws(StoreError) {
        try withConnection("rejected rows", reading: false) { connection in
            try connection.execute("DELETE FROM rejected_rows WHERE file_hash = $1", [fileHash], what: "rejected rows")
        }
    }

    /// Stores rows that could not be read, with the reason.
    public func insertRejections(_ rejections: [RejectedRow], runID: Int64?) async throws(StoreError) {
        guard !rejections.isEmpty else { return }
        try transaction("rejected rows") { connection in
            for rejection in rejections {
                try connection.execute("""
                    INSERT INTO rejected_rows (file_hash, line, row, column_number, file, reason, raw_text, run_id)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    ON CONFLICT (file_hash, line) DO UPDATE SET row = excluded.row, column_number = excluded.column_number,
                        file = excluded.file, reason = excluded.reason, raw_text = excluded.raw_text, run_id = excluded.run_id
                    """, [rejection.fileHash, String(rejection.line), Self.text(rejection.row), Self.text(rejection.column),
                          rejection.file, rejection.reason, rejection.rawText, Self.text(runID)], what: "rejected rows")
            }
        }
    }

    /// Every rejected row, in file, line, column and row order.
    public func rejections() async throws(StoreError) -> [RejectedRow] {
        try withConnection("rejected rows") { connection in
            try connection.execute("""
                SELECT file_hash, file, line, row, column_number, reason, raw_text FROM rejected_rows
                ORDER BY file, line, coalesce(column_number, 0), coalesce(row, 0)
                """, what: "rejected rows", reading: true).rows.map { row in
                RejectedRow(fileHash: row[0] ?? "", file: row[1] ?? "", line: row[2].flatMap { Int($0) } ?? 0,
                            row: row[3].flatMap { Int($0) }, column: row[4].flatMap { Int($0) }, reason: row[5] ?? "",
                            rawText: row[6] ?? "")
            }
        }
    }

    // MARK: - Records

    /// Inserts records at once, in one transaction (there is no write queue: the ticket is already
    /// committed when returned). Inserting a stored id changes nothing.
    public func submitInsert(_ records: [BookRecord], runID: Int64?) async throws(StoreError) -> WriteTicket {
        if !records.isEmpty {
            // The photo copies the detections name commit with them (docs/decisions/0031).
            let written = try transaction("\(records.count) records") { connection in
                try self.insert(records, runID: runID, connection)
                return try self.insertPendingPhotos(namedBy: records, connection)
            }
            if !written.isEmpty { pendingPhotos.withLock { pending in for name in written { pending[name] = nil } } }
        }
        return WriteTicket(value: 0)
    }

    /// Returns at once: every write commits before its call returns.
    public func committed(_ ticket: WriteTicket) async throws(StoreError) {}

    /// Returns at once: every write commits before its call returns.
    public func flushWrites() async throws(StoreError) {}

    /// Nothing to relax: the server's own durability settings apply.
    public func prepareForBulkInsert(expectedRows: Int) async throws(StoreError) {}

    /// Gives `record_queue` statistics after an import: the planner's guess for a table never
    /// analyzed took the claim's walk for a few rows and sorted every candidate instead (26 ms a
    /// claim at 100,000 rows, docs/decisions/0037 "Session 18"); the table is narrow, its ANALYZE
    /// a few tens of milliseconds.
    public func finishBulkInsert() async throws(StoreError) {
        try withConnection("queue statistics", reading: false) { connection in
            try connection.execute("ANALYZE record_queue", what: "queue statistics")
        }
    }

    /// Replaces stored records by id.
    public func update(_ records: [BookRecord], runID: Int64?) async throws(StoreError) {
        guard !records.isEmpty else { return }
        try transaction("\(records.count) records") { connection in try self.writeUpdates(records, runID: runID, connection) }
    }

    /// The records with these ids, in the order given; unknown ids are skipped.
    public func records(ids: [String]) async throws(StoreError) -> [BookRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try withConnection("records") { connection in
            try connection.execute("""
                SELECT r.data FROM unnest($1::text[]) WITH ORDINALITY AS wanted(id, position)
                JOIN records r ON r.id = wanted.id ORDER BY wanted.position
                """, [Self.array(ids)], what: "records", reading: true).rows
        }
        return try records(from: rows)
    }

    /// Calls `body` with every record (of one status, when given) in library order, reading a page
    /// of 1,000 at a time (the connection is not held while `body` runs).
    public func forEachRecord(where status: RecordStatus?, _ body: (BookRecord) throws -> Void) async throws {
        var after: (file: String, row: String) = ("-1", "-1")
        while true {
            let rows = try withConnection("records") { connection in
                try connection.execute("""
                    SELECT data, file_id, row FROM records WHERE (file_id, row) > ($1::bigint, $2::integer)
                        AND ($3::text IS NULL OR status = $3) ORDER BY file_id, row LIMIT 1000
                    """, [after.file, after.row, status?.rawValue], what: "records", reading: true).rows
            }
            for record in try records(from: rows) { try body(record) }
            guard rows.count == 1000, let last = rows.last else { return }
            after = (last[1] ?? "-1", last[2] ?? "-1")
        }
    }

    /// How many records the library holds, by status.
    public func counts() async throws(StoreError) -> LibraryCounts {
        try withConnection("record counts") { connection in
            var counts = LibraryCounts()
            for row in try connection.execute("SELECT status, count(*) FROM record_queue GROUP BY status", what: "record counts",
                                              reading: true).rows {
                if let status = row[0].flatMap(RecordStatus.init(rawValue:)), let n = row[1].flatMap({ Int($0) }) {
                    counts.byStatus[status] = n
                }
            }
            counts.rejected = try connection.execute("SELECT count(*) FROM rejected_rows", what: "record counts",
                                                     reading: true).scalar.flatMap { Int($0) } ?? 0
            return counts
        }
    }

    /// How many records are in one of `statuses` (of these files, when given).
    public func countRecords(statuses: [RecordStatus], fileHashes: [String]?) async throws(StoreError) -> Int {
        guard !statuses.isEmpty, fileHashes?.isEmpty != true else { return 0 }
        return try withConnection("record count") { connection in
            try connection.execute("""
                SELECT count(*) FROM records r JOIN source_files f ON f.id = r.file_id
                WHERE r.status = ANY($1::text[]) AND ($2::text[] IS NULL OR f.hash = ANY($2::text[]))
                """, [Self.array(statuses.map(\.rawValue)), fileHashes.map(Self.array)], what: "record count",
                reading: true).scalar.flatMap { Int($0) } ?? 0
        }
    }

    /// What the library holds, for `bookpipe stats`.
    public func statistics() async throws(StoreError) -> LibraryStatistics {
        let runs = try await runs()
        return try withConnection("statistics") { connection in
            var statistics = LibraryStatistics(runs: runs)
            for row in try connection.execute("""
                SELECT r.status, coalesce(f.format, ''),
                       CASE WHEN r.data NOT LIKE '%"scan":{%' AND r.review_status = 'verified' THEN 'notRouted'
                            ELSE r.review_status END,
                       count(*)
                FROM records r JOIN source_files f ON f.id = r.file_id GROUP BY 1, 2, 3
                """, what: "statistics", reading: true).rows {
                let n = row[3].flatMap { Int($0) } ?? 0
                if let status = row[0].flatMap(RecordStatus.init(rawValue:)) { statistics.byStatus[status, default: 0] += n }
                statistics.byFormat[row[1] ?? "", default: 0] += n
                statistics.byReviewState[row[2] ?? "", default: 0] += n
            }
            statistics.rejected = try connection.execute("SELECT count(*) FROM rejected_rows", what: "statistics",
                                                         reading: true).scalar.flatMap { Int($0) } ?? 0
            for row in try connection.execute("""
                SELECT \(Self.fileColumns), (SELECT count(*) FROM records r WHERE r.file_id = f.id),
                       (SELECT count(*) FROM rejected_rows j WHERE j.file_hash = f.hash)
                FROM source_files f WHERE path IS NOT NULL ORDER BY id
                """, what: "statistics", reading: true).rows {
                var info = Self.sourceFileInfo(row)
                info.header = []
                statistics.files.append(LibraryStatistics.File(info: info, records: row[9].flatMap { Int($0) } ?? 0,
                                                               rejected: row[10].flatMap { Int($0) } ?? 0))
            }
            return statistics
        }
    }

    /// Of some rows of a scan file, those stored as detections that name no managed photo copy.
    public func storedRowsWithoutScanPhoto(fileHash: String, rows: [Int]) async throws(StoreError) -> Set<Int> {
        guard !rows.isEmpty else { return [] }
        return try withConnection("scan rows") { connection in
            Set(try connection.execute("""
                SELECT r.row FROM records r JOIN source_files f ON f.id = r.file_id
                WHERE f.hash = $1 AND r.row = ANY($2::integer[]) AND r.data LIKE '%"scan":{%' AND r.photo IS NULL
                """, [fileHash, "{" + rows.map(String.init).joined(separator: ",") + "}"], what: "scan rows",
                reading: true).rows.compactMap { $0[0].flatMap { Int($0) } })
        }
    }

    /// Removes a scan file's records; returns how many.
    public func discardRecords(fileHash: String) async throws(StoreError) -> Int {
        try transaction("discarded records") { connection in
            try connection.execute("""
                DELETE FROM records r USING source_files f WHERE f.id = r.file_id AND f.hash = $1
                """, [fileHash], what: "discarded records").affected
        }
    }
}
