import CoreTestSupport
import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// `StoreMigrator` on a store a single node wrote: the state machine's
/// changes committed through ``CallStore`` (positions, reservations and
/// all), revocations, a generated token secret. PostgreSQL must then serve
/// the history, cursors and resume answers the node would have served after
/// a restart with `calls.onRestart: end`.
@Suite(.serialized, .blocking) struct StoreMigrationTests {
    static let users = ["alice", "bob", "carol", "dave", "erin", "frank"]
    /// When the migration runs: live calls end then.
    static let migratedAt = MachineHarness.start + 3_600_000

    /// A single node's store in `directory`: 60 calls answered and hung
    /// up, rejected, cancelled, timed out or busy, then one ongoing and one
    /// ringing; two revocations; three webhook deliveries (pending,
    /// delivered, failed); the token secret a start generates.
    static func makeStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("data/ringd.sqlite")
        let harness = MachineHarness()
        var devices: [String: Device] = [:]
        for uid in users { devices[uid] = harness.online(uid, "\(uid)-phone") }
        func device(_ uid: String) throws -> Device { try #require(devices[uid]) }
        for step in 0 ..< 60 {
            let caller = users[step % users.count], callee = users[(step * 5 + 1) % users.count]
            guard caller != callee else { continue }
            let call = harness.ring(from: try device(caller), to: callee)
            switch step % 5 {
            case 0:
                harness.accept(call, by: try device(callee))
                let third = users.first { $0 != caller && $0 != callee } ?? "alice"
                harness.ring(from: try device(third), to: callee)  // busy at once
                harness.end(call, by: try device(caller))
            case 1: harness.reject(call, by: try device(callee))
            case 2: harness.cancel(call, by: try device(caller))
            case 3: harness.advance(by: 46_000)  // the ring timeout
            default: harness.reject(call, by: try device(callee), status: .busy)
            }
            harness.advance(by: 1_000)
        }
        harness.accept(harness.ring(from: try device("alice"), to: "bob"), by: try device("bob"))
        harness.initiate(
            from: try device("carol"), to: "dave", callType: .video, metadata: .object([("topic", .string("x"))]))

        let store = try CallStore(path: path)
        defer { store.close() }
        for output in harness.outputs where !output.changes.isEmpty {
            try store.commitAndWait(output.changes, reservingSeq: output.seqReservation)
        }
        for (uid, at) in [("erin", Int64(1_700_000_100_000)), ("frank", 1_700_000_200_000)] {
            try waitForResult { store.saveRevocation(uid: uid, revokedAt: at, completion: $0) }.get()
        }
        for (uid, deviceId, platform, value) in [
            ("bob", "bob-phone", PushPlatform.fcm, String(repeating: "f", count: 40)),
            ("carol", "carol-ipad", .apnsVoip, String(repeating: "ab", count: 32)),
        ] {
            let token = RegisteredPushToken(
                uid: uid, deviceId: deviceId,
                registration: try PushRegistration(
                    platform: platform, token: value,
                    topic: platform == .fcm ? nil : "net.ringd.x",
                    alertToken: platform == .fcm ? nil : String(repeating: "c3", count: 32)),
                updatedAt: 1_700_000_300_000)
            _ = try waitForResult { store.savePushToken(token, limit: 10, completion: $0) }.get()
        }
        let profile = try UserProfile(name: "Bob", avatarUrl: "https://img.example/bob.png")
        _ = try waitForResult {
            store.updateUser(uid: "bob", at: 1_700_000_400_000, { $0.profile = profile }, completion: $0)
        }.get()
        _ = try waitForResult {
            store.updateUser(
                uid: "carol", at: 1_700_000_400_000, { $0.doNotDisturb = DoNotDisturb(mode: .busy, until: 9) },
                completion: $0)
        }.get()
        let outbox = try StoreConnection(path: path, synchronousFull: false)
        for (seq, status) in [(Int64(3), WebhookDeliveryStatus.delivered), (5, .failed), (9, .pending)] {
            try outbox.insert(
                WebhookDelivery(
                    endpoint: "https://hooks.example/ringd", seq: seq, eventId: "evt_s_\(seq)",
                    sessionId: "s", trigger: "call_initiated", createdAt: seq,
                    body: Array("{\"seq\":\(seq)}".utf8), status: status, attempts: 1,
                    nextAttemptAt: seq, lastStatus: 500, lastError: "HTTP 500", updatedAt: seq))
        }
        _ = try TokenSecret.load(configured: nil, directory: directory.file("data"))
        return path
    }

