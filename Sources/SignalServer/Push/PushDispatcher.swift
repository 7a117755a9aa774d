import Dispatch
import SignalCore
import SignalProtocol

/// The push worker: drives the ``PushMachine`` on a serial queue of its own
/// (`ringd-push`), off the event loops and the store's thread. It signs
/// APNs provider tokens and gets FCM access tokens, builds each request and
/// hands it to the shared libcurl client (``OutboundHTTPClient``: HTTP/2 to
/// both services, many pushes multiplexed on each of a few connections);
/// answers come back to the queue. A slow or unreachable push service holds up
/// only its own requests: ringing of connected devices never waits for it.
///
/// Everything mutable lives on `queue`: the machine, the credentials, the
/// retry timer. That confinement is what makes it Sendable.
final class PushDispatcher: @unchecked Sendable {
    private let settings: PushSettings
    private let registry: PushTokenRegistry
    private let store: PushTokenStore
    private let client: OutboundHTTPClient
    private let wall: @Sendable () -> Int64
    private let queue = DispatchQueue(label: "ringd-push")
    private var machine: PushMachine
    private let apnsToken: APNsProviderToken?
    private let fcmToken: FCMAccessToken?
    private var timer: DispatchSourceTimer?
    private var timerDue: Int64?
    private var isStopped = false
    /// Signalled once nothing is in flight, while a stop waits for that.
    private var drainWaiter: DispatchSemaphore?
    /// Told each ringing call nothing can ring (``reportUnreachable(to:)``).
    private var unreachable: (@Sendable (String) -> Void)?

    /// Reads the APNs key and the FCM service account; throws naming the
    /// setting when one is unusable.
    init(
        settings: PushSettings, registry: PushTokenRegistry, store: PushTokenStore, client: OutboundHTTPClient,
        wall: @escaping @Sendable () -> Int64
    ) throws(PushError) {
        self.settings = settings
        self.registry = registry
        self.store = store
        self.client = client
        self.wall = wall
        machine = PushMachine(settings: settings)
        apnsToken = settings.apns.isConfigured ? try APNsProviderToken(settings: settings.apns) : nil
        fcmToken =
            settings.fcm.isConfigured
            ? FCMAccessToken(
                account: try FCMServiceAccount(settings: settings.fcm), caFile: settings.caFile,
                timeout: settings.timeout) : nil
    }

    /// Gets the first FCM access token now, so that the first ring does not wait for it.
    func start() {
        queue.async { [self] in
            fcmToken?.withToken(now: wall(), exchange: exchange) { result in
                if case .failure(let error) = result {
                    Log.repeatedWarning("push-credentials", "push: \(error.message)")
                }
            }
        }
    }

    /// With `calls.unreachable: fail`: `report` hears the session id of
    /// each ringing call whose callee had no connected device and no push
    /// token, or whose every ring push was refused for good.
    func reportUnreachable(to report: @escaping @Sendable (String) -> Void) {
        queue.sync { unreachable = report }
    }

    /// `call` started ringing; `connected` heard it on their connections.
    func ring(_ call: Call, connected: [String]) {
        let all = registry.tokens(of: call.receiver)
        let tokens = settings.mode == .offline ? all.filter { !connected.contains($0.deviceId) } : all
        guard !tokens.isEmpty else {
            if connected.isEmpty { queue.async { [self] in if !isStopped { unreachable?(call.sessionId) } } }
            return
        }
        queue.async { [self] in perform(machine.ring(call, tokens: tokens, now: wall())) }
    }

    /// `call` stopped ringing.
    func stopped(_ call: Call) {
        queue.async { [self] in perform(machine.stopped(call, now: wall())) }
    }

    /// The call `sessionId` stopped ringing as `status` (cluster mode: the
    /// node that decided it may not be this one, which pushed the ring).
    func stopped(sessionId: String, status: CallStatus) {
        queue.async { [self] in perform(machine.stopped(sessionId: sessionId, status: status, now: wall())) }
    }

    /// Waits up to `drain` seconds for the sends in flight (among them the
    /// cancels of the calls a shutdown ended), then sends nothing more.
    func stop(drain: Double = 2) {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let drained = DispatchSemaphore(value: 0)
        queue.sync {
            if machine.hasSendsInFlight { drainWaiter = drained } else { drained.signal() }
        }
        if drained.wait(timeout: .now() + drain) == .timedOut {
            Log.info("push: stopping with pushes still unanswered after \(drain) s")
        }
        queue.sync {
            isStopped = true
            drainWaiter = nil
            timer?.cancel()
            timer = nil
        }
    }

    // MARK: On the queue

    private func perform(_ actions: [PushMachine.Action]) {
        guard !isStopped else { return }
        for action in actions {
            switch action {
            case .send(let attempt): send(attempt)
            case .purge(let token, let reason): purge(token, reason: reason)
            case .purgeAlertToken(let token, let reason): purgeAlertToken(token, reason: reason)
            case .outcome(let outcome, let attempt, let detail): record(outcome, attempt, detail)
            case .unreachable(let sessionId): unreachable?(sessionId)
            }
        }
        rearm()
        if let drainWaiter, !machine.hasSendsInFlight {
            drainWaiter.signal()
            self.drainWaiter = nil
        }
    }

