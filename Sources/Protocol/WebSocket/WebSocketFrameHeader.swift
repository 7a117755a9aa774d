/// The four-byte key a client masks its payloads with (RFC 6455 §5.3).
public struct WebSocketMaskKey: Hashable, Sendable {
    /// The key bytes in wire order.
    public var b0, b1, b2, b3: UInt8

    /// A key from its four bytes in wire order.
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        (self.b0, self.b1, self.b2, self.b3) = (b0, b1, b2, b3)
    }

    /// A fresh key from the system's random source.
    public static func random() -> WebSocketMaskKey {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt32
        return WebSocketMaskKey(
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24))
    }

    /// The key byte applied at payload offset `offset`.
    @inline(__always)
    public subscript(offset: Int) -> UInt8 {
        switch offset & 3 {
        case 0: return b0
        case 1: return b1
        case 2: return b2
        default: return b3
        }
    }

    /// XORs `bytes` in place, as if they started at payload offset `offset`.
    public func apply(to bytes: inout [UInt8], startingAt offset: Int = 0) {
        bytes.withUnsafeMutableBufferPointer { apply(to: $0, startingAt: offset) }
    }

    /// XORs `buffer` in place, as if it started at payload offset `offset`.
    public func apply(to buffer: UnsafeMutableBufferPointer<UInt8>, startingAt offset: Int = 0) {
        for index in buffer.indices {
            buffer[index] ^= self[offset &+ index - buffer.startIndex]
        }
    }
}

/// What a frame header says: everything but the payload.
public struct WebSocketFrameHeader: Hashable, Sendable {
    /// Whether this frame is the last one of its message.
    public var fin: Bool
    /// The three reserved bits as the low bits of a byte: RSV1 = 0b100, RSV2 = 0b010, RSV3 = 0b001.
    public var reservedBits: UInt8
    public var opcode: WebSocketOpcode
    /// The masking key, present on every client-to-server frame.
    public var maskKey: WebSocketMaskKey?
    /// The payload length in bytes.
    public var payloadLength: Int

    public init(
        fin: Bool = true, reservedBits: UInt8 = 0, opcode: WebSocketOpcode,
        maskKey: WebSocketMaskKey? = nil, payloadLength: Int
    ) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.maskKey = maskKey
        self.payloadLength = payloadLength
    }

    /// The RSV1 bit (used by permessage-deflate).
    public static let rsv1: UInt8 = 0b100

    /// The encoded size of this header: 2 bytes, plus 2 or 8 for extended lengths, plus 4 for a mask.
    public var encodedSize: Int {
        let lengthBytes = payloadLength < 126 ? 0 : (payloadLength <= 0xFFFF ? 2 : 8)
        return 2 + lengthBytes + (maskKey == nil ? 0 : 4)
    }

    /// Appends the header's wire form (RFC 6455 §5.2) to `out`, using the
    /// minimal length encoding.
    public func encode(into out: inout [UInt8]) {
        out.append((fin ? 0x80 : 0) | ((reservedBits & 0b111) << 4) | opcode.rawValue)
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        if payloadLength < 126 {
            out.append(maskBit | UInt8(payloadLength))
        } else if payloadLength <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(payloadLength >> 8))
            out.append(UInt8(truncatingIfNeeded: payloadLength))
        } else {
            out.append(maskBit | 127)
            let length = UInt64(payloadLength)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        if let key = maskKey {
            out.append(contentsOf: [key.b0, key.b1, key.b2, key.b3])
        }
    }
}
