import CoreTestSupport
import SignalProtocol
import Testing

@testable import SignalCore
@testable import SignalServer

/// `WebhookTrigger(change:)` for every change the state machine makes,
/// driven through the machine itself, and for the changes it never makes.
@Suite struct WebhookTriggerTests {
    /// The triggers of every change `harness` recorded, in order.
    private func triggers(_ harness: MachineHarness) -> [WebhookTrigger?] {
        harness.allChanges.map { WebhookTrigger(change: $0) }
    }

    @Test func placingACallIsInitiated() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        h.ring(from: a1, to: "bob")
        #expect(triggers(h) == [.callInitiated])
    }

    @Test func placingACallToSomeoneInACallIsBusy() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        h.accept(h.ring(from: a1, to: "bob"), by: b1)
        h.ring(from: carol, to: "bob")
        #expect(h.allSaves.last?.status == .busy)
        #expect(triggers(h) == [.callInitiated, .callStarted, .callBusy])
    }

    @Test func acceptingStartsAndHangingUpEnds() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let call = h.ring(from: a1, to: "bob")
        h.accept(call, by: b1)
        h.advance(by: 3_000)
        h.end(call, by: a1)
        #expect(triggers(h) == [.callInitiated, .callStarted, .callEnded])
    }

    /// Glare: bob calling alice back while she rings him answers her call.
    @Test func callingBackWhileRungStarts() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        h.ring(from: a1, to: "bob")
        h.initiate(from: b1, to: "alice")
        #expect(triggers(h) == [.callInitiated, .callStarted])
    }

    @Test func rejectingIsRejectedAndRejectingAsBusyIsBusy() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        h.reject(h.ring(from: a1, to: "bob"), by: b1)
        h.reject(h.ring(from: a1, to: "bob"), by: b1, status: .busy)
        #expect(h.allSaves.map(\.status) == [.initiated, .rejected, .initiated, .busy])
        #expect(triggers(h) == [.callInitiated, .callRejected, .callInitiated, .callBusy])
    }

    @Test func theCallerGivingUpIsCancelled() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        h.cancel(h.ring(from: a1, to: "bob"), by: a1)
        h.reject(h.ring(from: a1, to: "bob"), by: a1, status: .cancelled)
        #expect(triggers(h) == [.callInitiated, .callCancelled, .callInitiated, .callCancelled])
    }

    @Test func ringingPastTheTimeoutIsUnanswered() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        h.ring(from: a1, to: "bob", timeout: 10)
        h.advance(by: 10_000)
        #expect(h.allSaves.last?.status == .unanswered)
        #expect(triggers(h) == [.callInitiated, .callUnanswered])
    }

    /// The caller's devices all gone past the grace: a ringing call is
    /// cancelled, an ongoing one ended.
    @Test func lostConnectionsCancelRingingAndEndOngoingCalls() {
        let h = MachineHarness()
        let alice = h.online("alice"), bob = h.online("bob")
        h.ring(from: alice, to: "bob")
        h.disconnect(alice)
        h.advance(by: h.settings.reconnectGraceMillis)
        let alice2 = h.online("alice", "d2")
        h.accept(h.ring(from: alice2, to: "bob"), by: bob)
        h.disconnect(bob)
        h.advance(by: h.settings.reconnectGraceMillis)
        #expect(h.allSaves.map(\.endReason) == [nil, .connectionLost, nil, nil, .connectionLost])
        #expect(triggers(h) == [.callInitiated, .callCancelled, .callInitiated, .callStarted, .callEnded])
    }

    @Test func shutdownCancelsRingingAndEndsOngoingCalls() {
        let h = MachineHarness()
        let alice = h.online("alice"), carol = h.online("carol"), dave = h.online("dave")
        h.online("bob")
        h.ring(from: alice, to: "bob")
        h.accept(h.ring(from: carol, to: "dave"), by: dave)
        h.shutdown()
        #expect(h.allSaves.suffix(2).map(\.endReason) == [.serverShutdown, .serverShutdown])
        #expect(triggers(h) == [.callInitiated, .callInitiated, .callStarted, .callCancelled, .callEnded])
    }

    /// A start that ends the calls a crash left live (`calls.onRestart: end`).
    @Test func restartCancelsRingingAndEndsOngoingCalls() {
        let start = MachineHarness.start
        let ringing = Call(
            sessionId: "s1", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatedAt: start, timeoutMs: 45_000, seq: 1)
        let ongoing = Call(
            sessionId: "s2", callType: .video, status: .ongoing, initiator: "carol", receiver: "dave",
            initiatedAt: start + 1, acceptedAt: start + 2, acceptedBy: "d1", timeoutMs: 45_000, seq: 3)
        var machine = CallStateMachine(settings: SignalingSettings())
        machine.continueSequence(after: 3)
        let output = machine.restart(with: [ringing, ongoing], now: SignalingTime(wall: start + 5_000, monotonic: 0))
        #expect(output.changes.map(\.after.endReason) == [.serverRestart, .serverRestart])
        #expect(output.changes.map { WebhookTrigger(change: $0) } == [.callCancelled, .callEnded])
    }

    /// A start that keeps live calls (`calls.onRestart: resume`) ends one
    /// whose ring deadline passed while the server was away as unanswered.
    @Test func restoringACallPastItsDeadlineIsUnanswered() {
        let h = MachineHarness()
        let ringing = Call(
            sessionId: "old", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatedAt: MachineHarness.start - 60_000, timeoutMs: 45_000, seq: 7)
        h.restore([ringing], lastSeq: 7)
        #expect(triggers(h) == [.callUnanswered])
    }

    /// A ringing acknowledgement reports nothing; a call nothing can ring
    /// (`calls.unreachable: fail`) is unanswered, whether placed so or ended
    /// on the push side's report.
    @Test func acknowledgementsHaveNoneAndUnreachableCallsAreUnanswered() {
        let h = MachineHarness(settings: SignalingSettings(pushes: true, unreachable: .fail))
        let a1 = h.online("alice", "a1")
        let b1 = h.online("bob", "b1")
        let first = h.ring(from: a1, to: "bob")
        h.ringing(first, by: b1)
        h.cancel(first, by: a1)
        h.disconnect(b1)
        h.unreachable(h.ring(from: a1, to: "bob"))
        #expect(triggers(h) == [.callInitiated, nil, .callCancelled, .callInitiated, .callUnanswered])

        let offline = MachineHarness(settings: SignalingSettings(unreachable: .fail))
        offline.initiate(from: offline.online("alice", "a1"), to: "bob")
        #expect(offline.allSaves.map(\.endReason) == [.unreachable])
        #expect(triggers(offline) == [.callUnanswered])
    }

    /// Changes no machine makes have no trigger.
    @Test func changesTheMachineNeverMakesHaveNone() throws {
        let ringing = Call(
            sessionId: "s1", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatedAt: 1_000, timeoutMs: 45_000, seq: 1)
        let ongoing = try ringing.applying(.accept(deviceId: "d1"), by: .device(uid: "bob", deviceId: "d1"), at: 2_000)
        let ended = try ongoing.applying(.hangUp, by: .device(uid: "bob", deviceId: "d1"), at: 3_000)
        #expect(WebhookTrigger(change: .created(ongoing, by: .server)) == nil)
        #expect(WebhookTrigger(change: .created(ended, by: .server)) == nil)
        #expect(
            WebhookTrigger(change: CallChange(before: ongoing, after: ringing, transition: nil, actor: .server)) == nil)
        #expect(
            WebhookTrigger(change: CallChange(before: ongoing, after: ongoing, transition: nil, actor: .server)) == nil)
        var endedAgain = ended
        endedAgain.status = .cancelled
        #expect(
            WebhookTrigger(change: CallChange(before: ended, after: endedAgain, transition: nil, actor: .server)) == nil
        )
    }

    /// The outbox tells a change that reports nothing (its status stayed)
    /// from one that should and cannot, which it drops with an error logged
    /// rather than in silence.
    @Test func aChangeWithNoTriggerIsAnErrorAndAnAcknowledgementIsNothing() throws {
        let ringing = Call(
            sessionId: "s1", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatedAt: 1_000, timeoutMs: 45_000, seq: 1)
        var acknowledged = ringing
        acknowledged.ringingDevices = ["d1"]
        acknowledged.seq = 2
        let ack = CallChange(before: ringing, after: acknowledged, transition: nil, actor: .server)
        guard case .success(nil) = WebhookOutbox.event(of: ack) else {
            Issue.record("an acknowledgement reports nothing: \(WebhookOutbox.event(of: ack))")
            return
        }
        var ongoing = try ringing.applying(.accept(deviceId: "d1"), by: .device(uid: "bob", deviceId: "d1"), at: 2_000)
        ongoing.seq = 3
        let created = CallChange.created(ongoing, by: .server)
        guard case .failure(let error) = WebhookOutbox.event(of: created) else {
            Issue.record("a call created ongoing has no trigger: \(WebhookOutbox.event(of: created))")
            return
        }
        #expect(error.code == .noTrigger)
        guard case .success(let placed?) = WebhookOutbox.event(of: .created(ringing, by: .server)) else {
            Issue.record("a placed call is reported")
            return
        }
        #expect(placed.trigger == .callInitiated)
    }

    /// The raw values are the names docs/WEBHOOKS.md gives, in its order.
    @Test func rawValuesAreTheDocumentedNames() {
        #expect(
            WebhookTrigger.allCases.map(\.rawValue) == [
                "call_initiated", "call_started", "call_ended", "call_rejected", "call_busy", "call_cancelled",
                "call_unanswered",
            ])
    }
}
