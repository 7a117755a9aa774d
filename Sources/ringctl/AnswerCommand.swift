import SignalClient
import SignalProtocol

/// How `ringctl answer` treats a ring.
enum AnswerPolicy: Sendable, Equatable {
    /// A key press (or a typed line) decides.
    case ask
    /// Accept after this many seconds (0: at once).
    case accept(after: Double)
    /// Decline at once, as `rejected` or `busy`.
    case reject(CallStatus)
}

/// What `ringctl answer` was asked to do.
struct AnswerRequest: Sendable {
    /// How rings are answered.
    let policy: AnswerPolicy
    /// Hang up this many seconds after a call connects.
    let hangupAfter: Double?
    /// Exit once the first call is over, with its outcome.
    let once: Bool
    /// What a rejection says to the caller (`--reason`).
    let rejectReason: String?

    /// The request on the command line; at most one way of answering.
    init(_ arguments: Arguments) throws(Failure) {
        var policies: [AnswerPolicy] = []
        if arguments.flag("--auto-accept") { policies.append(.accept(after: 0)) }
        if let seconds = try arguments.seconds("--accept-after") { policies.append(.accept(after: seconds)) }
        if arguments.flag("--auto-reject") { policies.append(.reject(.rejected)) }
        if arguments.flag("--busy") { policies.append(.reject(.busy)) }
        guard policies.count <= 1 else {
            throw arguments.usage("--auto-accept, --accept-after, --auto-reject and --busy exclude each other")
        }
        policy = policies.first ?? .ask
        hangupAfter = try arguments.seconds("--hangup-after")
        once = arguments.flag("--once")
        rejectReason = arguments.value("--reason")
        if let reason = rejectReason, reason.isEmpty || reason.count > Call.maxRejectReasonLength {
            throw arguments.usage("--reason must be 1 to \(Call.maxRejectReasonLength) characters")
        }
    }
}

/// `ringctl answer`: waits for calls to the user, shows each ring, and
/// accepts, rejects or declines it as busy by key or by flag. A ring that is
/// cancelled, answered elsewhere or times out is reported and waiting goes
/// on. The first stop signal ends a connected call (telling ringd) and quits.
final class Answerer {
    /// The connection, output and inbox.
    private let session: Session
    /// What was asked on the command line.
    private let request: AnswerRequest
    /// The call ringing or connected on this device.
    private var current: Call?

    /// An answerer following `request` over `session`.
    init(session: Session, request: AnswerRequest) {
        self.session = session
        self.request = request
    }

    /// Waits for calls until stopped (or, with `--once`, until the first one
    /// is over); returns the exit status.
    func run() async -> ExitCode {
        session.start()
        let client = session.client
        var keys = ""
        if request.policy == .ask {
            let inbox = session.inbox
            let keyMode = Terminal.enterKeyMode()
            Keyboard.start(keyMode: keyMode) { inbox.post(.key($0)) }
            keys = keyMode ? " · keys: a accept, r reject, b busy, h hang up" : " · type a, r, b or h and Enter"
        }
        session.console.report(
            "waiting for calls as \(client.uid) · device \(client.deviceId)\(keys) · Ctrl-C quits",
            event: "waiting", [("uid", .string(client.uid)), ("deviceId", .string(client.deviceId))])
        if let activeCall = client.initialActiveCall, let outcome = receive(activeCall) {
            if let code = finished(outcome) { return code }
        }
        for await input in session.inbox.inputs {
            if let code = await handle(input) { return code }
        }
        return .failure
    }

