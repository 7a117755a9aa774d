import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// The listener's edges: what a notification names that cannot be read
/// makes the node attach again rather than drop it, and a listener held up
/// by a slow statement does not cost the node its lease.
@Suite("Cluster: the listener's failed reads and the lease", .blocking)
struct ClusterListenerTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// The number node 1 registered under (nodes register one after the other).
    static func secondNode(_ db: PostgresConnection) throws -> Int64 {
        try #require(try db.execute("SELECT max(node_id) FROM nodes WHERE NOT dead").int64(0, 0))
    }

    /// A signal too large for a notification: it travels as a `node_messages` row.
    static let largeOffer = JSONValue.object([
        ("kind", .string("offer")),
        ("sdp", .string(String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host\r\n", count: 200))),
    ])

    /// A call from `caller` that `callee` accepted; its session id.
    static func call(_ caller: SignalingIntegration.Device, _ callee: SignalingIntegration.Device) throws -> String {
        let sessionId = try caller.initiate(to: callee.uid).call().sessionId
        #expect(try callee.accept(sessionId).ok)
        _ = try caller.waitForEvent(sessionId, .ongoing)
        return sessionId
    }

    @Test("a large message whose row is gone before its node reads it makes the node attach again")
    func lostMessageRow() throws {
        let cluster = try TestCluster(nodes: 2)
        let db = try PostgresConnection(url: cluster.url)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        // The rows sent to node 1 vanish in the transaction that writes them.
        try db.run(
            script: """
                CREATE FUNCTION vanish() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN DELETE FROM node_messages WHERE id = NEW.id; RETURN NULL; END $$;
                CREATE TRIGGER vanish AFTER INSERT ON node_messages FOR EACH ROW
                WHEN (NEW.node_id = \(try Self.secondNode(db))) EXECUTE FUNCTION vanish();
                """)
        let sessionId = try Self.call(alice, bob)
        #expect(try alice.signal(sessionId, Self.largeOffer).ok)
        // Bob's node could not read what it was sent: it drops its clients
        // (they resume from the database), rather than leave bob unaware.
        #expect(try bob.nextClose(timeout: 5) == .goingAway, "\(cluster.logs)")
        try db.execute("DROP TRIGGER vanish ON node_messages")
        #expect(cluster.becomesReady(1), "\(cluster.logs)")
        let back = try cluster.open(1, uid: "bob", deviceId: "b1")
        let active = try back.request("getActiveCall").data?["call"]
        #expect(active?["sessionId"] == .string(sessionId), "\(String(describing: active))")
    }

    @Test("a listener held up in a statement for twice the lease costs its node neither the lease nor its clients")
    func slowListenerKeepsLease() throws {
        let cluster = try TestCluster(nodes: 2)
        let db = try PostgresConnection(url: cluster.url)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        // Node 1's listener takes a large message in a statement that lasts two leases.
        try db.run(
            script: """
                CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(\(TestCluster.leaseSeconds * 2)); RETURN OLD; END $$;
                CREATE TRIGGER slow BEFORE DELETE ON node_messages FOR EACH ROW
                WHEN (OLD.node_id = \(try Self.secondNode(db))) EXECUTE FUNCTION slow();
                """)
        let sessionId = try Self.call(alice, bob)
        #expect(try alice.signal(sessionId, Self.largeOffer).ok)
        #expect(try bob.nextSignal(timeout: TestCluster.leaseSeconds * 2 + 5)["payload"] == Self.largeOffer)
        #expect(!cluster.nodes[1].log.contains("registering again"), "\(cluster.logs)")
        #expect(try bob.request("getActiveCall").ok)
    }

    @Test("the lease's connection: a short statement timeout, no wait for fsync, and a timeout only fails one renewal")
    func leaseConnection() throws {
        let cluster = try TestCluster(nodes: 1)
        let db = try PostgresConnection(url: cluster.url)
        let lease = try ClusterLease.session(url: cluster.url, leaseSeconds: TestCluster.leaseSeconds)
        #expect(try lease.execute("SHOW statement_timeout").string(0, 0) == "333ms")
        #expect(try lease.execute("SHOW synchronous_commit").string(0, 0) == "off")
        let node = try #require(try db.execute("SELECT node_id FROM nodes WHERE NOT dead").int64(0, 0))
        // Another session holds the node's row: the renewal gives up within its timeout, not the 10 s of others.
        try db.execute("BEGIN")
        try db.execute("SELECT 1 FROM nodes WHERE node_id = $1 FOR UPDATE", [String(node)])
        let started = monotonicSeconds()
        #expect(throws: PostgresError.self) { try lease.renewLease(node: node) }
        #expect(monotonicSeconds() - started < 1)
        try db.execute("COMMIT")
        #expect(try lease.renewLease(node: node) != nil)
    }
}
