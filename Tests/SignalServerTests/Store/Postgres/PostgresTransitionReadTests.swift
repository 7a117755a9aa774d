import Foundation
import SignalProtocol
import Synchronization
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// `ringd_transition` (schema migration 11), what a cluster transition reads
/// in one round trip: the same users locked, and the same rows as the
/// separate queries it replaces return on the same data.
@Suite(.serialized, .blocking) struct PostgresTransitionReadTests {
    static let now: Int64 = 1_700_000_100_000

    /// Two nodes (one whose lease lapsed), calls live and ended, devices,
    /// a grace period, a profile and recent calls of alice.
    static func seed(_ db: PostgresConnection) throws -> (live: Int64, lapsed: Int64) {
        let nodes = try [0, 5000].map { age in
            try #require(
                try db.execute(
                    """
                    INSERT INTO nodes (started_at, renewed_at, name)
                    VALUES (\(PostgresConnection.databaseNow) - $1::bigint, \(PostgresConnection.databaseNow) - $1::bigint, 'n')
                    RETURNING node_id
                    """, [String(age)]
                ).int64(0, 0))
        }
        let calls = [
            Call(
                sessionId: "ringing", callType: .video, status: .initiated, initiator: "alice", receiver: "bob",
                initiatorDevice: "a1", initiatedAt: now - 1000, timeoutMs: 30_000,
                metadata: .object([("topic", .string("a, \"b\" {c}"))]), seq: 8, ringingDevices: ["b1", "b2"],
                initiatorName: "Alice", silent: true, clientCallId: "c-1"),
            Call(
                sessionId: "earlier", callType: .audio, status: .ended, initiator: "alice", receiver: "carol",
                initiatedAt: now - 20_000, acceptedAt: now - 19_000, endedAt: now - 18_000, acceptedBy: "c1",
                endedBy: "alice", endReason: .hangup, timeoutMs: 30_000, seq: 16),
            Call(
                sessionId: "other", callType: .audio, status: .ongoing, initiator: "dave", receiver: "erin",
                initiatedAt: now - 5000, acceptedAt: now - 4000, acceptedBy: "e1", timeoutMs: 30_000, seq: 24),
        ]
        for call in calls { try db.save(call) }
        try db.setPresence(uid: "alice", deviceId: "a1", at: DeviceAddress(node: nodes[0], loop: 1, connection: 11))
        try db.setPresence(uid: "bob", deviceId: "b1", at: DeviceAddress(node: nodes[1], loop: 0, connection: 12))
        try db.setPresence(uid: "bob", deviceId: "b2", at: DeviceAddress(node: nodes[0], loop: 2, connection: 13))
        try db.execute(PostgresConnection.setTimer(.grace(uid: "bob", generation: 7), dueInMillis: 5000))
        try db.execute(
            "INSERT INTO users (\(UserRowValues.columns)) VALUES ('alice', 'Alice', NULL, NULL, 'off', NULL, $1)",
            [String(now)])
        return (nodes[0], nodes[1])
    }

    static func read(
        _ db: PostgresConnection, _ request: PostgresTransitionRead.Request
    ) throws
        -> PostgresTransitionRead
    {
        try PostgresTransitionRead(db.execute(PostgresTransitionRead.statement(request)))
    }

    @Test func anInitiateReadsWhatTheSeparateQueriesRead() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        _ = try Self.seed(db)
        let request = PostgresTransitionRead.Request(
            users: ["alice", "zed"], leaseMillis: 2000, readsUsers: true, initiator: "alice", clientCallId: "c-1",
            initiateLimit: 5, now: Self.now)
        try db.execute("BEGIN")
        let read = try Self.read(db, request)
        let locked = ["alice", "bob", "zed"]
        #expect(read.retry.isEmpty)
        #expect(read.locked == Set(locked), "the input's users and the parties of their live calls")
        #expect(read.calls == (try db.liveCalls(ofAny: locked)))
        #expect(read.calls.map(\.sessionId) == ["ringing"])
        #expect(read.devices == (try db.presence(of: locked, leaseMillis: 2000, keeping: nil)))
        #expect(read.devices["bob"]?.keys.sorted() == ["b2"], "b1's node's lease lapsed")
        #expect(read.graces == (try db.graceGenerations(of: locked)))
        #expect(read.graces == ["bob": 7])
        #expect(read.users == (try db.users(ofAny: locked)))
        #expect(read.users.map(\.uid) == ["alice"])
        #expect(
            read.recent
                == (try db.recentInitiates(of: "alice", clientCallId: "c-1", limit: 5, now: Self.now)))
        #expect(read.recent.placedAt == [Self.now - 20_000, Self.now - 1000])
        #expect(read.stored == nil)
        let next = try db.nextSeq()
        #expect(read.seq > 0 && read.seq + 8 == next, "positions are taken under the locks")

        // Held until the transaction ends, as the nodes' own locks.
        let other = try PostgresConnection(url: server.url)
        func free(_ uid: String) throws -> Bool {
            let taken = try other.execute("SELECT pg_try_advisory_lock($1)", [String(PostgresConnection.lockKey(uid))])
            if taken.string(0, 0) == "t" {
                try other.execute("SELECT pg_advisory_unlock($1)", [String(PostgresConnection.lockKey(uid))])
                return true
            }
            return false
        }
        #expect(try locked.map(free) == [false, false, false])
        #expect(try free("carol"))
        try db.execute("COMMIT")
        #expect(try locked.map(free) == [true, true, true])
    }

    @Test func aSessionsPartiesAreLockedAndAnEndedCallIsReturnedAsStored() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let db = try server.migratedConnection()
        let (_, lapsed) = try Self.seed(db)
        let request = PostgresTransitionRead.Request(
            users: ["dave"], sessionId: "earlier", leaseMillis: 2000, keptNode: lapsed)
        let read = try Self.read(db, request)
        let locked = ["alice", "bob", "carol", "dave", "erin"]
        #expect(read.locked == Set(locked))
        #expect(read.calls == (try db.liveCalls(ofAny: locked)))
        #expect(read.stored == (try db.call(sessionId: "earlier")))
        #expect(read.devices == (try db.presence(of: locked, leaseMillis: 2000, keeping: lapsed)))
        #expect(read.devices["bob"]?.keys.sorted() == ["b1", "b2"], "a disconnect's node is read all the same")
        #expect(read.users.isEmpty && read.recent == RecentInitiates(), "not asked for")
        #expect(try Self.read(db, .init(users: [], sessionId: "nonexistent", leaseMillis: 2000)).locked.isEmpty)
    }

    /// A live call committed between the function's first read and its
    /// locks names a user it did not lock: it asks to start again with them.
    @Test func aCallNamingAnotherUserAsksForAnotherRound() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        _ = try server.migratedConnection()
        let holder = try PostgresConnection(url: server.url)
        try holder.execute("BEGIN")
        try holder.lockUsers(["zed"])
        let result = Mutex<Result<PostgresTransitionRead, any Error>?>(nil)
        let url = server.url
        let thread = Thread {
            let outcome = Result { () throws -> PostgresTransitionRead in
                let reader = try PostgresConnection(url: url)
                try reader.execute("BEGIN")
                return try Self.read(reader, .init(users: ["zed"], leaseMillis: 2000))
            }
            result.withLock { $0 = outcome }
        }
        thread.start()
        // The reader waits for zed's lock; a call of zed's commits meanwhile.
        #expect(
            waitUntil(timeout: 10) {
                (try? holder.execute(
                    "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).count) == 1
            })
        try holder.save(
            Call(
                sessionId: "late", callType: .audio, status: .initiated, initiator: "yan", receiver: "zed",
                initiatedAt: Self.now, timeoutMs: 30_000, seq: 8))
        try holder.execute("COMMIT")
        #expect(waitUntil(timeout: 10) { result.withLock { $0 != nil } })
        let read = try #require(try result.withLock { $0 }?.get())
        #expect(read.retry == ["yan", "zed"])
        #expect(read.locked.isEmpty && read.calls.isEmpty)
    }

    /// The transition function locks what the nodes lock: its lock key is
    /// ``PostgresConnection/lockKey(_:)`` to the bit.
    @Test func theDatabasesLockKeyIsTheNodes() throws {
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let connection = try server.migratedConnection()
        for uid in ["", "alice", "bob", "user-12345", "Zoë", "名前", "a\"b\\c", "👩‍💻", String(repeating: "x", count: 300)] {
            let key = try connection.execute("SELECT ringd_lock_key($1)", [uid]).int64(0, 0)
            #expect(key == PostgresConnection.lockKey(uid), "\(uid)")
        }
    }
}
