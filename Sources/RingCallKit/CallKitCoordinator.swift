import SignalProtocol

/// The PushKit → CallKit coordinator, as a pure state machine: each input
/// is a `mutating func` returning the ``CallKitAction``s to perform, in
/// order. It does no I/O and keeps no clock of its own (timeouts are
/// ``CallKitAction/scheduleTimer(_:afterMs:)`` actions and a
/// ``timerFired(_:)`` input; "now" comes from the injected clock), so every
/// rule below is tested on Linux against a recording fake of CallKit.
///
/// The rules it keeps:
/// - Every VoIP push is reported to CallKit at once, whatever it says:
///   iOS ends an app that reports no call for a VoIP push. A push for a call
///   that is over (or unreadable) is reported and ended at once.
/// - A call's UUID comes from its session id (``CallUUID``), so a second
///   push of the same session is recognised.
/// - A reported call is acknowledged to ringd (`ringing`) once CallKit
///   shows it; before login the acknowledgement waits for the login.
/// - An answer before the client is logged in waits (a cold start from the
///   lock screen), and is sent once logged in, within
///   ``Configuration/answerTimeoutMs``; past it the answer fails.
/// - The server's word ends calls: answered on another device ends here as
///   answered elsewhere, declined on another as declined elsewhere, and so on.
public struct CallKitCoordinator: Sendable {
    public struct Configuration: Sendable {
        /// How long an answer (or an outgoing call's start) may wait for the
        /// connection and the server before CallKit's action is failed.
        public var answerTimeoutMs: Int64
        /// Calls that ended are remembered, so a late push or event for one
        /// is recognised; this many at most.
        public var endedCallsKept: Int

        public init(answerTimeoutMs: Int64 = 15_000, endedCallsKept: Int = 64) {
            self.answerTimeoutMs = answerTimeoutMs
            self.endedCallsKept = endedCallsKept
        }
    }

    enum Direction { case incoming, outgoing }

    enum Stage: Equatable {
        /// Outgoing: waiting for `initiateCall`'s result.
        case placing
        /// Ringing (at this phone for an incoming call, at the callee's for
        /// an outgoing one).
        case ringing
        /// Incoming: the user answered; waiting for the server's accept.
        case answering
        /// Accepted: in the call.
        case active
        case ended
    }

    /// One call CallKit knows (or knew), or one the server told of first.
    struct Tracked {
        let uuid: CallUUID
        var sessionId: String?
        let direction: Direction
        var stage: Stage
        /// The call as the server last said.
        var call: Call?
        var push: VoIPPush?
        /// Whether CallKit was told of the call (a report or a start action).
        var reported: Bool
        /// Whether CallKit's report completed without error.
        var shown = false
        /// Whether `ringing` was sent (or queued) for it.
        var acknowledged = false
        /// Why it ended, when it ended for a reason other than the user.
        var endedReason: CallEndedReason?
    }

    let configuration: Configuration
    let now: @Sendable () -> Int64
    var calls: [CallUUID: Tracked] = [:]
    /// The UUIDs in the order their calls were first seen, for a stable
    /// order of the requests a login releases.
    var order: [CallUUID] = []
    var connection = CoordinatorConnection.disconnected
    /// Who the last login was: kept while reconnecting, so the calls a
    /// resume hands over before the login completes are understood.
    var identity: (uid: String, deviceId: String)?
    var connectRequested = false
    /// Requests waiting for the login, in the order made.
    var outbox: [ServerCommand] = []
    var invalidPushes = 0

    /// `now` is Unix milliseconds (the server's `initiatedAt` scale).
    public init(configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Int64) {
        self.configuration = configuration
        self.now = now
    }

    /// Whether requests can be sent now.
    public var isLoggedIn: Bool {
        if case .loggedIn = connection { return true }
        return false
    }

    // MARK: Pushes

    /// A VoIP push arrived (PushKit's payload, as JSON). Always reports a
    /// call, as iOS requires within the push callback.
    public mutating func receivedPush(_ payload: JSONValue) -> [CallKitAction] {
        guard let push = try? VoIPPush(json: payload) else {
            // Nothing to ring, but iOS still wants a call reported: report
            // one under a UUID no session has, and end it.
            invalidPushes += 1
            let uuid = CallUUID(sessionId: "ringcallkit-invalid-push-\(invalidPushes)")
            let report = IncomingCallReport(uuid: uuid, handle: "unknown", displayName: "Unknown", hasVideo: false)
            return [.reportNewIncomingCall(report), .reportCallEnded(uuid, .failed)]
        }
        return receivedPush(push)
    }

