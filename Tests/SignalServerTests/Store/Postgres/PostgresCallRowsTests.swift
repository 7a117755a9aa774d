import SignalProtocol
import Testing

@testable import SignalServer

/// Calls saved to and read from PostgreSQL are the calls given, field for
/// field (metadata's member order too), through updates; a snapshot naming
/// other parties is refused as in SQLite.
@Suite(.serialized) struct PostgresCallRowsTests {
    @Test func callsRoundTripAndKeepTheirParties() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()

        var call = Call(
            sessionId: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d", callType: .video, status: .initiated,
            initiator: "alice", receiver: "bob", initiatorDevice: "laptop", initiatedAt: 1_764_466_800_000,
            timeoutMs: 30_000,
            metadata: .object([
                ("z", .integer(1)), ("a", .string("o'neil")),
                ("n", .array([.double(1.5), .null])),
            ]), seq: 42)
        try connection.save(call)
        #expect(try connection.call(sessionId: call.sessionId) == call)

        call.status = .ended
        call.acceptedAt = call.initiatedAt + 3_512
        call.acceptedBy = "phone"
        call.endedAt = call.initiatedAt + 111_040
        call.endedBy = "alice"
        call.endReason = .hangup
        call.seq = 45
        try connection.save(call)
        #expect(try connection.call(sessionId: call.sessionId) == call)
        #expect(try connection.execute("SELECT count(*) FROM calls").int64(0, 0) == 1)

        var bare = Call(
            sessionId: "s2", callType: .audio, status: .busy, initiator: "carol", receiver: "bob",
            initiatedAt: 1, endedAt: 1, endReason: .busy, timeoutMs: 200)
        bare.seq = 46
        try connection.save(bare)
        #expect(try connection.call(sessionId: "s2") == bare)
        #expect(try connection.call(sessionId: "none") == nil)

        var stolen = call
        stolen.receiver = "mallory"
        #expect(
            throws: StoreError(
                .callConflict, "call \(call.sessionId) is stored with other parties than alice and mallory")
        ) {
            try connection.save(stolen)
        }
        #expect(try connection.call(sessionId: call.sessionId) == call)

        try connection.execute("UPDATE calls SET status = 'dancing' WHERE session_id = 's2'")
        #expect(throws: StoreError(.corruptRow, "call s2 has status 'dancing'")) {
            try connection.call(sessionId: "s2")
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
