/// Timing and size settings of server WebSocket connections.
public struct WebSocketSettings: Sendable {
    /// The largest message accepted (1009 beyond).
    public var maxMessageBytes: Int
    /// Seconds of silence from the peer before the server sends a ping.
    public var pingInterval: Double
    /// Seconds of silence after which the peer is considered gone.
    public var pingTimeout: Double
    /// permessage-deflate (RFC 7692) when a client offers it; nil: never.
    public var compression: WebSocketCompressionSettings?

    public init(
        maxMessageBytes: Int, pingInterval: Double, pingTimeout: Double,
        compression: WebSocketCompressionSettings? = nil
    ) {
        self.maxMessageBytes = maxMessageBytes
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.compression = compression
    }
}

/// How server WebSockets use permessage-deflate once a client offered it.
public struct WebSocketCompressionSettings: Sendable {
    /// Messages with fewer payload bytes are sent uncompressed.
    public var thresholdBytes: Int
    /// Whether the server keeps compression contexts between messages (a
    /// better ratio for about 210 KB per connection); without, it answers
    /// with no context takeover both ways and holds no zlib stream for an
    /// idle connection.
    public var contextTakeover: Bool

    public init(thresholdBytes: Int = 256, contextTakeover: Bool = false) {
        self.thresholdBytes = thresholdBytes
        self.contextTakeover = contextTakeover
    }
}
