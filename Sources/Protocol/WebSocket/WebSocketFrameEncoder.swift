/// Builds WebSocket frames for sending (RFC 6455 §5.2).
public enum WebSocketFrameEncoder {
    /// A whole frame as bytes: header plus payload, the payload masked when
    /// `maskKey` is given (client to server).
    public static func frame(
        _ opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true,
        reservedBits: UInt8 = 0, maskKey: WebSocketMaskKey? = nil
    ) -> [UInt8] {
        let header = WebSocketFrameHeader(
            fin: fin, reservedBits: reservedBits, opcode: opcode,
            maskKey: maskKey, payloadLength: payload.count)
        var out: [UInt8] = []
        out.reserveCapacity(header.encodedSize + payload.count)
        header.encode(into: &out)
        let start = out.count
        out.append(contentsOf: payload)
        if let key = maskKey {
            out.withUnsafeMutableBufferPointer { buffer in
                key.apply(to: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
            }
        }
        return out
    }

    /// The header alone, for sending it and an unmasked payload in one `writev`.
    public static func header(
        _ opcode: WebSocketOpcode, payloadLength: Int, fin: Bool = true,
        reservedBits: UInt8 = 0
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(10)
        WebSocketFrameHeader(
            fin: fin, reservedBits: reservedBits, opcode: opcode,
            payloadLength: payloadLength
        ).encode(into: &out)
        return out
    }

    /// A close frame's payload: the code, then the reason cut to fit the
    /// 125-byte control-frame limit at a character boundary.
    public static func closePayload(code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var payload = [UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
        var room = 123
        for scalar in reason.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            guard bytes.count <= room else { break }
            payload.append(contentsOf: bytes)
            room -= bytes.count
        }
        return payload
    }
}
