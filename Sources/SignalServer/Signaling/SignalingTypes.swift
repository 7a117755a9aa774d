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

/// The time an input happens at, on both clocks: the wall clock for the
/// timestamps calls carry on the wire, the monotonic clock for deadlines,
/// so that a step of the wall clock neither fires a timer early nor holds
/// it back.
public struct SignalingTime: Hashable, Sendable {
    /// Milliseconds since the Unix epoch.
    public var wall: Int64
    /// Milliseconds on CLOCK_MONOTONIC (any origin).
    public var monotonic: Int64

    public init(wall: Int64, monotonic: Int64) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// The monotonic time at which the wall clock will read `wall`, if it
    /// is not stepped meanwhile.
    func monotonic(atWall wall: Int64) -> Int64 { monotonic + (wall - self.wall) }
}

/// The reply to a request: typed data, or a protocol error.
public typealias SignalingReply = Result<ResultData, SignalError>

/// Something the driver must do; the state machine itself does no I/O.
public enum SignalingAction: Hashable, Sendable {
    /// Send a request's result to the device that asked.
    case reply(DeviceAddress, id: String?, SignalingReply)
    /// Tell these devices the call's new state: one encoding, the same bytes to each.
    case event(Call, to: [DeviceAddress])
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
    /// The session is not live: the store decides between
    /// `ERR_CALL_TERMINATED`, `ERR_CALL_NOT_A_PART` and `ERR_CALL_SESSION_NOT_FOUND`.
    case resolveSession(DeviceAddress, id: String, sessionId: String, uid: String)
}

/// What one input to the state machine produced: the changes of calls to
/// commit, then actions to perform once they are committed.
public struct SignalingOutput: Sendable {
    /// Changes that must be durable before any action is performed, in order.
    public var changes: [CallChange] = []
    /// Replies, events, closes and timers, in order.
    public var actions: [SignalingAction] = []

    public init() {}

    /// Whether there is nothing to commit and nothing to do (a timer for a
    /// call that already ended, a second disconnect).
    public var isEmpty: Bool { changes.isEmpty && actions.isEmpty }
}

/// Limits and defaults of the ringing semantics.
public struct SignalingSettings: Sendable {
    /// Ring timeout when `initiateCall` gives none, in seconds.
    public var defaultRingTimeout: Int
    /// How long a user whose devices all went away may take to come back, in milliseconds.
    public var reconnectGraceMillis: Int64
    /// Devices one user may have connected at once.
    public var maxDevicesPerUser: Int

    public init(defaultRingTimeout: Int = 45, reconnectGraceMillis: Int64 = 10_000, maxDevicesPerUser: Int = 10) {
        self.defaultRingTimeout = defaultRingTimeout
        self.reconnectGraceMillis = reconnectGraceMillis
        self.maxDevicesPerUser = maxDevicesPerUser
    }
}
