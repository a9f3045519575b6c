internal import CLibPQ
import BookpipeLibrary
import Foundation

/// One libpq connection: parameterised statements with text parameters and text results,
/// transactions, and failures as ``StoreError``s that say in one line what went wrong.
///
/// Not `Sendable`: a `PGconn` is used by one thread at a time. ``PostgresLibrary`` keeps its
/// connection behind a lock and runs every statement of a call while holding it.
final class PostgresConnection {
    /// The libpq handle (never nil after init).
    private let handle: OpaquePointer
    /// The library as messages name it (the URL without its password).
    let location: String
    /// The server's version (`150018` for 15.18).
    let serverVersion: Int32
    /// The oldest server this engine runs on: `MATERIALIZED` CTEs (the claim query) came in 12.
    static let minimumServerVersion: Int32 = 12_00_00

    /// Connects. `conninfo` is a `postgres://` URL or libpq's `key=value` form.
    /// - Throws: ``StoreError/cannotOpen(path:reason:)`` with one clear line for a server that
    ///   does not answer, a refused password, a missing database or a server too old.
    init(conninfo: String, location: String) throws(StoreError) {
        self.location = location
        guard let handle = PQconnectdb(conninfo) else {
            throw StoreError.cannotOpen(path: location, reason: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.text(PQerrorMessage(handle))
            PQfinish(handle)
            throw StoreError.cannotOpen(path: location, reason: Self.connectionProblem(message))
        }
        let version = PQserverVersion(handle)
        guard version >= Self.minimumServerVersion else {
            PQfinish(handle)
            throw StoreError.cannotOpen(path: location, reason: "the server runs PostgreSQL \(Self.versionText(version)); "
                + "bookpipe needs PostgreSQL \(Self.versionText(Self.minimumServerVersion)) or later")
        }
        self.handle = handle
        serverVersion = version
        // Notices (e.g. "relation already exists, skipping") are not for people running bookpipe.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        configureSession()
    }

    /// Session settings, after every (re)connection. JIT off: the library's statements are short,
    /// and the planner's estimate for a lateral join over a few owners passed the JIT threshold, so
    /// each claim compiled code for milliseconds to run microseconds of work (3 ms a claim with one
    /// worker, 9 ms with two).
    private func configureSession() {
        PQclear(PQexec(handle, "SET jit = off"))
    }

    deinit {
        PQfinish(handle)
    }

    /// `150018` → `15.18`; `90624` → `9.6.24`.
    static func versionText(_ version: Int32) -> String {
        version >= 10_00_00 ? "\(version / 10_000).\(version % 10_000)"
            : "\(version / 10_000).\(version / 100 % 100).\(version % 100)"
    }

    /// libpq's connection failure, as one line saying what to do.
    static func connectionProblem(_ message: String) -> String {
        let line = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty } ?? "unknown error"
        if message.contains("password authentication failed") || message.contains("no password supplied") {
            return "the server refused the user name or password (\(line)); check the user and password in the URL"
        }
        if let range = message.range(of: #"database "[^"]*" does not exist"#, options: .regularExpression) {
            return "the \(message[range]) on the server; create it (createdb) or name another in the URL"
        }
        if message.contains("Connection refused") || message.contains("No such file or directory")
            || message.contains("could not connect") || message.contains("could not translate host name") {
            return "no PostgreSQL server answers there (\(line)); is the server running, and are host and port right?"
        }
        return line
    }

