/// Limits and defaults of the ringing semantics.
public struct SignalingSettings: Sendable {
    /// Ring timeout when `initiateCall` gives none, in seconds.
    public var defaultRingTimeout: Int
    /// How long a user whose devices all went away may take to come back, in milliseconds.
    public var reconnectGraceMillis: Int64
    /// Devices one user may have connected at once.
    public var maxDevicesPerUser: Int
    /// How long each party of a call restored at start may take to come
    /// back, in milliseconds.
    public var restartGraceMillis: Int64
    /// Whether ringing calls are pushed (``SignalingAction/push(_:connected:)``).
    public var pushes: Bool
    /// What happens to a call nothing can ring (`calls.unreachable`).
    public var unreachable: UnreachablePolicy
    /// Calls one user may place in any 60 seconds (over every device and,
    /// in a cluster, every node); 0: no limit.
    public var initiatesPerMinute: Int

    public init(
        defaultRingTimeout: Int = 45, reconnectGraceMillis: Int64 = 10_000, maxDevicesPerUser: Int = 10,
        restartGraceMillis: Int64 = 30_000, pushes: Bool = false, unreachable: UnreachablePolicy = .ring,
        initiatesPerMinute: Int = 0
    ) {
        self.defaultRingTimeout = defaultRingTimeout
        self.reconnectGraceMillis = reconnectGraceMillis
        self.maxDevicesPerUser = maxDevicesPerUser
        self.restartGraceMillis = restartGraceMillis
        self.pushes = pushes
        self.unreachable = unreachable
        self.initiatesPerMinute = initiatesPerMinute
    }
}
