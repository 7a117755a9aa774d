import TestSupport
import Testing

@testable import SignalServer

/// ``PostgresConnection/transaction(_:_:)``: commits what returns, rolls
/// back what throws, refuses to nest, fails a transaction whose statement
/// failed even when the body caught it, and reads one snapshot in
/// `readOnlySnapshot` mode.
@Suite(.serialized, .blocking) struct PostgresTransactionTests {
    @Test func commitsRollsBackAndRefusesToNest() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try PostgresConnection(url: server.url), other = try PostgresConnection(url: server.url)
        try connection.execute("CREATE TABLE t (v TEXT PRIMARY KEY)")
        func values() throws -> [String?] {
            let rows = try other.execute("SELECT v FROM t ORDER BY v")
            return (0 ..< rows.count).map { rows.string($0, 0) }
        }

        let inserted = try connection.transaction { () throws(PostgresError) in
            try connection.execute("INSERT INTO t VALUES ($1), ($2)", ["a", "b"]).affected
        }
        #expect(inserted == 2)
        #expect(try values() == ["a", "b"])

        #expect(throws: PostgresError.self) {
            try connection.transaction { () throws(PostgresError) in
                try connection.execute("INSERT INTO t VALUES ($1)", ["c"])
                try connection.execute("INSERT INTO t VALUES ($1)", ["a"])
            }
        }
        #expect(try values() == ["a", "b"], "the first insert was rolled back with the failed one")

        let swallowed = try #require(throws: PostgresError.self) {
            try connection.transaction { () throws(PostgresError) in
                try connection.execute("INSERT INTO t VALUES ($1)", ["d"])
                _ = try? connection.execute("INSERT INTO t VALUES ($1)", ["a"])
            }
        }
        #expect(swallowed.sqlState == "25P02")
        #expect(try values() == ["a", "b"])

        let nested = try #require(throws: PostgresError.self) {
            try connection.transaction { () throws(PostgresError) in
                try connection.transaction { () throws(PostgresError) in
                    try connection.execute("INSERT INTO t VALUES ('e')")
                }
            }
        }
        #expect(nested.message == "a transaction is already open on this connection")
        #expect(try values() == ["a", "b"])

        let counts = try connection.transaction(.readOnlySnapshot) { () throws(PostgresError) in
            let before = try connection.execute("SELECT count(*) FROM t").int64(0, 0)
            try other.execute("INSERT INTO t VALUES ('f')")
            return (before, try connection.execute("SELECT count(*) FROM t").int64(0, 0))
        }
        #expect(counts.0 == 2 && counts.1 == 2, "both reads saw the snapshot")
        let write = try #require(throws: PostgresError.self) {
            try connection.transaction(.readOnlySnapshot) { () throws(PostgresError) in
                try connection.execute("INSERT INTO t VALUES ('g')")
            }
        }
        #expect(write.sqlState == "25006", "\(write)")
        #expect(try connection.execute("SELECT count(*) FROM t").int64(0, 0) == 3)
    }
}
