import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// The ring timeout, on the manual clock.
@Suite(.blocking) struct CallStateMachineRingTimeoutTests {
    /// A call that leaves ringing (answered, declined, cancelled) drops its
    /// ring timer, once: later changes of the call cancel nothing more.
    @Test func leavingRingingCancelsTheRingTimerOnce() {
        let cancelRing = { (id: String) in SignalingAction.cancel(.ring(sessionId: id)) }
        let outcomes: [(MachineHarness, String, Device, Device) -> SignalingOutput] = [
            { h, id, _, b1 in h.accept(id, by: b1) },
            { h, id, _, b1 in h.reject(id, by: b1) },
            { h, id, _, b1 in h.reject(id, by: b1, status: .busy) },
            { h, id, a1, _ in h.cancel(id, by: a1) },
        ]
        for outcome in outcomes {
            let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
            let id = h.ring(from: a1, to: "bob")
            #expect(h.deadline(of: .ring(sessionId: id)) != nil)
            let output = outcome(h, id, a1, b1)
            #expect(output.actions.filter { $0 == cancelRing(id) }.count == 1)
            #expect(h.deadline(of: .ring(sessionId: id)) == nil)
        }
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        #expect(!h.end(id, by: a1).actions.contains(cancelRing(id)))
    }

    @Test func unansweredAtTheDeadlineAndEveryDeviceIsTold() throws {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        #expect(h.deadline(of: .ring(sessionId: id)) == MachineHarness.start + 45_000)

        #expect(h.advance(by: 44_999).isEmpty)
        #expect(h.live("alice")?.status == .initiated)

        let output = h.advance(by: 1)
        #expect(output.saves.count == 1)
        let call = try #require(output.saves.first)
        #expect(call.sessionId == id)
        #expect(call.status == .unanswered)
        #expect(call.endReason == .timeout)
        #expect(call.endedBy == nil)
        #expect(call.endedAt == MachineHarness.start + 45_000)
        // No actor: every device of both parties, the caller's included.
        for device in [a1, a2, b1, b2] {
            #expect(output.events(to: device) == [call])
        }
        #expect(output.events.count == 4)
        #expect(output.replies.isEmpty && output.schedules.isEmpty)
        #expect(h.machine.liveCalls.isEmpty)
        #expect(h.pendingTimers.isEmpty)
    }

    @Test func perCallTimeoutSetsTheDeadline() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob", timeout: 5)
        h.advance(by: 4_999)
        #expect(h.live("bob")?.sessionId == id)
        let output = h.advance(by: 1)
        #expect(output.saves.map(\.status) == [.unanswered])
        #expect(output.saves.first?.endedAt == MachineHarness.start + 5_000)
    }

    /// `timeoutMs`: the call carries the milliseconds, the timer is set to
    /// them, and the call ends at its deadline exactly.
    @Test func aTimeoutInMillisecondsRingsForExactlyThat() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let output = h.initiate(from: a1, to: "bob", timeout: .milliseconds(200))
        let placed = try #require(output.resultCall(to: a1))
        #expect(placed.timeoutMs == 200 && placed.timeout == 1)
        #expect(placed.ringDeadline == MachineHarness.start + 200)
        #expect(h.deadline(of: .ring(sessionId: placed.sessionId)) == MachineHarness.start + 200)
        #expect(h.advance(by: 199).isEmpty)
        let ended = h.advance(by: 1)
        #expect(ended.saves.map(\.status) == [.unanswered])
        #expect(ended.saves.first?.endedAt == MachineHarness.start + 200)
        #expect(ended.saves.first?.timeoutMs == 200)
        #expect(ended.events(to: b1).map(\.status) == [.unanswered])
    }

    @Test func offlineCalleeStillTimesOut() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let id = h.ring(from: a1, to: "bob", timeout: 10)
        let output = h.advance(by: 10_000)
        #expect(output.saves.map(\.sessionId) == [id])
        #expect(output.saves.first?.status == .unanswered)
        #expect(output.eventAddresses == addresses(a1))
    }

    @Test func aTimerFiringEarlyChangesNothingAndIsScheduledAgain() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob", timeout: 30)
        h.advance(by: 29_999)
        let early = h.fire(.ring(sessionId: id))
        #expect(early.changes.isEmpty)
        #expect(early.actions == [.schedule(.ring(sessionId: id), at: MachineHarness.start + 30_000)])
        #expect(h.live("alice")?.status == .initiated)
        #expect(h.advance(by: 1).saves.map(\.status) == [.unanswered])
    }

    @Test func aWallClockSteppedBackDoesNotHoldTheRingTimeoutBack() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob", timeout: 30)
        h.advance(by: 10_000)
        h.stepWallClock(by: -60_000)
        let output = h.advance(by: 20_000)
        #expect(output.saves.map(\.status) == [.unanswered])
        #expect(output.saves.first?.sessionId == id)
        #expect(h.live("alice") == nil)
    }

    @Test func aCallNeverTimesOutBeforeItsRingDeadlineOnTheWire() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        h.ring(from: a1, to: "bob", timeout: 5)
        h.advance(by: 4_999)
        // The two clocks, read in whole milliseconds, can disagree by one.
        h.stepWallClock(by: -1)
        let output = h.advance(by: 1)
        #expect(output.saves.map(\.status) == [.unanswered])
        #expect(output.saves.first?.endedAt == MachineHarness.start + 5_000)
    }

    @Test func aTimerForAnAcceptedCallChangesNothing() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 10_000)
        h.accept(id, by: b1)
        #expect(h.advance(by: 100_000).isEmpty)
        #expect(h.live("alice")?.status == .ongoing)
        #expect(h.live("alice")?.endReason == nil)
    }

    @Test func aTimerForACancelledCallChangesNothing() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.cancel(id, by: a1)
        #expect(h.advance(by: 100_000).isEmpty)
        #expect(h.fire(.ring(sessionId: "unknown")).isEmpty)
        #expect(h.allSaves.map(\.status) == [.initiated, .cancelled])
    }

    @Test func callsTimeOutInDeadlineOrder() {
        let h = MachineHarness()
        let a = h.online("alice"), c = h.online("carol")
        let long = h.ring(from: a, to: "bob", timeout: 20)
        let short = h.ring(from: c, to: "dave", timeout: 5)
        let output = h.advance(by: 60_000)
        #expect(output.saves.map(\.sessionId) == [short, long])
        #expect(output.saves.map(\.endedAt) == [MachineHarness.start + 5_000, MachineHarness.start + 20_000])
    }
}

