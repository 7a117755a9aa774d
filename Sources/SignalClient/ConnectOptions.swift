import SignalCrypto

/// How ``SignalClient/connect(to:credentials:options:)`` connects and behaves afterwards.
public struct ConnectOptions: Sendable {
    /// The device id to authenticate as (1–100 of `A-Z a-z 0-9 . _ - @`); nil lets the server assign one.
    public var deviceId: String?
    /// Whether to reconnect after an unexpected loss of the connection (given
    /// several endpoints, to the next one, and on through them in turn).
    public var reconnect: Bool
    /// Seconds to keep trying to reconnect, over every endpoint tried (the
    /// server's default grace period is 10).
    public var reconnectWindow: Double
    /// Seconds a request, the `auth` frame included, may wait for its result.
    public var requestTimeout: Double
    /// Seconds the TCP connection and, separately, the TLS handshake and the
    /// WebSocket upgrade may take.
    public var connectTimeout: Double
    /// How a `wss://` server's certificate is checked: against the system's
    /// roots by default, a private CA file, or (development only) not at all.
    public var tlsVerification = TLSVerification.systemRoots
    /// Seconds of silence from the server after which the client pings it; a
    /// server that then stays silent as long again is treated as lost (and,
    /// with ``reconnect``, reconnected to). The server pings quiet clients
    /// itself every 15 s by default, so a healthy connection is never silent this long.
    public var keepAliveInterval: Double = 30
    /// Whether to offer permessage-deflate (RFC 7692) as
    /// `permessage-deflate; client_max_window_bits`. When the server accepts,
    /// messages of 256 bytes or more are sent compressed and compressed
    /// messages from the server are inflated (4 MiB at most); an
    /// answer that breaks RFC 7692 fails the connection with
    /// ``ClientErrorCode/handshakeFailed``.
    public var compression: Bool
    /// Where a reconnect resumes (the largest `seq` seen); set by the client itself.
    var resumeAfter: Int64?
    /// The store epoch of that position (``Authentication/epoch``); set by the client itself.
    var resumeEpoch: String?

    /// Options; every one has a default.
    public init(
        deviceId: String? = nil, reconnect: Bool = false, reconnectWindow: Double = 10,
        requestTimeout: Double = 10, connectTimeout: Double = 5, compression: Bool = false
    ) {
        self.deviceId = deviceId
        self.reconnect = reconnect
        self.reconnectWindow = reconnectWindow
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.compression = compression
    }
}
