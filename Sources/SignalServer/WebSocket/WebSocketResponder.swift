import SignalProtocol

/// The application side of one WebSocket connection. Called on the
/// connection's event loop; never called again after `webSocketDidClose`.
public protocol WebSocketResponder: AnyObject {
    /// The handshake completed; `socket` can send from now on.
    func webSocketDidOpen(_ socket: WebSocket)
    /// A complete text or binary message arrived.
    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage)
    /// The connection is closed: `code` is the peer's close code, the code the
    /// server failed the connection with, or 1006 when the TCP connection
    /// dropped without a close handshake.
    func webSocketDidClose(_ socket: WebSocket, code: WebSocketCloseCode)
}

/// Timing and size settings of server WebSocket connections.
public struct WebSocketSettings: Sendable {
    /// The largest message accepted (1009 beyond).
    public var maxMessageBytes: Int
    /// Seconds of silence from the peer before the server sends a ping.
    public var pingInterval: Double
    /// Seconds of silence after which the peer is considered gone.
    public var pingTimeout: Double
    /// Seconds the server waits for the peer's close frame after sending its own.
    public var closeTimeout: Double

    /// Settings with the given values.
    public init(maxMessageBytes: Int, pingInterval: Double, pingTimeout: Double, closeTimeout: Double = 5) {
        self.maxMessageBytes = maxMessageBytes
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.closeTimeout = closeTimeout
    }
}
