import CoreTestSupport
import SignalProtocol
import Testing

@testable import SignalCore

/// Ringing acknowledgements (`ringing`) and calls nothing can ring
/// (`calls.unreachable`).
@Suite struct CallStateMachineRingingTests {
    static let failing = SignalingSettings(unreachable: .fail)
    static let failingWithPush = SignalingSettings(pushes: true, unreachable: .fail)

    @Test func aCalleeDeviceAcknowledgingReachesEveryOtherDeviceAndStaysOnTheCall() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        let first = h.ringing(id, by: b2)
        let acknowledged = try #require(first.resultCall(to: b2))
        #expect(acknowledged.status == .initiated && acknowledged.ringingDevices == ["b-laptop"])
        #expect(first.eventAddresses == addresses(a1, a2, b1))
        #expect(first.saves == [acknowledged])
        #expect(first.changes.first?.transition == .ringing(deviceId: "b-laptop"))
        #expect(first.schedules.isEmpty, "the ring deadline stays as it was")

        let second = h.ringing(id, by: b1)
        #expect(try #require(second.resultCall(to: b1)).ringingDevices == ["b-laptop", "b-phone"], "in ack order")
        #expect(second.events.allSatisfy { $0.call.ringingDevices == ["b-laptop", "b-phone"] })

        let accepted = try #require(h.accept(id, by: b1).resultCall(to: b1))
        #expect(accepted.status == .ongoing && accepted.ringingDevices == ["b-laptop", "b-phone"])
        #expect(h.ringing(id, by: b2).errorCode(to: b2) == .alreadyJoined)
    }

    @Test func sayingItAgainChangesNothingAndSucceeds() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.ringing(id, by: b1)
        let again = h.ringing(id, by: b1)
        #expect(try #require(again.resultCall(to: b1)).ringingDevices == ["b-phone"])
        #expect(again.changes.isEmpty && again.events.isEmpty)
    }

    @Test func onlyTheCalleesDevicesAcknowledge() throws {
        let (h, a1, a2, _, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol", "c1")
        let id = h.ring(from: a1, to: "bob")
        #expect(h.ringing(id, by: a2).errorCode(to: a2) == .notReceiver)
        #expect(h.ringing(id, by: carol).errorCode(to: carol) == .notAParty)
        let unknown = h.ringing(String(repeating: "f", count: 32), by: a1)
        #expect(unknown.resolutions.count == 1, "the store tells an ended call from an unknown one")
        #expect(h.live("alice")?.ringingDevices == [])
    }

    @Test func theListStopsAtTheDeviceLimit() throws {
        let h = MachineHarness(settings: SignalingSettings(maxDevicesPerUser: 2))
        let a1 = h.online("alice", "a1")
        let b1 = h.online("bob", "b1")
        let b2 = h.online("bob", "b2")
        let id = h.ring(from: a1, to: "bob")
        h.ringing(id, by: b1)
        h.ringing(id, by: b2)
        h.disconnect(b2)
        let b3 = h.online("bob", "b3")
        let third = h.ringing(id, by: b3)
        #expect(try #require(third.resultCall(to: b3)).ringingDevices == ["b1", "b2"])
        #expect(third.changes.isEmpty)
    }

    // MARK: calls.unreachable

    @Test func withFailAndNoPushAnOfflineCalleeIsPlacedUnreachable() throws {
        let h = MachineHarness(settings: Self.failing)
        let a1 = h.online("alice", "a1")
        let output = h.initiate(from: a1, to: "bob")
        let call = try #require(output.resultCall(to: a1))
        #expect(call.status == .unanswered && call.endReason == .unreachable && call.endedAt == call.initiatedAt)
        #expect(call.endedBy == nil && call.isMissed(for: "bob"))
        #expect(output.resultData(to: a1)?["ringing"] == .integer(0))
        #expect(output.schedules.isEmpty && h.live("alice") == nil)
        #expect(output.saves == [call])
    }

    @Test func withTheDefaultAnOfflineCalleeRingsUntilTheDeadline() throws {
        let h = MachineHarness()
        let a1 = h.online("alice", "a1")
        let id = h.ring(from: a1, to: "bob")
        #expect(h.live("bob")?.status == .initiated)
        #expect(h.unreachable(id).isEmpty, "with ring, a report changes nothing")
        let b1 = h.online("bob", "b1")
        #expect(try #require(h.accept(id, by: b1).resultCall(to: b1)).status == .ongoing)
    }

    @Test func withFailAndPushThePushSidesReportEndsTheCall() throws {
        let h = MachineHarness(settings: Self.failingWithPush)
        let a1 = h.online("alice", "a1")
        let a2 = h.online("alice", "a2")
        let id = h.ring(from: a1, to: "bob")
        #expect(h.live("bob")?.status == .initiated, "the push side decides")
        let output = h.unreachable(id)
        let ended = try #require(output.saves.first)
        #expect(ended.status == .unanswered && ended.endReason == .unreachable && ended.endedBy == nil)
        #expect(output.eventAddresses == addresses(a1, a2))
        #expect(output.changes.first?.transition == .unreachable)
        #expect(output.actions.contains(.cancel(.ring(sessionId: id))))
        #expect(output.actions.contains(.pushStopped(ended)))
        #expect(h.unreachable(id).isEmpty, "once")
    }

    @Test func aReportIsIgnoredOnceADeviceConnectedOrAcknowledged() throws {
        let h = MachineHarness(settings: Self.failingWithPush)
        let a1 = h.online("alice", "a1")
        let id = h.ring(from: a1, to: "bob")
        let b1 = h.online("bob", "b1")
        #expect(h.unreachable(id).isEmpty, "a connected callee device rings")
        h.ringing(id, by: b1)
        h.disconnect(b1)
        #expect(h.unreachable(id).isEmpty, "a device that showed the ring may ring on through CallKit")
        #expect(h.live("bob")?.status == .initiated)
        h.accept(id, by: h.online("bob", "b1"))
        #expect(h.unreachable(id).isEmpty, "an answered call is not unreachable")
        #expect(h.live("bob")?.status == .ongoing)
    }

    @Test func withFailAConnectedCalleeRingsAsAlways() throws {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob(settings: Self.failing)
        let output = h.initiate(from: a1, to: "bob")
        #expect(output.resultCall(to: a1)?.status == .initiated)
        #expect(output.resultData(to: a1)?["ringing"] == .integer(2))
    }
}
