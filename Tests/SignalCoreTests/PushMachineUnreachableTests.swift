import SignalProtocol
import Testing

@testable import SignalCore

/// When the push machine tells that nothing can ring the callee
/// (`calls.unreachable: fail`): every ring push refused for good.
struct PushMachineUnreachableTests {
    typealias Fixture = PushMachineTests

    static func unreachable(_ actions: [PushMachine.Action]) -> [String] {
        actions.compactMap { if case .unreachable(let sessionId) = $0 { sessionId } else { nil } }
    }

    @Test func everyRingRefusedForGoodMakesTheCallUnreachableOnce() {
        var machine = Fixture.machine()
        let sent = Fixture.sends(machine.ring(Fixture.call, tokens: [Fixture.apns, Fixture.fcm], now: 1_000_000))
        let apns = sent.first { $0.device.deviceId == "iphone" }!, fcm = sent.first { $0.device.deviceId == "pixel" }!
        #expect(Self.unreachable(machine.answered(apns, .purge("Unregistered"), now: 1_000_100)).isEmpty)
        #expect(Self.unreachable(machine.answered(fcm, .failed("400 INVALID_ARGUMENT"), now: 1_000_200)) == ["s1"])
        #expect(machine.activeCalls == 0)
    }

    @Test func oneRingTakenIsEnough() {
        var machine = Fixture.machine()
        let sent = Fixture.sends(machine.ring(Fixture.call, tokens: [Fixture.apns, Fixture.fcm], now: 1_000_000))
        let apns = sent.first { $0.device.deviceId == "iphone" }!, fcm = sent.first { $0.device.deviceId == "pixel" }!
        #expect(Self.unreachable(machine.answered(fcm, .sent, now: 1_000_100)).isEmpty)
        #expect(Self.unreachable(machine.answered(apns, .purge("Unregistered"), now: 1_000_200)).isEmpty)
    }

    @Test func aRingGivenUpForLackOfTimeIsNotRefused() {
        var machine = Fixture.machine(retry: [40])
        let sent = Fixture.sends(machine.ring(Fixture.call, tokens: [Fixture.apns, Fixture.fcm], now: 1_000_000))
        let apns = sent.first { $0.device.deviceId == "iphone" }!, fcm = sent.first { $0.device.deviceId == "pixel" }!
        // A 503 whose retry would leave after the deadline is given up, not refused.
        #expect(Self.unreachable(machine.answered(apns, .retry("503"), now: 1_000_100)).isEmpty)
        #expect(Self.unreachable(machine.answered(fcm, .purge("UNREGISTERED"), now: 1_000_200)).isEmpty)
    }

    @Test func credentialsRefusedAgainAfterARenewalAreRefusedForGood() {
        var machine = Fixture.machine()
        let ring = Fixture.sends(machine.ring(Fixture.call, tokens: [Fixture.apns], now: 1_000_000))[0]
        let renewal = Fixture.sends(machine.answered(ring, .renewCredentials("ExpiredProviderToken"), now: 1_000_100))
        #expect(
            Self.unreachable(machine.answered(renewal[0], .renewCredentials("InvalidProviderToken"), now: 1_000_200))
                == ["s1"])
    }

    @Test func aCallThatStoppedRingingIsNoLongerReported() {
        var machine = Fixture.machine()
        let sent = Fixture.sends(machine.ring(Fixture.call, tokens: [Fixture.apns], now: 1_000_000))
        _ = machine.stopped(Fixture.stoppedCall, now: 1_000_050)
        #expect(Self.unreachable(machine.answered(sent[0], .purge("Unregistered"), now: 1_000_100)).isEmpty)
    }
}
