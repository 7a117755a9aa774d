/// A WebSocket frame opcode (RFC 6455 §5.2). Open: every 4-bit value is
/// representable, so a decoder can report an unknown opcode by value.
public struct WebSocketOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 4-bit opcode value.
    public let rawValue: UInt8

    /// An opcode from its 4-bit value; nil above 0xF.
    public init?(rawValue: UInt8) {
        guard rawValue <= 0xF else { return nil }
        self.rawValue = rawValue
    }

    private init(_ value: UInt8) { rawValue = value }

    /// Continues a fragmented message.
    public static let continuation = WebSocketOpcode(0x0)
    /// Starts a text message (UTF-8).
    public static let text = WebSocketOpcode(0x1)
    /// Starts a binary message.
    public static let binary = WebSocketOpcode(0x2)
    /// Closes the connection.
    public static let close = WebSocketOpcode(0x8)
    /// Asks the peer for a pong.
    public static let ping = WebSocketOpcode(0x9)
    /// Answers a ping, or serves as a one-way heartbeat.
    public static let pong = WebSocketOpcode(0xA)

    /// Control opcodes have the high bit of the nibble set (0x8–0xF).
    public var isControl: Bool { rawValue & 0x8 != 0 }

    /// Whether RFC 6455 defines this opcode (0x3–0x7 and 0xB–0xF are reserved).
    public var isDefined: Bool {
        switch rawValue {
        case 0x0, 0x1, 0x2, 0x8, 0x9, 0xA: return true
        default: return false
        }
    }

    public var description: String {
        switch rawValue {
        case 0x0: return "continuation"
        case 0x1: return "text"
        case 0x2: return "binary"
        case 0x8: return "close"
        case 0x9: return "ping"
        case 0xA: return "pong"
        default: return "reserved(0x\(String(rawValue, radix: 16)))"
        }
    }
}
