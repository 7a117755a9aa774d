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
