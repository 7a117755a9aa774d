import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// What a cluster must get exactly right at its edges: each change heard
/// once whichever node fires it, messages too large for a notification,
/// revocations on every node, a device replaced from another node, both
/// parties leaving at once on two nodes, and a node that froze.
@Suite("Cluster: exactly once, large messages, revocations, replaced devices, a frozen node", .blocking)
struct ClusterEdgeTests {
    typealias Device = SignalingIntegration.Device
    typealias TestCluster = SignalingIntegration.TestCluster

    @Test("a ring timeout two nodes look for is heard once, and the losing device hears the accept once")
    func exactlyOnce() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let placed = try alice.initiate(to: "bob", timeout: 1).call()
        _ = try alice.waitForEvent(placed.sessionId, .unanswered, timeout: 5)
        _ = try bob.waitForEvent(placed.sessionId, .unanswered, timeout: 5)
        // Both nodes look for due timers every 200 ms: a second firing would come within a second.
        #expect(try bob.expectNoEvent(within: 1), "bob heard the call change again")
        #expect(try alice.drainEvents().filter { $0.status == .unanswered }.isEmpty, "alice heard the timeout twice")

        let phone = try cluster.open(0, uid: "carol", deviceId: "phone")
        let laptop = try cluster.open(1, uid: "carol", deviceId: "laptop")
        let call = try alice.initiate(to: "carol").call().sessionId
        #expect(try phone.accept(call).ok)
        _ = try laptop.waitForEvent(call, .ongoing)
        #expect(try laptop.expectNoEvent(within: 1), "the laptop heard the accept twice: \(laptop.bufferedEvents)")
    }

    @Test("metadata and a signal too large for a notification still reach the other node")
    func largeMessages() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let metadata = JSONValue.object([("note", .string(String(repeating: "m", count: 4000)))])
        let sessionId = try alice.initiate(to: "bob", metadata: metadata).call().sessionId
        // The event carries the metadata escaped once more inside the node message.
        #expect(try bob.waitForEvent(sessionId, .initiated).metadata == metadata)
        _ = try bob.accept(sessionId)
        let sdp = String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54321 typ host\r\n", count: 200)
        #expect(try alice.signal(sessionId, .object([("kind", .string("offer")), ("sdp", .string(sdp))])).ok)
        #expect(try bob.nextSignal()["payload"]?["sdp"] == .string(sdp))
        let left = try PostgresRows.count(url: cluster.url, "SELECT count(*) FROM node_messages")
        #expect(left == 0, "a node took each large message it was sent")
    }

    @Test("a revocation on one node refuses the user's tokens on the others")
    func revocationEverywhere() throws {
        let cluster = try TestCluster(nodes: 2)
        let minted = try #require(
            try SignalingIntegration.rest(
                port: cluster.port(0), "POST", "/v1/users/alice/tokens",
                body: "{}"
            ).json)
        let token = try #require(minted["authToken"]?.stringValue)
        #expect(try Device.connect(port: cluster.port(1)).auth(token: token, deviceId: "a1").ok)
        #expect(try SignalingIntegration.rest(port: cluster.port(0), "DELETE", "/v1/users/alice/tokens").status == 204)
        #expect(
            waitUntil(timeout: 5) {
                (try? Device.connect(port: cluster.port(1)).auth(token: token, deviceId: "a2"))?.code
                    == "ERR_AUTH_FAILED"
            }, "\(cluster.logs)")
    }

    @Test("a device connecting on another node replaces its old connection there (4003)")
    func replacedAcrossNodes() throws {
        let cluster = try TestCluster(nodes: 2)
        let first = try cluster.open(0, uid: "alice", deviceId: "a1")
        let second = try cluster.open(1, uid: "alice", deviceId: "a1")
        #expect(try first.nextClose(timeout: 5) == .replaced)
        #expect(try second.request("getActiveCall").ok)
    }

    @Test("both parties leave at once on two nodes: the call ends once, after grace, no deadlock")
    func bothLeaveAtOnce() throws {
        let cluster = try TestCluster(nodes: 2)
        let watcher = try cluster.open(0, uid: "alice", deviceId: "watch")
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.accept(sessionId)
        _ = try watcher.waitForEvent(sessionId, .ongoing)
        watcher.close()
        alice.close()
        bob.close()
        let observer = try cluster.open(1, uid: "carol", deviceId: "c1")
        _ = observer
        #expect(
            waitUntil(timeout: TestCluster.graceSeconds + 8) {
                (try? SignalingIntegration.rest(port: cluster.port(1), "GET", "/v1/calls/\(sessionId)").json?["status"])
                    == .string("ended")
            }, "\(cluster.logs)")
        let stored = try #require(
            try SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/calls/\(sessionId)").json)
        #expect(stored["endReason"] == .string("connection_lost"), "\(stored.serialized)")
    }

    @Test(
        "a node frozen past its lease is declared dead: its call ends after grace, and once it thaws it drops its clients"
    )
    func frozenNode() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let sessionId = try alice.initiate(to: "bob").call().sessionId
        _ = try bob.accept(sessionId)
        _ = try alice.waitForEvent(sessionId, .ongoing)

        cluster.nodes[0].signal(SIGSTOP)
        let ended = try bob.waitForEvent(
            sessionId, .ended, timeout: TestCluster.leaseSeconds * 2 + TestCluster.graceSeconds + 5)
        #expect(ended.endReason == .connectionLost, "\(ended)")
        // Its listening session was ended, and the locks it held (the webhook leader's) with it.
        #expect(
            waitUntil(timeout: 5) {
                (try? PostgresRows.count(
                    url: cluster.url,
                    """
                    SELECT count(*) FROM pg_stat_activity a JOIN nodes n ON a.pid = n.listener_pid WHERE n.dead
                    """)) == 0
            })
        cluster.nodes[0].signal(SIGCONT)
        // The thawed node finds itself dead and closes the connection it can no longer serve.
        #expect(try alice.nextClose(timeout: 10) == .goingAway, "\(cluster.logs)")
        #expect(cluster.becomesReady(0), "\(cluster.logs)")
        let back = try cluster.open(0, uid: "alice", deviceId: "a1")
        #expect(try back.request("getActiveCall").data?["call"] == .null)
    }
}

extension PostgresRows {
    /// The integer the query `sql` returns, read on a connection of its own.
    static func count(url: String, _ sql: String) throws -> Int64? {
        try PostgresConnection(url: url).execute(sql).int64(0, 0)
    }
}
