import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// A retried `initiateCall` (the same `clientCallId` from the same user)
/// answers the call the first one placed, as it stands now, and changes nothing.
@Suite(.blocking) struct CallStateMachineRetryTests {
    @Test func aRetryWhileItRingsAnswersTheRingingCallReplayed() throws {
        let (h, a1, a2, _, _) = MachineHarness.aliceAndBob()
        let first = h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        let placed = try #require(first.resultCall(to: a1))
        #expect(placed.clientCallId == "c-1")
        #expect(first.resultData(to: a1)?["replayed"] == nil)
        h.advance(by: 2_000)

        // From the same device and from another device of the same user.
        for device in [a1, a2] {
            let retry = h.initiate(from: device, to: "bob", clientCallId: "c-1")
            #expect(retry.resultCall(to: device) == placed)
            #expect(retry.resultData(to: device)?["replayed"] == .bool(true))
            #expect(retry.resultData(to: device)?["ringing"] == .integer(2))
            #expect(retry.saves.isEmpty && retry.events.isEmpty && retry.schedules.isEmpty)
            #expect(retry.actions.count == 1)
        }
        #expect(h.live("alice") == placed)
    }

    @Test func aRetryAfterTheCallChangedAnswersItAsItIsNow() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = try #require(h.initiate(from: a1, to: "bob", clientCallId: "c-1").resultCall(to: a1)?.sessionId)
        let accepted = try #require(h.accept(id, by: b1).resultCall(to: b1))
        let retry = h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        #expect(retry.resultCall(to: a1) == accepted)
        #expect(retry.resultData(to: a1)?["ringing"] == .integer(0))
        #expect(retry.resultData(to: a1)?["replayed"] == .bool(true))

