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
