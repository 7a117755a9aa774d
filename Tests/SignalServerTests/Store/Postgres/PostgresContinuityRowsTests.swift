import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// Continuity reads only PostgreSQL has (CallStoreResumeTests runs resume's
/// cases on it too): the live calls of a set of users, whatever characters
/// their uids hold, and the snapshot a changed-calls read opens.
@Suite(.serialized, .blocking) struct PostgresContinuityRowsTests {
    /// The uids go as one array parameter: quotes, commas, backslashes,
    /// braces, spaces, NULL and an empty uid are each one element, matching
    /// only themselves.
    @Test func liveCallsOfAnyUidsMatchExactlyThoseUids() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        var position: Int64 = 100
        func save(
            _ id: String, _ from: String, _ to: String, _ status: CallStatus, endedBy: String? = nil
        ) throws -> Call {
            position += 1
            let call = Call(
                sessionId: id, callType: .audio, status: status, initiator: from, receiver: to,
                initiatedAt: 1_000, endedAt: status.isTerminal ? 2_000 : nil, endedBy: endedBy,
                endReason: status == .ended ? .hangup : nil, timeoutMs: 30_000, seq: position)
            try connection.save(call)
            return call
        }
        let awkward = [
            "o\"neil", "a,b", "back\\slash", "{brace}", " spaced ", "NULL", "", "\\\"", "}", "\"\u{301}x", "ünï",
        ]
        let plain = ["oneil", "a", "b", "backslash", "brace", "spaced", "null", "x", "ünï2"]
        var live: [String: Call] = [:]
        for (index, uid) in (awkward + plain).enumerated() {
            live[uid] = try save("live-\(index)", uid, "peer-\(index)", index % 2 == 0 ? .initiated : .ongoing)
            _ = try save("over-\(index)", "peer-\(index)", uid, .ended, endedBy: uid)
        }
        let calls = try connection.liveCalls(ofAny: awkward)
        #expect(calls == awkward.compactMap { live[$0] }, "oldest first, one per awkward uid")
        #expect(
            try connection.liveCalls(ofAny: ["peer-3", "nobody"]) == [live[awkward[3]]].compactMap { $0 },
            "a receiver counts too")
        #expect(try connection.liveCalls(ofAny: []).isEmpty)

        let echoed = try connection.execute("SELECT unnest($1::text[])", [PostgresConnection.textArray(awkward)])
        #expect((0 ..< echoed.count).map { echoed.string($0, 0) } == awkward)

        // Outside a transaction, a changed-calls read opens its own snapshot and closes it.
        #expect(
            try connection.changedCalls(of: "oneil", after: 100, limit: 10).calls.map(\.sessionId)
                == ["live-11", "over-11"])
        #expect(try connection.transaction { true }, "the snapshot's transaction was closed")
    }
}
