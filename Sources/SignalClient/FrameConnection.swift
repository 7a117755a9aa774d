import SignalProtocol
import SignalReactor

/// A WebSocket to ringd that carries text frames and nothing more: no
/// `auth`, no request ids, no reconnect. For a client that speaks the
/// protocol itself and wants this library's I/O loop underneath (RingKit's
/// transport on Linux); the upgrade, TLS, pings and the close handshake are
/// ``ClientWebSocket``'s, as for ``SignalClient``.
public final class FrameConnection: Sendable {
    /// How long ``close(code:)`` waits for the server's close before dropping the connection.
    static let closeTimeout = 3.0

    private let webSocket: LoopBound<ClientWebSocket>

    private init(_ webSocket: LoopBound<ClientWebSocket>) {
        self.webSocket = webSocket
    }

    /// Opens a WebSocket to `url` (a form ``ServerEndpoint/init(url:)``
    /// takes; `options` for the timeouts, TLS and compression). `onFrame`
    /// then gets every text message in order, and `onClose` once when the
    /// connection is gone (with the server's close code when a close frame
    /// came); both run on the client I/O thread.
    public static func open(
        url: String, options: ConnectOptions = ConnectOptions(),
        onFrame: @escaping @Sendable (String) -> Void, onClose: @escaping @Sendable (ClientError) -> Void
    ) async throws(ClientError) -> FrameConnection {
        let endpoint = try ServerEndpoint(url: url)
        let (opened, events) = try await withCheckedContinuation {
            (
                continuation: CheckedContinuation<
                    Result<(ClientWebSocket.Opened, ClientConnectionEvents), ClientError>, Never
                >
            ) in
            ClientConnection.openWebSocket(endpoint, credentials: nil, options: options) {
                continuation.resume(returning: $0)
            }
        }.get()
        events.startOnLoop(
            onPush: { push in
                // A frame connection hands on nothing parsed.
                if case .frame(let text) = push { onFrame(text) }
            },
            onClose: onClose)
        return FrameConnection(opened.webSocket)
    }

    /// Sends `text` as one text message; dropped once the connection is
    /// closing (the close is then on its way to `onClose`).
    public func send(_ text: String) {
        let webSocket = self.webSocket
        ClientIO.submit { loop in webSocket.value(on: loop)?.send(text: text) }
    }

    /// Starts the close handshake with `code` (1000, or 3000–4999), dropping
    /// the connection if the server has not closed within ``closeTimeout``.
    public func close(code: UInt16) {
        _ = webSocket.close(code: WebSocketCloseCode(rawValue: code), within: Self.closeTimeout)
    }

    /// Drops the TCP connection without a close handshake, as a failed network would.
    public func abort() { webSocket.abort() }
}
