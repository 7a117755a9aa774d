import SignalProtocol

/// Why a ``RingClient`` operation failed: the server's error code
/// (`ERR_…`, from its error result) or one the client found itself
/// (`CLIENT_…`, ``Code``), with a message for people.
public struct RingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The stable code: `ERR_…` from the server, `CLIENT_…` from the client.
    public var code: String
    /// What went wrong, for people.
    public var message: String
    /// The WebSocket close code, when the connection closed with a close frame.
    public var closeCode: UInt16?
    /// For `ERR_RATE_LIMITED`: how long to wait before trying again.
    public var retryAfterMs: Int64?

    public init(code: String, message: String, closeCode: UInt16? = nil, retryAfterMs: Int64? = nil) {
        self.code = code
        self.message = message
        self.closeCode = closeCode
        self.retryAfterMs = retryAfterMs
    }

    /// The server's error result `error`.
    public init(_ error: SignalError) {
        self.init(code: error.code.rawValue, message: error.message, retryAfterMs: error.retryAfterMs)
    }

    /// `CODE: message`.
    public var description: String { "\(code): \(message)" }

    /// Whether the server answered with this error (rather than the client finding it).
    public var isServerError: Bool { !code.hasPrefix("CLIENT_") }

    /// The client's own codes (the same as SignalClient's for the same failures).
    public enum Code {
        /// The URL could not be understood, or names an unsupported scheme.
        public static let badURL = "CLIENT_BAD_URL"
        /// The connection could not be opened (no route, refused, TLS, upgrade).
        public static let connectFailed = "CLIENT_CONNECT_FAILED"
        /// The connection closed, or the client is not connected.
        public static let closed = "CLIENT_CLOSED"
        /// The server did not answer in time.
        public static let timeout = "CLIENT_TIMEOUT"
        /// The server sent something the client did not expect.
        public static let protocolViolation = "CLIENT_PROTOCOL"
    }

    static func closed(_ message: String, closeCode: UInt16? = nil) -> RingError {
        RingError(code: Code.closed, message: message, closeCode: closeCode)
    }

    static func protocolViolation(_ message: String) -> RingError {
        RingError(code: Code.protocolViolation, message: message)
    }
}
