import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// The one reader of the machine's actions, on real outputs of the machine,
/// and the admission rules both drivers share.
@Suite(.blocking) struct DeliveryPlanTests {
    /// Results encoded as the server does, without counting.
    static func encode(_ id: String?, _ result: Result<JSONValue, SignalError>) -> [UInt8] {
        ServerFrame.result(id: id, result).encoded
    }

    @Test func aRingTellsEachDeviceOnceWithOneEncodingAndSchedulesItsTimeout() throws {
        let h = MachineHarness(settings: SignalingSettings(pushes: true))
        let a1 = h.online("alice", "a-phone")
        let a2 = h.online("alice", "a-laptop")
        let b1 = h.online("bob", "b-phone")
        let output = h.initiate(from: a1, to: "bob")
        let plan = DeliveryPlan(output.actions)

        let deliveries = plan.deliveries(encodingResults: Self.encode)
        let addresses = deliveries.map(\.0)
        #expect(Set(addresses) == [a1.address, a2.address, b1.address])
        #expect(addresses.first == a1.address, "the requester's result comes first")
        let eventFrames = deliveries.dropFirst().compactMap { delivery -> [UInt8]? in
            if case .frame(let bytes) = delivery.1 { bytes } else { nil }
        }
        #expect(eventFrames.count == 2)
        #expect(Set(eventFrames).count == 1, "every device gets the same bytes")
        let call = try #require(output.resultCall(to: a1))
        #expect(eventFrames.first == ServerFrame.call(call).encoded)
        guard case .schedule(.ring(let sessionId), _)? = plan.timers.first, plan.timers.count == 1 else {
            Issue.record("expected one ring timer, got \(plan.timers)")
            return
        }
        #expect(sessionId == call.sessionId)
        #expect(plan.rings.map(\.call.sessionId) == [call.sessionId])
        #expect(plan.rings.first?.connected == ["b-phone"])
        #expect(plan.ringsStopped.isEmpty && plan.resumes.isEmpty && plan.lookups.isEmpty)
    }

    @Test func afterAFailedCommitTheRequesterIsToldTheStoreFailedAndNothingElseHappens() throws {
        let h = MachineHarness(settings: SignalingSettings(pushes: true))
        let a1 = h.online("alice")
        _ = h.online("bob")
        let plan = DeliveryPlan(h.initiate(from: a1, to: "bob").actions).afterFailedCommit

        let deliveries = plan.deliveries(encodingResults: Self.encode)
        #expect(deliveries.count == 1)
        #expect(deliveries.first?.0 == a1.address)
        guard case .frame(let frame)? = deliveries.first?.1 else {
            Issue.record("expected a result frame")
            return
        }
        let text = String(decoding: frame, as: UTF8.self)
        #expect(text.contains("ERR_INTERNAL") && text.contains("the store failed"))
        #expect(plan.timers.isEmpty && plan.rings.isEmpty && plan.ringsStopped.isEmpty)
    }

    @Test func aFailedCommitStillClosesAReplacedConnection() {
        let h = MachineHarness()
        let first = h.online("alice", "a-phone")
        let again = h.newDevice("alice", "a-phone")
        let plan = DeliveryPlan(h.connect(again).actions).afterFailedCommit
        let closes = plan.deliveries(encodingResults: Self.encode).filter {
            if case .close = $0.1 { true } else { false }
        }
        #expect(closes.map(\.0) == [first.address])
    }

    @Test func aResumeAndAnUnknownSessionAreLeftToTheStore() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let resuming = h.newDevice("alice", "a-laptop")
        let resume = DeliveryPlan(h.connect(resuming, resumingAfter: 0).actions)
        #expect(resume.resumes.map(\.address) == [resuming.address])
        #expect(resume.resumes.first?.afterSeq == 0)
        #expect(resume.steps.isEmpty, "the auth result waits for the store's read")

        let lookup = DeliveryPlan(h.accept("gone", by: a1).actions)
        #expect(lookup.lookups.map(\.sessionId) == ["gone"])
        #expect(lookup.lookups.first?.uid == "alice")
        #expect(lookup.steps.isEmpty)
    }

    @Test func admissionRefusesHoldsOrDropsAsTheServiceStands() {
        let address = DeviceAddress(loop: 0, connection: 7)
        let request = InputKind.request(address, id: "r1")
        let arriving = InputKind.presence(refusing: (address, "auth"))
        let leaving = InputKind.presence(refusing: nil)

        func refused(_ admission: Admission) -> String? {
            if case .refuse(let to, let id, let error) = admission, to == address {
                return "\(id ?? "-") \(error.message)"
            }
            return nil
        }
        #expect(refused(request.admission(stopping: true, held: nil)) == "r1 the server is shutting down")
        #expect(refused(arriving.admission(stopping: true, held: nil)) == "auth the server is shutting down")
        #expect(
            refused(request.admission(stopping: false, held: Refusal.recovering)) == "r1 \(Refusal.recovering.message)")
        guard case .run = request.admission(stopping: false, held: nil),
            case .run = leaving.admission(stopping: true, held: nil),
            case .hold = leaving.admission(stopping: false, held: Refusal.recovering),
            case .hold = arriving.admission(stopping: false, held: Refusal.recovering),
            case .hold = InputKind.timer.admission(stopping: false, held: Refusal.recovering),
            case .drop = InputKind.timer.admission(stopping: true, held: nil)
        else {
            Issue.record("an admission rule changed")
            return
        }
    }
}
