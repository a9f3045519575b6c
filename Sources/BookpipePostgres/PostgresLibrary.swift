import BookpipeCore
import BookpipeLibrary
import Foundation
import Synchronization

/// A library in a PostgreSQL database: the library contract's second engine (issue 28,
/// docs/decisions/0025), for several bookpipe processes on several machines sharing one library.
///
/// One handle holds one libpq connection behind a lock; every call runs its statements, in one
/// transaction when it writes, while holding it (libpq is blocking: a call occupies its thread for
/// the round trips). Open one handle per worker. The product's rules come from BookpipeLibrary
/// (``ReviewRules``, ``ReenrichmentRules``, ``RemovalRules``); this type only stores. Claims take
/// their leases on the server's clock (`now() + lease`), so a worker whose clock is wrong still
/// holds and loses its leases at the right time.
///
/// ```swift
/// let library = try PostgresLibrary(url: "postgres://bookpipe@db.example/library")
/// ```
///
/// `@unchecked Sendable`: `lock` guards `connection` (a libpq handle is used by one thread at a
/// time); every use of it is inside ``withConnection(_:reading:_:)``, which holds the lock. The
/// other state (`pendingPhotos`) is in a `Mutex`.
public final class PostgresLibrary: Library, @unchecked Sendable {
    /// Where the library is: the URL or conninfo as given, without its password.
    public let location: String
    /// The connection; only used while holding `lock`.
    private let connection: PostgresConnection
    /// Guards `connection`.
    private let lock = NSLock()
    /// Scan photo copies taken in and not yet written: by name, the bytes to store. Each is written
    /// in the transaction that inserts the records naming it (``submitInsert(_:runID:)``), then
    /// dropped from here.
    let pendingPhotos = Mutex<[String: [UInt8]]>([:])
    /// Where each run's last batch claim stopped in its selection's order, by owner and selection
    /// (``ClaimCursor``): the next claim walks on from there.
    let claimCursors = Mutex<[String: ClaimCursor]>([:])

    /// Opens the library at `url` (a `postgres://` or `postgresql://` URL, or libpq's
    /// `key=value` conninfo) and brings its schema up to date.
    /// - Throws: ``StoreError/cannotOpen(path:reason:)`` with one line for a server that does not
    ///   answer, a refused password, a missing database or a server too old;
    ///   ``StoreError/migrationFailed(path:reason:)`` when the schema cannot be updated.
    public init(url: String) throws(StoreError) {
        location = Self.redacted(url)
        let connection = try PostgresConnection(conninfo: url, location: location)
        try Self.migrate(connection)
        self.connection = connection
    }

