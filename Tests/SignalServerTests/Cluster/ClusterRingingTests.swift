import Foundation
import SignalProtocol
import TestSupport
import Testing

/// Ringing acknowledgements and `calls.unreachable` with the parties on
/// different nodes: each is a transaction like any other input.
@Suite("Cluster: ringing acknowledgements and unreachable callees across ringd nodes", .blocking)
struct ClusterRingingTests {
    static let failing = #"{"calls": {"unreachable": "fail"}}"#

    @Test("a ringing acknowledgement on one node reaches the caller on the other, and is stored")
    func acknowledgementAcrossNodes() throws {
        let cluster = try SignalingIntegration.TestCluster(nodes: 2, config: Self.failing)
        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let b1 = try cluster.open(1, uid: "bob", deviceId: "b1")
        let b2 = try cluster.open(0, uid: "bob", deviceId: "b2")
        let placed = try alice.initiate(to: "bob").call()
        _ = try b1.waitForEvent(placed.sessionId, .initiated)
        _ = try b2.waitForEvent(placed.sessionId, .initiated)

        let acknowledged = try b1.request("ringing", [("sessionId", .string(placed.sessionId))])
        #expect(try acknowledged.call().ringingDevices == ["b1"], "\(acknowledged) \(cluster.logs)")
        #expect(try alice.waitForEvent(placed.sessionId, .initiated).ringingDevices == ["b1"])
        #expect(try b2.waitForEvent(placed.sessionId, .initiated).ringingDevices == ["b1"])
        let again = try b1.request("ringing", [("sessionId", .string(placed.sessionId))])
        #expect(try again.call().seq == acknowledged.call().seq, "a repeat changes nothing")
        #expect(
            try alice.request("ringing", [("sessionId", .string(placed.sessionId))]).code == "ERR_CALL_NOT_RECEIVER")

        let stored = try SignalingIntegration.rest(port: cluster.port(0), "GET", "/v1/calls/\(placed.sessionId)")
        #expect(stored.json?["ringingDevices"] == .array([.string("b1")]), "\(stored)")
        #expect(try b2.accept(placed.sessionId).call().ringingDevices == ["b1"])

        // No device and no push service: with calls.unreachable fail, placed ended.
        #expect(try alice.end(placed.sessionId).ok)
        let unreachable = try alice.initiate(to: "carol").call()
        #expect(unreachable.status == .unanswered && unreachable.endReason == .unreachable, "\(cluster.logs)")
    }

    @Test("every push refused for good, pushed from the caller's node, ends the call as unreachable")
    func unreachableThroughPushAcrossNodes() throws {
        let rig = try ClusterPushTests.Rig()
        guard case .object(var members) = try JSONValue.parse(rig.config) else { throw ClusterRingingError() }
        members.append(("calls", .object([("unreachable", .string("fail"))])))
        let cluster = try SignalingIntegration.TestCluster(nodes: 2, config: JSONValue.object(members).serialized)
        let pixel = try cluster.open(1, uid: "bob", deviceId: "pixel")
        let registered = try pixel.request(
            "registerPushToken", [("platform", .string("fcm")), ("token", .string(ClusterPushTests.deadToken))])
        #expect(registered.ok, "\(registered)")
        pixel.close()
        #expect(waitUntil(timeout: 10) { ClusterPushTests.devices(of: "bob", on: 0, cluster) == ["pixel"] })

        let alice = try cluster.open(0, uid: "alice", deviceId: "a1")
        let placed = try alice.initiate(to: "bob").call()
        #expect(placed.status == .initiated)
        let ended = try alice.waitForEvent(placed.sessionId, .unanswered, timeout: 15)
        #expect(ended.endReason == .unreachable, "\(ended) \(cluster.logs)")
        let stored = try SignalingIntegration.rest(port: cluster.port(1), "GET", "/v1/calls/\(placed.sessionId)")
        #expect(stored.json?["endReason"] == .string("unreachable"), "\(stored)")
    }
}

private struct ClusterRingingError: Error {}
