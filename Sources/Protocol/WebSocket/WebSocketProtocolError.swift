/// A violation of RFC 6455 by the peer: the connection fails with `closeCode`.
public struct WebSocketProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The close code to send before closing the connection.
    public let closeCode: WebSocketCloseCode
    /// A short, human-readable reason (fits a close frame: under 123 bytes).
    public let reason: String

    public init(_ closeCode: WebSocketCloseCode, _ reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }

    public var description: String { "\(closeCode.rawValue): \(reason)" }
}
