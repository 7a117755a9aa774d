/// What moves a live call on: the transitions of docs/PROTOCOL.md
/// ("Semantics"), each defined once here and used by the server's state
/// machine for requests and timers alike, and for shutdown and restart.
/// Who may ask for a transition (the receiver accepts, the initiator
/// cancels) is the machine's business; whether the call's status allows it
/// is decided here.
public enum CallTransition: Hashable, Sendable {
    /// A callee device answered (`acceptCall`, or the callee calling the
    /// caller back while it rang: glare).
    case accept(deviceId: String)
    /// The callee declined, as `rejected` or, when `busy`, as `busy`,
    /// saying `reason` if it gave one.
    case reject(busy: Bool, reason: String? = nil)
    /// A callee device shows the ring (`ringing`): it joins
    /// ``Call/ringingDevices``; the call rings on.
    case ringing(deviceId: String)
    /// The caller gave up while it rang.
    case cancel
    /// A party ended the ongoing call.
    case hangUp
    /// Nobody answered before the ring deadline.
    case timeOut
    /// Every device of party `uid` stayed away past the reconnect grace.
    case loseConnection(uid: String)
    /// Nothing can ring the callee: no device connected and no push token,
    /// or every push failed for good (`calls.unreachable: fail`).
    case unreachable
    /// The server stopped with the call live.
    case shutDown
    /// The server found the call live when it started again.
    case restart
}

/// Who made a change: a user's device, or the server itself (timers,
/// shutdown, restart).
public enum CallActor: Hashable, Sendable {
    case device(uid: String, deviceId: String)
    case server

    /// The acting uid, nil for the server.
    public var uid: String? {
        if case .device(let uid, _) = self { return uid }
        return nil
    }
}

extension Call {
    /// A new call from `initiator` to `receiver` at `now`: ringing, or
    /// already `busy` when the receiver is in another live call, or already
    /// `unanswered` (`unreachable`) when nothing can ring the receiver.
    public static func placed(
        sessionId: String, from initiator: String, device: String? = nil, to receiver: String,
        callType: CallType, timeoutMs: Int64, metadata: JSONValue?, receiverBusy: Bool,
        receiverUnreachable: Bool = false, at now: Int64
    ) -> Call {
        var call = Call(
            sessionId: sessionId, callType: callType, status: .initiated, initiator: initiator,
            receiver: receiver, initiatorDevice: device, initiatedAt: now, timeoutMs: timeoutMs,
            metadata: metadata)
        if receiverBusy {
            call.status = .busy
            call.endedAt = now
            call.endReason = .busy
        } else if receiverUnreachable {
            call.status = .unanswered
            call.endedAt = now
            call.endReason = .unreachable
        }
        return call
    }

    /// When the ring timeout passes, in milliseconds since the Unix epoch.
    public var ringDeadline: Int64 { initiatedAt + timeoutMs }

    /// The call after `transition` by `actor` at `now` (milliseconds since
    /// the Unix epoch). Throws the protocol's error when the call's status
    /// does not allow it: ``SignalErrorCode/alreadyJoined`` to accept a call
    /// that is not ringing, ``SignalErrorCode/callOngoing`` to reject or
    /// cancel an ongoing one, ``SignalErrorCode/notStarted`` to hang up one
    /// that rings, ``SignalErrorCode/terminated`` for anything on a terminal
    /// call or a server transition that does not apply (a callee losing its
    /// devices while it rings: the call rings on until its deadline).
    public func applying(_ transition: CallTransition, by actor: CallActor, at now: Int64) throws(SignalError) -> Call {
        guard !status.isTerminal else {
            throw SignalError(.terminated, "call \(sessionId) already ended (\(status.rawValue))")
        }
        var next = self
        switch transition {
        case .accept(let deviceId):
            guard status == .initiated else { throw SignalError(.alreadyJoined, "the call was already accepted") }
            next.status = .ongoing
            next.acceptedAt = now
            next.acceptedBy = deviceId
            return next
        case .ringing(let deviceId):
            guard status == .initiated else { throw SignalError(.alreadyJoined, "the call was already accepted") }
            if !next.ringingDevices.contains(deviceId) { next.ringingDevices.append(deviceId) }
            return next
        case .reject(let busy, let reason):
            try next.finishRinging(as: busy ? .busy : .rejected, reason: busy ? .busy : .rejected, by: actor, at: now)
            next.rejectReason = reason
        case .cancel:
            try next.finishRinging(as: .cancelled, reason: .cancelled, by: actor, at: now)
        case .hangUp:
            guard status == .ongoing else {
                throw SignalError(.notStarted, "the call has not been accepted; cancel or reject it")
            }
            next.finish(as: .ended, reason: .hangup, by: actor, at: now)
        case .timeOut:
            // The deadline is kept on the monotonic clock, and the two clocks
            // read in whole milliseconds can disagree by one; a call never
            // times out before its ring deadline as the wire tells it.
            try next.finishRinging(as: .unanswered, reason: .timeout, by: actor, at: max(now, ringDeadline))
        case .unreachable:
            try next.finishRinging(as: .unanswered, reason: .unreachable, by: actor, at: now)
        case .loseConnection(let uid):
            switch status {
            case .ongoing: next.finish(as: .ended, reason: .connectionLost, by: actor, at: now)
            case .initiated where uid == initiator:
                next.finish(as: .cancelled, reason: .connectionLost, by: actor, at: now)
            default: throw SignalError(.terminated, "a callee without devices is rung until the ring timeout")
            }
        case .shutDown, .restart:
            next.finish(
                as: status == .ongoing ? .ended : .cancelled,
                reason: transition == .shutDown ? .serverShutdown : .serverRestart, by: actor, at: now)
        }
        return next
    }

    /// Ends a ringing call; an ongoing one must be hung up instead.
    private mutating func finishRinging(
        as status: CallStatus, reason: EndReason, by actor: CallActor,
        at now: Int64
    ) throws(SignalError) {
        guard self.status == .initiated else { throw SignalError(.callOngoing, "the call is ongoing; end it instead") }
        finish(as: status, reason: reason, by: actor, at: now)
    }

    private mutating func finish(as status: CallStatus, reason: EndReason, by actor: CallActor, at now: Int64) {
        self.status = status
        endedAt = now
        endedBy = actor.uid
        endReason = reason
    }
}
