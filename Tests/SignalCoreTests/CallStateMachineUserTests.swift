import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// Profiles and do-not-disturb as the machine reads them when a call is placed.
@Suite(.blocking) struct CallStateMachineUserTests {
    static let pushing = SignalingSettings(pushes: true)

    private func record(
        _ uid: String, name: String? = nil, _ mode: DoNotDisturbMode = .off, until: Int64? = nil
    ) throws -> UserRecord {
        UserRecord(
            uid: uid, profile: try name.map { try UserProfile(name: $0, avatarUrl: "https://img.example/\(uid).png") },
            doNotDisturb: DoNotDisturb(mode: mode, until: until), updatedAt: MachineHarness.start)
    }

    private func pushes(_ output: SignalingOutput) -> Int {
        output.actions.count { if case .push = $0 { true } else { false } }
    }

    @Test func aCallCarriesBothPartiesProfilesAsTheyWereWhenPlaced() throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        h.remember(try record("alice", name: "Alice"))
        h.remember(try record("bob", name: "Bob"))
        let output = h.initiate(from: a1, to: "bob")
        let call = try #require(output.resultCall(to: a1))
        #expect(call.initiatorName == "Alice" && call.initiatorAvatarUrl == "https://img.example/alice.png")
        #expect(call.receiverName == "Bob" && call.receiverAvatarUrl == "https://img.example/bob.png")
        #expect(output.events(to: b1) == [call])
        // A later change of the profile does not rewrite the call.
        h.remember(try record("alice", name: "Alicia"))
        let accepted = try #require(h.accept(call.sessionId, by: b1).resultCall(to: b1))
        #expect(accepted.initiatorName == "Alice")
    }

    @Test func aCallBetweenUsersWithoutProfilesNamesNobody() throws {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let call = try #require(h.initiate(from: a1, to: "bob").resultCall(to: a1))
        #expect(call.initiatorName == nil && call.receiverName == nil && !call.silent)
        #expect(call.json["initiator"] == .object([("uid", .string("alice"))]))
    }

    @Test func busyDoNotDisturbAnswersAsBusyAndKeepsTheMissedCall() throws {
        let h = MachineHarness(settings: Self.pushing)
        let a1 = h.online("alice", "a1")
        let b1 = h.online("bob", "b1")
        h.remember(try record("bob", .busy))
        let output = h.initiate(from: a1, to: "bob")
        let call = try #require(output.resultCall(to: a1))
        #expect(call.status == .busy && call.endReason == .busy && call.endedAt == h.now)
        #expect(output.resultData(to: a1)?["ringing"] == .integer(0))
        #expect(pushes(output) == 0 && output.schedules.isEmpty)
        #expect(output.events(to: b1) == [call], "bob's devices hear of the call they missed")
        #expect(call.isMissed(for: "bob"))
        #expect(h.live("alice") == nil && h.live("bob") == nil)
    }

    @Test func silentDoNotDisturbRingsConnectedDevicesQuietlyAndPushesNothing() throws {
        let h = MachineHarness(settings: Self.pushing)
        let a1 = h.online("alice", "a1")
        let b1 = h.online("bob", "b1")
        h.remember(try record("bob", .silent))
        let output = h.initiate(from: a1, to: "bob")
        let call = try #require(output.resultCall(to: a1))
        #expect(call.status == .initiated && call.silent)
        #expect(call.json["silent"] == .bool(true))
        #expect(output.events(to: b1).map(\.silent) == [true])
        #expect(pushes(output) == 0)
        #expect(output.schedules.map(\.timer) == [.ring(sessionId: call.sessionId)], "it still times out")
        let unanswered = h.advance(by: call.timeoutMs)
        let ended = try #require(unanswered.saves.last)
        #expect(ended.status == .unanswered && ended.silent && ended.isMissed(for: "bob"))
        #expect(!unanswered.actions.contains { if case .pushStopped = $0 { true } else { false } })
    }

    @Test func doNotDisturbEndsByItselfAtUntil() throws {
        let h = MachineHarness(settings: Self.pushing)
        let a1 = h.online("alice", "a1")
        _ = h.online("bob", "b1")
        h.remember(try record("bob", .busy, until: h.now + 60_000))
        let during = try #require(h.initiate(from: a1, to: "bob").resultCall(to: a1))
        #expect(during.status == .busy)
        h.advance(by: 60_000)
        let after = h.initiate(from: a1, to: "bob")
        #expect(after.resultCall(to: a1)?.status == .initiated)
        #expect(pushes(after) == 1)
    }

    @Test func aDeviceArrivingHearsItsUsersDoNotDisturbWhileItIsOn() throws {
        let h = MachineHarness()
        h.remember(try record("bob", .silent, until: h.now + 1_000))
        let data = try #require(try h.connect(h.newDevice("bob", "b1")).replies.first?.result.get())
        #expect(data["doNotDisturb"] == .object([("mode", .string("silent")), ("until", .integer(h.now + 1_000))]))
        h.advance(by: 1_000)
        let later = try #require(try h.connect(h.newDevice("bob", "b2")).replies.first?.result.get())
        #expect(later["doNotDisturb"] == nil, "an ended do-not-disturb is not mentioned")
        #expect(later["user"]?["uid"] == .string("bob"))
    }

    @Test func aRecordThatSetsNothingIsForgotten() throws {
        let h = MachineHarness()
        h.remember(try record("bob", name: "Bob"))
        #expect(h.machine.users["bob"] != nil)
        h.remember(UserRecord(uid: "bob", updatedAt: h.now))
        #expect(h.machine.users["bob"] == nil)
    }
}
