extension WebSocketCloseCode {
    /// The connection did not authenticate (bad credentials, no auth frame in
    /// time, too many devices): the client should not reconnect as it was.
    public static let notAuthenticated = WebSocketCloseCode(rawValue: 4001)
    /// A newer connection of the same device took over: the client should not reconnect.
    public static let replaced = WebSocketCloseCode(rawValue: 4003)
    /// The test API reset the server (`POST /v1/test/reset`): every call,
    /// device and token revocation is gone; reconnect as a new device.
    public static let testReset = WebSocketCloseCode(rawValue: 4010)

    /// Whether a client whose connection closed with `code` (nil: no close
    /// frame came) should reconnect as the same device: not when the server
    /// refused the device (4001) or replaced it with a newer connection (4003).
    public static func allowsReconnect(afterClose code: UInt16?) -> Bool {
        code != notAuthenticated.rawValue && code != replaced.rawValue
    }
}
