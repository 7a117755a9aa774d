import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// PostgreSQL's own of calls (reading them back, updates and parties are
/// ``CallBackendTests``', on every backend): a row this build cannot read
/// fails the read, and a call's seq is its first position.
@Suite(.serialized, .blocking) struct PostgresCallRowsTests {
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

    /// What a cluster transaction tells a new initiate about its caller
    /// (``PostgresConnection/recentInitiates(of:clientCallId:limit:now:)``):
    /// the newest `limit` placements within the last 60 s, oldest first, and
    /// the call with the id while live or until its ring deadline.
    @Test func recentInitiatesReadTheWindowAndTheRetriedCall() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        let now: Int64 = 1_700_000_100_000
        func call(_ id: String, at initiatedAt: Int64, _ status: CallStatus, clientCallId: String? = nil) -> Call {
            Call(
                sessionId: id, callType: .audio, status: status, initiator: "alice", receiver: "bob",
                initiatedAt: initiatedAt, endedAt: status.isTerminal ? initiatedAt + 1_000 : nil,
                endReason: status.isTerminal ? .cancelled : nil, timeoutMs: 30_000, clientCallId: clientCallId)
        }
        for saved in [
            call("old", at: now - 60_000, .cancelled), call("a", at: now - 50_000, .cancelled, clientCallId: "c-1"),
            call("b", at: now - 20_000, .cancelled, clientCallId: "c-2"), call("c", at: now - 10_000, .initiated),
            call("long", at: now - 600_000, .ongoing, clientCallId: "c-3"),
            Call(
                sessionId: "carols", callType: .audio, status: .initiated, initiator: "carol", receiver: "bob",
                initiatedAt: now - 1_000, timeoutMs: 30_000, clientCallId: "c-2"),
        ] {
            try connection.save(saved)
        }
        let two = try connection.recentInitiates(of: "alice", clientCallId: nil, limit: 2, now: now)
        #expect(two == RecentInitiates(placedAt: [now - 20_000, now - 10_000]))
        let all = try connection.recentInitiates(of: "alice", clientCallId: "c-2", limit: 10, now: now)
        #expect(all.placedAt == [now - 50_000, now - 20_000, now - 10_000])
        #expect(all.calls.mapValues(\.sessionId) == ["c-2": "b"])
        // A live call answers long after its ring deadline.
        let live = try connection.recentInitiates(of: "alice", clientCallId: "c-3", limit: 0, now: now)
        #expect(live.calls.mapValues(\.sessionId) == ["c-3": "long"] && live.placedAt.isEmpty)
        // "a" ended and its ring deadline (now - 20 s) passed; no limit, no placements.
        #expect(
            try connection.recentInitiates(of: "alice", clientCallId: "c-1", limit: 0, now: now) == RecentInitiates())
    }
}
