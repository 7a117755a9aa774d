import SignalProtocol

/// How a call ended for ringctl: a name for scripts, a line for people, and
/// the exit status it gives.
struct Outcome: Sendable, Equatable {
    /// The call's terminal status, `answered_elsewhere` or `connection_lost`.
    let name: String
    /// The line for people, e.g. `ended · 12.4 s · by alice (hangup)`.
    let summary: String
    /// The exit status of `ringctl call`, or of `ringctl answer --once`.
    let exitCode: ExitCode

    /// The outcome of a call in a terminal status.
    init(ended call: Call) {
        name = call.status.rawValue
        summary = Self.summary(of: call)
        switch (call.endReason, call.status) {
        case (.connectionLost?, _), (.serverShutdown?, _), (.serverRestart?, _): exitCode = .failure
        case (_, .rejected): exitCode = .rejected
        case (_, .busy): exitCode = .busy
        case (_, .unanswered): exitCode = .unanswered
        case (_, .cancelled): exitCode = .cancelled
        default: exitCode = .success
        }
    }

    /// An outcome with every part given.
    private init(name: String, summary: String, exitCode: ExitCode) {
        self.name = name
        self.summary = summary
        self.exitCode = exitCode
    }

    /// A call ringing on this device was accepted on another device of the user.
    static func answeredElsewhere(_ call: Call) -> Outcome {
        Outcome(
            name: "answered_elsewhere", summary: "answered on another device (\(call.acceptedBy ?? "unknown"))",
            exitCode: .success)
    }

    /// The connection to ringd was lost and did not come back.
    static let connectionLost = Outcome(name: "connection_lost", summary: "ended · connection lost", exitCode: .failure)

    /// The line for people about a terminal call.
    private static func summary(of call: Call) -> String {
        let reason = call.endReason.map(describe) ?? "unknown reason"
        switch call.status {
        case .ended:
            let duration = call.durationMs.map { "\(TimeText.duration(milliseconds: $0)) · " } ?? ""
            return "ended · \(duration)\(call.endReason == .hangup ? "by \(call.endedBy ?? "?") (hangup)" : reason)"
        case .rejected:
            return "rejected by \(call.endedBy ?? call.receiver)" + said(call)
        case .busy:
            return (call.endedBy.map { "busy · declined by \($0)" } ?? "busy · \(call.receiver) is in another call")
                + said(call)
        case .unanswered:
            return "no answer after \(TimeText.timeout(milliseconds: call.timeoutMs))"
        case .cancelled:
            return call.endReason == .cancelled
                ? "cancelled by \(call.endedBy ?? call.initiator)" : "cancelled · \(reason)"
        case .initiated, .ongoing:
            return call.status.rawValue
        }
    }

    /// What the callee said when declining, quoted, if anything.
    private static func said(_ call: Call) -> String {
        call.rejectReason.map { " · \"\($0)\"" } ?? ""
    }

    /// An end reason in words.
    private static func describe(_ reason: EndReason) -> String {
        switch reason {
        case .connectionLost: "connection lost"
        case .serverShutdown: "server shut down"
        case .serverRestart: "server restarted"
        default: reason.rawValue
        }
    }
}

extension Console {
    /// A call rings this device.
    func incoming(_ call: Call) {
        report(
            "incoming \(call.callType.rawValue) call from \(call.initiator) · session \(call.sessionId) — [a]ccept [r]eject [b]usy",
            event: "incoming", [("call", call.json)])
        if let metadata = call.metadata { say("  metadata \(metadata.serialized)") }
    }

    /// A call to the user that never rang this device: it ended busy at
    /// once (the user is in another call), or it came and went while the
    /// device was away (heard when it resumed).
    func missed(_ call: Call) {
        report(
            "missed \(call.callType.rawValue) call from \(call.initiator) (\(call.status.rawValue)) · session \(call.sessionId)",
            event: "missed", [("call", call.json)])
    }

    /// The user's call rings `devices` devices of the callee.
    func ringing(_ call: Call, devices: Int) {
        if devices == 0 {
            say(
                "\(call.receiver) has no device online; ringing until the timeout (\(TimeText.timeout(milliseconds: call.timeoutMs)))"
            )
        }
        if isTerminal {
            status(ringingLine(call, elapsedSeconds: 0))
        }
        report(
            isTerminal ? nil : ringingLine(call, elapsedSeconds: nil), event: "ringing",
            [("call", call.json), ("ringing", .integer(Int64(devices)))])
    }

    /// `ringing bob · session <id>`, with the seconds rung when given.
    func ringingLine(_ call: Call, elapsedSeconds: Int?) -> String {
        "ringing \(call.receiver) · session \(call.sessionId)" + (elapsedSeconds.map { " · \($0) s" } ?? "")
    }

    /// The call connected (printed the same on both sides).
    func connected(_ call: Call) {
        report(
            "connected · session \(call.sessionId)", event: "connected",
            [("sessionId", .string(call.sessionId)), ("call", call.json)])
    }

    /// The call is over for this device.
    func ended(_ outcome: Outcome, _ call: Call?) {
        report(
            outcome.summary, event: "ended",
            [
                ("outcome", .string(outcome.name)), ("call", call?.json ?? .null),
                ("exitCode", .integer(Int64(outcome.exitCode.rawValue))),
            ])
    }
}
