import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// `initiateCall`: ringing, busy, refusals, and glare.
@Suite(.blocking) struct CallStateMachineInitiateTests {
    @Test func callingOneselfIsRefusedAndChangesNothing() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let output = h.initiate(from: a1, to: "alice")
        #expect(output.errorCode(to: a1) == .callingSelf)
        #expect(output.saves.isEmpty)
        #expect(output.events.isEmpty)
        #expect(output.schedules.isEmpty)
        #expect(h.live("alice") == nil)
    }

    @Test func ringsEveryCalleeDeviceAndTheCallersOtherDevices() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let output = h.initiate(from: a1, to: "bob")

        let data = try #require(output.resultData(to: a1))
        #expect(data["ringing"] == .integer(2))
        let call = try #require(output.resultCall(to: a1))
        #expect(
            call
                == Call(
                    sessionId: "s1", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
                    initiatorDevice: "a-phone", initiatedAt: MachineHarness.start, timeoutMs: 45_000, seq: 1))
        #expect(output.replies.count == 1)
        #expect(output.replies.first?.id == "r1")

        #expect(output.eventAddresses == addresses(a2, b1, b2))
        #expect(output.events.count == 3)
        #expect(output.events(to: a1).isEmpty)
        for device in [a2, b1, b2] {
            #expect(output.events(to: device) == [call])
        }
        #expect(output.saves == [call])
        #expect(h.live("alice") == call)
        #expect(h.live("bob") == call)
    }

    @Test func schedulesTheRingTimerWithTheDefaultTimeout() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob(settings: SignalingSettings(defaultRingTimeout: 30))
        let output = h.initiate(from: a1, to: "bob")
        #expect(output.resultCall(to: a1)?.timeout == 30)
        #expect(output.schedules.count == 1)
        #expect(output.schedules.first?.timer == .ring(sessionId: "s1"))
        #expect(output.schedules.first?.at == MachineHarness.start + 30_000)
    }

    @Test func perCallTimeoutTypeAndMetadataAreKept() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let metadata: JSONValue = .object([("topic", .string("standup")), ("n", .integer(3))])
        let output = h.initiate(from: a1, to: "bob", callType: .video, timeout: 7, metadata: metadata)
        let call = try #require(output.resultCall(to: a1))
        #expect(call.timeout == 7)
        #expect(call.callType == .video)
        #expect(call.metadata == metadata)
        #expect(output.events(to: b1).first?.metadata == metadata)
        #expect(output.schedules.map(\.at) == [MachineHarness.start + 7_000])
    }

    @Test func offlineCalleeRingsZeroDevicesButStillRings() throws {
        let h = MachineHarness()
        let a1 = h.online("alice", "a-phone")
        let a2 = h.online("alice", "a-laptop")
        let output = h.initiate(from: a1, to: "bob")
        #expect(output.resultData(to: a1)?["ringing"] == .integer(0))
        let call = try #require(output.resultCall(to: a1))
        #expect(call.status == .initiated)
        #expect(output.eventAddresses == addresses(a2))
        #expect(output.schedules.map(\.timer) == [.ring(sessionId: "s1")])
        #expect(output.saves == [call])
        #expect(h.live("bob")?.sessionId == "s1")
    }

    @Test func ringingCountsOnlyCalleeDevicesConnectedNow() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        h.online("bob", "one")
        h.online("bob", "two")
        let three = h.online("bob", "three")
        h.disconnect(three)
        #expect(h.initiate(from: a1, to: "bob").resultData(to: a1)?["ringing"] == .integer(2))
    }

    @Test func callerInALiveCallIsBusySelf() {
        let (h, a1, a2, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        h.ring(from: a1, to: "bob")

        // Another device of the caller, to a third user.
        let fromOtherDevice = h.initiate(from: a2, to: "carol")
        #expect(fromOtherDevice.errorCode(to: a2) == .callBusySelf)
        #expect(fromOtherDevice.saves.isEmpty && fromOtherDevice.events.isEmpty && fromOtherDevice.schedules.isEmpty)
        #expect(h.live("carol") == nil)

        // The same callee again is not glare: alice is the initiator.
        #expect(h.initiate(from: a1, to: "bob").errorCode(to: a1) == .callBusySelf)

        // The callee being rung calls someone else.
        let fromCallee = h.initiate(from: b1, to: "carol")
        #expect(fromCallee.errorCode(to: b1) == .callBusySelf)
        #expect(fromCallee.saves.isEmpty)
        #expect(h.allEvents(to: carol).isEmpty)
        #expect(h.machine.liveCalls.count == 1)
    }

    @Test func callerInAnOngoingCallIsBusySelfEvenTowardsTheOtherParty() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        let output = h.initiate(from: b1, to: "alice")
        #expect(output.errorCode(to: b1) == .callBusySelf)
        #expect(output.saves.isEmpty)
        #expect(h.live("alice")?.status == .ongoing)
    }

    @Test func receiverInALiveCallMakesTheCallBusyAtOnce() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        let ongoing = h.ring(from: carol, to: "bob")
        h.accept(ongoing, by: b1)
        h.advance(by: 1_500)

        let output = h.initiate(from: a1, to: "bob", timeout: 20)
        #expect(output.resultData(to: a1)?["ringing"] == .integer(0))
        let call = try #require(output.resultCall(to: a1))
        #expect(
            call
                == Call(
                    sessionId: "s2", callType: .audio, status: .busy, initiator: "alice", receiver: "bob",
                    initiatorDevice: "a-phone", initiatedAt: h.now, endedAt: h.now, endedBy: nil, endReason: .busy,
                    timeoutMs: 20_000, seq: 3))
        #expect(output.eventAddresses == addresses(a2, b1, b2))
        #expect(output.events.count == 3)
        #expect(output.events(to: carol).isEmpty)
        #expect(output.events.allSatisfy { $0.call == call })
        #expect(output.schedules.isEmpty)
        #expect(output.saves == [call])

        #expect(h.live("alice") == nil)
        #expect(h.live("bob")?.sessionId == ongoing)
        #expect(h.live("carol")?.sessionId == ongoing)
        // Nothing rings, so nothing times out.
        #expect(h.advance(by: 60_000).isEmpty)
        // The busy call left no trace: alice is not busy herself and may call again.
        #expect(h.initiate(from: a1, to: "carol").resultCall(to: a1)?.status == .busy)
        #expect(h.initiate(from: a2, to: "dave").resultCall(to: a2)?.status == .initiated)
    }

    @Test func receiverBeingRungByAnotherIsBusyToo() throws {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        h.ring(from: carol, to: "bob")
        let call = try #require(h.initiate(from: a1, to: "bob").resultCall(to: a1))
        #expect(call.status == .busy)
        #expect(h.live("bob")?.initiator == "carol")
        #expect(h.live("bob")?.status == .initiated)
    }

    @Test func sessionIdsComeFromTheInjectedGenerator() {
        let h = MachineHarness()
        let a = h.online("alice"), c = h.online("carol")
        #expect(h.ring(from: a, to: "bob") == "s1")
        #expect(h.ring(from: c, to: "dave") == "s2")
    }
}

