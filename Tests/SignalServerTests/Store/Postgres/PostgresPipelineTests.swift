import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// Statements sent together (``PostgresPipeline``): one round trip, results
/// in order, each statement prepared once, and a failure that names its
/// statement and leaves the connection usable.
@Suite(.serialized, .blocking) struct PostgresPipelineTests {
    @Test func resultsComeInOrderInOneRoundTrip() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        try connection.execute("CREATE TABLE numbers (n INT)")
        var pipeline = PostgresPipeline()
        pipeline.append("BEGIN")
        pipeline.append("INSERT INTO numbers VALUES ($1), ($2) RETURNING n", ["1", "2"])
        pipeline.append("SELECT $1::text, $2::text", ["a \"quoted\" value", nil])
        pipeline.append("UPDATE numbers SET n = n + 10")
        pipeline.append("SELECT sum(n) FROM numbers")
        pipeline.append("COMMIT")
        let before = connection.roundTrips
        let results = try connection.run(pipeline)
        #expect(connection.roundTrips == before + 1)
        #expect(results.count == 6)
        #expect(results[1].count == 2 && results[1].int64(0, 0) == 1 && results[1].int64(1, 0) == 2)
        #expect(results[2].string(0, 0) == "a \"quoted\" value" && results[2].string(0, 1) == nil)
        #expect(results[3].affected == 2)
        #expect(results[4].int64(0, 0) == 23)
        #expect(!connection.isInTransaction)

        // Prepared once: the same statements again prepare nothing new.
        let prepared = connection.preparedStatements
        #expect(prepared.count == 6, "BEGIN and COMMIT are statements too")
        _ = try connection.run(pipeline)
        #expect(connection.preparedStatements == prepared)
        #expect(try connection.execute("SELECT count(*) FROM pg_prepared_statements").int64(0, 0) == 6)
    }

    @Test func aFailureNamesItsStatementAndTheRestDoesNotRun() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        try connection.execute("CREATE TABLE numbers (n INT)")
        var pipeline = PostgresPipeline()
        pipeline.append("BEGIN")
        pipeline.append("INSERT INTO numbers VALUES (1)")
        pipeline.append("SELECT 1 / $1::int", ["0"])
        pipeline.append("INSERT INTO numbers VALUES (2)")
        pipeline.append("COMMIT")
        let error = try #require(throws: PostgresError.self) { try connection.run(pipeline) }
        #expect(error.statement == "SELECT 1 / $1::int")
        #expect(error.sqlState == "22012", "division_by_zero")
        #expect(error.description.contains("SELECT 1 / $1::int"))
        #expect(connection.transactionFailed, "COMMIT did not run: the transaction can only roll back")
        try connection.execute("ROLLBACK")
        #expect(try connection.execute("SELECT count(*) FROM numbers").int64(0, 0) == 0)

        // A statement that cannot be prepared fails the same way, and is not cached.
        var broken = PostgresPipeline()
        broken.append("SELECT 1")
        broken.append("SELEKT 2")
        let parse = try #require(throws: PostgresError.self) { try connection.run(broken) }
        #expect(parse.statement == "SELEKT 2" && parse.sqlState == "42601")
        #expect(connection.preparedStatements["SELEKT 2"] == nil)

        // The connection goes on: plain statements and pipelines alike.
        pipeline = PostgresPipeline()
        pipeline.append("INSERT INTO numbers VALUES (3)")
        pipeline.append("SELECT count(*) FROM numbers")
        #expect(try connection.run(pipeline)[1].int64(0, 0) == 1)
        #expect(try connection.execute("SELECT 1 / $1::int", ["1"]).int64(0, 0) == 1)
    }
}
