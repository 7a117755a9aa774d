import SignalProtocol

/// Outgoing calls: the app asks CallKit to start one (`CXStartCallAction`
/// through `CXCallController`), so the call shows in the system's UI and
/// Recents like a phone call; the coordinator places it at ringd.
extension CallKitCoordinator {
    /// `CXStartCallAction` for a call to `uid`: place it (now, or once
    /// logged in within the bound). The UUID is the call's
    /// `clientCallId`, so a retry after a lost connection is the same call.
    public mutating func startCall(_ uuid: CallUUID, to uid: String, type: CallType) -> [CallKitAction] {
        guard calls[uuid] == nil else { return [.fail(.start(uuid))] }
        track(Tracked(uuid: uuid, sessionId: nil, direction: .outgoing, stage: .placing, reported: true))
        var actions: [CallKitAction] = [.scheduleTimer(.start(uuid), afterMs: configuration.answerTimeoutMs)]
        actions += send(.initiateCall(to: uid, type: type, clientCallId: uuid.uuidString))
        return actions
    }

    /// `initiateCall`'s result: the call as placed (ringing, or already
    /// over: busy; or accepted at once when both called each other).
    mutating func placed(_ uuid: CallUUID, call: Call) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.direction == .outgoing else { return [] }
        tracked.sessionId = call.sessionId
        tracked.call = call
        calls[uuid] = tracked
        guard tracked.stage == .placing else {
            // The user hung up (or the bound passed) while it was placed:
            // withdraw it.
            if tracked.stage == .ended && call.status == .initiated {
                return send(.cancelCall(sessionId: call.sessionId))
            }
            return []
        }
        var actions: [CallKitAction] = [
            .cancelTimer(.start(uuid)), .fulfill(.start(uuid)), .reportOutgoingConnecting(uuid),
        ]
        switch call.status {
        case .initiated:
            tracked.stage = .ringing
            calls[uuid] = tracked
        case .ongoing:
            // Glare: the callee was calling this user, and ringd accepted
            // that call for it. Its ring here is the same call: it leaves
            // CallKit, which keeps the outgoing one.
            tracked.stage = .active
            calls[uuid] = tracked
            actions += [.reportOutgoingConnected(uuid), .presentCallScreen(call)]
            let ring = CallUUID(sessionId: call.sessionId)
            if var incoming = calls[ring], incoming.stage != .ended {
                if incoming.stage == .answering { actions += [.cancelTimer(.answer(ring)), .fail(.answer(ring))] }
                _ = withdraw(.ringing(sessionId: call.sessionId))
                _ = withdraw(.acceptCall(sessionId: call.sessionId))
                incoming.stage = .ended
                incoming.endedReason = .answeredElsewhere
                calls[ring] = incoming
                if incoming.reported { actions.append(.reportCallEnded(ring, .answeredElsewhere)) }
            }
        default:
            tracked.stage = .ringing
            calls[uuid] = tracked
            actions += endedRemotely(uuid, Self.outgoingEndReason(call))
        }
        return actions
    }
}
