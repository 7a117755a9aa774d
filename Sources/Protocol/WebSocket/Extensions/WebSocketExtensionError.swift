/// A `Sec-WebSocket-Extensions` header or permessage-deflate parameter set
/// that breaks RFC 6455 §9.1 or RFC 7692 §7.
public struct WebSocketExtensionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is; stable across releases.
    public enum Code: String, Hashable, Sendable {
        /// The header does not follow the extension-list grammar.
        case malformedHeader = "malformed_header"
        /// A parameter permessage-deflate does not define (for an offer or a response).
        case unknownParameter = "unknown_parameter"
        /// A parameter appears twice in one offer or response.
        case duplicateParameter = "duplicate_parameter"
        /// A parameter has a value it may not have, or lacks one it needs.
        case invalidValue = "invalid_value"
        /// The server's response goes beyond what the client offered.
        case notOffered = "not_offered"
        /// A valid value this endpoint cannot honour (an 8-bit compressor window).
        case unsupportedValue = "unsupported_value"
    }

    public let code: Code
    /// What is wrong, naming the parameter.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
