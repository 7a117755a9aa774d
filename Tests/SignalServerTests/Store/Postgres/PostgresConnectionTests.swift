import TestSupport
import Testing

@testable import SignalServer

/// The libpq wrapper against a real PostgreSQL: parameters bound as text,
/// NULLs both ways, rows and affected counts, SQLSTATEs, and a refused
/// connection that says why.
@Suite(.serialized, .blocking) struct PostgresConnectionTests {
    @Test func runsStatementsWithParametersAndReportsSQLState() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try PostgresConnection(url: server.url)
        #expect(connection.isOpen)
        try connection.execute(
            "CREATE TABLE calls (session_id TEXT PRIMARY KEY, initiator TEXT NOT NULL, accepted_by TEXT, seq BIGINT)")
        let quote = "o'neil; DROP TABLE calls; --"
        let inserted = try connection.execute(
            "INSERT INTO calls VALUES ($1, $2, $3, $4), ($5, $6, NULL, $7)",
            ["s1", quote, "b1", "41", "s2", "bob", "9223372036854775807"])
        #expect(inserted.affected == 2 && inserted.count == 0)

        let rows = try connection.execute("SELECT session_id, initiator, accepted_by, seq FROM calls ORDER BY seq", [])
        #expect(rows.count == 2)
        #expect(
            rows.string(0, 0) == "s1" && rows.string(0, 1) == quote && rows.string(0, 2) == "b1"
                && rows.int64(0, 3) == 41)
        #expect(rows.string(1, 2) == nil && rows.int64(1, 3) == Int64.max)
        #expect(
            try connection.execute("SELECT count(*) FROM calls WHERE accepted_by IS NOT DISTINCT FROM $1", [nil])
                .int64(0, 0) == 1)

        do {
            try connection.execute("INSERT INTO calls VALUES ($1, $2)", ["s1", "carol"])
            Issue.record("a second row with the same key was inserted")
        } catch {
            #expect(error.sqlState == PostgresError.uniqueViolation)
            #expect(error.message.contains("calls_pkey"), "\(error)")
        }
        do {
            try connection.execute("SELEC 1")
            Issue.record("a syntax error ran")
        } catch {
            #expect(error.sqlState == "42601", "\(error)")
        }
        // A failed statement outside a transaction leaves the connection usable.
        #expect(try connection.execute("SELECT 1").int64(0, 0) == 1)
    }

    @Test func aRefusedConnectionSaysWhyWithoutTheSecret() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        do {
            _ = try PostgresConnection(
                url: server.url.replacingOccurrences(of: "dbname=postgres", with: "dbname=missing")
                    + " password=hunter2")
            Issue.record("connected to a database that does not exist")
        } catch {
            #expect(error.sqlState == nil)
            #expect(
                error.message.hasPrefix("connecting to PostgreSQL: ") && error.message.contains("missing"), "\(error)")
            #expect(!error.message.contains("hunter2"))
        }
    }
}
