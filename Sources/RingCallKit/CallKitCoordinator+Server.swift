import SignalProtocol

/// The server's side: the connection, call events, and the results of the
/// requests the coordinator sent.
extension CallKitCoordinator {
    /// The connection changed. A login sends what waited for it, in order.
    public mutating func connectionChanged(_ state: CoordinatorConnection) -> [CallKitAction] {
        let wasLoggedIn = isLoggedIn
        connection = state
        switch state {
        case .loggedIn(let uid, let deviceId):
            identity = (uid, deviceId)
            connectRequested = false
            let waiting = outbox
            outbox = []
            return waiting.map { .send($0) }
        case .connecting:
            connectRequested = false
            return []
        case .disconnected:
            connectRequested = false
            // The client lost a login and gave up reconnecting: connect again
            // if anything waits for the server. A login that failed is not
            // tried again at once (that could loop with no pause); the next
            // input that needs the server asks again.
            return wasLoggedIn && !outbox.isEmpty ? connectIfNeeded() : []
        }
    }

    /// A call as the server sent it (an event, or a resumed call).
    public mutating func serverCall(_ call: Call) -> [CallKitAction] {
        guard let (uid, deviceId) = identity, call.isParty(uid) else { return [] }
        // An outgoing call first: after a glare it is the other party's call,
        // with this user as its receiver, yet CallKit knows it as outgoing.
        if let uuid = outgoingUUID(of: call.sessionId) { return outgoingCall(call, uuid: uuid) }
        guard call.receiver == uid else { return [] }
        return incomingCall(call, deviceId: deviceId)
    }

    private mutating func incomingCall(_ call: Call, deviceId: String) -> [CallKitAction] {
        let uuid = CallUUID(sessionId: call.sessionId)
        guard var tracked = calls[uuid] else {
            if call.status == .initiated {
                // Heard on the socket with no push (the app is open): ring
                // through CallKit all the same.
                track(
                    Tracked(
                        uuid: uuid, sessionId: call.sessionId, direction: .incoming, stage: .ringing, call: call,
                        reported: true))
                let report = IncomingCallReport(
                    uuid: uuid, handle: call.initiator, displayName: call.initiatorName ?? call.initiator,
                    hasVideo: call.callType == .video)
                return [.reportNewIncomingCall(report)]
            }
            // Over before its push came: remember why, for that push.
            track(
                Tracked(
                    uuid: uuid, sessionId: call.sessionId, direction: .incoming, stage: .ended, call: call,
                    reported: false, endedReason: Self.incomingEndReason(call, deviceId: deviceId)))
            pruneEnded()
            return []
        }
        tracked.call = call
        calls[uuid] = tracked
        switch (tracked.stage, call.status) {
        case (.ended, _), (_, .initiated), (.active, .ongoing):
            return []
        case (.answering, .ongoing) where call.acceptedBy == deviceId:
            // This device's accept, heard again on resume before its result.
            return accepted(uuid, call: call)
        default:
            guard let reason = Self.incomingEndReason(call, deviceId: deviceId) else { return [] }
            return endedRemotely(uuid, reason)
        }
    }

