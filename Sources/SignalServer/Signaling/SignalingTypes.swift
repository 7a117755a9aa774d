import SignalProtocol

/// Where a device is connected: the event loop and the connection on it.
public struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The loop's index in the server's group.
    public let loop: Int
    /// The connection's number, unique on its loop.
    public let connection: UInt64

    /// The address of connection `connection` on loop `loop`.
    public init(loop: Int, connection: UInt64) {
        self.loop = loop
        self.connection = connection
    }

    public var description: String { "\(loop)/\(connection)" }
}

/// An authenticated device: whose, which, and where.
public struct Device: Hashable, Sendable {
    /// The user's uid.
    public let uid: String
    /// The device id (client-chosen or server-assigned).
    public let deviceId: String
    /// Where it is connected.
    public let address: DeviceAddress

    /// A device of `uid`.
    public init(uid: String, deviceId: String, address: DeviceAddress) {
        self.uid = uid
        self.deviceId = deviceId
        self.address = address
    }
}

/// A deadline the state machine asked for.
public enum SignalingTimer: Hashable, Sendable {
    /// The ring timeout of a ringing call.
    case ring(sessionId: String)
    /// The reconnect grace period of a user whose devices are all gone; the
    /// generation tells a current grace period from one a reconnect ended.
    case grace(uid: String, generation: UInt64)
}

/// Something the driver must do; the state machine itself does no I/O.
public enum SignalingAction: Hashable, Sendable {
    /// Send a request's result to the device that asked.
    case reply(DeviceAddress, id: String?, Result<JSONValue, SignalError>)
    /// Push a call's new state to a device.
    case event(DeviceAddress, Call)
    /// Close a device's connection with a WebSocket close code.
    case close(DeviceAddress, code: UInt16, reason: String)
    /// Call ``CallStateMachine/timerFired(_:now:)`` with `timer` at `at`
    /// (milliseconds since the Unix epoch).
    case schedule(SignalingTimer, at: Int64)
    /// Drop `timer`, scheduled earlier and no longer needed (the call was
    /// answered or ended before its ring timeout). Unknown or already run
    /// timers are ignored; a stale timer that fires anyway changes nothing.
    case cancel(SignalingTimer)
    /// The session is not live: the store decides between
    /// `ERR_CALL_TERMINATED`, `ERR_CALL_NOT_A_PART` and `ERR_CALL_SESSION_NOT_FOUND`.
    case resolveSession(DeviceAddress, id: String, sessionId: String, uid: String)
}

/// What one input to the state machine produced: call snapshots to commit,
/// then actions to perform once they are committed.
public struct SignalingOutput: Sendable {
    /// Calls whose new state must be durable before any action is performed.
    public var saves: [Call] = []
    /// Replies, events, closes and timers, in order.
    public var actions: [SignalingAction] = []

    /// Nothing to do.
    public init() {}

    /// Whether there is nothing to save and nothing to do (a timer for a
    /// call that already ended, a second disconnect).
    public var isEmpty: Bool { saves.isEmpty && actions.isEmpty }
}

/// Limits and defaults of the ringing semantics.
public struct SignalingSettings: Sendable {
    /// Ring timeout when `initiateCall` gives none, in seconds.
    public var defaultRingTimeout: Int
    /// How long a user whose devices all went away may take to come back, in milliseconds.
    public var reconnectGraceMillis: Int64
    /// Devices one user may have connected at once.
    public var maxDevicesPerUser: Int

    /// Settings with the given values.
    public init(defaultRingTimeout: Int = 45, reconnectGraceMillis: Int64 = 10_000, maxDevicesPerUser: Int = 10) {
        self.defaultRingTimeout = defaultRingTimeout
        self.reconnectGraceMillis = reconnectGraceMillis
        self.maxDevicesPerUser = maxDevicesPerUser
    }
}