    /// True when `text` names a PostgreSQL library rather than a SQLite file.
    public static func isLibraryURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The URL with any password replaced by `***` (for messages).
    static func redacted(_ url: String) -> String {
        if isLibraryURL(url), let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://"),
           let colon = url[scheme.upperBound..<at].firstIndex(of: ":") {
            return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
        }
        return url.replacingOccurrences(of: #"password\s*=\s*\S+"#, with: "password=***", options: .regularExpression)
    }

    /// Applies the migrations this library has not had, each in its own transaction with its
    /// `schema_migrations` row, under an advisory lock.
    private static func migrate(_ connection: PostgresConnection) throws(StoreError) {
        do {
            for migration in PostgresSchema.migrations {
                try connection.transaction("migration \(migration.version)") {
                    // Under the lock, so two processes opening a new library never create it both.
                    try connection.execute("SELECT pg_advisory_xact_lock($1)", [String(PostgresSchema.migrationLock)],
                                           what: "the migration lock")
                    try connection.execute("""
                        CREATE TABLE IF NOT EXISTS schema_migrations (
                            version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                        """, what: "the schema's version table")
                    let applied = try connection.execute("SELECT 1 FROM schema_migrations WHERE version = $1",
                                                         [String(migration.version)], what: "the schema's version")
                    guard applied.rows.isEmpty else { return }
                    try connection.execute(migration.sql, what: "migration \(migration.version)")
                    try connection.execute("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                           [String(migration.version), migration.name], what: "the schema's version")
                }
            }
            let newest = try connection.execute("SELECT max(version) FROM schema_migrations", what: "the schema's version",
                                                reading: true).scalar.flatMap { Int($0) } ?? 0
            if let known = PostgresSchema.migrations.last?.version, newest > known {
                throw StoreError.migrationFailed(path: connection.location, reason:
                    "the library's schema is version \(newest), newer than this bookpipe knows (\(known)); update bookpipe")
            }
        } catch let error as StoreError {
            switch error {
            case .migrationFailed: throw error
            case .writeFailed(_, let what, let reason), .readFailed(_, let what, let reason):
                throw StoreError.migrationFailed(path: connection.location, reason: "\(what): \(reason)")
            default: throw StoreError.migrationFailed(path: connection.location, reason: "\(error)")
            }
        } catch {
            throw StoreError.migrationFailed(path: connection.location, reason: "\(error)")
        }
    }

    /// Runs `body` with the connection held (no transaction: each statement commits on its own).
    @discardableResult
    func withConnection<T>(_ what: String, reading: Bool = true, _ body: (PostgresConnection) throws -> T)
        throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body(connection)
        } catch let error as StoreError {
            throw error
        } catch {
            throw reading ? StoreError.readFailed(path: location, what: what, reason: "\(error)")
                : StoreError.writeFailed(path: location, what: what, reason: "\(error)")
        }
    }

    /// Runs `body` in one transaction with the connection held: all of it commits, or none.
    @discardableResult
    func transaction<T>(_ what: String, _ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        try withConnection(what, reading: false) { connection in
            try connection.transaction(what) { try body(connection) }
        }
    }

    /// Nothing is pending: every call commits before it returns, and the server keeps the library
    /// whole. The connection closes when the handle is released.
    public func close() async throws(StoreError) {}

    // MARK: - Values as text

    static func text(_ date: Date) -> String { String(date.timeIntervalSince1970) }
    static func date(_ text: String?) -> Date? { text.flatMap(Double.init).map(Date.init(timeIntervalSince1970:)) }
    static func text(_ value: Int?) -> String? { value.map(String.init) }
    static func text(_ value: Int64?) -> String? { value.map(String.init) }
    static func text(_ value: Bool) -> String { value ? "true" : "false" }

    /// A PostgreSQL array literal of text values (for `= ANY($1::text[])`).
    static func array(_ values: [String]) -> String {
        array(values.map(Optional.some))
    }

    /// A PostgreSQL array literal of text values, nil as NULL (for `unnest($1::text[])`).
    /// Built byte by byte: an enrichment batch sends each record's JSON this way, and two passes of
    /// `replacingOccurrences` over every value cost bookpipe more CPU a row than the `COPY` it replaced.
    static func array(_ values: [String?]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let value else {
                bytes += "NULL".utf8
                continue
            }
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ISO 8601 time, as the SQLite engine writes run and completion times.
    static func timestamp(_ date: Date = Date()) -> String {
        Date.ISO8601FormatStyle().format(date)
    }

    func encode<T: Encodable>(_ value: T) throws(StoreError) -> String {
        do {
            return String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        } catch {
            throw StoreError.writeFailed(path: location, what: "a value", reason: "cannot encode it: \(error)")
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ text: String?, what: String) throws(StoreError) -> T {
        guard let text, let value = try? JSONDecoder().decode(type, from: Data(text.utf8)) else {
            throw StoreError.corruptValue(path: location, what: what)
        }
        return value
    }

    /// Splits a record id `<hash>:<row>`.
    static func parse(id: String) -> (hash: String, row: Int)? {
        guard let colon = id.lastIndex(of: ":"), let row = Int(id[id.index(after: colon)...]) else { return nil }
        return (String(id[..<colon]), row)
    }
}
