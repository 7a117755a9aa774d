import SignalProtocol

/// What the coordinator asks for, in order: each input returns a list of
/// these and performs nothing itself. The CallKit ones map one-to-one onto
/// `CXProvider` and `CXAction` calls.
public enum CallKitAction: Hashable, Sendable {
    /// `CXProvider.reportNewIncomingCall(with:update:completion:)`. Answer
    /// with ``CallKitCoordinator/reportedIncomingCall(_:outcome:)`` from the
    /// completion.
    case reportNewIncomingCall(IncomingCallReport)
    /// `CXProvider.reportCall(with:endedAt:reason:)`.
    case reportCallEnded(CallUUID, CallEndedReason)
    /// `CXProvider.reportOutgoingCall(with:startedConnectingAt:)`: the call
    /// rings at the callee.
    case reportOutgoingConnecting(CallUUID)
    /// `CXProvider.reportOutgoingCall(with:connectedAt:)`: the callee answered.
    case reportOutgoingConnected(CallUUID)
    /// `CXAction.fulfill()` on the pending action.
    case fulfill(ProviderAction)
    /// `CXAction.fail()` on the pending action.
    case fail(ProviderAction)
    /// Connect to ringd and log in: something waits for the server.
    /// Report the connection's progress with
    /// ``CallKitCoordinator/connectionChanged(_:)``.
    case connect
    /// Send a request to ringd; report its outcome with
    /// ``CallKitCoordinator/commandSucceeded(_:call:)`` or
    /// ``CallKitCoordinator/commandFailed(_:code:)``.
    case send(ServerCommand)
    /// Call ``CallKitCoordinator/timerFired(_:)`` after this many
    /// milliseconds, unless cancelled first.
    case scheduleTimer(CoordinatorTimer, afterMs: Int64)
    case cancelTimer(CoordinatorTimer)
    /// The app's delegate: the call was accepted (by the user here, or by the
    /// callee of an outgoing call); join its media now.
    case presentCallScreen(Call)
    /// The app's delegate: a call CallKit showed is over.
    case callEnded(CallEnd)
    /// The app's delegate: mute or unmute the call's microphone.
    case setMuted(sessionId: String, muted: Bool)
}

/// The `CXCallUpdate` of a new incoming call.
public struct IncomingCallReport: Hashable, Sendable {
    public var uuid: CallUUID
    /// `remoteHandle` (a `CXHandle` of type `.generic`): the caller's uid.
    public var handle: String
    /// `localizedCallerName`: the caller's profile name, or the uid.
    public var displayName: String
    public var hasVideo: Bool

    public init(uuid: CallUUID, handle: String, displayName: String, hasVideo: Bool) {
        self.uuid = uuid
        self.handle = handle
        self.displayName = displayName
        self.hasVideo = hasVideo
    }
}

/// `CXCallEndedReason`, case for case.
public enum CallEndedReason: String, Hashable, Sendable, CaseIterable {
    case failed, remoteEnded, unanswered, answeredElsewhere, declinedElsewhere
}

/// The CallKit action a fulfil or a fail is for, by kind and call: a call
/// has at most one pending action of each kind.
public enum ProviderAction: Hashable, Sendable {
    /// `CXAnswerCallAction`.
    case answer(CallUUID)
    /// `CXEndCallAction`.
    case end(CallUUID)
    /// `CXSetMutedCallAction`.
    case setMuted(CallUUID)
    /// `CXSetHeldCallAction`: always failed, ringd's calls have no hold.
    case setHeld(CallUUID)
    /// `CXStartCallAction`.
    case start(CallUUID)
}

/// A request to ringd, named as RingClient's methods.
public enum ServerCommand: Hashable, Sendable {
    /// Acknowledge that this device shows the ring.
    case ringing(sessionId: String)
    case acceptCall(sessionId: String)
    case rejectCall(sessionId: String, reason: String?)
    case endCall(sessionId: String)
    case cancelCall(sessionId: String)
    /// Place a call; `clientCallId` is the CallKit UUID, so a retry after a
    /// lost connection answers the same call.
    case initiateCall(to: String, type: CallType, clientCallId: String)

    /// The call it is about; nil for `initiateCall`.
    public var sessionId: String? {
        switch self {
        case .ringing(let sessionId), .acceptCall(let sessionId), .rejectCall(let sessionId, _),
            .endCall(let sessionId), .cancelCall(let sessionId):
            return sessionId
        case .initiateCall: return nil
        }
    }
}

/// The coordinator's timers: the bound on waiting for the server before
/// an answer or a start is given up.
public enum CoordinatorTimer: Hashable, Sendable {
    case answer(CallUUID)
    case start(CallUUID)
}

/// How a call that CallKit showed ended, for the app.
public struct CallEnd: Hashable, Sendable {
    public var uuid: CallUUID
    /// Nil for an outgoing call that was never placed.
    public var sessionId: String?
    /// The call as the server last said, if it said.
    public var call: Call?
    public var cause: CallEndCause
}

public enum CallEndCause: Hashable, Sendable {
    /// The user ended it here (CallKit's end button, or declined).
    case endedHere
    /// Ended for another reason, as reported to CallKit.
    case reported(CallEndedReason)
}

/// The connection to ringd as the coordinator needs it.
public enum CoordinatorConnection: Hashable, Sendable {
    /// Not connected, and not trying: a ``CallKitAction/connect`` is needed.
    case disconnected
    /// Connecting, reconnecting, or connected and not yet logged in.
    case connecting
    /// Logged in as `uid` on device `deviceId`: requests can be sent.
    case loggedIn(uid: String, deviceId: String)
}

/// What became of a ``CallKitAction/reportNewIncomingCall(_:)``.
public enum IncomingReportOutcome: Hashable, Sendable {
    /// The completion had no error: the phone rings.
    case shown
    /// `CXErrorCodeIncomingCallError.callUUIDAlreadyExists`: the call was
    /// reported before (a second push of the same session).
    case alreadyReported
    /// Any other error (do-not-disturb, block list, unentitled): iOS shows
    /// nothing.
    case refused
}