    private func send(_ attempt: PushMachine.Attempt) {
        let now = wall()
        switch attempt.token.registration.platform {
        case .apnsVoip:
            guard let apnsToken else { return answered(attempt, .failed("APNs is not configured (push.apns)")) }
            let jwt: String
            do throws(PushError) {
                jwt =
                    attempt.renewCredentials
                    ? try apnsToken.renew(refused: attempt.credential, now: now / 1000)
                    : try apnsToken.jwt(now: now / 1000)
            } catch {
                return answered(attempt, .failed(error.message))
            }
            var sent = attempt
            sent.credential = jwt
            let request: OutboundRequest?
            switch attempt.kind {
            case .ring, .cancel:
                request = APNsPush.request(for: attempt.call, token: attempt.token, settings: settings, jwt: jwt)
            case .alert:
                request = APNsPush.alertRequest(
                    for: attempt.call, token: attempt.token, settings: settings, jwt: jwt, now: now)
            }
            guard let request else { return answered(attempt, .failed("the device has no alertToken")) }
            post(request, sent, answer: APNsPush.answer)
        case .fcm:
            guard let fcmToken else { return answered(attempt, .failed("FCM is not configured (push.fcm)")) }
            if attempt.renewCredentials { fcmToken.invalidate(attempt.credential) }
            fcmToken.withToken(now: now, exchange: exchange) { [self] result in
                switch result {
                case .failure(let error):
                    answered(attempt, .retry(error.message))
                case .success(let accessToken):
                    var sent = attempt
                    sent.credential = accessToken
                    post(
                        FCMPush.request(
                            FCMPush.Kind(attempt.kind), for: attempt.call, token: attempt.token,
                            project: fcmToken.account.projectId, accessToken: accessToken,
                            settings: settings, now: wall()), sent, answer: FCMPush.answer)
                }
            }
        }
    }

    private func post(
        _ request: OutboundRequest, _ attempt: PushMachine.Attempt,
        answer: @escaping @Sendable (OutboundResponse) -> PushAnswer
    ) {
        client.send(request) { [self] response in
            let meaning = answer(response)
            queue.async { [self] in answered(attempt, meaning) }
        }
    }

    /// An exchange whose answer comes back on the queue (the OAuth grant).
    private func exchange(_ request: OutboundRequest, _ done: @escaping (OutboundResponse) -> Void) {
        let finish = UncheckedSendable(done)
        client.send(request) { [self] response in queue.async { finish.value(response) } }
    }

    private func answered(_ attempt: PushMachine.Attempt, _ answer: PushAnswer) {
        perform(machine.answered(attempt, answer, now: wall()))
    }

    private func purge(_ token: RegisteredPushToken, reason: String) {
        let device = PushDeviceKey(uid: token.uid, deviceId: token.deviceId)
        store.delete(of: device, only: token) { [registry] result in
            switch result {
            case .success(let removed):
                registry.removed(device, only: token)
                if removed {
                    Log.info("push: removed the \(token.registration.platform.rawValue) token of \(device): \(reason)")
                }
            case .failure(let error):
                Log.warning("push: could not remove the token of \(device): \(error)")
            }
        }
    }

    private func purgeAlertToken(_ token: RegisteredPushToken, reason: String) {
        let device = PushDeviceKey(uid: token.uid, deviceId: token.deviceId)
        store.clearAlertToken(of: device, only: token) { [registry] result in
            switch result {
            case .success(let cleared):
                registry.alertTokenCleared(device, only: token)
                if cleared { Log.info("push: removed the alert token of \(device): \(reason)") }
            case .failure(let error):
                Log.warning("push: could not remove the alert token of \(device): \(error)")
            }
        }
    }

    private func record(_ outcome: PushOutcome, _ attempt: PushMachine.Attempt, _ detail: String?) {
        registry.record(
            outcome, for: attempt.device, at: wall(), error: outcome == .sent ? nil : detail,
            alert: attempt.kind == .alert)
        Log.debug(
            "push: \(attempt.kind) of \(attempt.call.sessionId) to \(attempt.device) "
                + "(\(attempt.token.registration.platform.rawValue)): \(outcome.rawValue)\(detail.map { ": \($0)" } ?? "")"
        )
    }

    /// Points the timer at the next retry, if one waits.
    private func rearm() {
        guard let due = machine.nextDue() else {
            timer?.cancel()
            timer = nil
            timerDue = nil
            return
        }
        guard due != timerDue else { return }
        timer?.cancel()
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .milliseconds(Int(max(0, due - wall()))), leeway: .milliseconds(5))
        source.setEventHandler { [self] in
            timerDue = nil
            perform(machine.due(now: max(wall(), due)))
        }
        source.resume()
        timer = source
        timerDue = due
    }
}

/// A value handed between closures that all run on one serial queue.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
