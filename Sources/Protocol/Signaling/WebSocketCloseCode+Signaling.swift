extension WebSocketCloseCode {
    /// The connection did not authenticate (bad credentials, no auth frame in
    /// time, too many devices): the client should not reconnect as it was.
    public static let notAuthenticated = WebSocketCloseCode(rawValue: 4001)
    /// A newer connection of the same device took over: the client should not reconnect.
    public static let replaced = WebSocketCloseCode(rawValue: 4003)
    /// The test API reset the server (`POST /v1/test/reset`): every call,
    /// device and token revocation is gone; reconnect as a new device.
    public static let testReset = WebSocketCloseCode(rawValue: 4010)
}
