import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// `connect` and `disconnect`: the connect result, replacement, the device limit.
@Suite(.blocking) struct CallStateMachinePresenceTests {
    @Test func connectRepliesWithUserDeviceAndNoActiveCall() {
        let h = MachineHarness()
        let device = h.newDevice("alice", "a-phone")
        let output = h.connect(device, requestId: "auth-1")
        #expect(
            output.actions == [
                .reply(
                    device.address, id: "auth-1",
                    .success(
                        .authenticated(
                            Authentication(uid: "alice", deviceId: "a-phone", activeCall: nil))))
            ])
        #expect(
            output.resultData(to: device)
                == .object([
                    ("user", .object([("uid", .string("alice"))])),
                    ("deviceId", .string("a-phone")),
                    ("activeCall", .null),
                    ("seq", .integer(0)),
                ]))
        #expect(output.saves.isEmpty)
        #expect(h.machine.isRegistered(device))
    }

    @Test func connectWithoutARequestIdRepliesWithANilId() {
        let h = MachineHarness()
        let device = h.newDevice("alice", "a-phone")
        let output = h.connect(device, requestId: nil)
        #expect(output.replies.count == 1)
        #expect(output.replies.first?.id == nil)
        #expect(output.resultData(to: device)?["deviceId"] == .string("a-phone"))
    }

    @Test func aDeviceConnectingWhileBeingRungSeesTheRingingCall() throws {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let id = h.ring(from: a1, to: "bob")
        let b1 = h.newDevice("bob", "b-phone")
        let output = h.connect(b1)
        let live = try #require(h.live("bob"))
        #expect(live.sessionId == id)
        #expect(output.resultData(to: b1)?["activeCall"] == live.json)
        #expect(output.resultData(to: b1)?["activeCall"]?["status"] == .string("initiated"))
        #expect(output.events.isEmpty && output.saves.isEmpty)
        // And it can answer.
        #expect(h.accept(id, by: b1).resultCall(to: b1)?.acceptedBy == "b-phone")
    }

    @Test func theCallersOtherDeviceConnectingSeesTheOngoingCall() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        let late = h.newDevice("alice", "a-tablet")
        let output = h.connect(late)
        #expect(output.resultData(to: late)?["activeCall"]?["status"] == .string("ongoing"))
        #expect(output.resultData(to: late)?["activeCall"]?["sessionId"] == .string(id))
    }

    @Test func theSameDeviceAtANewAddressReplacesTheOldConnection() throws {
        let h = MachineHarness()
        let old = h.online("alice", "a-phone")
        let fresh = h.newDevice("alice", "a-phone")
        let output = h.connect(fresh)
        let close = try #require(output.closes.first)
        #expect(output.closes.count == 1)
        #expect(close.address == old.address)
        #expect(close.code == WebSocketCloseCode.replaced.rawValue)
        #expect(output.reply(to: fresh) != nil)
        if case .success? = output.reply(to: fresh) {} else { Issue.record("the new connection is registered") }
        #expect(output.replies.count == 1, "the old connection gets no reply")
        #expect(h.machine.isRegistered(fresh))
        #expect(!h.machine.isRegistered(old))
        #expect(h.machine.devices["alice"]?.count == 1)
    }

    @Test func theReplacedConnectionsLaterDisconnectKeepsTheNewOne() {
        let h = MachineHarness()
        let old = h.online("alice", "a-phone")
        let b1 = h.online("bob")
        let id = h.ring(from: b1, to: "alice")
        let fresh = h.newDevice("alice", "a-phone")
        h.connect(fresh)

        #expect(h.disconnect(old).isEmpty, "no grace: alice is still connected")
        #expect(h.machine.isRegistered(fresh))
        #expect(h.send(.getActiveCall, from: old).errorCode(to: old) == .authRequired)
        // Events reach the new connection, not the old one.
        let cancelled = h.cancel(id, by: b1)
        #expect(cancelled.events(to: fresh).map(\.status) == [.cancelled])
        #expect(cancelled.events(to: old).isEmpty)
        #expect(h.advance(by: 60_000).isEmpty)
    }

    @Test func reconnectingAtTheSameAddressClosesNothing() {
        let h = MachineHarness()
        let device = h.online("alice", "a-phone")
        let output = h.connect(device)
        #expect(output.closes.isEmpty)
        #expect(output.resultData(to: device)?["deviceId"] == .string("a-phone"))
    }

    @Test func moreDevicesThanTheLimitAreRefused() {
        let h = MachineHarness(settings: SignalingSettings(maxDevicesPerUser: 2))
        let a1 = h.online("alice", "one")
        let a2 = h.online("alice", "two")
        let third = h.newDevice("alice", "three")
        let output = h.connect(third)
        #expect(output.errorCode(to: third) == .tooManyDevices)
        #expect(output.saves.isEmpty)
        // The refused connection may be closed; the registered ones are not.
        #expect(output.closes.allSatisfy { $0.address == third.address })
        #expect(!h.machine.isRegistered(third))
        #expect(h.machine.devices["alice"]?.count == 2)
        #expect(h.send(.getActiveCall, from: third).errorCode(to: third) == .authRequired)

        // Not registered: it gets no events, and its disconnect changes nothing.
        let b1 = h.online("bob")
        let ringing = h.initiate(from: b1, to: "alice")
        #expect(ringing.eventAddresses == addresses(a1, a2))
        #expect(ringing.resultData(to: b1)?["ringing"] == .integer(2))
        #expect(h.disconnect(third).isEmpty)
        #expect(h.machine.isRegistered(a1) && h.machine.isRegistered(a2))
    }

    @Test func anotherUsersDevicesDoNotCountTowardsTheLimit() {
        let h = MachineHarness(settings: SignalingSettings(maxDevicesPerUser: 1))
        h.online("alice", "one")
        let b1 = h.newDevice("bob", "one")
        if case .success? = h.connect(b1).reply(to: b1) {} else { Issue.record("bob's first device is refused") }
    }

    @Test func replacingADeviceAtTheLimitIsAllowed() {
        let h = MachineHarness(settings: SignalingSettings(maxDevicesPerUser: 2))
        let a1 = h.online("alice", "one")
        h.online("alice", "two")
        let fresh = h.newDevice("alice", "one")
        let output = h.connect(fresh)
        #expect(output.closes.map(\.address) == [a1.address])
        #expect(output.errorCode(to: fresh) == nil)
        #expect(h.machine.isRegistered(fresh))
    }

    @Test func aFreedSlotCanBeTaken() {
        let h = MachineHarness(settings: SignalingSettings(maxDevicesPerUser: 2))
        h.online("alice", "one")
        let two = h.online("alice", "two")
        h.disconnect(two)
        let three = h.newDevice("alice", "three")
        #expect(h.connect(three).errorCode(to: three) == nil)
        #expect(h.machine.isRegistered(three))
    }
}
