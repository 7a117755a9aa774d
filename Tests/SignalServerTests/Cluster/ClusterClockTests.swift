import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

/// Nodes whose clocks disagree: deadlines and pruning are on the
/// database's clock, so a node 90 s fast moves none of them. (Debug builds
/// of ringd take `RINGD_TESTS_WALL_OFFSET_MS`, the offset of their wall clock.)
@Suite("Cluster: a node whose clock is off", .blocking)
struct ClusterClockTests {
    typealias TestCluster = SignalingIntegration.TestCluster

    /// Two nodes, the second's wall clock 90 s fast.
    static func skewedCluster() throws -> TestCluster {
        let cluster = try TestCluster(nodes: 1)
        try cluster.addNode(environment: ["RINGD_TESTS_WALL_OFFSET_MS": "90000"])
        return cluster
    }

    @Test("a node clock 90 s fast changes no ring timeout, whichever node set it")
    func ringTimeouts() throws {
        let cluster = try Self.skewedCluster()
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let timeout = 3.0
        // Placed on the right clock, looked for on both: the fast node must not fire it early.
        let started = monotonicSeconds()
        let fromRight = try alice.initiate(to: "bob", timeout: Int(timeout)).call().sessionId
        let over = try bob.waitForEvent(fromRight, .unanswered, timeout: timeout + 3)
        #expect(over.endReason == .timeout)
        #expect(monotonicSeconds() - started >= timeout - 0.3, "fired early: \(cluster.logs)")
        // Placed on the fast node: due on the database's clock, not 90 s late.
        let carol = try cluster.open(0, uid: "carol", deviceId: "c1")
        let again = monotonicSeconds()
        let fromFast = try bob.initiate(to: "carol", timeout: Int(timeout)).call().sessionId
        _ = try carol.waitForEvent(fromFast, .unanswered, timeout: timeout + 3)
        #expect(monotonicSeconds() - again >= timeout - 0.3, "fired early: \(cluster.logs)")
    }

    @Test("a fast node does not prune another node's large messages before a minute")
    func pruningOnTheDatabaseClock() throws {
        let cluster = try Self.skewedCluster()
        let db = try PostgresConnection(url: cluster.url)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(0, uid: "bob", deviceId: "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        #expect(try bob.accept(sessionId).ok)
        _ = try alice.waitForEvent(sessionId, .ongoing)
        // Bob moves to a node that is alive but does not listen: what he is sent waits in node_messages.
        try db.execute(
            """
            INSERT INTO nodes (node_id, started_at, renewed_at, name)
            VALUES (999, 0, \(PostgresConnection.databaseNow) + 3600000, 'not listening')
            """)
        try db.execute("UPDATE presence SET node_id = 999 WHERE uid = 'bob'")
        let sdp = String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host\r\n", count: 200)
        #expect(try alice.signal(sessionId, .object([("kind", .string("offer")), ("sdp", .string(sdp))])).ok)
        let waiting = "SELECT count(*) FROM node_messages WHERE node_id = 999"
        #expect(try db.execute(waiting).int64(0, 0) == 1)
        // Each node prunes every third of a lease: several rounds of the fast node's leave it.
        #expect(
            !waitUntil(timeout: TestCluster.leaseSeconds * 2) { (try? db.execute(waiting).int64(0, 0)) == 0 },
            "a fast node pruned a message seconds old: \(cluster.logs)")
    }

    @Test("a token minted on a node 90 s fast is revoked by a revocation on another node after it")
    func revocationOnTheDatabaseClock() throws {
        let cluster = try Self.skewedCluster()
        let old = try Self.mint(on: cluster, node: 1)
        #expect(try SignalingIntegration.rest(port: cluster.port(0), "DELETE", "/v1/users/alice/tokens").status == 204)
        // Issued before the revocation, on the database's clock: refused on each node once it heard.
        for node in 0 ..< 2 {
            #expect(
                waitUntil(timeout: 5) { (try? Self.auth(old, on: cluster, node: node))?.code == "ERR_AUTH_FAILED" },
                "node \(node) still takes a token issued before the revocation: \(cluster.logs)")
        }
        let new = try Self.mint(on: cluster, node: 1)
        for node in 0 ..< 2 {
            let reply = try Self.auth(new, on: cluster, node: node)
            #expect(reply.ok, "node \(node): \(reply) \(cluster.logs)")
        }
    }

    static func mint(on cluster: TestCluster, node: Int) throws -> String {
        let minted = try #require(
            try SignalingIntegration.rest(port: cluster.port(node), "POST", "/v1/users/alice/tokens", body: "{}").json)
        return try #require(minted["authToken"]?.stringValue)
    }

    static func auth(_ token: String, on cluster: TestCluster, node: Int) throws -> SignalingIntegration.Reply {
        try SignalingIntegration.Device.connect(port: cluster.port(node)).auth(token: token, deviceId: "a\(node)")
    }
}
