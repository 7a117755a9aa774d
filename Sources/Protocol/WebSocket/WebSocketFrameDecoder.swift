/// Which end of a connection a codec serves; it decides the masking rules.
public enum WebSocketRole: Sendable {
    /// The server end: every received frame must be masked, sent frames are not.
    case server
    /// The client end: received frames must not be masked, sent frames are.
    case client
}

/// An incremental WebSocket frame decoder (RFC 6455 §5.2), correct for any
/// split of the byte stream.
///
/// It reports a frame's header as soon as the header is complete, so limits can
/// be applied before any payload is buffered, then streams the unmasked payload
/// in chunks as bytes arrive. Every rule that can be judged from the header
/// alone is enforced here (masking, reserved bits, opcodes, control-frame size
/// and fragmentation, length encoding); message-level rules live in
/// ``WebSocketMessageReader``.
public struct WebSocketFrameDecoder: Sendable {
    /// One step of decoding.
    public enum Event: Hashable, Sendable {
        /// A frame's header is complete; its payload follows in `payload` events.
        case header(WebSocketFrameHeader)
        /// The next unmasked payload bytes of the current frame; `isFrameEnd`
        /// on the last chunk. A zero-length frame yields one empty chunk.
        case payload([UInt8], isFrameEnd: Bool)
    }

    /// Where the decoder stands in the byte stream.
    enum State: Sendable {
        /// Waiting for (the rest of) a frame header.
        case header
        /// Inside the payload of `header`: `remaining` bytes are due, and the
        /// next byte sits at payload offset `offset` (for unmasking).
        case payload(header: WebSocketFrameHeader, remaining: Int, offset: Int)
        /// A protocol error was reported; nothing more is decoded.
        case failed
    }

    private var state: State = .header
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private let role: WebSocketRole
    /// Reserved bits a negotiated extension gives meaning to; others fail with 1002.
    public var allowedReservedBits: UInt8

    public init(role: WebSocketRole, allowedReservedBits: UInt8 = 0) {
        self.role = role
        self.allowedReservedBits = allowedReservedBits
    }

    /// Bytes received but not yet decoded.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append<Bytes: Sequence<UInt8>>(contentsOf bytes: Bytes) {
        buffer.append(contentsOf: bytes)
    }

    /// The next event, nil when more bytes are needed.
    public mutating func next() throws(WebSocketProtocolError) -> Event? {
        defer { compact() }
        switch state {
        case .failed:
            return nil
        case .header:
            guard let header = try decodeHeader() else { return nil }
            state = .payload(header: header, remaining: header.payloadLength, offset: 0)
            return .header(header)
        case .payload(let header, let remaining, let offset):
            let available = buffer.count - readIndex
            guard available > 0 || remaining == 0 else { return nil }
            let count = min(available, remaining)
            var chunk = Array(buffer[readIndex ..< readIndex + count])
            readIndex += count
            if let key = header.maskKey { key.apply(to: &chunk, startingAt: offset) }
            let left = remaining - count
            state = left == 0 ? .header : .payload(header: header, remaining: left, offset: offset + count)
            return .payload(chunk, isFrameEnd: left == 0)
        }
    }

    private mutating func fail(_ code: WebSocketCloseCode, _ reason: String) -> WebSocketProtocolError {
        state = .failed
        return WebSocketProtocolError(code, reason)
    }

    private mutating func decodeHeader() throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }
        let first = buffer[readIndex], second = buffer[readIndex + 1]
        let fin = first & 0x80 != 0
        let reserved = (first >> 4) & 0b111
        let opcode = WebSocketOpcode(rawValue: first & 0x0F)!
        let masked = second & 0x80 != 0
        let shortLength = Int(second & 0x7F)

        // Everything judged from the first two bytes fails at once, before the
        // rest of the header arrives.
        if reserved & ~allowedReservedBits != 0 {
            throw fail(.protocolError, "reserved bits set without a negotiated extension")
        }
        guard opcode.isDefined else { throw fail(.protocolError, "unknown opcode \(opcode.rawValue)") }
        if opcode.isControl {
            guard fin else { throw fail(.protocolError, "fragmented control frame") }
            guard shortLength <= 125 else { throw fail(.protocolError, "control frame payload over 125 bytes") }
            guard reserved == 0 else { throw fail(.protocolError, "reserved bits set on a control frame") }
        }
        switch role {
        case .server where !masked: throw fail(.protocolError, "client frame not masked")
        case .client where masked: throw fail(.protocolError, "server frame masked")
        default: break
        }

        let lengthBytes = shortLength == 126 ? 2 : (shortLength == 127 ? 8 : 0)
        let headerSize = 2 + lengthBytes + (masked ? 4 : 0)
        guard available >= headerSize else { return nil }

        var cursor = readIndex + 2
        var length = UInt64(shortLength)
        if lengthBytes > 0 {
            length = 0
            for _ in 0 ..< lengthBytes {
                length = length << 8 | UInt64(buffer[cursor])
                cursor += 1
            }
            if lengthBytes == 8 && length >> 63 != 0 {
                throw fail(.protocolError, "64-bit payload length with the high bit set")
            }
            let minimal = lengthBytes == 2 ? length >= 126 : length > 0xFFFF
            guard minimal else { throw fail(.protocolError, "payload length not minimally encoded") }
        }
        guard length <= UInt64(Int.max) else { throw fail(.messageTooBig, "payload length too large") }
        var key: WebSocketMaskKey?
        if masked {
            key = WebSocketMaskKey(buffer[cursor], buffer[cursor + 1], buffer[cursor + 2], buffer[cursor + 3])
            cursor += 4
        }
        readIndex = cursor
        return WebSocketFrameHeader(
            fin: fin, reservedBits: reserved, opcode: opcode,
            maskKey: key, payloadLength: Int(length))
    }

    /// Drops decoded bytes; frees the buffer whenever it is fully consumed so an
    /// idle connection holds no buffer.
    private mutating func compact() {
        if readIndex == buffer.count {
            if !buffer.isEmpty { buffer = [] }
            readIndex = 0
        } else if readIndex >= 4096 && readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