    /// The text of a C string libpq owns (empty for nil).
    private static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? ""
    }

    /// Runs one statement with text parameters (`$1`, `$2`, …; nil is NULL) and returns its rows.
    /// A connection the server dropped is opened again (with backoff) and the statement tried
    /// again, outside a transaction only.
    /// - Throws: ``StoreError/writeFailed(path:what:reason:)`` (or `readFailed` when `reading`)
    ///   with the server's message.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = [], what: String, reading: Bool = false)
        throws(StoreError) -> PostgresRows {
        // Outside a transaction, a connection the server dropped (a restart, an ended backend) is
        // opened again and the statement run again: no transaction of ours was open, so nothing
        // of one is lost or done twice. Inside one, the failure goes to the caller, whose
        // transaction is rolled back whole.
        let outsideTransaction = PQstatus(handle) != CONNECTION_OK || PQtransactionStatus(handle) == PQTRANS_IDLE
        if PQstatus(handle) != CONNECTION_OK { reconnect() }
        do {
            return try run(sql, parameters, what: what, reading: reading)
        } catch {
            guard outsideTransaction, PQstatus(handle) == CONNECTION_BAD else { throw error }
            reconnect()
            guard PQstatus(handle) == CONNECTION_OK else { throw error }
            return try run(sql, parameters, what: what, reading: reading)
        }
    }

    /// Opens the connection again after the server dropped it, waiting 0.1, 0.2, 0.4, 0.8, 1.6 and
    /// 3.2 s between tries (a server restarting takes a few seconds).
    private func reconnect() {
        var wait: useconds_t = 100_000
        for _ in 0..<7 {
            PQreset(handle)
            if PQstatus(handle) == CONNECTION_OK {
                configureSession()
                return
            }
            usleep(wait)
            wait *= 2
        }
    }

    private func run(_ sql: String, _ parameters: [String?], what: String, reading: Bool) throws(StoreError) -> PostgresRows {
        // Without parameters, the simple query protocol: it runs several statements (migrations).
        let result = parameters.isEmpty ? PQexec(handle, sql) : Self.withCStrings(parameters) { values in
            PQexecParams(handle, sql, Int32(values.count), nil, values, nil, nil, 0)
        }
        guard let result else {
            throw failure(what: what, reason: Self.text(PQerrorMessage(handle)), reading: reading)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            let message = Self.text(PQresultErrorField(result, Int32(UInt8(ascii: "M"))))
            let reason = message.isEmpty ? Self.text(PQresultErrorMessage(result)) : message
            throw failure(what: what, reason: reason, reading: reading)
        }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) != 0 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(row), Int32(column))))
                }
            }
            rows.append(values)
        }
        let affected = Int(Self.text(PQcmdTuples(result))) ?? 0
        return PostgresRows(rows: rows, affected: affected)
    }

    /// Runs a statement whose last parameter is binary (a `bytea`, sent as it is: no hex or escape
    /// text doubling a photo's size on the wire), the others text. Use inside a transaction.
    /// - Returns: How many rows it changed.
    /// - Throws: ``StoreError/writeFailed(path:what:reason:)`` with the server's message.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?], bytes: [UInt8], what: String) throws(StoreError) -> Int {
        let result: OpaquePointer? = Self.withCStrings(parameters) { values in
            bytes.withUnsafeBufferPointer { raw in
                raw.withMemoryRebound(to: CChar.self) { binary in
                    let pointers = values + [binary.baseAddress]
                    let lengths = [Int32](repeating: 0, count: values.count) + [Int32(bytes.count)]
                    let formats = [Int32](repeating: 0, count: values.count) + [1]
                    return PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, lengths, formats, 0)
                }
            }
        }
        guard let result else { throw failure(what: what, reason: Self.text(PQerrorMessage(handle)), reading: false) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK else {
            let message = Self.text(PQresultErrorField(result, Int32(UInt8(ascii: "M"))))
            throw failure(what: what, reason: message.isEmpty ? Self.text(PQresultErrorMessage(result)) : message, reading: false)
        }
        return Int(Self.text(PQcmdTuples(result))) ?? 0
    }

    /// The first column of the first row, in binary (a `bytea` as its bytes); nil for no row or NULL.
    /// Outside a transaction a dropped connection is opened again first.
    /// - Throws: ``StoreError/readFailed(path:what:reason:)`` with the server's message.
    func bytes(_ sql: String, _ parameters: [String?], what: String) throws(StoreError) -> [UInt8]? {
        if PQstatus(handle) != CONNECTION_OK { reconnect() }
        let result: OpaquePointer? = Self.withCStrings(parameters) { values in
            PQexecParams(handle, sql, Int32(values.count), nil, values, nil, nil, 1)
        }
        guard let result else { throw failure(what: what, reason: Self.text(PQerrorMessage(handle)), reading: true) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else {
            let message = Self.text(PQresultErrorField(result, Int32(UInt8(ascii: "M"))))
            throw failure(what: what, reason: message.isEmpty ? Self.text(PQresultErrorMessage(result)) : message, reading: true)
        }
        guard PQntuples(result) > 0, PQgetisnull(result, 0, 0) == 0, let value = PQgetvalue(result, 0, 0) else { return nil }
        let count = Int(PQgetlength(result, 0, 0))
        return value.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// Sends rows to a `COPY … FROM STDIN` statement in PostgreSQL's text format (nil is NULL);
    /// returns how many rows the server took. Use inside a transaction: a failure leaves nothing.
    /// - Throws: ``StoreError/writeFailed(path:what:reason:)`` with the server's message.
    @discardableResult
    func copy(_ sql: String, rows: [[String?]], what: String) throws(StoreError) -> Int {
        guard let start = PQexec(handle, sql) else {
            throw failure(what: what, reason: Self.text(PQerrorMessage(handle)), reading: false)
        }
        let status = PQresultStatus(start)
        let startMessage = Self.text(PQresultErrorMessage(start))
        PQclear(start)
        guard status == PGRES_COPY_IN else { throw failure(what: what, reason: startMessage, reading: false) }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        var sendFailure: String?
        func flush() {
            guard !buffer.isEmpty, sendFailure == nil else { return }
            let sent = buffer.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            if sent != 1 { sendFailure = Self.text(PQerrorMessage(handle)) }
            buffer.removeAll(keepingCapacity: true)
        }
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { buffer.append(0x09) }
                guard let value else {
                    buffer.append(contentsOf: [0x5C, 0x4E]) // \N
                    continue
                }
                for byte in value.utf8 {
                    switch byte {
                    case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
                    case 0x09: buffer.append(contentsOf: [0x5C, 0x74])
                    case 0x0A: buffer.append(contentsOf: [0x5C, 0x6E])
                    case 0x0D: buffer.append(contentsOf: [0x5C, 0x72])
                    default: buffer.append(byte)
                    }
                }
            }
            buffer.append(0x0A)
            if buffer.count >= 1 << 16 { flush() }
        }
        flush()
        PQputCopyEnd(handle, sendFailure)
        var taken = 0
        var serverFailure: String?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                taken = Int(Self.text(PQcmdTuples(result))) ?? taken
            } else if serverFailure == nil {
                let message = Self.text(PQresultErrorField(result, Int32(UInt8(ascii: "M"))))
                serverFailure = message.isEmpty ? Self.text(PQresultErrorMessage(result)) : message
            }
            PQclear(result)
        }
        if let reason = sendFailure ?? serverFailure { throw failure(what: what, reason: reason, reading: false) }
        return taken
    }

    /// Runs `body` in one transaction: it commits when `body` returns, and rolls back when it throws.
    func transaction<T>(_ what: String, _ body: () throws -> T) throws -> T {
        try execute("BEGIN", what: what)
        do {
            let value = try body()
            try execute("COMMIT", what: what)
            return value
        } catch {
            _ = try? execute("ROLLBACK", what: what)
            throw error
        }
    }

    private func failure(what: String, reason: String, reading: Bool) -> StoreError {
        let line = reason.split(whereSeparator: \.isNewline).first.map(String.init) ?? reason
        return reading ? .readFailed(path: location, what: what, reason: line)
            : .writeFailed(path: location, what: what, reason: line)
    }

    /// Calls `body` with the parameters as C strings that live until it returns.
    private static func withCStrings<R>(_ values: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let pointers: [UnsafeMutablePointer<CChar>?] = values.map { $0.flatMap { strdup($0) } }
        defer { pointers.forEach { free($0) } }
        return body(pointers.map { $0.map { UnsafePointer($0) } })
    }
}

/// The rows a statement returned, as text (nil for NULL), and how many rows it changed.
struct PostgresRows {
    /// The rows, each its columns in order.
    var rows: [[String?]]
    /// The rows an INSERT, UPDATE or DELETE changed.
    var affected: Int

    /// The first column of the first row.
    var scalar: String? { rows.first?.first ?? nil }
}
