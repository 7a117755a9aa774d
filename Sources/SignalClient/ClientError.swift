/// A client-side failure: the server's error code (e.g. `ERR_CALL_BUSY_SELF`)
/// or one of the client codes in ``ClientErrorCode``.
public struct ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server's stable error code, or a `CLIENT_…` code from ``ClientErrorCode``.
    public let code: String
    /// What went wrong, for people.
    public let message: String
    /// The WebSocket close code, when the failure is a close frame from the server.
    public let closeCode: UInt16?
    /// The HTTP status, for ``ClientErrorCode/http`` and ``ClientErrorCode/handshakeFailed``.
    public let httpStatus: Int?

    /// An error with `code` and `message`, and optionally the close code or HTTP status behind it.
    public init(code: String, message: String, closeCode: UInt16? = nil, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.closeCode = closeCode
        self.httpStatus = httpStatus
    }

    /// `CODE: message`.
    public var description: String { "\(code): \(message)" }
}

/// The codes of failures the client itself detects (the server's codes are `ERR_…`).
public enum ClientErrorCode {
    /// The server address could not be understood, or names an unsupported scheme.
    public static let badURL = "CLIENT_BAD_URL"
    /// The host did not resolve, or the TCP connection failed or was refused.
    public static let connectFailed = "CLIENT_CONNECT_FAILED"
    /// The TLS handshake failed: the certificate did not verify (untrusted,
    /// expired, another name), no common protocol, or no TLS on that port.
    public static let tlsFailed = "CLIENT_TLS"
    /// The server refused the WebSocket upgrade or answered it wrongly.
    public static let handshakeFailed = "CLIENT_HANDSHAKE_FAILED"
    /// The WebSocket or TCP connection closed (`closeCode` is set when a close frame came).
    public static let closed = "CLIENT_CLOSED"
    /// The server did not answer in time.
    public static let timeout = "CLIENT_TIMEOUT"
    /// The server sent something the client did not expect.
    public static let protocolViolation = "CLIENT_PROTOCOL"
    /// A REST request got a status other than 2xx (`httpStatus` is set).
    public static let http = "CLIENT_HTTP"
}

extension ClientError {
    /// A ``ClientErrorCode/closed`` error.
    static func closed(_ message: String, closeCode: UInt16? = nil) -> ClientError {
        ClientError(code: ClientErrorCode.closed, message: message, closeCode: closeCode)
    }

    /// A ``ClientErrorCode/protocolViolation`` error.
    static func protocolViolation(_ message: String) -> ClientError {
        ClientError(code: ClientErrorCode.protocolViolation, message: message)
    }

    /// A ``ClientErrorCode/timeout`` error.
    static func timeout(_ message: String) -> ClientError {
        ClientError(code: ClientErrorCode.timeout, message: message)
    }

    /// Whether the code came from the server (`ERR_…`) rather than from the client.
    var isServerCode: Bool { !code.hasPrefix("CLIENT_") }
}
