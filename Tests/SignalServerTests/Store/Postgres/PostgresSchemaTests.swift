@testable import SignalServer
import Testing

/// The PostgreSQL schema: migrations apply once and are idempotent, and a
/// user's second live call fails on `live_parties`' key whichever
/// connection (node) tries it: the atomic busy decision a cluster needs.
@Suite(.serialized) struct PostgresSchemaTests {
    @Test func migratesOnceAndKeepsOneLiveCallPerUser() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let first = try PostgresConnection(url: server.url), second = try PostgresConnection(url: server.url)
        try PostgresSchema.migrate(first)
        try PostgresSchema.migrate(second)
        #expect(try first.execute("SELECT count(*), max(version) FROM ringd_schema").int64(0, 0) == 1)
        #expect(try first.execute("SELECT max(version) FROM ringd_schema").int64(0, 0) == Int64(PostgresSchema.latestVersion))

        func place(_ connection: PostgresConnection, _ sessionId: String, _ caller: String,
                   _ callee: String) throws(PostgresError) {
            try connection.execute("BEGIN")
            try connection.execute("""
                INSERT INTO calls (session_id, call_type, status, initiator, receiver, initiated_at, timeout_ms, change_seq)
                VALUES ($1, 'audio', 'initiated', $2, $3, 0, 45000, nextval('change_seq'))
                """, [sessionId, caller, callee])
            try connection.execute("INSERT INTO live_parties (uid, session_id) VALUES ($1, $3), ($2, $3)",
                                   [caller, callee, sessionId])
            try connection.execute("COMMIT")
        }
        try place(first, "s1", "alice", "bob")
        do {
            try place(second, "s2", "carol", "bob")
            Issue.record("bob got a second live call")
        } catch {
            #expect(error.sqlState == PostgresError.uniqueViolation, "\(error)")
            try second.execute("ROLLBACK")
        }
        #expect(try second.execute("SELECT session_id FROM live_parties WHERE uid = $1", ["bob"]).string(0, 0) == "s1")
        #expect(try second.execute("SELECT count(*) FROM calls").int64(0, 0) == 1, "the busy call's row was rolled back")
    }
}