    /// The store as the node itself would hold it after a restart with
    /// `calls.onRestart: end`: what PostgreSQL must serve.
    static func restartedNode(_ path: String) throws -> StoreConnection {
        let sqlite = try StoreConnection(path: path, synchronousFull: false)
        var machine = CallStateMachine(settings: SignalingSettings())
        machine.continueSequence(after: try sqlite.lastChangeSeq())
        let output = machine.restart(with: try sqlite.liveCalls(), now: SignalingTime(wall: migratedAt, monotonic: 0))
        for change in output.changes { try sqlite.save(change.after) }
        return sqlite
    }

    @Test func theHistoryCursorsPositionsRevocationsPushTokensAndSecretMoveWhole() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.makeStore(in: directory)
        let server = try ThrowawayPostgres()
        defer { server.stop() }

        let summary = try StoreMigrator.migrate(from: path, to: server.url, now: Self.migratedAt)
        let sqlite = try Self.restartedNode(path)
        let postgres = try PostgresConnection(url: server.url)
        let counted = try #require(try sqlite.database.scalarInt64("SELECT count(*) FROM calls"))
        #expect(summary.calls == Int(counted) && counted > 50)
        #expect(summary.endedLiveCalls == 2 && summary.revocations == 2 && summary.tokenSecret == .copied)
        #expect(summary.highestPosition == (try sqlite.highestCallPosition()))
        #expect(
            summary.highestPosition == (try sqlite.lastChangeSeq()) + 2,
            "the ends take the positions after the node's reservation")

        var pages = 0
        for uid in Self.users + ["nobody"] {
            for filter in [
                CallLogFilter(limit: 4), CallLogFilter(limit: 3, missedOnly: true),
                CallLogFilter(limit: 2, direction: .outgoing, with: "bob"),
            ] {
                var query = filter
                repeat {
                    let expected = try sqlite.callLogs(for: uid, query: query)
                    #expect(try postgres.callLogs(for: uid, query: query) == expected, "\(uid) \(query)")
                    query.cursor = expected.next
                    pages += 1
                } while query.cursor != nil
            }
        }
        #expect(pages > 40)
        for uid in Self.users {
            for after in stride(from: Int64(0), through: summary.highestPosition + 1, by: 7) {
                let expected = try sqlite.changedCalls(of: uid, after: after, limit: 5)
                let changed = try postgres.changedCalls(of: uid, after: after, limit: 5)
                #expect(
                    changed.calls == expected.calls && changed.exceeded == expected.exceeded, "\(uid) after \(after)")
            }
        }

        #expect(try postgres.liveCalls(ofAny: Self.users).isEmpty, "no call is left live without timers")
        let ended = try postgres.execute("SELECT status FROM calls WHERE end_reason = 'server_restart' ORDER BY seq")
        #expect((0 ..< ended.count).map { ended.string($0, 0) } == ["ended", "cancelled"])
        #expect(try postgres.revocations() == sqlite.revocations())
        #expect(summary.pushTokens == 2)
        #expect(Set(try postgres.pushTokens()) == Set(try sqlite.pushTokens()))
        #expect(summary.users == 2)
        #expect(try postgres.users(ofAny: ["bob", "carol"]).sorted { $0.uid < $1.uid } == sqlite.users())
        #expect(summary.webhookDeliveries == 3)
        #expect(
            try postgres.webhookDeliveries(WebhookDeliveryQuery(limit: 100)).deliveries
                == sqlite.webhookDeliveries(WebhookDeliveryQuery(limit: 100)).deliveries)
        #expect(
            try postgres.claimWebhookDeliveries(term: 1, limit: 10).map(\.seq) == [9],
            "the cluster sends what was pending")
        let secret = try #require(try TokenSecret.kept(in: directory.file("data")))
        #expect(
            try postgres.execute("SELECT value FROM cluster_secrets WHERE name = 'token_secret'").string(0, 0)
                == TokenSecret.hex(secret))
        #expect(try postgres.nextSeq() > summary.highestPosition)
    }

    /// A store a crash left (its log not yet copied back, no lock held) is
    /// read whole through the read-only connection.
    @Test func aStoreWithItsLogStillBesideItIsReadWhole() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("ringd.sqlite")
        let store = try CallStore(path: path)
        defer { store.close() }
        let call = Call(
            sessionId: "s1", callType: .audio, status: .rejected, initiator: "alice", receiver: "bob",
            initiatedAt: 1_700_000_000_000, endedAt: 1_700_000_001_000, endReason: .rejected, timeoutMs: 30_000, seq: 1)
        try store.commitAndWait(
            [CallChange(before: nil, after: call, transition: nil, actor: .server)], reservingSeq: 1000)
        #expect(directory.contains("ringd.sqlite-wal"))
        let server = try ThrowawayPostgres()
        defer { server.stop() }

        let summary = try StoreMigrator.migrate(from: path, to: server.url, now: Self.migratedAt)
        #expect(summary.calls == 1 && summary.highestPosition == 1000 && summary.tokenSecret == .noneKept)
        #expect(try PostgresConnection(url: server.url).call(sessionId: "s1") == call)
    }

    @Test func aTargetWithCallsAnotherSecretOrAServingNodeIsRefusedUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.makeStore(in: directory)
        let server = try ThrowawayPostgres()
        defer { server.stop() }
        let postgres = try server.migratedConnection()
        func refusal() throws -> String {
            try #require(throws: StoreMigrationError.self) {
                try StoreMigrator.migrate(from: path, to: server.url, now: Self.migratedAt)
            }.message
        }
        func callCount() throws -> Int64? { try postgres.execute("SELECT count(*) FROM calls").int64(0, 0) }

        try postgres.execute(
            "INSERT INTO cluster_secrets (name, value) VALUES ('token_secret', $1)",
            [String(repeating: "ab", count: 32)])
        #expect(try refusal().contains("holds another token secret"))
        #expect(try callCount() == 0, "the refused transaction copied nothing")
        try postgres.execute("DELETE FROM cluster_secrets")

        let renewed = String(Self.migratedAt - 20_000)
        try postgres.execute("INSERT INTO nodes (started_at, renewed_at, name) VALUES ($1, $1, 'node-a')", [renewed])
        #expect(try refusal().hasPrefix("cluster node \"node-a\" renewed its lease 20 s ago: stop every node"))
        try postgres.execute("DELETE FROM nodes")

        _ = try StoreMigrator.migrate(from: path, to: server.url, now: Self.migratedAt)
        let copied = try callCount()
        let holdsCalls = try refusal()
        #expect(holdsCalls.hasPrefix("PostgreSQL already holds calls"), "\(holdsCalls)")
        #expect(try callCount() == copied)
    }

    /// A store a ringd serves is refused before PostgreSQL is contacted.
    @Test func aStoreAnotherProcessServesIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try Self.makeStore(in: directory)
        let lock = try StoreLock(storePath: path)
        defer { lock.release() }
        let error = try #require(throws: StoreMigrationError.self) {
            try StoreMigrator.migrate(from: path, to: "host=/nonexistent dbname=none", now: Self.migratedAt)
        }
        #expect(
            error.message
                == "\(path) is in use by another ringd (pid \(getpid())): stop it first; a store that is served changes while it is copied"
        )
    }

    @Test func aMissingOrInMemoryStoreIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.file("data/ringd.sqlite")
        for (path, message) in [
            (missing, "no SQLite store at \(missing)"),
            (":memory:", ":memory: is a store in memory: there is no file to migrate"),
        ] {
            let error = try #require(throws: StoreMigrationError.self) {
                try StoreMigrator.migrate(from: path, to: "host=/nonexistent dbname=none")
            }
            #expect(error.message == message)
        }
        #expect(!directory.contains("data"), "nothing was created for a missing store")
    }
}
