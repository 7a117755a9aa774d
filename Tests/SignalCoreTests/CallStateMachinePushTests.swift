import CoreTestSupport
import SignalProtocol
import Testing

@testable import SignalCore

/// The push actions: a call that starts ringing asks for a push naming the
/// callee devices that heard it, one that stops ringing says so, and a
/// restart pushes the calls it restores as ringing; nothing without push.
@Suite(.blocking) struct CallStateMachinePushTests {
    static let pushing = SignalingSettings(pushes: true)

    static func pushes(_ output: SignalingOutput) -> [(Call, [String])] {
        output.actions.compactMap { if case .push(let call, let connected) = $0 { (call, connected) } else { nil } }
    }

    static func stops(_ output: SignalingOutput) -> [Call] {
        output.actions.compactMap { if case .pushStopped(let call) = $0 { call } else { nil } }
    }

    @Test func aRingingCallAsksForAPushNamingTheConnectedCalleeDevices() throws {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob(settings: Self.pushing)
        let output = h.initiate(from: a1, to: "bob")
        let pushes = Self.pushes(output)
        #expect(pushes.count == 1)
        #expect(pushes.first?.0 == output.resultCall(to: a1))
        #expect(pushes.first?.1 == ["b-laptop", "b-phone"])
        let offline = h.initiate(from: h.online("carol"), to: "dave")
        #expect(Self.pushes(offline).map(\.1) == [[]], "an offline callee: every device is pushed")
    }

    @Test(arguments: ["accept", "reject", "cancel", "timeout"])
    func aCallThatStopsRingingSaysSoOnce(_ how: String) throws {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob(settings: Self.pushing)
        let session = h.ring(from: a1, to: "bob", timeout: 5)
        let output: SignalingOutput
        switch how {
        case "accept": output = h.accept(session, by: b1)
        case "reject": output = h.reject(session, by: b1)
        case "cancel": output = h.cancel(session, by: a1)
        default:
            output = h.advance(by: 5000)
        }
        #expect(Self.stops(output).map(\.sessionId) == [session], "\(how)")
        #expect(Self.stops(output).first?.status != .initiated)
        if how == "accept" { #expect(Self.stops(h.end(session, by: a1)).isEmpty, "ending an ongoing call is no stop") }
    }

    @Test func withoutPushThereAreNoPushActions() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let session = h.ring(from: a1, to: "bob")
        #expect(Self.pushes(h.send(.getActiveCall, from: b1)).isEmpty)
        #expect(Self.stops(h.accept(session, by: b1)).isEmpty)
    }

    @Test func aRestartPushesTheCallsStillRinging() {
        let h = MachineHarness(settings: Self.pushing)
        let ringing = Call(
            sessionId: "r", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
            initiatedAt: MachineHarness.start - 1000, timeoutMs: 30_000, seq: 1)
        let ongoing = Call(
            sessionId: "o", callType: .audio, status: .ongoing, initiator: "carol", receiver: "dave",
            initiatedAt: MachineHarness.start - 5000, acceptedAt: MachineHarness.start - 4000,
            acceptedBy: "d1", timeoutMs: 30_000, seq: 2)
        let overdue = Call(
            sessionId: "x", callType: .audio, status: .initiated, initiator: "erin", receiver: "frank",
            initiatedAt: MachineHarness.start - 60_000, timeoutMs: 30_000, seq: 3)
        let output = h.restore([ringing, ongoing, overdue], lastSeq: 3)
        #expect(Self.pushes(output).map { $0.0.sessionId } == ["r"], "not the ongoing call, nor one past its deadline")
        #expect(Self.pushes(output).first?.1 == [])
    }
}
