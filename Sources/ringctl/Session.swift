import SignalClient
import SignalProtocol

/// A request that moves a call on.
enum CallAction: Sendable, Equatable {
    /// Accept a ringing call (callee).
    case accept
    /// Decline a ringing call as `rejected` or `busy` (callee), saying
    /// `reason` if given.
    case reject(CallStatus, reason: String? = nil)
    /// Give up a ringing call (caller).
    case cancel
    /// Hang up an ongoing call (either party).
    case end

    /// The status a call must have for the action to make sense.
    var applies: CallStatus { self == .end ? .ongoing : .initiated }

    /// The action in words, for messages.
    var name: String {
        switch self {
        case .accept: "accept"
        case .reject(let status, _): status == .busy ? "busy" : "reject"
        case .cancel: "cancel"
        case .end: "hang-up"
        }
    }
}

/// What a call or answer session is made of: the connection, the output, the
/// inbox, and how requests are sent and missed changes recovered.
struct Session: Sendable {
    /// How long ringctl waits for ringd to confirm a request.
    static let confirmationSeconds = 5.0
    /// Errors meaning the call changed before the request arrived; its state
    /// is then read back from the call history.
    private static let staleCodes: Set<ClientErrorCode> = [
        .server(.terminated), .server(.callOngoing), .server(.notStarted), .server(.alreadyJoined),
    ]

    /// The connection to ringd.
    let client: SignalClient
    /// Where output goes.
    let console: Console
    /// The server URL, for messages.
    let server: String
    /// The session's single queue of inputs.
    let inbox = Inbox()

    /// Starts feeding the inbox with client events and the first stop signal.
    func start() {
        inbox.forward(client)
        let inbox = inbox
        let console = console
        StopSignals.onFirstSignal {
            console.eraseInterruptEcho()
            inbox.post(.stop)
        }
    }

    /// Sends `action` for `call` and waits (bounded) for its result: the call's
    /// new state. If the call had already changed, the new state comes from
    /// the call history instead.
    func send(_ action: CallAction, about call: Call) async -> Result<Call, Failure> {
        let client = client
        let sessionId = call.sessionId
        let result = await bounded(seconds: Self.confirmationSeconds) { () async throws(ClientError) -> Call in
            switch action {
            case .accept: try await client.acceptCall(sessionId)
            case .reject(let status, let reason): try await client.rejectCall(sessionId, status: status, reason: reason)
            case .cancel: try await client.cancelCall(sessionId)
            case .end: try await client.endCall(sessionId)
            }
        }
        switch result {
        case .success(let updated)?:
            return .success(updated)
        case .failure(let error)?:
            if Self.staleCodes.contains(error.code), let latest = await latest(call) { return .success(latest) }
            return .failure(Failure(error, server: server))
        case nil:
            let seconds = Int(Self.confirmationSeconds)
            return .failure(
                Failure(
                    code: ClientErrorCode.timeout.rawValue,
                    message: "ringd did not confirm the \(action.name) within \(seconds) s"))
        }
    }

    /// The state ringd has for `call`, read from the user's call history.
    func latest(_ call: Call) async -> Call? {
        let filter = CallLogFilter(limit: 20, with: call.otherParty(of: client.uid))
        let client = client
        guard
            case .success(let page)? = await bounded(
                seconds: Self.confirmationSeconds,
                { () async throws(ClientError) in
                    try await client.getCallLogs(filter)
                })
        else { return nil }
        return page.logs.first { $0.call.sessionId == call.sessionId }?.call
    }

    /// The state of `call` after a reconnection that found `activeCall` live:
    /// that one if it is the same call, else what the history says.
    func afterReconnecting(_ call: Call, activeCall: Call?) async -> Call? {
        if let activeCall, activeCall.sessionId == call.sessionId { return activeCall }
        return await latest(call)
    }

    /// Reports that the connection dropped and the client is reconnecting.
    func reportReconnecting(_ error: ClientError) {
        console.report(
            "lost the connection to ringd (\(error.message)); reconnecting …", event: "reconnecting",
            [("code", .string(error.code.rawValue)), ("message", .string(error.message))])
    }

    /// Reports that the client is connected again, to which server when
    /// there are several, and that the call goes on when it does (after a
    /// restart of ringd, a network blip, or a node of several that went away).
    func reportReconnected(_ activeCall: Call?, at endpoint: ServerEndpoint) {
        var line = "reconnected"
        if client.endpoints.count > 1 { line += " to \(endpoint.webSocketURL)" }
        if let activeCall, activeCall.status == .ongoing { line += " · connected · session \(activeCall.sessionId)" }
        console.report(
            line, event: "reconnected",
            [
                ("activeCall", activeCall?.json ?? .null),
                ("server", .string(endpoint.webSocketURL)),
            ])
    }

    /// Reports what the other device in the call relayed (`signal`): its
    /// `kind` for people (an SDP or a candidate is unreadable on a
    /// terminal), the whole payload with `--json`.
    func reportSignal(_ signal: PeerSignal) {
        let kind = signal.payload["kind"]?.stringValue ?? signal.payload["type"]?.stringValue
        console.report(
            "signal from \(signal.uid) (\(signal.deviceId))" + (kind.map { ": \($0)" } ?? ""), event: "signal",
            [
                ("sessionId", .string(signal.sessionId)),
                ("from", .object([("uid", .string(signal.uid)), ("deviceId", .string(signal.deviceId))])),
                ("payload", signal.payload),
            ])
    }

    /// Reports that the connection is gone for good: one line on stderr and,
    /// when `asEvent`, an `error` event (else the caller reports the lost call).
    func reportDisconnected(_ error: ClientError, asEvent: Bool) {
        console.fail(Failure(error, server: server), asEvent: asEvent)
    }

    /// Closes the connection, waiting a moment at most.
    func close() async {
        let client = client
        _ = await bounded(seconds: 1) { () async throws(ClientError) in await client.close() }
    }
}
