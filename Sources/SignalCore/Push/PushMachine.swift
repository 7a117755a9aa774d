import SignalProtocol
import SignalSystem

/// Which pushes go out when, free of I/O: the ring pushes of each ringing
/// call, their retries while the call rings, and the messages that stop
/// an Android ringing screen. Each input is a `mutating func` taking the
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
    }

    private struct Ringing {
        package var call: Call
        var ringing = true
        var targets: [PushDeviceKey: Target] = [:]

        var isSettled: Bool {
            targets.values.allSatisfy { target in
                switch target.stage {
                case .done: return true
                case .delivered: return target.token.registration.platform != .fcm || !ringing
                case .inFlight, .waiting: return false
                }
            }
        }
    }

    private var calls: [String: Ringing] = [:]
    /// Retries by due time; an entry whose target no longer waits until
    /// that time (given up, or the call settled) is skipped when it pops.
    private var retries = DueHeap<Int64, (sessionId: String, device: PushDeviceKey)>()
    private let settings: PushSettings
    /// Stretches a retry delay by up to a fifth (tests pass 0).
    private let jitter: @Sendable () -> Double
    /// Cancels are tried this many times at most.
    package static let maxCancelAttempts = 3

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
            let device = PushDeviceKey(uid: token.uid, deviceId: token.deviceId)
            ringing.targets[device] = Target(token: token, kind: .ring, stage: .inFlight)
            actions.append(.send(Attempt(call: call, token: token, kind: .ring, renewCredentials: false)))
        }
        calls[call.sessionId] = ringing
        return actions
    }

    /// `call` stopped ringing (answered, declined, cancelled, unanswered):
    /// waiting retries are given up, delivered FCM rings get a cancel.
    package mutating func stopped(_ call: Call, now: Int64) -> [Action] {
        guard var ringing = calls[call.sessionId], ringing.ringing else { return [] }
        ringing.ringing = false
        ringing.call = call
        var actions: [Action] = []
        for (device, var target) in ringing.targets {
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
            ringing.targets[device] = target
        }
        settle(ringing)
        return actions
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
        guard var ringing = calls[sent.call.sessionId], var target = ringing.targets[sent.device],
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
            actions.append(.purge(target.token, reason: reason))
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
                }
            if wanted {
                target.stage = .waiting(until: due)
                retries.push((sent.call.sessionId, sent.device), dueAt: due)
                actions.append(.outcome(.retried, sent, detail: reason))
            } else {
                target.stage = .done
                let why = target.kind == .ring ? "\(reason); the call stops ringing before a retry" : reason
                actions.append(.outcome(.gaveUp, sent, detail: why))
            }
        }
        ringing.targets[sent.device] = target
        if ringing.ringing && target.failedForGood && ringing.targets.values.allSatisfy(\.failedForGood) {
            actions.append(.unreachable(sessionId: ringing.call.sessionId))
        }
        settle(ringing)
        return actions
    }

    /// Sends the retries due by `now`.
    package mutating func due(now: Int64) -> [Action] {
        var actions: [Action] = []
        while let (key, dueAt) = retries.popDue(now: now) {
            guard var ringing = calls[key.sessionId], var target = ringing.targets[key.device],
                isWaiting(target, until: dueAt)
            else { continue }
            target.stage = .inFlight
            ringing.targets[key.device] = target
            calls[key.sessionId] = ringing
            actions.append(.send(attempt(target, ringing.call)))
        }
        return actions
    }

    /// When the next retry is due, if one waits; drops the stale entries before it.
    package mutating func nextDue() -> Int64? {
        while let (key, dueAt) = retries.first {
            if let target = calls[key.sessionId]?.targets[key.device], isWaiting(target, until: dueAt) { return dueAt }
            _ = retries.popFirst()
        }
        return nil
    }

    /// Whether sending `target` at `time` is still of use: a ring only
    /// while the call rings, a cancel always.
    private func stillWanted(_ target: Target, _ ringing: Ringing, at time: Int64) -> Bool {
        target.kind == .cancel || (ringing.ringing && time < ringing.call.ringDeadline)
    }

    private func isWaiting(_ target: Target, until dueAt: Int64) -> Bool {
        if case .waiting(let until) = target.stage { return until == dueAt }
        return false
    }

    private func attempt(_ target: Target, _ call: Call) -> Attempt {
        Attempt(call: call, token: target.token, kind: target.kind, renewCredentials: false)
    }

    /// Keeps the call while anything may still be sent for it.
    private mutating func settle(_ ringing: Ringing) {
        calls[ringing.call.sessionId] = ringing.isSettled ? nil : ringing
    }
}
