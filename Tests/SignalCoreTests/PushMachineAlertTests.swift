import SignalProtocol
import Testing

@testable import SignalCore

/// Missed-call alerts on the push machine's manual clock (ms): which
/// devices get one for which calls, and how an alert is retried or purged.
struct PushMachineAlertTests {
    typealias Base = PushMachineTests

    /// Bob's iPhone with its regular APNs token beside the VoIP one.
    static let alertingIPhone = RegisteredPushToken(
        uid: "bob", deviceId: "ipad",
        registration: try! PushRegistration(
            platform: .apnsVoip, token: String(repeating: "cd", count: 32),
            alertToken: String(repeating: "ef", count: 32)),
        updatedAt: 0)

    static func call(_ status: CallStatus) -> Call {
        var call = Base.call
        call.status = status
        return call
    }

    static func alerts(_ actions: [PushMachine.Action]) -> [PushMachine.Attempt] {
        Base.sends(actions).filter { $0.kind == .alert }
    }

    /// A machine that pushed `tokens` the ring, each taken.
    static func rung(_ tokens: [RegisteredPushToken], alerts: Bool = true) -> PushMachine {
        var machine = Base.machine(retry: [0.01], alerts: alerts)
        for ring in Base.sends(machine.ring(Base.call, tokens: tokens, now: 1_000_000)) {
            _ = machine.answered(ring, .sent, now: 1_000_010)
        }
        return machine
    }

    @Test(arguments: [CallStatus.unanswered, .cancelled])
    func aMissedCallAlertsEveryPushedDeviceThatCanShowOne(_ status: CallStatus) {
        var machine = Self.rung([Base.apns, Base.fcm, Self.alertingIPhone])
        let actions = machine.stopped(Self.call(status), now: 1_030_000)
        let alerts = Self.alerts(actions)
        #expect(alerts.map(\.device.deviceId).sorted() == ["ipad", "pixel"], "not the iPhone without an alert token")
        #expect(alerts.allSatisfy { $0.call.status == status })
        #expect(Base.sends(actions).filter { $0.kind == .cancel }.map(\.device.deviceId) == ["pixel"])
        for sent in Base.sends(actions) { _ = machine.answered(sent, .sent, now: 1_030_050) }
        #expect(machine.activeCalls == 0)
    }

    @Test(arguments: [CallStatus.ongoing, .rejected, .busy])
    func aCallTheCalleeSawAlertsNoOne(_ status: CallStatus) {
        var machine = Self.rung([Base.fcm, Self.alertingIPhone])
        #expect(Self.alerts(machine.stopped(Self.call(status), now: 1_005_000)).isEmpty)
    }

    @Test func alertsCanBeTurnedOff() {
        var machine = Self.rung([Base.fcm, Self.alertingIPhone], alerts: false)
        #expect(Self.alerts(machine.stopped(Self.call(.unanswered), now: 1_030_000)).isEmpty)
    }

    /// The ring that never arrived is the one an alert matters for; the
    /// device whose token the service called dead gets none.
    @Test func aRingWaitingOrInFlightIsAlertedAndAPurgedOneIsNot() {
        var machine = Base.machine(retry: [5], alerts: true)
        let rings = Base.sends(machine.ring(Base.call, tokens: [Base.fcm, Self.alertingIPhone], now: 1_000_000))
        let fcmRing = rings.first { $0.device.deviceId == "pixel" }!
        let ipadRing = rings.first { $0.device.deviceId == "ipad" }!
        #expect(Base.outcomes(machine.answered(ipadRing, .retry("503"), now: 1_000_010)) == [.retried])
        let actions = machine.stopped(Self.call(.cancelled), now: 1_001_000)
        #expect(Base.outcomes(actions) == [.gaveUp], "the waiting ring is given up")
        #expect(Self.alerts(actions).map(\.device.deviceId).sorted() == ["ipad", "pixel"])
        #expect(Base.sends(machine.answered(fcmRing, .sent, now: 1_001_010)).map(\.kind) == [.cancel])

        var purging = Base.machine(alerts: true)
        let ring = Base.sends(purging.ring(Base.call, tokens: [Base.fcm], now: 1_000_000))[0]
        _ = purging.answered(ring, .purge("UNREGISTERED"), now: 1_000_010)
        #expect(Self.alerts(purging.stopped(Self.call(.unanswered), now: 1_030_000)).isEmpty)
    }

    @Test func aDeadAlertTokenIsForgottenAndAnFCMOneIsPurged() {
        var machine = Self.rung([Base.fcm, Self.alertingIPhone])
        let alerts = Self.alerts(machine.stopped(Self.call(.unanswered), now: 1_030_000))
        for alert in alerts {
            let actions = machine.answered(alert, .purge("Unregistered"), now: 1_030_010)
            #expect(Base.outcomes(actions) == [.purged])
            let purged = actions.contains {
                switch $0 {
                case .purge(let token, _): alert.device.deviceId == "pixel" && token == Base.fcm
                case .purgeAlertToken(let token, _): alert.device.deviceId == "ipad" && token == Self.alertingIPhone
                default: false
                }
            }
            #expect(purged, "\(alert.device): \(actions)")
        }
    }

    @Test func anAlertIsRetriedAFewTimesAtMostAndRenewsCredentialsOnce() {
        var machine = Self.rung([Self.alertingIPhone])
        var alert = Self.alerts(machine.stopped(Self.call(.unanswered), now: 1_030_000))[0]
        let renewed = Self.alerts(machine.answered(alert, .renewCredentials("ExpiredProviderToken"), now: 1_030_010))
        #expect(renewed.count == 1 && renewed[0].renewCredentials, "after the call stopped too")
        alert = renewed[0]
        var now: Int64 = 1_030_020
        var attempts = 1
        while Base.outcomes(machine.answered(alert, .retry("503"), now: now)) != [.gaveUp] {
            now += 100
            guard let next = Self.alerts(machine.due(now: now)).first else { break }
            alert = next
            attempts += 1
        }
        #expect(attempts == PushMachine.maxAlertAttempts)
        #expect(machine.activeCalls == 0)
    }

    /// In a cluster the node that pushed the ring hears the stop by session
    /// id and status, and alerts as for a whole call.
    @Test func aStopHeardBySessionIdAlerts() {
        var machine = Self.rung([Base.fcm])
        let actions = machine.stopped(sessionId: Base.call.sessionId, status: .unanswered, now: 1_030_000)
        #expect(Self.alerts(actions).map(\.call.initiator) == ["alice"])
        #expect(Self.alerts(actions).map(\.call.status) == [.unanswered])
    }
}
