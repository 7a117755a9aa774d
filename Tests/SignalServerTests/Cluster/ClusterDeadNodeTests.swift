import Foundation
import SignalCore
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A node that dies or leaves: its devices count as connected nowhere once
/// its lease lapsed, they are all gone within a lease whatever their
/// number, and a node that stops declares itself dead first, so the others
/// take its devices away without waiting for its lease.
@Suite("Cluster: a dead node's devices", .blocking)
struct ClusterDeadNodeTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// A node row as the listener registers one, renewed `age` ms ago.
    static func fakeNode(_ db: PostgresConnection, age: Int64 = 0, dead: Bool = false) throws -> Int64 {
        let now = PostgresConnection.databaseNow
        return try #require(
            try db.execute(
                """
                INSERT INTO nodes (started_at, renewed_at, dead, name)
                VALUES (\(now) - $1::bigint, \(now) - $1::bigint, $2, 'fake') RETURNING node_id
                """, [String(age), dead ? "true" : "false"]
            ).int64(0, 0))
    }

    @Test("the presence a transition reads leaves out the devices of nodes whose lease lapsed, but a disconnect's own")
    func lapsedPresenceIsNotConnected() throws {
        let postgres = try ThrowawayPostgres()
        let db = try postgres.migratedConnection()
        let live = try Self.fakeNode(db)
        let lapsed = try Self.fakeNode(db, age: 5000)
        let dead = try Self.fakeNode(db, dead: true)
        for (deviceId, node) in [("live", live), ("lapsed", lapsed), ("dead", dead)] {
            try db.setPresence(uid: "bob", deviceId: deviceId, at: DeviceAddress(node: node, loop: 0, connection: 1))
        }
        let read = { (kept: Int64?) in
            try db.presence(of: ["bob"], leaseMillis: 2000, keeping: kept)["bob"].map { $0.keys.sorted() }
        }
        #expect(try read(nil) == ["live"], "a push or a `ringing` count would count them")
        #expect(try read(lapsed) == ["lapsed", "live"])
        #expect(try read(dead) == ["dead", "live"])
    }

    @Test("a dead node's 5,000 devices are gone within the lease; one in a call leaves through the rules")
    func manyDevicesAreReapedWithinTheLease() throws {
        let cluster = try TestCluster(nodes: 1)
        let db = try PostgresConnection(url: cluster.url)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(0, uid: "bob", deviceId: "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        #expect(try bob.accept(sessionId).ok)
        _ = try alice.waitForEvent(sessionId, .ongoing)

        // A node that registered and died at once, with 5,000 devices and bob's second one.
        let started = Date()
        let fake = try Self.fakeNode(db)
        try db.execute(
            """
            INSERT INTO presence (uid, device_id, node_id, loop, connection)
            SELECT 'user' || i, 'd', $1::bigint, 0, i FROM generate_series(1, 5000) i
            """, [String(fake)])
        try db.setPresence(uid: "bob", deviceId: "b2", at: DeviceAddress(node: fake, loop: 0, connection: 5001))
        let remaining = {
            try? PostgresRows.count(url: cluster.url, "SELECT count(*) FROM presence WHERE node_id = \(fake)")
        }
        #expect(remaining() == 5001)

        // The lease lapses after one lease; its devices are gone one lease later
        // (slack for a loaded machine), not 64 per round.
        let bound = TestCluster.leaseSeconds * 2 + 2
        #expect(waitUntil(timeout: bound + 30) { remaining() == 0 }, "\(cluster.logs)")
        #expect(Date().timeIntervalSince(started) <= bound, "\(Date().timeIntervalSince(started)) s")
        #expect(
            waitUntil(timeout: 5) {
                (try? PostgresRows.count(url: cluster.url, "SELECT count(*) FROM nodes WHERE node_id = \(fake)")) == 0
            }, "the dead node's row stayed")
        // bob's other device is connected: the call goes on, nobody is told anything.
        #expect(try alice.expectNoEvent(within: 1), "\(alice.bufferedEvents)")
        #expect(try alice.end(sessionId).ok)
        #expect(try bob.waitForEvent(sessionId, .ended).endReason == .hangup)
    }

    @Test("a node that stops declares itself dead first: another takes its devices while its own worker is stuck")
    func gracefulStopDeclaresDeadFirst() throws {
        // A long lease: without the declaration, nobody takes the device before it lapses.
        let cluster = try TestCluster(nodes: 2, environment: ["RINGD_CLUSTER_LEASE_SECONDS": "10"])
        // Held open: the node, not the test, closes it.
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let db = try PostgresConnection(url: cluster.url)
        let node = try #require(
            try db.execute("SELECT node_id FROM presence WHERE uid = 'alice'").int64(0, 0))
        // alice's disconnect on the stopping node waits for her lock, and what the worker queued after it with it.
        try db.execute("SELECT pg_advisory_lock($1::bigint)", [String(PostgresConnection.lockKey("alice"))])
        cluster.nodes[0].signal(SIGTERM)
        #expect(
            waitUntil(timeout: 3) {
                (try? PostgresRows.count(
                    url: cluster.url, "SELECT count(*) FROM nodes WHERE node_id = \(node) AND NOT dead")) == 0
            }, "\(cluster.logs)")
        // Node 1 takes alice's device at its next lease round, well before the lease.
        #expect(
            waitUntil(timeout: 7) {
                (try? PostgresRows.count(url: cluster.url, "SELECT count(*) FROM presence WHERE uid = 'alice'")) == 0
            }, "\(cluster.logs)")
        try db.execute("SELECT pg_advisory_unlock_all()")
        #expect(try alice.nextClose(timeout: 10) == .goingAway)
        #expect(cluster.nodes[0].waitForExit(timeout: 30), "\(cluster.logs)")
    }
}
