import SignalProtocol
import Testing

@testable import SignalServer

/// PostgreSQL's own of calls (reading them back, updates and parties are
/// ``CallBackendTests``', on every backend): a row this build cannot read
/// fails the read, and a call's seq is its first position.
@Suite(.serialized) struct PostgresCallRowsTests {
    @Test func aRowWithAnUnknownStatusFailsTheRead() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        try connection.save(storedCall(1))
        #expect(try connection.call(sessionId: "session-1") == storedCall(1))
        try connection.execute("UPDATE calls SET status = 'dancing' WHERE session_id = 'session-1'")
        #expect(throws: StoreError(.corruptRow, "call session-1 has status 'dancing'")) {
            try connection.call(sessionId: "session-1")
        }
    }

    /// As in SQLite, a call's seq (the history cursor's position) is its
    /// first change's and stays when it changes; a call saved without a
    /// position takes the next of the change sequence, where positions come from.
    @Test func aCallsSeqIsItsFirstPosition() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        func position() throws -> Int64 {
            try #require(try connection.execute("SELECT nextval('change_seq')").int64(0, 0))
        }
        var call = storedCall(1, status: .initiated)
        let first = try position()
        call.seq = first
        try connection.save(call)
        call.status = .ongoing
        let second = try position()
        call.seq = second
        try connection.save(call)
        try connection.save(storedCall(2))
        let rows = try connection.execute("SELECT session_id, seq, change_seq FROM calls ORDER BY seq")
        #expect(rows.count == 2)
        #expect(rows.string(0, 0) == "session-1" && rows.int64(0, 1) == first && rows.int64(0, 2) == second)
        // The sequence counts in steps of 8 (a transition's block of positions).
        #expect(rows.string(1, 0) == "session-2" && rows.int64(1, 1) == second + 8 && rows.int64(1, 2) == 0)
    }
}