/// The reconnect grace period after a party's last device went away.
@Suite(.blocking) struct CallStateMachineGraceTests {
    @Test func callerLostWhileRingingCancelsAfterGrace() throws {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let b1 = h.online("bob", "b-phone"), b2 = h.online("bob", "b-laptop")
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 1_000)

        let lost = h.disconnect(a1)
        #expect(lost.schedules.count == 1)
        #expect(lost.schedules.first?.at == MachineHarness.start + 11_000)
        guard case .grace(let uid, _)? = lost.schedules.first?.timer else {
            Issue.record("expected a grace timer, got \(lost.actions)")
            return
        }
        #expect(uid == "alice")
        #expect(lost.saves.isEmpty && lost.events.isEmpty)

        #expect(h.advance(by: 9_999).isEmpty)
        let expiry = h.advance(by: 1)
        let call = try #require(expiry.saves.first)
        #expect(expiry.saves.count == 1)
        #expect(call.sessionId == id)
        #expect(call.status == .cancelled)
        #expect(call.endReason == .connectionLost)
        #expect(call.endedBy == nil)
        #expect(call.endedAt == MachineHarness.start + 11_000)
        #expect(expiry.eventAddresses == addresses(b1, b2))
        #expect(expiry.events.count == 2)
        #expect(h.machine.liveCalls.isEmpty)
        // The ring timer that is still pending changes nothing.
        #expect(h.advance(by: 60_000).isEmpty)
    }

    @Test(arguments: ["alice", "bob"])
    func partyLostFromAnOngoingCallEndsItAfterGrace(uid: String) throws {
        let h = MachineHarness(settings: SignalingSettings(reconnectGraceMillis: 3_000))
        let a1 = h.online("alice", "a-phone"), a2 = h.online("alice", "a-laptop")
        let b1 = h.online("bob")
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        h.advance(by: 20_000)

        let lostDevices = uid == "alice" ? [a1, a2] : [b1]
        let remaining = uid == "alice" ? [b1] : [a1, a2]
        for device in lostDevices.dropLast() {
            #expect(h.disconnect(device).isEmpty, "not the last device: no grace")
        }
        let lost = h.disconnect(lostDevices.last!)
        #expect(lost.schedules.map(\.at) == [MachineHarness.start + 23_000])

        let expiry = h.advance(by: 3_000)
        let call = try #require(expiry.saves.first)
        #expect(call.status == .ended)
        #expect(call.endReason == .connectionLost)
        #expect(call.endedBy == nil)
        #expect(call.durationMs == 23_000)
        #expect(expiry.eventAddresses == Set(remaining.map(\.address)))
        #expect(expiry.events.count == remaining.count)
        #expect(h.machine.liveCalls.isEmpty)
    }

    @Test func calleeWithoutDevicesKeepsRingingUntilTheRingTimeout() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let b1 = h.online("bob")
        let id = h.ring(from: a1, to: "bob", timeout: 30)
        let lost = h.disconnect(b1)
        #expect(lost.schedules.count == 1, "the callee is a party of a live call")

        #expect(h.advance(by: 29_999).isEmpty, "grace expiry changes nothing for a callee")
        #expect(h.live("bob")?.status == .initiated)
        let timeout = h.advance(by: 1)
        #expect(timeout.saves.map(\.sessionId) == [id])
        #expect(timeout.saves.first?.status == .unanswered)
        #expect(timeout.saves.first?.endReason == .timeout)
        #expect(timeout.eventAddresses == addresses(a1))
    }

    @Test func reconnectingWithinGraceKeepsTheRingingCall() throws {
        let h = MachineHarness()
        let a1 = h.online("alice", "a-phone")
        let b1 = h.online("bob")
        let id = h.ring(from: a1, to: "bob")
        h.disconnect(a1)
        h.advance(by: 5_000)

        let back = h.newDevice("alice", "a-phone")
        let reconnect = h.connect(back)
        let live = try #require(h.live("alice"))
        #expect(reconnect.resultData(to: back)?["activeCall"] == live.json)
        #expect(live.sessionId == id && live.status == .initiated)

        #expect(h.advance(by: 10_000).isEmpty, "the stale grace timer changes nothing")
        #expect(h.live("alice")?.status == .initiated)
        // The call still works from the new connection.
        let accepted = h.accept(id, by: b1)
        #expect(accepted.events(to: back).map(\.status) == [.ongoing])
    }

    @Test func reconnectingWithinGraceKeepsTheOngoingCall() {
        let (h, a1, _, b1, b2) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob")
        h.accept(id, by: b1)
        h.disconnect(b1)
        h.disconnect(b2)
        h.advance(by: 9_000)
        let back = h.online("bob", "b-phone")
        #expect(h.advance(by: 60_000).isEmpty)
        #expect(h.live("bob")?.status == .ongoing)
        #expect(h.end(id, by: back).resultCall(to: back)?.endReason == .hangup)
    }

    @Test func aSecondLossAfterReconnectingGetsAFreshGracePeriod() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        h.online("bob")
        h.ring(from: a1, to: "bob", timeout: 120)
        h.disconnect(a1)  // grace until +10 000
        h.advance(by: 4_000)
        let back = h.online("alice")
        h.advance(by: 2_000)
        let second = h.disconnect(back)  // grace until +16 000
        #expect(second.schedules.map(\.at) == [MachineHarness.start + 16_000])
        #expect(h.advance(to: MachineHarness.start + 15_999).isEmpty)
        let expiry = h.advance(by: 1)
        #expect(expiry.saves.map(\.status) == [.cancelled])
        #expect(expiry.saves.first?.endedAt == MachineHarness.start + 16_000)
    }

    /// The grace generation must never repeat for a user while an older
    /// grace timer may still be pending. `disconnect` forgets the generation
    /// when the user has no live call, so the counter restarts and a stale
    /// timer from an earlier call matches the new grace period and ends the
    /// new call early.
    @Test func aStaleGraceTimerFromAnEarlierCallDoesNotEndALaterOne() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let b1 = h.online("bob")
        let first = h.ring(from: a1, to: "bob")
        h.accept(first, by: b1)
        h.disconnect(a1)  // grace timer T1 due at +10 000
        h.advance(by: 1_000)
        let back = h.online("alice")  // T1 is now stale
        h.advance(by: 1_000)
        h.end(first, by: b1)
        h.advance(by: 1_000)
        h.disconnect(back)  // no live call: no grace
        h.advance(by: 1_000)
        let again = h.online("alice")
        h.advance(by: 1_000)
        let second = h.ring(from: again, to: "bob", timeout: 120)
        h.advance(by: 1_000)
        let lost = h.disconnect(again)  // grace timer T2 due at +16 000
        #expect(lost.schedules.map(\.at) == [MachineHarness.start + 16_000])

        let stale = h.advance(to: MachineHarness.start + 10_000)
        #expect(stale.isEmpty, "T1 belongs to an earlier grace period")
        #expect(h.live("alice")?.sessionId == second)

        let expiry = h.advance(to: MachineHarness.start + 16_000)
        #expect(expiry.saves.map(\.sessionId) == [second])
        #expect(expiry.saves.first?.endedAt == MachineHarness.start + 16_000)
    }

    @Test func disconnectingOneOfTwoDevicesStartsNoGrace() {
        let (h, a1, a2, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob", timeout: 60)
        #expect(h.disconnect(a1).isEmpty)
        #expect(h.advance(by: 30_000).isEmpty)
        #expect(h.live("alice")?.status == .initiated)
        let accepted = h.accept(id, by: b1)
        #expect(accepted.eventAddresses.contains(a2.address))
        #expect(!accepted.eventAddresses.contains(a1.address), "a disconnected device gets no event")
    }

    @Test func disconnectingWithoutALiveCallStartsNoGrace() {
        let (h, a1, a2, _, _) = MachineHarness.aliceAndBob()
        #expect(h.disconnect(a1).isEmpty)
        #expect(h.disconnect(a2).isEmpty)
        #expect(h.pendingTimers.isEmpty)
    }
}
