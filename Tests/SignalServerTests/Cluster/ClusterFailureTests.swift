import Foundation
import SignalProtocol
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` of cluster nodes: a call goes on when its party reconnects to
/// another node, ends `connection_lost` when it does not, and a ringing
/// call still times out when the node that placed it is gone; what a node
/// acknowledged before it died is in the database.
@Suite("Cluster: kill -9 of ringd nodes", .blocking)
struct ClusterFailureTests {
    typealias Device = SignalingIntegration.Device
    typealias TestCluster = SignalingIntegration.TestCluster

    /// How long a killed node's devices count as connected at most, plus
    /// their grace period, plus slack for a loaded machine.
    static let lossBound = TestCluster.leaseSeconds * 2 + TestCluster.graceSeconds + 5

    /// alice's call with bob, accepted.
    static func ongoingCall(_ alice: Device, _ bob: Device) throws -> String {
        let sessionId = try alice.initiate(to: bob.uid).call().sessionId
        #expect(try bob.accept(sessionId).ok)
        _ = try alice.waitForEvent(sessionId, .ongoing)
        return sessionId
    }

    @Test(
        "the node holding alice dies mid-call: she reconnects to another and the call goes on; carol, who does not, loses hers"
    )
    func nodeDiesMidCall() throws {
        let cluster = try TestCluster(nodes: 3)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let carol = try cluster.open(0, uid: "carol", deviceId: "c1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let dave = try cluster.open(1, uid: "dave", deviceId: "d1")
        let kept = try Self.ongoingCall(alice, bob)
        let lost = try Self.ongoingCall(carol, dave)

        cluster.nodes[0].signal(SIGKILL)
        #expect(cluster.nodes[0].waitForExit(timeout: 10))
        let back = try cluster.open(2, uid: "alice", deviceId: "a1")
        let active = try back.request("getActiveCall")
        #expect(active.data?["call"]?["sessionId"] == .string(kept), "the acknowledged accept is kept: \(active)")
        #expect(active.data?["call"]?["status"] == .string("ongoing"))

        let ended = try dave.waitForEvent(lost, .ended, timeout: Self.lossBound)
        #expect(ended.endReason == .connectionLost, "\(ended)")
        // bob's call outlived carol's, whose party never came back: alice's return kept it.
        let still = try bob.request("getActiveCall")
        #expect(still.data?["call"]?["sessionId"] == .string(kept), "\(still) \(cluster.logs)")
        #expect(try back.end(kept).ok)
        #expect(try bob.waitForEvent(kept, .ended).endReason == .hangup)
    }

    @Test("the node that placed a ringing call dies: another node still times it out")
    func ringTimeoutOutlivesItsNode() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let placed = try alice.initiate(to: "bob", timeout: 2).call()
        _ = try bob.waitForEvent(placed.sessionId, .initiated)

        cluster.nodes[0].signal(SIGKILL)
        #expect(cluster.nodes[0].waitForExit(timeout: 10))
        let over = try bob.waitForEvent(placed.sessionId, .unanswered, timeout: Self.lossBound)
        #expect(over.endReason == .timeout, "\(over)")
        #expect(over.endedAt.map { $0 >= placed.initiatedAt + 2000 } == true, "not before its deadline: \(over)")
        let stored = try #require(
            try SignalingIntegration.rest(port: cluster.port(1), "GET", "/v1/calls/\(placed.sessionId)").json)
        #expect(stored["status"] == .string("unanswered"), "\(stored.serialized)")
    }

    @Test("a node that stops on SIGTERM leaves: its users' calls go on from another node")
    func gracefulLeave() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let sessionId = try Self.ongoingCall(alice, bob)
        cluster.nodes[0].signal(SIGTERM)
        #expect(cluster.nodes[0].waitForExit(timeout: 15), "\(cluster.logs)")
        let back = try cluster.open(1, uid: "alice", deviceId: "a1")
        let active = try back.request("getActiveCall")
        #expect(active.data?["call"]?["sessionId"] == .string(sessionId), "\(active)")
        _ = try bob.drainEvents()
        #expect(
            try bob.expectNoEvent(within: TestCluster.graceSeconds + 1),
            "the call changed: \(bob.bufferedEvents) \(cluster.logs)")
    }

    @Test(
        "the database restarts mid-call: nodes drop their clients and say not ready until it is back; the call goes on")
    func databaseRestart() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let sessionId = try Self.ongoingCall(alice, bob)

        try cluster.postgres.crash()
        for device in [alice, bob] {
            let code = try? device.nextClose(timeout: 10)
            #expect(code == .goingAway, "\(cluster.logs)")
        }
        #expect(
            waitUntil(timeout: 10) {
                (try? SignalingIntegration.rest(port: cluster.port(0), "GET", "/readyz"))?.status == 503
            })
        try cluster.postgres.start()
        #expect(cluster.becomesReady(0) && cluster.becomesReady(1), "\(cluster.logs)")

        let aliceBack = try cluster.open(1, uid: "alice", deviceId: "a1")
        let bobBack = try cluster.open(0, uid: "bob", deviceId: "b1")
        let active = try aliceBack.request("getActiveCall")
        #expect(active.data?["call"]?["sessionId"] == .string(sessionId), "the committed accept survived: \(active)")
        #expect(
            try bobBack.expectNoEvent(within: TestCluster.graceSeconds + 1),
            "the call changed: \(bobBack.bufferedEvents) \(cluster.logs)")
        #expect(try aliceBack.end(sessionId).ok)
        #expect(try bobBack.waitForEvent(sessionId, .ended).endReason == .hangup)
    }

    @Test("a failover to a new timeline: a resume from before it answers resumed false, one after it resumes")
    func resumeAcrossFailover() throws {
        let cluster = try TestCluster(nodes: 2)
        let alice = try Device.connect(port: cluster.port(0))
        let auth = try alice.auth(uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        guard case .string(let before)? = auth.data?["epoch"] else {
            Issue.record("no epoch: \(auth)")
            return
        }
        let sessionId = try Self.ongoingCall(alice, bob)
        let seq = try #require(try alice.request("getActiveCall").data?["call"]?["seq"]?.integerValue)

        // What a promoted replica looks like: the same data, the next timeline.
        try cluster.postgres.nextTimeline()
        #expect(cluster.becomesReady(0) && cluster.becomesReady(1), "\(cluster.logs)")
        let back = try Device.connect(port: cluster.port(1))
        let stale = try SignalingIntegration.ResumeTests.resume(back, "alice", "a1", after: seq, epoch: before)
        #expect(stale.data?["resumed"] == .bool(false) && stale.data?["calls"] == .array([]), "\(stale)")
        #expect(stale.data?["activeCall"]?["sessionId"] == .string(sessionId), "the snapshot instead: \(stale)")
        guard case .string(let after)? = stale.data?["epoch"], after != before else {
            Issue.record("the epoch did not change: \(stale)")
            return
        }
        let now = try #require(stale.data?["seq"]?.integerValue)
        let again = try SignalingIntegration.ResumeTests.resume(
            try Device.connect(port: cluster.port(0)), "alice", "a1", after: now, epoch: after)
        #expect(again.data?["resumed"] == .bool(true), "\(again) \(cluster.logs)")
    }
}
