import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// `restore` (`calls.onRestart: resume`), the restart grace, the change
/// sequence and `auth` with `resume`, on a manual clock.
@Suite(.blocking) struct CallStateMachineRestartTests {
    static let settings = SignalingSettings(
        defaultRingTimeout: 30, reconnectGraceMillis: 10_000, restartGraceMillis: 30_000)

    /// alice calling bob, accepted by b1; then the live calls as a store holds them.
    static func ongoingCall() -> (Call, MachineHarness) {
        let h = MachineHarness(settings: settings)
        let a1 = h.online("alice", "a1"), b1 = h.online("bob", "b1")
        let sessionId = h.ring(from: a1, to: "bob")
        h.accept(sessionId, by: b1)
        return (h.machine.liveCall(sessionId: sessionId)!, h)
    }

    /// The devices in a restored call are the ones the store recorded:
    /// signals flow between them again. A call stored without the caller's
    /// device (before schema 8) refuses signals from both sides alike.
    @Test func aRestoredCallRelaysBetweenItsRecordedDevicesOnly() throws {
        let (call, before) = Self.ongoingCall()
        #expect(call.initiatorDevice == "a1" && call.acceptedBy == "b1")
        var unrecorded = call
        unrecorded.sessionId = "old"
        unrecorded.initiator = "carol"
        unrecorded.receiver = "dave"
        unrecorded.initiatorDevice = nil
        unrecorded.acceptedBy = "d1"
        let h = MachineHarness(settings: Self.settings, now: before.now + 2_000)
        h.restore([call, unrecorded], lastSeq: call.seq)
        let a1 = h.online("alice", "a1"), b1 = h.online("bob", "b1")
        let payload = JSONValue.object([("kind", .string("offer"))])
        let relayed = h.send(.signal(sessionId: call.sessionId, payload: payload), from: a1)
        #expect(relayed.resultData(to: a1) == .object([("delivered", .bool(true))]))
        #expect(
            relayed.actions.contains(
                .signal(
                    PeerSignal(
                        sessionId: call.sessionId, uid: "alice", deviceId: "a1",
                        payload: payload), to: b1.address)))
        #expect(relayed.changes.isEmpty)
        for (uid, deviceId) in [("carol", "c1"), ("dave", "d1")] {
            let device = h.online(uid, deviceId)
            let refused = h.send(.signal(sessionId: "old", payload: payload), from: device)
            #expect(refused.errorCode(to: device) == .otherDevice, "\(uid)")
        }
    }

    @Test func anOngoingCallGoesOnWithTheSameSessionWhenBothComeBack() throws {
        let (call, before) = Self.ongoingCall()
        let h = MachineHarness(settings: Self.settings, now: before.now + 2_000)
        let output = h.restore([call], lastSeq: call.seq)
        #expect(output.changes.isEmpty)
        #expect(
            output.restartGrace == [
                .set(uid: "alice", deadline: h.now + 30_000), .set(uid: "bob", deadline: h.now + 30_000),
            ])
        #expect(h.live("alice") == call)

        let a1 = h.newDevice("alice", "a1")
        let back = h.connect(a1)
        #expect(back.restartGrace == [.clear(uid: "alice")])
        #expect(back.resultData(to: a1)?["activeCall"] == call.json)
        #expect(back.resultData(to: a1)?["seq"] == .integer(call.seq))
        let b1 = h.online("bob", "b1")
        h.advance(by: 60_000)
        #expect(h.live("bob")?.status == .ongoing, "nobody's grace may end a call both came back to")

        let ended = h.end(call.sessionId, by: b1)
        let hungUp = try #require(ended.resultCall(to: b1))
        #expect(hungUp.status == .ended && hungUp.endReason == .hangup && hungUp.endedBy == "bob")
        #expect(hungUp.acceptedBy == "b1" && hungUp.acceptedAt == call.acceptedAt)
        #expect(hungUp.seq == call.seq + 1, "the sequence goes on after the store's last position")
        #expect(ended.restartGrace.isEmpty, "bob cleared his own grace when he came back")
        #expect(ended.events(to: a1) == [hungUp])
    }

    @Test func aPartyThatStaysAwayLosesTheCallWhenTheRestartGracePasses() throws {
        let (call, before) = Self.ongoingCall()
        let h = MachineHarness(settings: Self.settings, now: before.now)
        h.restore([call], lastSeq: call.seq)
        _ = h.online("alice", "a1")
        #expect(h.advance(by: 29_999).changes.isEmpty)
        let lost = h.advance(by: 1)
        let ended = try #require(lost.saves.first)
        #expect(ended.status == .ended && ended.endReason == .connectionLost && ended.endedBy == nil)
        #expect(ended.endedAt == before.now + 30_000)
        #expect(lost.restartGrace == [.clear(uid: "bob")], "the ended call drops bob's grace from the store too")
    }

    @Test func graceFromAnEarlierStartIsKeptNotExtended() throws {
        let (call, before) = Self.ongoingCall()
        let firstDeadline = before.now + 5_000
        let h = MachineHarness(settings: Self.settings, now: before.now + 4_000)
        let output = h.restore(
            [call], graceDeadlines: ["alice": firstDeadline, "bob": firstDeadline, "gone": firstDeadline],
            lastSeq: call.seq)
        #expect(output.restartGrace == [.clear(uid: "gone")], "kept deadlines are not written again; stale ones go")
        let lost = h.advance(by: 1_000)
        #expect(lost.saves.first?.endReason == .connectionLost)
        #expect(lost.saves.first?.endedAt == firstDeadline)
    }

    @Test func aRingingCallRingsUntilItsOriginalDeadline() throws {
        let h0 = MachineHarness(settings: Self.settings)
        let a1 = h0.online("alice", "a1")
        let sessionId = h0.ring(from: a1, to: "bob")
        let ringing = try #require(h0.machine.liveCall(sessionId: sessionId))

        let h = MachineHarness(settings: Self.settings, now: h0.now + 10_000)
        let output = h.restore([ringing], lastSeq: ringing.seq)
        #expect(output.changes.isEmpty)
        #expect(h.deadline(of: .ring(sessionId: sessionId)) == ringing.ringDeadline)
        _ = h.online("alice", "a1")
        let b1 = h.online("bob", "b1")
        #expect(h.advance(by: 19_999).changes.isEmpty)
        let timedOut = h.advance(by: 1)
        #expect(timedOut.saves.first?.status == .unanswered)
        #expect(timedOut.saves.first?.endedAt == ringing.ringDeadline)
        #expect(timedOut.events(to: b1).first?.status == .unanswered)
    }

    @Test func aRingingCallPastItsDeadlineEndsUnansweredAtOnceAtThatDeadline() throws {
        let h0 = MachineHarness(settings: Self.settings)
        let a1 = h0.online("alice", "a1")
        let sessionId = h0.ring(from: a1, to: "bob")
        let ringing = try #require(h0.machine.liveCall(sessionId: sessionId))

        let h = MachineHarness(settings: Self.settings, now: h0.now + 60_000)
        let output = h.restore([ringing], lastSeq: 7)
        let ended = try #require(output.saves.first)
        #expect(ended.status == .unanswered && ended.endReason == .timeout)
        #expect(ended.endedAt == ringing.ringDeadline, "it rang until its deadline, not until the restart")
        #expect(ended.seq == 8)
        #expect(output.restartGrace.isEmpty, "nobody needs a grace for a call that is over")
        #expect(h.live("alice") == nil && h.live("bob") == nil)
    }

    @Test func resumingAsksTheDriverForWhatChangedAfterTheDevicesPosition() {
        let h = MachineHarness(settings: Self.settings)
        let a1 = h.newDevice("alice", "a1")
        let output = h.connect(a1, resumingAfter: 41)
        #expect(output.replies.isEmpty)
        #expect(
            output.actions == [
                .replyResuming(
                    a1.address, id: "auth",
                    Authentication(uid: "alice", deviceId: "a1", activeCall: nil, seq: 0),
                    afterSeq: 41)
            ])
    }

    @Test func aPositionOfAnotherStoreEpochIsNotResumedFrom() {
        let h = MachineHarness(settings: Self.settings)
        h.restore([], lastSeq: 40, epoch: "e2")
        let a1 = h.newDevice("alice", "a1")
        let auth = Authentication(uid: "alice", deviceId: "a1", activeCall: nil, seq: 40, epoch: "e2")
        var refused = auth
        refused.resume = ResumeOutcome(resumed: false, calls: [])
        #expect(
            h.connect(a1, resumingAfter: 12, epoch: "e1").actions
                == [.reply(a1.address, id: "auth", .success(.authenticated(refused)))],
            "the store may have lost what came after position 12 of e1: nothing to read")
        #expect(
            h.connect(a1, resumingAfter: 12, epoch: "e2").actions
                == [.replyResuming(a1.address, id: "auth", auth, afterSeq: 12)])
        #expect(
            h.connect(a1, resumingAfter: 12).actions == [.replyResuming(a1.address, id: "auth", auth, afterSeq: 12)],
            "a client that knows no epochs resumes as before")
    }

    @Test func everyChangeTakesTheNextPositionReservedABlockAtATime() {
        let (call, h) = Self.ongoingCall()
        #expect(h.allSaves.map(\.seq) == [1, 2])
        #expect(call.seq == 2)
        #expect(
            h.outputs.compactMap(\.seqReservation) == [CallStateMachine.seqReservationBlock],
            "the first change reserves a block; the next ones use it")

        let restarted = MachineHarness(settings: Self.settings, now: h.now)
        let output = restarted.restore([call], lastSeq: CallStateMachine.seqReservationBlock)
        #expect(output.seqReservation == nil, "restoring changes nothing")
        let a1 = restarted.online("alice", "a1")
        let ended = restarted.end(call.sessionId, by: a1)
        #expect(
            ended.saves.first?.seq == CallStateMachine.seqReservationBlock + 1,
            "a start continues above the reservation")
        #expect(ended.seqReservation == 2 * CallStateMachine.seqReservationBlock)
    }
}
