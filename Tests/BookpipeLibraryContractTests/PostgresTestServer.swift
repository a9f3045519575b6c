import BookpipeLibrary
import BookpipePostgres
import Foundation

/// The PostgreSQL server the contract suite runs against: `BOOKPIPE_TEST_POSTGRES` (libpq
/// conninfo), which `scripts/run-tests.sh` sets to a throwaway cluster it starts and stops. Each
/// test gets a database of its own, so tests run in parallel.
enum PostgresTestServer {
    /// Why the PostgreSQL cases cannot run: no server was given. They fail with this; never skip.
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "BOOKPIPE_TEST_POSTGRES is not set: the PostgreSQL engine's contract cases need a server. Run the tests with "
                + "`bash scripts/run-tests.sh` (it starts a throwaway cluster), or start one yourself: "
                + "eval \"$(bash scripts/postgres-test-cluster.sh start)\" and run swift test again "
                + "(bash scripts/postgres-test-cluster.sh stop \"$BOOKPIPE_TEST_POSTGRES_DIR\" afterwards)."
        }
    }

    /// A new, empty database on the test server; its conninfo.
    static func newDatabase() throws -> String {
        guard let server = ProcessInfo.processInfo.environment["BOOKPIPE_TEST_POSTGRES"], !server.isEmpty else {
            throw Missing()
        }
        let name = "contract_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return try PostgresServer.createDatabase(name, on: server)
    }
}