    /// A VoIP push, parsed.
    public mutating func receivedPush(_ push: VoIPPush) -> [CallKitAction] {
        let uuid = CallUUID(sessionId: push.sessionId)
        let report = IncomingCallReport(
            uuid: uuid, handle: push.callerUid, displayName: push.displayName, hasVideo: push.callType == .video)
        if var tracked = calls[uuid] {
            tracked.push = tracked.push ?? push
            if tracked.stage == .ended {
                // Over already (the server said so first, or CallKit ended
                // it): report, as iOS requires, then end at once.
                let reason = tracked.endedReason ?? .remoteEnded
                var actions: [CallKitAction] = [.reportNewIncomingCall(report), .reportCallEnded(uuid, reason)]
                if !tracked.reported { actions.append(.callEnded(end(of: tracked, .reported(reason)))) }
                tracked.reported = true
                calls[uuid] = tracked
                return actions
            }
            // The same ring again (ringd pushes again after a restart):
            // report it so this push counts as reported (CallKit answers
            // callUUIDAlreadyExists), and change nothing else.
            tracked.reported = true
            calls[uuid] = tracked
            return [.reportNewIncomingCall(report)]
        }
        track(
            Tracked(
                uuid: uuid, sessionId: push.sessionId, direction: .incoming, stage: .ringing, push: push,
                reported: true))
        var actions: [CallKitAction] = [.reportNewIncomingCall(report)]
        actions += connectIfNeeded()
        return actions
    }

