import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// `calls.unreachable` with push configured: the push worker tells the
/// machine when nothing can wake the callee (the mock APNs and FCM answer).
@Suite(.blocking) struct PushUnreachableTests {
    static func failing(_ config: inout ServerConfig) { config.unreachable = .fail }

    @Test func withFailACalleeWithNoDeviceAndNoTokenIsUnreachable() throws {
        let rig = try RingdPushRig(server: Self.failing)
        defer { rig.finish() }
        let alice = try rig.harness.device("alice", "a1")
        let reply = try alice.initiate(to: "bob")
        let placed = try reply.call()
        #expect(placed.status == .initiated && reply.ringing == 0, "the push worker decides, after the commit")
        let ended = try alice.waitForEvent(placed.sessionId, .unanswered)
        #expect(ended.endReason == .unreachable && ended.endedBy == nil, "\(ended)")
        // The FCM access token may be fetched ahead of any push: only pushes count.
        #expect(try rig.mock.requests.filter { $0.kind != .oauth }.isEmpty, "no push went out")
    }

    @Test func withFailEveryPushRefusedForGoodMakesTheCallUnreachable() throws {
        let rig = try RingdPushRig(
            script: [
                RingdPushRig.iphoneToken: [MockPushAnswer(status: 410, reason: "Unregistered")],
                RingdPushRig.pixelToken: [MockPushAnswer(status: 404, fcmError: "UNREGISTERED")],
            ], server: Self.failing)
        defer { rig.finish() }
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken)
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try rig.harness.device("alice", "a1")
        let placed = try alice.initiate(to: "bob").call()
        let ended = try alice.waitForEvent(placed.sessionId, .unanswered, timeout: 15)
        #expect(ended.endReason == .unreachable, "\(ended)")
        #expect(try rig.requests(for: RingdPushRig.iphoneToken).map(\.status) == [410])
        #expect(try rig.requests(for: RingdPushRig.pixelToken).map(\.status) == [404])
    }

    @Test func oneTakenPushKeepsTheCallRinging() throws {
        let rig = try RingdPushRig(
            script: [RingdPushRig.iphoneToken: [MockPushAnswer(status: 410, reason: "Unregistered")]],
            server: Self.failing)
        defer { rig.finish() }
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken)
        try rig.register("bob", "pixel", .fcm, RingdPushRig.pixelToken)
        let alice = try rig.harness.device("alice", "a1")
        let placed = try alice.initiate(to: "bob").call()
        rig.waitForOutcome("bob", "pixel", .sent)
        #expect(
            waitUntil(timeout: 10) {
                (try? rig.harness.rest("GET", "/v1/users/bob/devices/iphone/push-token"))?.status == 404
            }, "the dead token is removed")
        #expect(try alice.activeCall()?.status == .initiated)
        // The woken device connects and says it shows the ring.
        let pixel = try rig.harness.device("bob", "pixel")
        let acknowledged = try pixel.request("ringing", [("sessionId", .string(placed.sessionId))]).call()
        #expect(acknowledged.ringingDevices == ["pixel"])
        #expect(try alice.waitForEvent(placed.sessionId, .initiated).ringingDevices == ["pixel"])
    }

    @Test func withTheDefaultEveryPushRefusedLeavesTheCallRinging() throws {
        let rig = try RingdPushRig(script: [
            RingdPushRig.iphoneToken: [MockPushAnswer(status: 410, reason: "Unregistered")]
        ])
        defer { rig.finish() }
        try rig.register("bob", "iphone", .apnsVoip, RingdPushRig.iphoneToken)
        let alice = try rig.harness.device("alice", "a1")
        let placed = try alice.initiate(to: "bob").call()
        #expect(
            waitUntil(timeout: 10) {
                (try? rig.harness.rest("GET", "/v1/users/bob/devices/iphone/push-token"))?.status == 404
            })
        #expect(try alice.activeCall()?.status == .initiated)
        let bob = try rig.harness.device("bob", "b1")
        #expect(try bob.activeCall()?.sessionId == placed.sessionId, "a device that connects late still rings")
    }
}
