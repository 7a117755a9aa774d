import SignalProtocol
import SignalSystem

/// Which pushes go out when, free of I/O: the ring pushes of each ringing
/// call, their retries while the call rings, the messages that stop
/// an Android ringing screen, and the missed-call alerts to the devices
/// that were pushed the ring of a call the callee missed. Each input is a `mutating func` taking the
/// wall clock (ms) and returning the ``Action``s for the driver
/// (``PushDispatcher``), which reports each send's ``PushAnswer`` back.
///
/// A push is never sent, nor retried, for a call that stopped ringing; a
/// retry that would leave after the ring deadline is given up at once.
package struct PushMachine {
    package enum Kind: Sendable, Equatable {
        /// The ring (APNs VoIP push, FCM `incoming_call`).
        case ring
        /// FCM `call_cancelled`, after the call stopped ringing.
        case cancel
        /// The visible "Missed call" notification (an APNs alert to the
        /// device's alert token, an FCM notification message), after the
        /// call ended as ``MissedCallAlert`` says the callee missed it.
        case alert
    }

    /// One request to send.
    package struct Attempt: Sendable {
        package var call: Call
        package var token: RegisteredPushToken
        package var kind: Kind
        /// The credentials were just refused: renew them first.
        package var renewCredentials: Bool
        /// The credential the driver sent it with (opaque here): a renewal
        /// carries the refused one, so that the driver renews once however
        /// many pushes it refused.
        package var credential: String? = nil
        package var device: PushDeviceKey { PushDeviceKey(uid: token.uid, deviceId: token.deviceId) }
    }

    package enum Action: Sendable {
        case send(Attempt)
        /// The token is dead: remove it (only if the device still has it).
        case purge(RegisteredPushToken, reason: String)
        /// The device's APNs alert token is dead: forget it (only if the
        /// device still has that registration), keeping the VoIP token.
        case purgeAlertToken(RegisteredPushToken, reason: String)
        /// Count and log what became of a push.
        case outcome(PushOutcome, Attempt, detail: String?)
        /// Every ring push of the call, which still rings, was refused in a
        /// way no retry mends: nothing can wake the callee (`calls.unreachable`).
        case unreachable(sessionId: String)
    }

    /// Where one device's pushes for one call stand.
    private enum Stage {
        case inFlight
        case waiting(until: Int64)
        /// The ring was taken (FCM: a cancel is owed when the call stops).
        case delivered
        case done
    }

    private struct Target {
        package var token: RegisteredPushToken
        package var kind: Kind
        var stage: Stage
        var retries = 0
        var renewed = false
        /// The call stopped ringing while the ring was in flight.
        var cancelOwed = false
        /// The service refused the ring in a way no retry mends (a dead
        /// token, a refused request, credentials refused after a renewal).
        var failedForGood = false
        /// The service called the token dead: no alert follows the ring.
        var purged = false
    }

    private struct Ringing {
        package var call: Call
        var ringing = true
        var targets: [PushLane: Target] = [:]

        /// Whether nothing more can leave: while the call rings, a ring that
        /// reached FCM owes a cancel, and with `alerting` any ring whose
        /// token was not called dead may owe an alert.
        func isSettled(alerting: Bool) -> Bool {
            targets.values.allSatisfy { target in
                switch target.stage {
                case .inFlight, .waiting: return false
                case .done, .delivered:
                    guard ringing, target.kind == .ring else { return true }
                    if case .delivered = target.stage, target.token.registration.platform == .fcm { return false }
                    return !(alerting && !target.purged && PushMachine.takesAlerts(target.token))
                }
            }
        }
    }

    private var calls: [String: Ringing] = [:]
    /// Retries by due time; an entry whose target no longer waits until
    /// that time (given up, or the call settled) is skipped when it pops.
    private var retries = DueHeap<Int64, (sessionId: String, lane: PushLane)>()
    private let settings: PushSettings
    /// Stretches a retry delay by up to a fifth (tests pass 0).
    private let jitter: @Sendable () -> Double
    /// Cancels are tried this many times at most.
    package static let maxCancelAttempts = 3
    /// Missed-call alerts are tried this many times at most: a phone that
    /// is off gets one when it is back, as the service keeps it, so the
    /// retries only cover the service's own trouble.
    package static let maxAlertAttempts = 5

    package init(settings: PushSettings, jitter: @escaping @Sendable () -> Double = { Double.random(in: 0 ... 0.2) }) {
        self.settings = settings
        self.jitter = jitter
    }

    /// Calls with pushes not settled yet.
    package var activeCalls: Int { calls.count }

    /// Whether a send has not been answered yet (a stop waits for those).
    package var hasSendsInFlight: Bool {
        calls.values.contains { ringing in
            ringing.targets.values.contains { if case .inFlight = $0.stage { true } else { false } }
        }
    }

    /// `call` started ringing: push each of `tokens` (the callee's devices to push).
    package mutating func ring(_ call: Call, tokens: [RegisteredPushToken], now: Int64) -> [Action] {
        guard calls[call.sessionId] == nil, !tokens.isEmpty, now < call.ringDeadline else { return [] }
        var ringing = Ringing(call: call)
        var actions: [Action] = []
        for token in tokens {
            let lane = PushLane(device: PushDeviceKey(uid: token.uid, deviceId: token.deviceId), alert: false)
            ringing.targets[lane] = Target(token: token, kind: .ring, stage: .inFlight)
            actions.append(.send(Attempt(call: call, token: token, kind: .ring, renewCredentials: false)))
        }
        calls[call.sessionId] = ringing
        return actions
    }

    /// `call` stopped ringing (answered, declined, cancelled, unanswered):
    /// waiting retries are given up, delivered FCM rings get a cancel, and
    /// when the callee missed the call (``MissedCallAlert``) each device
    /// that was pushed the ring and can show an alert gets one, whatever
    /// became of the ring (one that never arrived matters most), unless
    /// the service called its token dead.
    package mutating func stopped(_ call: Call, now: Int64) -> [Action] {
        guard var ringing = calls[call.sessionId], ringing.ringing else { return [] }
        ringing.ringing = false
        ringing.call = call
        let alerting = settings.missedCallAlerts && MissedCallAlert.isOwed(for: call)
        var actions: [Action] = []
        for (lane, var target) in ringing.targets {
            switch target.stage {
            case .waiting where target.kind == .ring:
                target.stage = .done
                actions.append(.outcome(.gaveUp, attempt(target, call), detail: "the call stopped ringing"))
            case .delivered where target.token.registration.platform == .fcm:
                target = Target(token: target.token, kind: .cancel, stage: .inFlight)
                actions.append(.send(attempt(target, call)))
            case .inFlight where target.kind == .ring:
                target.cancelOwed = target.token.registration.platform == .fcm
            default:
                break
            }
            ringing.targets[lane] = target
            if alerting, !target.purged, Self.takesAlerts(target.token) {
                let alert = Target(token: target.token, kind: .alert, stage: .inFlight)
                ringing.targets[PushLane(device: lane.device, alert: true)] = alert
                actions.append(.send(attempt(alert, call)))
            }
        }
        settle(ringing)
        return actions
    }

    /// Whether the device can show a notification: an FCM token can, an
    /// APNs VoIP token only with the app's regular token beside it.
    static func takesAlerts(_ token: RegisteredPushToken) -> Bool {
        token.registration.platform == .fcm || token.registration.alertToken != nil
    }

    /// The call `sessionId` stopped ringing as `status`, heard from another
    /// node of a cluster (which does not send the whole call): as
    /// ``stopped(_:now:)`` with the call as it rang here. A call this
    /// machine did not push is no one's business here.
    package mutating func stopped(sessionId: String, status: CallStatus, now: Int64) -> [Action] {
        guard var call = calls[sessionId]?.call else { return [] }
        call.status = status
        return stopped(call, now: now)
    }

    /// The service answered `sent` with `answer`.
    package mutating func answered(_ sent: Attempt, _ answer: PushAnswer, now: Int64) -> [Action] {
        guard var ringing = calls[sent.call.sessionId], var target = ringing.targets[sent.lane],
            case .inFlight = target.stage, target.kind == sent.kind,
            target.token.registration.token == sent.token.registration.token
        else { return [] }
        var actions: [Action] = []
        switch answer {
        case .sent:
            actions.append(.outcome(.sent, sent, detail: nil))
            if target.kind == .ring && target.cancelOwed {
                target = Target(token: target.token, kind: .cancel, stage: .inFlight)
                actions.append(.send(attempt(target, ringing.call)))
            } else {
                target.stage = target.kind == .ring ? .delivered : .done
            }
        case .purge(let reason):
            target.stage = .done
            target.failedForGood = target.kind == .ring
            target.purged = true
            // An APNs alert went to the alert token: the VoIP token may be fine.
            if target.kind == .alert && target.token.registration.platform == .apnsVoip {
                actions.append(.purgeAlertToken(target.token, reason: reason))
            } else {
                actions.append(.purge(target.token, reason: reason))
            }
            actions.append(.outcome(.purged, sent, detail: reason))
        case .renewCredentials(let reason) where !target.renewed && stillWanted(target, ringing, at: now):
            target.renewed = true
            actions.append(.outcome(.retried, sent, detail: reason))
            actions.append(
                .send(
                    Attempt(
                        call: ringing.call, token: target.token, kind: target.kind, renewCredentials: true,
                        credential: sent.credential)))
        case .renewCredentials(let reason), .failed(let reason):
            target.stage = .done
            target.failedForGood = target.kind == .ring
            let stopped = target.kind == .ring && !stillWanted(target, ringing, at: now)
            actions.append(.outcome(.gaveUp, sent, detail: stopped ? "\(reason); the call stopped ringing" : reason))
        case .retry(let reason, let after):
            target.retries += 1
            let delay = max(settings.retryDelay(target.retries) * (1 + jitter()), after ?? 0)
            // Bounded by the ring timeout (at most 300 s) for a ring and by a
            // minute for a cancel, so that no wait the service asks for overflows.
            let due = now + Int64((min(delay, 3600) * 1000).rounded(.up))
            let wanted =
                switch target.kind {
                case .ring: stillWanted(target, ringing, at: due)
                case .cancel: target.retries < Self.maxCancelAttempts
                case .alert: target.retries < Self.maxAlertAttempts
                }
            if wanted {
                target.stage = .waiting(until: due)
                retries.push((sent.call.sessionId, sent.lane), dueAt: due)
                actions.append(.outcome(.retried, sent, detail: reason))
            } else {
                target.stage = .done
                let why = target.kind == .ring ? "\(reason); the call stops ringing before a retry" : reason
                actions.append(.outcome(.gaveUp, sent, detail: why))
            }
        }
        ringing.targets[sent.lane] = target
        if ringing.ringing && target.failedForGood
            && ringing.targets.values.allSatisfy({ $0.kind != .ring || $0.failedForGood })
        {
            actions.append(.unreachable(sessionId: ringing.call.sessionId))
        }
        settle(ringing)
        return actions
    }

    /// Sends the retries due by `now`.
    package mutating func due(now: Int64) -> [Action] {
        var actions: [Action] = []
        while let (key, dueAt) = retries.popDue(now: now) {
            guard var ringing = calls[key.sessionId], var target = ringing.targets[key.lane],
                isWaiting(target, until: dueAt)
            else { continue }
            target.stage = .inFlight
            ringing.targets[key.lane] = target
            calls[key.sessionId] = ringing
            actions.append(.send(attempt(target, ringing.call)))
        }
        return actions
    }

    /// When the next retry is due, if one waits; drops the stale entries before it.
    package mutating func nextDue() -> Int64? {
        while let (key, dueAt) = retries.first {
            if let target = calls[key.sessionId]?.targets[key.lane], isWaiting(target, until: dueAt) { return dueAt }
            _ = retries.popFirst()
        }
        return nil
    }

    /// Whether sending `target` at `time` is still of use: a ring only
    /// while the call rings, a cancel or an alert always.
    private func stillWanted(_ target: Target, _ ringing: Ringing, at time: Int64) -> Bool {
        target.kind != .ring || (ringing.ringing && time < ringing.call.ringDeadline)
    }

    private func isWaiting(_ target: Target, until dueAt: Int64) -> Bool {
        if case .waiting(let until) = target.stage { return until == dueAt }
        return false
    }

    private func attempt(_ target: Target, _ call: Call) -> Attempt {
        Attempt(call: call, token: target.token, kind: target.kind, renewCredentials: false)
    }

    /// Keeps the call while anything may still be sent for it (a call
    /// stops ringing by its deadline at the latest, so no call stays long).
    private mutating func settle(_ ringing: Ringing) {
        calls[ringing.call.sessionId] = ringing.isSettled(alerting: settings.missedCallAlerts) ? nil : ringing
    }
}

/// One device's pushes for one call run in two lanes: the ring and the
/// cancel that follows it, and the missed-call alert, which may leave
/// while the cancel does.
private struct PushLane: Hashable {
    var device: PushDeviceKey
    var alert: Bool
}

extension PushMachine.Attempt {
    fileprivate var lane: PushLane { PushLane(device: device, alert: kind == .alert) }
}
