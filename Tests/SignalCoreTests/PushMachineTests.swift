import SignalProtocol
import Testing

@testable import SignalCore

/// The push machine on a manual clock (ms): when rings, retries and cancels
/// leave, and when they never do.
struct PushMachineTests {
    static let call = Call(
        sessionId: "s1", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
        initiatedAt: 1_000_000, timeoutMs: 30_000)
    static let apns = RegisteredPushToken(
        uid: "bob", deviceId: "iphone",
        registration: try! PushRegistration(
            platform: .apnsVoip,
            token: String(repeating: "ab", count: 32)),
        updatedAt: 0)
    static let fcm = RegisteredPushToken(
        uid: "bob", deviceId: "pixel",
        registration: try! PushRegistration(
            platform: .fcm,
            token: String(repeating: "f", count: 40)),
        updatedAt: 0)

    /// Without missed-call alerts unless asked (PushMachineAlertTests has them).
    static func machine(retry: [Double] = [1, 2], alerts: Bool = false) -> PushMachine {
        var settings = PushSettings()
        settings.retrySeconds = retry
        settings.missedCallAlerts = alerts
        return PushMachine(settings: settings, jitter: { 0 })
    }

    static func sends(_ actions: [PushMachine.Action]) -> [PushMachine.Attempt] {
        actions.compactMap { if case .send(let attempt) = $0 { attempt } else { nil } }
    }

    static func outcomes(_ actions: [PushMachine.Action]) -> [PushOutcome] {
        actions.compactMap { if case .outcome(let outcome, _, _) = $0 { outcome } else { nil } }
    }

    static var stoppedCall: Call {
        var call = Self.call
        call.status = .cancelled
        return call
    }

    @Test func everyDeviceIsPushedOnce() {
        var machine = Self.machine()
        let sent = Self.sends(machine.ring(Self.call, tokens: [Self.apns, Self.fcm], now: 1_000_100))
        #expect(sent.map(\.device.deviceId).sorted() == ["iphone", "pixel"])
        #expect(sent.allSatisfy { $0.kind == .ring })
        #expect(Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_200)).isEmpty, "a call rings once")
    }

    @Test func aCallPastItsDeadlineIsNotPushed() {
        var machine = Self.machine()
        #expect(machine.ring(Self.call, tokens: [Self.apns], now: Self.call.ringDeadline).isEmpty)
    }

    @Test func aRetryLeavesWhileTheCallRingsAndNotAfter() {
        var machine = Self.machine()
        let first = Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        #expect(Self.outcomes(machine.answered(first, .retry("503"), now: 1_000_050)) == [.retried])
        #expect(machine.nextDue() == 1_001_050)
        #expect(machine.due(now: 1_001_049).isEmpty)
        let second = Self.sends(machine.due(now: 1_001_050))
        #expect(second.count == 1)
        #expect(Self.outcomes(machine.answered(second[0], .retry("503"), now: 1_001_100)) == [.retried])
        #expect(machine.nextDue() == 1_003_100)
        #expect(Self.outcomes(machine.stopped(Self.stoppedCall, now: 1_002_000)) == [.gaveUp])
        #expect(machine.nextDue() == nil)
        #expect(machine.due(now: 1_010_000).isEmpty, "nothing leaves once the call stopped ringing")
        #expect(machine.activeCalls == 0)
    }

    @Test func aRetryThatWouldLeaveAfterTheDeadlineIsGivenUp() {
        var machine = Self.machine(retry: [40])
        let first = Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        #expect(Self.outcomes(machine.answered(first, .retry("503"), now: 1_000_050)) == [.gaveUp])
        #expect(machine.nextDue() == nil)
    }