        // Long after the ring deadline, while the call goes on, still the call.
        h.advance(by: 600_000)
        #expect(h.initiate(from: a1, to: "bob", clientCallId: "c-1").resultCall(to: a1) == accepted)
    }

    /// Once over, the call answers retries until its ring deadline
    /// (initiatedAt + timeoutMs); after that the id places a new call.
    @Test func anEndedCallAnswersUntilItsRingDeadline() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let placed = h.initiate(from: a1, to: "bob", timeout: 20, clientCallId: "c-1")
        let id = try #require(placed.resultCall(to: a1)?.sessionId)
        h.advance(by: 1_000)
        let rejected = try #require(h.reject(id, by: b1, reason: "Driving").resultCall(to: b1))

        h.advance(by: 18_999)
        let retry = h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        #expect(retry.resultCall(to: a1) == rejected)
        #expect(retry.resultData(to: a1)?["replayed"] == .bool(true))
        #expect(retry.saves.isEmpty)

        h.advance(by: 1)
        let later = h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        let fresh = try #require(later.resultCall(to: a1))
        #expect(fresh.sessionId != id && fresh.status == .initiated && fresh.clientCallId == "c-1")
        #expect(later.resultData(to: a1)?["replayed"] == nil)
    }

    @Test func aCallPlacedBusyIsReplayedBusy() throws {
        let h = MachineHarness()
        let a1 = h.online("alice", "a-phone")
        let b1 = h.online("bob", "b-phone")
        let c1 = h.online("carol", "c-phone")
        h.ring(from: c1, to: "bob")
        let busy = try #require(h.initiate(from: a1, to: "bob", clientCallId: "c-1").resultCall(to: a1))
        #expect(busy.status == .busy && busy.clientCallId == "c-1")
        let retry = h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        #expect(retry.resultCall(to: a1) == busy)
        #expect(retry.resultData(to: a1)?["ringing"] == .integer(0))
        #expect(retry.saves.isEmpty)
        _ = b1
    }

    @Test func theSameIdForAnotherCalleeOrTypeIsAValidationError() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        h.online("carol", "c-phone")
        h.initiate(from: a1, to: "bob", callType: .audio, clientCallId: "c-1")
        for (receiver, type) in [("carol", CallType.audio), ("bob", .video)] {
            let other = h.initiate(from: a1, to: receiver, callType: type, clientCallId: "c-1")
            guard case .failure(let error)? = other.reply(to: a1) else {
                Issue.record("not refused: \(other.actions)")
                continue
            }
            #expect(error.code == .validation)
            #expect(
                error.message
                    == "clientCallId c-1 already placed call s1 (audio to bob); a new call needs a new clientCallId")
            #expect(other.saves.isEmpty)
        }
    }

    @Test func withoutTheIdOrWithAnotherOneTheCallerIsBusy() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        #expect(h.initiate(from: a1, to: "bob").errorCode(to: a1) == .callBusySelf)
        #expect(h.initiate(from: a1, to: "bob", clientCallId: "c-2").errorCode(to: a1) == .callBusySelf)
    }

    @Test func idsAreTheCallersOwn() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        h.online("carol", "c-phone")
        let first = try #require(h.initiate(from: a1, to: "bob", clientCallId: "c-1").resultCall(to: a1))
        h.cancel(first.sessionId, by: a1)
        // bob's "c-1" is not alice's: it places bob's own call.
        let bobs = h.initiate(from: b1, to: "carol", clientCallId: "c-1")
        #expect(bobs.resultData(to: b1)?["replayed"] == nil)
        #expect(bobs.resultCall(to: b1)?.initiator == "bob")
    }

    /// A call adopted at a start (the store kept it live) answers a retry
    /// with its id, though this machine never remembered placing it.
    @Test func aRestoredLiveCallAnswersARetry() throws {
        let h = MachineHarness()
        let call = Call(
            sessionId: "kept", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatorDevice: "a-phone", initiatedAt: MachineHarness.start - 1_000, timeoutMs: 45_000, seq: 3,
            clientCallId: "c-1")
        h.restore([call], lastSeq: 3)
        let a1 = h.online("alice", "a-phone")
        let retry = h.initiate(from: a1, to: "bob", clientCallId: "c-1")
        #expect(retry.resultCall(to: a1)?.sessionId == "kept")
        #expect(retry.resultData(to: a1)?["replayed"] == .bool(true))
    }

    /// A cluster transaction's fresh machine knows the caller's recent
    /// calls only from the store: seeded with an ended call, it replays it.
    @Test func aSeededMachineReplaysAnEndedCall() throws {
        var machine = CallStateMachine(settings: SignalingSettings())
        let now = SignalingTime(wall: MachineHarness.start, monotonic: 5)
        let ended = Call(
            sessionId: "gone", callType: .video, status: .rejected, initiator: "alice", receiver: "bob",
            initiatorDevice: "a-phone", initiatedAt: MachineHarness.start - 10_000,
            endedAt: MachineHarness.start - 5_000,
            endedBy: "bob", endReason: .rejected, timeoutMs: 45_000, seq: 9, clientCallId: "c-1")
        let alice = Device(uid: "alice", deviceId: "a-laptop", address: DeviceAddress(node: 2, loop: 0, connection: 1))
        machine.seed(
            calls: [], devices: ["alice": ["a-laptop": alice.address]], graceGenerations: [:], after: 9,
            reservedThrough: 20, now: now, recentInitiates: ["alice": RecentInitiates(calls: ["c-1": ended])])
        let output = machine.handle(
            .initiateCall(receiverId: "bob", callType: .video, timeout: nil, metadata: nil, clientCallId: "c-1"),
            id: "r1", from: alice, now: now)
        #expect(output.resultCall(to: alice) == ended)
        #expect(output.resultData(to: alice)?["replayed"] == .bool(true))
        #expect(output.changes.isEmpty)
    }

    /// What the machine remembers is forgotten once neither a retry nor the
    /// limit needs it, on the next placed call after a window has passed.
    @Test func rememberedCallsArePruned() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = try #require(h.initiate(from: a1, to: "bob", timeout: 5, clientCallId: "c-1").resultCall(to: a1))
        h.cancel(id.sessionId, by: a1)
        #expect(h.machine.recentInitiates["alice"]?.calls["c-1"]?.status == .cancelled)
        h.advance(by: 61_000)
        let bobs = try #require(h.initiate(from: b1, to: "alice").resultCall(to: b1))
        #expect(h.machine.recentInitiates["alice"] == nil)
        #expect(h.machine.recentInitiates["bob"] == nil)
        h.cancel(bobs.sessionId, by: b1)
    }
}
