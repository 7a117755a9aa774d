import SignalProtocol

/// A deadline the state machine asked for.
public enum SignalingTimer: Hashable, Sendable {
    /// The ring timeout of a ringing call.
    case ring(sessionId: String)
    /// The reconnect grace period of a user whose devices are all gone; the
    /// generation tells a current grace period from one a reconnect ended.
    case grace(uid: String, generation: UInt64)
}

/// The reply to a request: typed data, or a protocol error.
public typealias SignalingReply = Result<ResultData, SignalError>

/// Something the driver must do; the state machine itself does no I/O.
public enum SignalingAction: Hashable, Sendable {
    /// Send a request's result to the device that asked.
    case reply(DeviceAddress, id: String?, SignalingReply)
    /// Tell these devices the call's new state: one encoding, the same bytes to each.
    case event(Call, to: [DeviceAddress])
    /// Relay a party's `signal` to the other party's device in the call.
    case signal(PeerSignal, to: DeviceAddress)
    /// Close a device's connection.
    case close(DeviceAddress, code: WebSocketCloseCode, reason: String)
    /// Call ``CallStateMachine/timerFired(_:now:)`` with `timer` once the
    /// monotonic clock reads `at` (milliseconds, ``SignalingTime/monotonic``).
    /// Scheduling a timer that is pending replaces it.
    case schedule(SignalingTimer, at: Int64)
    /// Drop `timer`, scheduled earlier and no longer needed (the call was
    /// answered or ended before its ring timeout). Unknown or already run
    /// timers are ignored; a stale timer that fires anyway changes nothing.
    case cancel(SignalingTimer)
    /// Send the `auth` result once the calls of the device's user that
    /// changed after `afterSeq` are read from the store (after every change
    /// queued before, so that the live events follow it without a gap).
    case replyResuming(DeviceAddress, id: String?, Authentication, afterSeq: Int64)
    /// The session is not live: the store decides between
    /// `ERR_CALL_TERMINATED`, `ERR_CALL_NOT_A_PART` and `ERR_CALL_SESSION_NOT_FOUND`.
    case resolveSession(DeviceAddress, id: String, sessionId: String, uid: String)
    /// Push the call, which started ringing, to the callee's devices with a
    /// push token; `connected` are the ids of those that heard it on their
    /// connection (``PushMode/offline`` skips them).
    case push(Call, connected: [String])
    /// The call stopped ringing: pushes still owed are dropped, and devices
    /// that were pushed a ring are told it stopped where their platform needs it.
    case pushStopped(Call)
}

/// What one input to the state machine produced: the changes of calls to
/// commit, then actions to perform once they are committed.
public struct SignalingOutput: Sendable {
    /// Changes that must be durable before any action is performed, in order.
    public var changes: [CallChange] = []
    /// The highest position of the change sequence the store must hold as
    /// reserved, committed with the changes (set once per block of positions).
    public var seqReservation: Int64?
    /// Restart grace deadlines to keep or drop, committed with the changes.
    public var restartGrace: [RestartGraceChange] = []
    /// Replies, events, closes and timers, in order.
    public var actions: [SignalingAction] = []

    public init() {}

    /// Whether there is nothing to commit and nothing to do (a timer for a
    /// call that already ended, a second disconnect).
    public var isEmpty: Bool { changes.isEmpty && restartGrace.isEmpty && actions.isEmpty }
}