    /// Reacts to one input; returns the exit status when ringctl should exit.
    private func handle(_ input: Input) async -> ExitCode? {
        switch input {
        case .client(.call(let call)):
            return receive(call).flatMap(finished)
        case .client(.signal(let signal)):
            session.reportSignal(signal)
        case .client(.reconnecting(let error)):
            session.reportReconnecting(error)
        case .client(.reconnected(let activeCall, let endpoint)):
            session.reportReconnected(activeCall, at: endpoint)
            guard let current else { return activeCall.flatMap(receive).flatMap(finished) }
            guard let latest = await session.afterReconnecting(current, activeCall: activeCall) else {
                return finished(conclude(.connectionLost, current))
            }
            return receive(latest).flatMap(finished)
        case .client(.disconnected(let error)):
            session.reportDisconnected(error, asEvent: current == nil)
            if let current { session.console.ended(.connectionLost, current) }
            return .failure
        case .key(let action):
            guard let current, current.status == action.applies else { return nil }
            return await perform(action, on: current)
        case .scheduled(let action, let sessionId):
            guard let current, current.sessionId == sessionId, current.status == action.applies else { return nil }
            return await perform(action, on: current)
        case .stop:
            return await stop()
        case .tick:
            return nil
        }
        return nil
    }

    /// Sends `action` for `call`; a failure is reported and waiting goes on.
    private func perform(_ action: CallAction, on call: Call) async -> ExitCode? {
        var action = action
        if case .reject(let status, nil) = action { action = .reject(status, reason: request.rejectReason) }
        switch await session.send(action, about: call) {
        case .success(let update):
            return receive(update).flatMap(finished)
        case .failure(let failure):
            session.console.fail(failure)
            return nil
        }
    }

    /// Takes in a call change; returns the outcome when this device's call is over.
    private func receive(_ call: Call) -> Outcome? {
        if let current, current.sessionId == call.sessionId { return update(call) }
        guard call.receiver == session.client.uid else { return nil }
        switch call.status {
        case .initiated where current == nil:
            ring(call)
        case .ongoing where current == nil && call.acceptedBy == session.client.deviceId:
            return update(call)
        case _ where call.isMissed(for: session.client.uid):
            session.console.missed(call)
        default:
            break
        }
        return nil
    }

    /// A call starts ringing: shows it and applies the policy.
    private func ring(_ call: Call) {
        current = call
        session.console.incoming(call)
        // The call shows here: the caller's devices may say "ringing". Best
        // effort: a call that ended meanwhile refuses it, and nothing is lost.
        let client = session.client
        Task { _ = try? await client.ringing(call.sessionId) }
        switch request.policy {
        case .ask:
            break
        case .accept(let seconds):
            session.inbox.post(.scheduled(.accept, sessionId: call.sessionId), after: seconds)
        case .reject(let status):
            session.inbox.post(.scheduled(.reject(status), sessionId: call.sessionId))
        }
    }

    /// The current call changed; returns its outcome once it is over here.
    private func update(_ call: Call) -> Outcome? {
        let wasConnected = current?.sessionId == call.sessionId && current?.status == .ongoing
        current = call
        switch call.status {
        case .initiated:
            return nil
        case .ongoing where call.acceptedBy == session.client.deviceId:
            if !wasConnected {
                session.console.connected(call)
                if let seconds = request.hangupAfter {
                    session.inbox.post(.scheduled(.end, sessionId: call.sessionId), after: seconds)
                }
            }
            return nil
        case .ongoing:
            return conclude(.answeredElsewhere(call), call)
        case .ended, .rejected, .busy, .cancelled, .unanswered:
            return conclude(Outcome(ended: call), call)
        }
    }

    /// Reports the end of the current call and goes back to waiting.
    private func conclude(_ outcome: Outcome, _ call: Call) -> Outcome {
        session.console.ended(outcome, call)
        current = nil
        return outcome
    }

    /// The exit status after a call is over: its outcome's with `--once`, else none (waiting goes on).
    private func finished(_ outcome: Outcome) -> ExitCode? {
        request.once ? outcome.exitCode : nil
    }

    /// The first stop signal: ends a connected call and quits. A ringing call
    /// is left ringing (another device may still answer it).
    private func stop() async -> ExitCode {
        guard let current, current.status == .ongoing else {
            let left = current.map { " (the call from \($0.initiator) keeps ringing)" } ?? ""
            session.console.report("stopped\(left)", event: "stopped", [("exitCode", .integer(0))])
            return .success
        }
        switch await session.send(.end, about: current) {
        case .success(let update):
            return receive(update)?.exitCode ?? .failure
        case .failure(let failure):
            session.console.fail(failure)
            return .failure
        }
    }
}