    /// CallKit's completion of a ``CallKitAction/reportNewIncomingCall(_:)``.
    public mutating func reportedIncomingCall(_ uuid: CallUUID, outcome: IncomingReportOutcome) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.direction == .incoming else { return [] }
        switch outcome {
        case .alreadyReported:
            return []
        case .refused:
            // iOS shows nothing (do-not-disturb, the block list): the call
            // rings on the user's other devices; this one forgets it.
            guard tracked.stage != .ended else { return [] }
            tracked.stage = .ended
            tracked.reported = false
            calls[uuid] = tracked
            return []
        case .shown:
            tracked.shown = true
            calls[uuid] = tracked
            guard tracked.stage == .ringing || tracked.stage == .answering else { return [] }
            return acknowledge(uuid)
        }
    }

    /// Queues or sends `ringing` for a call CallKit shows, once.
    mutating func acknowledge(_ uuid: CallUUID) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.shown, !tracked.acknowledged, let sessionId = tracked.sessionId
        else { return [] }
        tracked.acknowledged = true
        calls[uuid] = tracked
        return send(.ringing(sessionId: sessionId))
    }

    // MARK: CallKit actions

    /// `CXAnswerCallAction`: accept, now or once logged in, within the bound.
    public mutating func answer(_ uuid: CallUUID) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.direction == .incoming, tracked.stage == .ringing,
            let sessionId = tracked.sessionId
        else { return [.fail(.answer(uuid))] }
        tracked.stage = .answering
        calls[uuid] = tracked
        var actions: [CallKitAction] = [.scheduleTimer(.answer(uuid), afterMs: configuration.answerTimeoutMs)]
        actions += send(.acceptCall(sessionId: sessionId))
        return actions
    }

    /// `CXEndCallAction`: decline a ringing call, hang up an active one,
    /// cancel an outgoing one. Always fulfilled: CallKit ends its call
    /// whatever the server says, and the request follows when it can.
    public mutating func end(_ uuid: CallUUID) -> [CallKitAction] {
        guard var tracked = calls[uuid], tracked.stage != .ended else { return [.fulfill(.end(uuid))] }
        var actions: [CallKitAction] = []
        let sessionId = tracked.sessionId
        switch (tracked.direction, tracked.stage) {
        case (.incoming, .ringing):
            if let sessionId { actions += send(.rejectCall(sessionId: sessionId, reason: nil)) }
        case (.incoming, .answering):
            actions += [.cancelTimer(.answer(uuid)), .fail(.answer(uuid))]
            // An accept still waiting for the login is withdrawn and the call
            // declined; one already sent is hung up when its result comes.
            if let sessionId, withdraw(.acceptCall(sessionId: sessionId)) {
                actions += send(.rejectCall(sessionId: sessionId, reason: nil))
            }
        case (_, .active):
            if let sessionId { actions += send(.endCall(sessionId: sessionId)) }
        case (.outgoing, .placing):
            actions += [.cancelTimer(.start(uuid)), .fail(.start(uuid))]
            outbox.removeAll { if case .initiateCall(_, _, uuid.uuidString) = $0 { true } else { false } }
        case (.outgoing, .ringing):
            if let sessionId { actions += send(.cancelCall(sessionId: sessionId)) }
        default:
            break
        }
        tracked.stage = .ended
        calls[uuid] = tracked
        actions += [.fulfill(.end(uuid)), .callEnded(end(of: tracked, .endedHere))]
        pruneEnded()
        return actions
    }

    /// `CXSetMutedCallAction`: the app mutes its media; nothing goes to ringd.
    public mutating func setMuted(_ uuid: CallUUID, muted: Bool) -> [CallKitAction] {
        guard let tracked = calls[uuid], tracked.stage != .ended, let sessionId = tracked.sessionId else {
            return [.fail(.setMuted(uuid))]
        }
        return [.setMuted(sessionId: sessionId, muted: muted), .fulfill(.setMuted(uuid))]
    }

    /// `CXSetHeldCallAction`: refused, ringd's calls have no hold (and the
    /// configuration should say `supportsHolding = false`).
    public mutating func setHeld(_ uuid: CallUUID, onHold: Bool) -> [CallKitAction] {
        [.fail(.setHeld(uuid))]
    }

    /// `providerDidReset(_:)`: CallKit dropped every call. Hang up the
    /// active ones and withdraw outgoing ones; a ringing incoming call
    /// rings on at the user's other devices.
    public mutating func providerReset() -> [CallKitAction] {
        var actions: [CallKitAction] = []
        for uuid in order {
            guard var tracked = calls[uuid], tracked.stage != .ended else { continue }
            switch (tracked.direction, tracked.stage, tracked.sessionId) {
            case (_, .active, let sessionId?): actions += send(.endCall(sessionId: sessionId))
            case (.outgoing, .ringing, let sessionId?): actions += send(.cancelCall(sessionId: sessionId))
            case (.incoming, .answering, _): actions.append(.cancelTimer(.answer(uuid)))
            case (.outgoing, .placing, _): actions.append(.cancelTimer(.start(uuid)))
            default: break
            }
            if let sessionId = tracked.sessionId { _ = withdraw(.acceptCall(sessionId: sessionId)) }
            outbox.removeAll { if case .initiateCall(_, _, uuid.uuidString) = $0 { true } else { false } }
            tracked.stage = .ended
            tracked.endedReason = .failed
            calls[uuid] = tracked
            actions.append(.callEnded(end(of: tracked, .reported(.failed))))
        }
        pruneEnded()
        return actions
    }

    /// The app launched (or the coordinator was set up after the app's
    /// login): connect, so calls and pushes find the client ready.
    public mutating func appLaunched() -> [CallKitAction] {
        guard connection == .disconnected, !connectRequested else { return [] }
        connectRequested = true
        return [.connect]
    }

    // MARK: Helpers

    mutating func track(_ tracked: Tracked) {
        if calls[tracked.uuid] == nil { order.append(tracked.uuid) }
        calls[tracked.uuid] = tracked
    }

    /// Sends now when logged in, else queues for the login (asking for a
    /// connection if none is under way).
    mutating func send(_ command: ServerCommand) -> [CallKitAction] {
        if isLoggedIn { return [.send(command)] }
        outbox.append(command)
        return connectIfNeeded()
    }

    mutating func connectIfNeeded() -> [CallKitAction] {
        guard !isLoggedIn, connection == .disconnected, !connectRequested else { return [] }
        connectRequested = true
        return [.connect]
    }

    /// Removes a queued request; whether it was still queued (not sent).
    mutating func withdraw(_ command: ServerCommand) -> Bool {
        guard let index = outbox.firstIndex(of: command) else { return false }
        outbox.remove(at: index)
        return true
    }

    func end(of tracked: Tracked, _ cause: CallEndCause) -> CallEnd {
        CallEnd(uuid: tracked.uuid, sessionId: tracked.sessionId, call: tracked.call, cause: cause)
    }

    /// Forgets the oldest ended calls past ``Configuration/endedCallsKept``.
    mutating func pruneEnded() {
        var ended = order.filter { calls[$0]?.stage == .ended }
        guard ended.count > configuration.endedCallsKept else { return }
        ended.removeLast(configuration.endedCallsKept)
        let forgotten = Set(ended)
        for uuid in forgotten { calls[uuid] = nil }
        order.removeAll { forgotten.contains($0) }
    }
}
