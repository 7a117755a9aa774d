import SignalProtocol
import TestSupport
import Testing

/// `clientCallId` replays and `limits.initiatesPerMinute` in a cluster:
/// each transaction reads the caller's recent calls from PostgreSQL, so a
/// retry that lands on another node, and a user's calls through every
/// node, are decided as on one.
@Suite("Cluster: retried initiates and the per-user limit across ringd nodes", .blocking)
struct ClusterRetryTests {
    typealias Device = SignalingIntegration.Device
    typealias Retry = SignalingIntegration.InitiateRetryTests

    @Test("a retry on the other node answers the call the first initiate placed, live or ended")
    func replayOnTheOtherNode() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2)
        let first = try cluster.open(0, uid: "alice", deviceId: "a1")
        let bob = try cluster.open(1, uid: "bob", deviceId: "b1")
        let placed = try Retry.initiate(first, "video", clientCallId: "c-1").call()
        #expect(placed.json["clientCallId"] == .string("c-1"))
        _ = try bob.waitForEvent(placed.sessionId, .initiated)

        // The connection is lost; the device comes back on node 1 and retries.
        first.drop()
        let again = try cluster.open(1, uid: "alice", deviceId: "a1")
        let retry = try Retry.initiate(again, "video", clientCallId: "c-1")
        #expect(retry.data?["replayed"] == .bool(true), "\(retry) \(cluster.logs)")
        #expect(try retry.call().sessionId == placed.sessionId && retry.ringing == 1)
        let other = try Retry.initiate(again, "audio", clientCallId: "c-1")
        #expect(other.code == "ERR_VALIDATION", "\(other)")

        // Rejected: within its ring timeout a retry on node 0 still answers it.
        let rejected = try bob.reject(placed.sessionId, reason: "Driving").call()
        let elsewhere = try cluster.open(0, uid: "alice", deviceId: "a2")
        let late = try Retry.initiate(elsewhere, "video", clientCallId: "c-1")
        #expect(try late.call().json == rejected.json, "\(late)")
        #expect(late.data?["replayed"] == .bool(true))
        let history = try again.request("getCallLogs")
        #expect(SignalingIntegration.logEntries(history.data).count == 1, "\(history)")
        #expect(history.data?["logs"]?[0]?["clientCallId"] == .string("c-1"), "\(history)")
    }

    @Test("limits.initiatesPerMinute counts a user's calls through every node")
    func limitAcrossNodes() throws {
        let cluster = try SignalingIntegration.TestCluster(
            nodes: 2, config: #"{"limits": {"initiatesPerMinute": 2}}"#)
        let onZero = try cluster.open(0, uid: "alice", deviceId: "a1")
        let onOne = try cluster.open(1, uid: "alice", deviceId: "a2")
        _ = try cluster.open(1, uid: "bob", deviceId: "b1")

        let first = try Retry.initiate(onZero, clientCallId: "c-1").call()
        #expect(try Retry.initiate(onOne, clientCallId: "c-1").data?["replayed"] == .bool(true))
        #expect(try onZero.cancel(first.sessionId).ok)
        let second = try onOne.initiate(to: "bob").call()
        #expect(try onOne.cancel(second.sessionId).ok)

        for device in [onZero, onOne] {
            let refused = try device.initiate(to: "bob")
            #expect(refused.code == "ERR_RATE_LIMITED", "\(refused) \(cluster.logs)")
            let retryAfter = try #require(refused.raw["error"]?["retryAfterMs"]?.integerValue)
            #expect(retryAfter > 0 && retryAfter <= 60_000, "\(refused)")
        }
        let carol = try cluster.open(0, uid: "carol", deviceId: "c1")
        #expect(try carol.initiate(to: "bob").ok, "carol has her own allowance")
    }
}
