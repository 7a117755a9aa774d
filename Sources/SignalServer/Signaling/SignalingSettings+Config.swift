import SignalCore

/// Kept in the server: the core knows no ``ServerConfig``.
extension SignalingSettings {
    /// What `config` sets: the ring timeout, both grace periods, the device
    /// limit, what becomes of a call nothing can ring, and the per-user
    /// limit on placing calls.
    init(config: ServerConfig, pushes: Bool) {
        self.init(
            defaultRingTimeout: config.ringTimeout, reconnectGraceMillis: Int64(config.reconnectGrace * 1000),
            maxDevicesPerUser: config.devicesPerUser, restartGraceMillis: Int64(config.restartGrace * 1000),
            pushes: pushes, unreachable: config.unreachable, initiatesPerMinute: config.initiatesPerMinute)
    }
}

/// `ringd states` and docs/STATES.md: the table run with the shipped
/// defaults, which the core cannot read (they are ``ServerConfig``'s).
extension StateTable {
    /// The shipped defaults, with push configured so that push actions show.
    static let shippedSettings = SignalingSettings(config: ServerConfig(), pushes: true)

    /// The table in `format` with the shipped defaults, ending with a newline.
    public static func render(_ format: Format) throws(StateTableError) -> String {
        try render(format, settings: shippedSettings)
    }
}