    @Test func refusedCredentialsAreRenewedAndRetriedOnce() {
        var machine = Self.machine()
        var first = Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        first.credential = "jwt-1"
        let retry = Self.sends(machine.answered(first, .renewCredentials("ExpiredProviderToken"), now: 1_000_010))
        #expect(retry.count == 1 && retry[0].renewCredentials && retry[0].credential == "jwt-1")
        #expect(
            Self.outcomes(machine.answered(retry[0], .renewCredentials("ExpiredProviderToken"), now: 1_000_020))
                == [.gaveUp])
    }

    @Test func refusedCredentialsAfterTheCallStoppedAreNotRetried() {
        var machine = Self.machine()
        let first = Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        #expect(machine.stopped(Self.stoppedCall, now: 1_000_005).isEmpty)
        let actions = machine.answered(first, .renewCredentials("ExpiredProviderToken"), now: 1_000_010)
        #expect(Self.sends(actions).isEmpty, "no ring for a call that stopped ringing")
        #expect(Self.outcomes(actions) == [.gaveUp])
        #expect(machine.activeCalls == 0)
    }

    @Test func aWaitTheServiceAsksForIsKeptAndBounded() {
        var machine = Self.machine(retry: [0.1])
        let first = Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        _ = machine.answered(first, .retry("429", after: 5), now: 1_000_000)
        #expect(machine.nextDue() == 1_005_000)
        var endless = Self.machine(retry: [0.1])
        let other = Self.sends(endless.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        #expect(
            Self.outcomes(endless.answered(other, .retry("429", after: .greatestFiniteMagnitude), now: 1_000_000))
                == [.gaveUp], "a wait past the ring deadline gives up without overflowing")
    }

    @Test func aDeadTokenIsPurged() {
        var machine = Self.machine()
        let first = Self.sends(machine.ring(Self.call, tokens: [Self.apns], now: 1_000_000))[0]
        let actions = machine.answered(first, .purge("Unregistered"), now: 1_000_010)
        #expect(actions.contains { if case .purge(let token, _) = $0 { token == Self.apns } else { false } })
        #expect(Self.outcomes(actions) == [.purged])
    }

    @Test func fcmGetsACancelWhenTheCallStopsAndAPNsDoesNot() {
        var machine = Self.machine()
        for attempt in Self.sends(machine.ring(Self.call, tokens: [Self.apns, Self.fcm], now: 1_000_000)) {
            _ = machine.answered(attempt, .sent, now: 1_000_010)
        }
        let cancels = Self.sends(machine.stopped(Self.stoppedCall, now: 1_005_000))
        #expect(cancels.map(\.device.deviceId) == ["pixel"])
        #expect(cancels.first?.kind == .cancel && cancels.first?.call.status == .cancelled)
        _ = machine.answered(cancels[0], .sent, now: 1_005_010)
        #expect(machine.activeCalls == 0)
    }

    @Test func aRingStillInFlightWhenTheCallStopsIsFollowedByItsCancel() {
        var machine = Self.machine()
        let ring = Self.sends(machine.ring(Self.call, tokens: [Self.fcm], now: 1_000_000))[0]
        #expect(Self.sends(machine.stopped(Self.stoppedCall, now: 1_000_001)).isEmpty)
        let cancel = Self.sends(machine.answered(ring, .sent, now: 1_000_050))
        #expect(cancel.map(\.kind) == [.cancel])
    }

    @Test func aCancelIsTriedAFewTimesAtMost() {
        var machine = Self.machine(retry: [0.01])
        let ring = Self.sends(machine.ring(Self.call, tokens: [Self.fcm], now: 1_000_000))[0]
        _ = machine.answered(ring, .sent, now: 1_000_001)
        var cancel = Self.sends(machine.stopped(Self.stoppedCall, now: 1_000_002))[0]
        var now: Int64 = 1_000_010
        var attempts = 1
        while true {
            let outcome = Self.outcomes(machine.answered(cancel, .retry("503"), now: now))
            if outcome == [.gaveUp] { break }
            now += 100
            guard let next = Self.sends(machine.due(now: now)).first else { break }
            cancel = next
            attempts += 1
        }
        #expect(attempts == PushMachine.maxCancelAttempts)
        #expect(machine.activeCalls == 0)
    }

    /// A cluster's other nodes hear every stop by session id: one this
    /// machine never pushed does nothing, one it pushed cancels as a whole call would.
    @Test func aStopHeardBySessionIdCancelsOnlyWhatThisMachinePushed() {
        var machine = Self.machine()
        #expect(machine.stopped(sessionId: "elsewhere", status: .cancelled, now: 1_000_000).isEmpty)
        let ring = Self.sends(machine.ring(Self.call, tokens: [Self.fcm], now: 1_000_000))[0]
        _ = machine.answered(ring, .sent, now: 1_000_050)
        let cancels = Self.sends(machine.stopped(sessionId: Self.call.sessionId, status: .ongoing, now: 1_000_100))
        #expect(cancels.map(\.kind) == [.cancel])
        #expect(cancels.first?.call.status == .ongoing && cancels.first?.call.initiator == "alice")
        #expect(
            machine.stopped(sessionId: Self.call.sessionId, status: .ongoing, now: 1_000_200).isEmpty,
            "a call stops once")
    }
}
