import BookpipeLibrary
import Foundation

/// Administration of a PostgreSQL server, for tests and set-up: making a new, empty database.
package enum PostgresServer {
    /// Creates a database `name` on the server `conninfo` reaches and returns the conninfo of the
    /// new database (`conninfo` with its database replaced).
    /// - Throws: ``StoreError`` when the server cannot be reached or refuses.
    package static func createDatabase(_ name: String, on conninfo: String) throws(StoreError) -> String {
        let location = PostgresLibrary.redacted(conninfo)
        let connection = try PostgresConnection(conninfo: conninfo, location: location)
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        try connection.execute("CREATE DATABASE \(quoted)", what: "database \(name)")
        return replacingDatabase(of: conninfo, with: name)
    }

    /// `conninfo` naming database `name` instead of its own.
    package static func replacingDatabase(of conninfo: String, with name: String) -> String {
        guard PostgresLibrary.isLibraryURL(conninfo), let scheme = conninfo.range(of: "://") else {
            // Keyword form: a later keyword wins.
            return conninfo + " dbname='\(name.replacingOccurrences(of: "'", with: "\\'"))'"
        }
        let rest = conninfo[scheme.upperBound...]
        let query = rest.firstIndex(of: "?").map { String(rest[$0...]) } ?? ""
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        return String(conninfo[..<scheme.upperBound]) + authority + "/" + name + query
    }
}
