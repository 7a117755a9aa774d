import SignalProtocol
@testable import SignalServer
import Testing

/// Resume and continuity reads from PostgreSQL: the calls of a user changed
/// after a position (CallStoreResumeTests' cases), and the live calls of a
/// set of users, whatever characters their uids hold.
@Suite(.serialized) struct PostgresContinuityRowsTests {
    /// A migrated database whose calls are saved as the machine saves them:
    /// each change at the next position, a new call's seq being its first.
    final class Ledger {
        let server: ThrowawayPostgres
        let connection: PostgresConnection
        private(set) var position: Int64 = 100

        init() throws {
            server = try ThrowawayPostgres()
            do {
                connection = try PostgresConnection(url: server.url)
                try PostgresSchema.migrate(connection)
            } catch {
                server.stop()
                throw error
            }
        }

        /// Saves `call` at the next position; returns it as saved.
        @discardableResult
        func save(_ call: Call) throws -> Call {
            position += 1
            var saved = call
            saved.seq = position
            try connection.save(saved)
            return saved
        }

        func call(_ id: String, _ from: String, _ to: String, _ status: CallStatus, endedBy: String? = nil) -> Call {
            Call(sessionId: id, callType: .audio, status: status, initiator: from, receiver: to, initiatedAt: 1_000,
                 endedAt: status.isTerminal ? 2_000 : nil, endedBy: endedBy,
                 endReason: status == .busy ? .busy : status == .ended ? .hangup : nil, timeoutMs: 30_000)
        }

        func changed(_ uid: String, after seq: Int64, limit: Int = 10) throws -> ChangedCalls {
            try connection.changedCalls(of: uid, after: seq, limit: limit)
        }

        func finish() { server.stop() }
    }

    @Test func theCallLiveAtThePositionAndTheCallsCreatedSinceOldestChangeFirst() throws {
        let l = try Ledger()
        defer { l.finish() }
        try l.save(l.call("old", "bob", "alice", .ended, endedBy: "bob"))
        var live = try l.save(l.call("live", "alice", "bob", .initiated))
        live.status = .ongoing
        live = try l.save(live)
        // Called while in "live": busy at once, never live.
        let busy = try l.save(l.call("busy", "carol", "bob", .busy))
        let position = l.position
        let later = try l.save(l.call("later", "dave", "bob", .busy))
        live.status = .ended
        live = try l.save(live)

        let changed = try l.changed("bob", after: position)
        #expect(changed.calls == [later, live])
        #expect(!changed.exceeded)
        #expect(try l.changed("carol", after: position).calls.isEmpty, "carol's busy call did not change since")
        #expect(try l.changed("bob", after: busy.seq - 1).calls == [busy, later, live])

        // Ended before the position, unchanged since: left out, as is a live call unchanged since.
        let ringing = try l.save(l.call("ringing", "erin", "alice", .initiated))
        #expect(try l.changed("alice", after: l.position).calls.isEmpty)
        #expect(try l.changed("alice", after: ringing.seq - 1).calls == [ringing])

        // Declined as busy by the callee: it was live, and counts.
        let ringingPosition = l.position
        var declined = ringing
        declined.status = .busy
        declined.endReason = .busy
        declined.endedBy = "alice"
        declined = try l.save(declined)
        #expect(try l.changed("erin", after: ringingPosition).calls == [declined])
        #expect(try l.connection.transaction { true }, "the snapshot's transaction was closed")
    }

    @Test func moreThanTheLimitIsExceededAndAnswersNoCalls() throws {
        let l = try Ledger()
        defer { l.finish() }
        let position = l.position
        for index in 0 ..< 4 { try l.save(l.call("c\(index)", "alice", "bob", .busy)) }
        #expect(try l.changed("bob", after: position, limit: 4).calls.count == 4)
        let over = try l.changed("bob", after: position, limit: 3)
        #expect(over.exceeded && over.calls.isEmpty)
        // Only busy calls within the limit before the position: the call bob
        // was in then cannot be told apart, so the store does not guess.
        #expect(try l.changed("bob", after: l.position, limit: 4).exceeded)
        #expect(try !l.changed("bob", after: l.position, limit: 5).exceeded)
    }

    /// The uids go as one array parameter: quotes, commas, backslashes,
    /// braces, spaces, NULL and an empty uid are each one element, matching
    /// only themselves.
    @Test func liveCallsOfAnyUidsMatchExactlyThoseUids() throws {
        let l = try Ledger()
        defer { l.finish() }
        let awkward = ["o\"neil", "a,b", "back\\slash", "{brace}", " spaced ", "NULL", "", "\\\"", "}", "\"\u{301}x", "ünï"]
        let plain = ["oneil", "a", "b", "backslash", "brace", "spaced", "null", "x", "ünï2"]
        var live: [String: Call] = [:]
        for (index, uid) in (awkward + plain).enumerated() {
            live[uid] = try l.save(l.call("live-\(index)", uid, "peer-\(index)", index % 2 == 0 ? .initiated : .ongoing))
            try l.save(l.call("over-\(index)", "peer-\(index)", uid, .ended, endedBy: uid))
        }
        let calls = try l.connection.liveCalls(ofAny: awkward)
        #expect(calls == awkward.compactMap { live[$0] }, "oldest first, one per awkward uid")
        #expect(try l.connection.liveCalls(ofAny: ["peer-3", "nobody"]) == [live[awkward[3]]].compactMap { $0 },
                "a receiver counts too")
        #expect(try l.connection.liveCalls(ofAny: []).isEmpty)

        let echoed = try l.connection.execute("SELECT unnest($1::text[])", [PostgresConnection.textArray(awkward)])
        #expect((0 ..< echoed.count).map { echoed.string($0, 0) } == awkward)
    }
}
