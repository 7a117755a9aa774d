/// A WebSocket close status code (RFC 6455 §7.4, IANA registry). Open: any
/// 16-bit value is representable so a received code can be judged by value.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The purpose of the connection was fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// The endpoint is going away (server shutdown, page left).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// The peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// The peer sent a kind of data the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// No status code was present (never sent on the wire).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// The connection dropped without a close frame (never sent on the wire).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// A message's data did not match its type (e.g. invalid UTF-8 text).
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// The peer violated the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// A message was too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// The client expected an extension the server did not negotiate.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// The server hit an unexpected condition.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)
    /// The server is restarting.
    public static let serviceRestart = WebSocketCloseCode(rawValue: 1012)
    /// The server is overloaded; try again later.
    public static let tryAgainLater = WebSocketCloseCode(rawValue: 1013)

    /// Whether the code may appear in a close frame: 1000–1003, 1007–1014
    /// (RFC 6455 plus the IANA registrations), and 3000–4999 (libraries and
    /// applications). 1004–1006, 1015 and everything else are invalid.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000 ... 1003, 1007 ... 1014, 3000 ... 4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}