/// Glare: the callee calls the caller back while being rung.
@Suite(.blocking) struct CallStateMachineGlareTests {
    @Test func calleeCallingBackJoinsTheRingingCall() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 2_000)

        let output = h.initiate(from: b1, to: "alice", callType: .video, timeout: 9)
        let call = try #require(output.resultCall(to: b1))
        #expect(call.sessionId == id)
        #expect(call.status == .ongoing)
        #expect(call.initiator == "alice")
        #expect(call.receiver == "bob")
        #expect(call.acceptedBy == "b-phone")
        #expect(call.acceptedAt == h.now)
        #expect(call.callType == .audio, "the original call is kept")
        #expect(call.timeout == 45)
        #expect(output.resultData(to: b1)?["ringing"] == .integer(0))

        #expect(output.eventAddresses == addresses(a1, a2, b2))
        #expect(output.events.count == 3)
        #expect(output.events.allSatisfy { $0.call == call })
        #expect(output.schedules.isEmpty)
        #expect(output.saves == [call])
        #expect(h.machine.liveCalls.count == 1)
        #expect(h.live("alice") == call)
        #expect(h.live("bob") == call)
    }

    @Test func glareUsesNoSessionIdAndTheOldRingTimerIsHarmless() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        let id = h.ring(from: a1, to: "bob")
        h.initiate(from: b1, to: "alice")
        #expect(h.advance(by: 45_000).isEmpty)
        #expect(h.live("alice")?.status == .ongoing)
        #expect(h.live("alice")?.sessionId == id)
        // The next call gets s2: the glare created no call.
        #expect(h.ring(from: carol, to: "dave") == "s2")
    }

    @Test func callingBackAfterTheCallWasAcceptedIsBusySelf() {
        let (h, a1, _, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        let output = h.initiate(from: b2, to: "alice")
        #expect(output.errorCode(to: b2) == .callBusySelf)
        #expect(output.saves.isEmpty)
        #expect(h.live("bob")?.acceptedBy == "b-phone")
    }
}
