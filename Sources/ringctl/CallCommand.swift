import SignalClient
import SignalProtocol
import SignalSystem

/// What `ringctl call UID` was asked to do.
struct CallRequest: Sendable {
    /// The uid to ring.
    let receiver: String
    /// Audio or video.
    let type: CallType
    /// The ring timeout; nil for the server's default.
    let timeout: RingTimeout?
    /// The metadata object sent with the call.
    let metadata: JSONValue?
    /// Hang up this many seconds after the call connects.
    let hangupAfter: Double?
    /// The client call id (`--client-call-id`); nil: a new random one.
    let clientCallId: String?

    /// The request on the command line.
    init(_ arguments: Arguments) throws(Failure) {
        receiver = try arguments.uid()
        type = try arguments.choice("--type", CallType.self) ?? .video
        timeout = try Self.ringTimeout(arguments)
        hangupAfter = try arguments.seconds("--hangup-after")
        clientCallId = arguments.value("--client-call-id")
        if let id = clientCallId, !Call.isValidClientCallId(id) {
            throw arguments.usage("--client-call-id must be \(Call.clientCallIdRule)")
        }
        guard let text = arguments.value("--metadata") else {
            metadata = nil
            return
        }
        guard let parsed = try? JSONValue.parse(text), parsed.objectMembers != nil else {
            throw arguments.usage("--metadata needs a JSON object, e.g. '{\"topic\":\"standup\"}'")
        }
        metadata = parsed
    }

    /// `--timeout S`: whole seconds go as `timeout`, a fraction (to the
    /// millisecond) as `timeoutMs`, so a ringd that predates it still
    /// understands the whole ones.
    private static func ringTimeout(_ arguments: Arguments) throws(Failure) -> RingTimeout? {
        guard let seconds = try arguments.seconds("--timeout") else { return nil }
        let range = RingTimeout.millisecondsRange
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds >= Double(range.lowerBound) && milliseconds <= Double(range.upperBound) else {
            throw arguments.usage(
                "--timeout needs a number of seconds from 0.05 to 300, not \"\(arguments.value("--timeout") ?? "")\"")
        }
        let whole = Int64(milliseconds)
        return whole % 1000 == 0 ? .seconds(Int(whole / 1000)) : .milliseconds(whole)
    }
}

/// `ringctl call`: rings a user, shows the ringing, and follows the call to
/// its end. The first stop signal cancels a ringing call or ends an ongoing
/// one, and ringctl waits (bounded) for ringd to confirm.
final class Caller {
    /// The connection, output and inbox.
    private let session: Session
    /// What was asked on the command line.
    private let request: CallRequest
    /// The call as last known.
    private var call: Call?
    /// When the ringing started, for the elapsed seconds.
    private var ringingSince = Deadline.now()

    /// A caller placing `request` over `session`.
    init(session: Session, request: CallRequest) {
        self.session = session
        self.request = request
    }

    /// Places the call and follows it; returns the exit status of its outcome.
    func run() async -> ExitCode {
        session.start()
        let placed: (call: Call, ringing: Int)
        do throws(ClientError) {
            placed = try await session.client.initiateCall(
                to: request.receiver, type: request.type,
                timeout: request.timeout, metadata: request.metadata, clientCallId: request.clientCallId)
        } catch {
            session.console.fail(Failure(error, server: session.server))
            return .failure
        }
        if placed.call.status == .initiated {
            ringingSince = Deadline.now()
            session.console.ringing(placed.call, devices: placed.ringing)
            if session.console.isTerminal && !session.console.json { session.inbox.tickEverySecond() }
        }
        if let code = apply(placed.call) { return code }
        for await input in session.inbox.inputs {
            if let code = await handle(input) { return code }
        }
        return .failure
    }

    /// Reacts to one input; returns the exit status once the call is over.
    private func handle(_ input: Input) async -> ExitCode? {
        switch input {
        case .client(.call(let update)):
            return apply(update)
        case .client(.signal(let signal)):
            session.reportSignal(signal)
        case .client(.reconnecting(let error)):
            session.reportReconnecting(error)
        case .client(.reconnected(let activeCall, let endpoint)):
            session.reportReconnected(activeCall, at: endpoint)
            guard let call else { return nil }
            guard let latest = await session.afterReconnecting(call, activeCall: activeCall) else { return lost() }
            return apply(latest)
        case .client(.disconnected(let error)):
            session.reportDisconnected(error, asEvent: false)
            return lost()
        case .stop:
            return await stop()
        case .scheduled(let action, let sessionId):
            guard let call, call.sessionId == sessionId, call.status == action.applies else { return nil }
            return await stop()
        case .tick:
            guard let call, call.status == .initiated else { return nil }
            let elapsed = Int(Deadline.now().seconds(since: ringingSince))
            session.console.status(session.console.ringingLine(call, elapsedSeconds: elapsed))
        case .key:
            return nil
        }
        return nil
    }

    /// Takes in the call's new state; returns the exit status once it is terminal.
    private func apply(_ update: Call) -> ExitCode? {
        if let call, call.sessionId != update.sessionId { return nil }
        let wasOngoing = call?.status == .ongoing
        call = update
        switch update.status {
        case .initiated:
            return nil
        case .ongoing:
            if !wasOngoing {
                session.console.connected(update)
                if let seconds = request.hangupAfter {
                    session.inbox.post(.scheduled(.end, sessionId: update.sessionId), after: seconds)
                }
            }
            return nil
        case .ended, .rejected, .busy, .cancelled, .unanswered:
            let outcome = Outcome(ended: update)
            session.console.ended(outcome, update)
            return outcome.exitCode
        }
    }

    /// Cancels the call while it rings or ends it once connected. If it
    /// changed meanwhile (accepted while being cancelled), the right request
    /// follows once more.
    private func stop() async -> ExitCode {
        for _ in 0 ..< 2 {
            guard let call else { break }
            switch await session.send(call.status == .initiated ? .cancel : .end, about: call) {
            case .success(let update):
                if let code = apply(update) { return code }
            case .failure(let failure):
                session.console.fail(failure)
                return .failure
            }
        }
        session.console.fail(Failure(code: ClientErrorCode.protocolViolation.rawValue, message: "the call did not end"))
        return .failure
    }

    /// The connection is gone: the call is lost for this device.
    private func lost() -> ExitCode {
        session.console.ended(.connectionLost, call)
        return Outcome.connectionLost.exitCode
    }
}