    private mutating func outgoingCall(_ call: Call, uuid: CallUUID) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.stage != .ended else { return [] }
        tracked.call = call
        calls[uuid] = tracked
        switch call.status {
        case .initiated:
            return []
        case .ongoing:
            guard tracked.stage != .active else { return [] }
            tracked.stage = .active
            calls[uuid] = tracked
            return [.reportOutgoingConnected(uuid), .presentCallScreen(call)]
        default:
            return endedRemotely(uuid, Self.outgoingEndReason(call))
        }
    }

    /// The UUID of the outgoing call with this session id, if it is ours.
    func outgoingUUID(of sessionId: String) -> CallUUID? {
        order.first { calls[$0]?.direction == .outgoing && calls[$0]?.sessionId == sessionId }
    }

    // MARK: Results

    /// A request succeeded with this call.
    public mutating func commandSucceeded(_ command: ServerCommand, call: Call) -> [CallKitAction] {
        switch command {
        case .acceptCall:
            let uuid = CallUUID(sessionId: call.sessionId)
            guard var tracked = calls[uuid] else { return [] }
            tracked.call = call
            calls[uuid] = tracked
            switch tracked.stage {
            case .answering: return accepted(uuid, call: call)
            // The answer was given up (the bound, or the user hung up) after
            // the accept left: the server put the user in the call, so leave it.
            case .ended: return send(.endCall(sessionId: call.sessionId))
            default: return []
            }
        case .initiateCall(_, _, let clientCallId):
            guard let uuid = CallUUID(uuidString: clientCallId) else { return [] }
            return placed(uuid, call: call)
        case .ringing, .rejectCall, .endCall, .cancelCall:
            let uuid = command.sessionId.map { CallUUID(sessionId: $0) }
            if let uuid, var tracked = calls[uuid], tracked.direction == .incoming {
                tracked.call = call
                calls[uuid] = tracked
            }
            return []
        }
    }

    /// A request failed with this code: a server code (`ERR_…`) or a
    /// client one (`CLIENT_…`, the connection dropped before the result).
    public mutating func commandFailed(_ command: ServerCommand, code: String) -> [CallKitAction] {
        if Self.isTransient(code) { return retry(command) }
        switch command {
        case .ringing(let sessionId):
            let uuid = CallUUID(sessionId: sessionId)
            guard let tracked = calls[uuid], tracked.stage == .ringing else { return [] }
            return endedRemotely(uuid, endReason(ofRefused: code, push: tracked.push))
        case .acceptCall(let sessionId):
            let uuid = CallUUID(sessionId: sessionId)
            guard let tracked = calls[uuid], tracked.stage == .answering else { return [] }
            return endedRemotely(uuid, endReason(ofRefused: code, push: tracked.push))
        case .initiateCall(_, _, let clientCallId):
            guard let uuid = CallUUID(uuidString: clientCallId), var tracked = calls[uuid],
                tracked.stage == .placing
            else { return [] }
            tracked.stage = .ended
            tracked.endedReason = .failed
            calls[uuid] = tracked
            pruneEnded()
            return [.cancelTimer(.start(uuid)), .fail(.start(uuid)), .callEnded(end(of: tracked, .reported(.failed)))]
        case .rejectCall, .endCall, .cancelCall:
            // The call is over at the server either way (terminal already,
            // or never ours): nothing is left to do.
            return []
        }
    }

    /// A request the connection lost (or a server that was stopping) goes
    /// again after the next login, if its call still wants it.
    private mutating func retry(_ command: ServerCommand) -> [CallKitAction] {
        let stillWanted: Bool
        switch command {
        case .acceptCall(let sessionId): stillWanted = calls[CallUUID(sessionId: sessionId)]?.stage == .answering
        case .ringing(let sessionId): stillWanted = calls[CallUUID(sessionId: sessionId)]?.stage == .ringing
        case .initiateCall(_, _, let id):
            stillWanted = CallUUID(uuidString: id).flatMap { calls[$0] }?.stage == .placing
        case .rejectCall, .endCall, .cancelCall: stillWanted = true
        }
        guard stillWanted, !outbox.contains(command) else { return [] }
        outbox.append(command)
        return connectIfNeeded()
    }

    // MARK: Timers

    /// A scheduled timer's time came.
    public mutating func timerFired(_ timer: CoordinatorTimer) -> [CallKitAction] {
        switch timer {
        case .answer(let uuid):
            guard var tracked = calls[uuid], tracked.stage == .answering else { return [] }
            if let sessionId = tracked.sessionId {
                _ = withdraw(.ringing(sessionId: sessionId))
                _ = withdraw(.acceptCall(sessionId: sessionId))
            }
            tracked.stage = .ended
            tracked.endedReason = .failed
            calls[uuid] = tracked
            pruneEnded()
            return [
                .fail(.answer(uuid)), .reportCallEnded(uuid, .failed), .callEnded(end(of: tracked, .reported(.failed))),
            ]
        case .start(let uuid):
            guard var tracked = calls[uuid], tracked.stage == .placing else { return [] }
            outbox.removeAll { if case .initiateCall(_, _, uuid.uuidString) = $0 { true } else { false } }
            tracked.stage = .ended
            tracked.endedReason = .failed
            calls[uuid] = tracked
            pruneEnded()
            return [.fail(.start(uuid)), .callEnded(end(of: tracked, .reported(.failed)))]
        }
    }

    // MARK: Transitions

    /// The server accepted this device's answer.
    mutating func accepted(_ uuid: CallUUID, call: Call) -> [CallKitAction] {
        guard var tracked = calls[uuid] else { return [] }
        tracked.stage = .active
        tracked.call = call
        calls[uuid] = tracked
        // A retry queued when the first accept's result was lost is moot.
        _ = withdraw(.acceptCall(sessionId: call.sessionId))
        return [.cancelTimer(.answer(uuid)), .fulfill(.answer(uuid)), .presentCallScreen(call)]
    }

    /// The call ended by someone else's doing (or the server's).
    mutating func endedRemotely(_ uuid: CallUUID, _ reason: CallEndedReason) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.stage != .ended else { return [] }
        var actions: [CallKitAction] = []
        switch tracked.stage {
        case .answering:
            actions += [.cancelTimer(.answer(uuid)), .fail(.answer(uuid))]
            if let sessionId = tracked.sessionId { _ = withdraw(.acceptCall(sessionId: sessionId)) }
        case .placing:
            actions += [.cancelTimer(.start(uuid)), .fail(.start(uuid))]
        default:
            break
        }
        if let sessionId = tracked.sessionId { _ = withdraw(.ringing(sessionId: sessionId)) }
        tracked.stage = .ended
        tracked.endedReason = reason
        calls[uuid] = tracked
        if tracked.reported {
            actions += [.reportCallEnded(uuid, reason), .callEnded(end(of: tracked, .reported(reason)))]
        }
        pruneEnded()
        return actions
    }

    // MARK: Reasons

    /// Why an incoming call stopped ringing here, from its state at the
    /// server; nil while it still rings.
    static func incomingEndReason(_ call: Call, deviceId: String) -> CallEndedReason? {
        switch call.status {
        case .initiated: return nil
        case .ongoing: return call.acceptedBy == deviceId ? nil : .answeredElsewhere
        case .rejected, .busy: return .declinedElsewhere
        case .unanswered: return .unanswered
        case .cancelled, .ended: return endedByServer(call) ? .failed : .remoteEnded
        }
    }

    /// Why an outgoing call ended, from its state at the server.
    static func outgoingEndReason(_ call: Call) -> CallEndedReason {
        switch call.status {
        case .unanswered: return .unanswered
        case .rejected, .busy: return .remoteEnded
        case .cancelled, .ended, .initiated, .ongoing: return endedByServer(call) ? .failed : .remoteEnded
        }
    }

    /// Whether ringd itself ended the call by stopping or restarting (with
    /// `calls.onRestart: end`): no party did.
    static func endedByServer(_ call: Call) -> Bool {
        call.endReason == .serverShutdown || call.endReason == .serverRestart
    }

    /// Why a call ended, from the code that refused `ringing` or
    /// `acceptCall`. `ERR_CALL_TERMINATED` does not say how it ended: past
    /// the push's ring deadline it rang out, before it the caller gave up.
    func endReason(ofRefused code: String, push: VoIPPush?) -> CallEndedReason {
        switch code {
        case "ERR_CALL_USER_ALREADY_JOINED":
            return .answeredElsewhere
        case "ERR_CALL_TERMINATED":
            if let deadline = push?.ringDeadline, now() >= deadline { return .unanswered }
            return .remoteEnded
        default:
            return .failed
        }
    }

    /// Codes after which the same request may succeed later: the client's
    /// own (the connection dropped), and a server stopping or busy.
    static func isTransient(_ code: String) -> Bool {
        code.hasPrefix("CLIENT_") || code == "ERR_UNAVAILABLE" || code == "ERR_RATE_LIMITED" || code == "ERR_INTERNAL"
    }
}
