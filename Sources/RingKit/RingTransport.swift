/// What a transport hands the client from one connection, in order, on
/// any thread but one at a time.
public enum RingTransportEvent: Sendable, Hashable {
    /// A text message from the server.
    case text(String)
    /// The connection is gone; nothing follows. `code` is the server's close
    /// code when a close frame came (nil for a lost network).
    case closed(code: UInt16?, reason: String)
}

/// The seam under ``RingClient``: opens WebSockets that carry text frames.
/// The protocol itself (requests, results, events, auth, reconnect,
/// resume) lives above it, in ``RingClient``, the same for every transport.
public protocol RingTransport: Sendable {
    /// Opens a WebSocket to `url` and returns once it is open; `onEvent`
    /// then gets every text message and, last, the close.
    func open(
        url: String, onEvent: @escaping @Sendable (RingTransportEvent) -> Void
    ) async throws(RingError) -> any RingTransportConnection
}

/// One open WebSocket of a ``RingTransport``.
public protocol RingTransportConnection: Sendable {
    /// Sends `text` as one text message. A failure to send ends the
    /// connection, which its `closed` event reports.
    func send(_ text: String)
    /// Starts the close handshake with `code`; the `closed` event follows.
    func close(code: UInt16)
}

/// Which transport a ``RingClient`` uses.
public struct RingTransportFactory: Sendable {
    public let transport: any RingTransport

    public init(_ transport: any RingTransport) {
        self.transport = transport
    }

    /// URLSessionWebSocketTask on Apple platforms; on Linux the reactor-based
    /// WebSocket of SignalClient, because Debian's libcurl, under
    /// Foundation's URLSession there, has no WebSocket support.
    public static var `default`: RingTransportFactory {
        #if os(Linux)
            RingTransportFactory(ReactorTransport())
        #else
            urlSession
        #endif
    }

    /// Foundation's URLSessionWebSocketTask with the shared session.
    public static var urlSession: RingTransportFactory { RingTransportFactory(URLSessionTransport()) }
}
