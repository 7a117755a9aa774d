import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// `limits.initiatesPerMinute`: the calls one user may place in any 60
/// seconds, on the manual clock.
@Suite(.blocking) struct CallStateMachineInitiateLimitTests {
    static let limited = SignalingSettings(initiatesPerMinute: 2)

    /// Places a call from `device` to `receiver` and cancels it; returns its session id.
    @discardableResult
    static func placeAndCancel(_ h: MachineHarness, _ device: Device, to receiver: String = "bob") -> String {
        let id = h.ring(from: device, to: receiver)
        h.cancel(id, by: device)
        return id
    }

    @Test func overTheLimitIsRateLimitedUntilTheOldestLeavesTheWindow() throws {
        let (h, a1, a2, _, _) = MachineHarness.aliceAndBob(settings: Self.limited)
        Self.placeAndCancel(h, a1)
        h.advance(by: 10_000)
        Self.placeAndCancel(h, a2)
        h.advance(by: 5_000)

        // Every device of the user counts together.
        let refused = h.initiate(from: a1, to: "bob")
        guard case .failure(let error)? = refused.reply(to: a1) else {
            Issue.record("not refused: \(refused.actions)")
            return
        }
        #expect(error.code == .rateLimited)
        #expect(error.retryAfterMs == 45_000)
        #expect(
            error.message
                == "alice placed 2 calls in the last minute, the most limits.initiatesPerMinute allows; "
                + "retry in 45000 ms")
        #expect(refused.saves.isEmpty && refused.events.isEmpty)

        h.advance(by: 44_999)
        #expect(h.initiate(from: a2, to: "bob").errorCode(to: a2) == .rateLimited)
        h.advance(by: 1)
        #expect(h.initiate(from: a2, to: "bob").resultCall(to: a2)?.status == .initiated)
    }

    @Test func theLimitIsPerUser() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob(settings: Self.limited)
        h.online("carol", "c-phone")
        Self.placeAndCancel(h, a1)
        Self.placeAndCancel(h, a1)
        #expect(h.initiate(from: a1, to: "bob").errorCode(to: a1) == .rateLimited)
        #expect(h.initiate(from: b1, to: "carol").resultCall(to: b1)?.status == .initiated)
    }

    /// A replay, a glare accept and a refused request place no call, so
    /// they do not count; a call placed busy does.
    @Test func onlyPlacedCallsCount() throws {
        let h = MachineHarness(settings: Self.limited)
        let a1 = h.online("alice", "a-phone")
        let b1 = h.online("bob", "b-phone")
        let c1 = h.online("carol", "c-phone")

        let first = try #require(h.initiate(from: a1, to: "bob", clientCallId: "c-1").resultCall(to: a1))
        for _ in 0 ..< 3 {
            #expect(h.initiate(from: a1, to: "bob", clientCallId: "c-1").resultData(to: a1)?["replayed"] == .bool(true))
            #expect(h.initiate(from: a1, to: "carol").errorCode(to: a1) == .callBusySelf)
            #expect(h.initiate(from: a1, to: "alice").errorCode(to: a1) == .callingSelf)
        }
        h.cancel(first.sessionId, by: a1)

        // bob rings alice; alice calling bob back is glare: it accepts.
        let bobs = h.ring(from: b1, to: "alice")
        let glare = h.initiate(from: a1, to: "bob")
        #expect(glare.resultCall(to: a1)?.sessionId == bobs)
        #expect(glare.resultCall(to: a1)?.status == .ongoing)
        h.end(bobs, by: a1)

        // carol is in a call with bob: alice's call to carol is placed busy, and counts.
        h.ring(from: c1, to: "bob")
        #expect(h.initiate(from: a1, to: "carol").resultCall(to: a1)?.status == .busy)
        #expect(h.initiate(from: a1, to: "bob").errorCode(to: a1) == .rateLimited)
    }

    @Test func zeroMeansNoLimit() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        for _ in 0 ..< 50 { Self.placeAndCancel(h, a1) }
        #expect(h.machine.recentInitiates.isEmpty)
    }

    /// A cluster transaction's fresh machine counts what the store says
    /// the user placed on every node.
    @Test func aSeededMachineCountsTheStoresCalls() {
        var machine = CallStateMachine(settings: Self.limited)
        let now = SignalingTime(wall: MachineHarness.start, monotonic: 5)
        let alice = Device(uid: "alice", deviceId: "a-phone", address: DeviceAddress(node: 1, loop: 0, connection: 1))
        machine.seed(
            calls: [], devices: ["alice": ["a-phone": alice.address]], graceGenerations: [:], after: 0,
            reservedThrough: 10, now: now,
            recentInitiates: [
                "alice": RecentInitiates(placedAt: [MachineHarness.start - 59_000, MachineHarness.start - 1_000])
            ])
        let output = machine.handle(
            .initiateCall(receiverId: "bob", callType: .audio, timeout: nil, metadata: nil), id: "r1", from: alice,
            now: now)
        guard case .failure(let error)? = output.reply(to: alice) else {
            Issue.record("not refused: \(output.actions)")
            return
        }
        #expect(error.code == .rateLimited && error.retryAfterMs == 1_000)
    }
}
