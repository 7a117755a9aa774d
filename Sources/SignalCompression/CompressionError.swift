import SignalProtocol

/// A failure of zlib compression or decompression.
public struct CompressionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is; stable across releases.
    public enum Code: String, Hashable, Sendable {
        /// The inflated message would exceed its size limit.
        case messageTooBig = "message_too_big"
        /// The compressed data is not valid deflate data.
        case corruptData = "corrupt_data"
        /// zlib could not allocate memory.
        case outOfMemory = "out_of_memory"
        /// zlib reported an unexpected status (a bug, not the peer's fault).
        case zlib = "zlib"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The WebSocket close code to fail a connection with: 1009 for a message
    /// over the limit, 1007 for corrupt data, 1011 otherwise.
    public var closeCode: WebSocketCloseCode {
        switch code {
        case .messageTooBig: return .messageTooBig
        case .corruptData: return .invalidPayload
        case .outOfMemory, .zlib: return .internalError
        }
    }

    /// The error as a WebSocket protocol failure.
    public var protocolError: WebSocketProtocolError { WebSocketProtocolError(closeCode, message) }
}
