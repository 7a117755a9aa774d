/// Decompresses the payload of messages sent with RSV1 (permessage-deflate,
/// RFC 7692 §7.2.2) for ``WebSocketMessageReader``, which stays free of any
/// compression library: the reader hands over compressed bytes as frames
/// arrive and validates what comes out.
public protocol WebSocketMessageInflating {
    /// Inflates the next compressed bytes of the current message, appending
    /// the output to `output`. Throws 1009 as soon as `output` would grow past
    /// `limit` bytes (without allocating beyond it), 1007 for corrupt data.
    mutating func inflate(
        _ compressed: [UInt8], into output: inout [UInt8],
        limit: Int) throws(WebSocketProtocolError)

    /// Ends the current message: inflates the implied `00 00 FF FF` tail,
    /// appending any last output under the same rules, and drops the
    /// compression context when it is not taken over to the next message.
    mutating func finishMessage(into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError)
}

/// The inflater of a connection without permessage-deflate: the frame
/// decoder rejects RSV1 there, so a compressed message never reaches it; it
/// fails the connection if one does.
public struct WebSocketNoInflation: WebSocketMessageInflating {
    public init() {}

    public func inflate(
        _ compressed: [UInt8], into output: inout [UInt8],
        limit: Int
    ) throws(WebSocketProtocolError) {
        throw WebSocketProtocolError(.protocolError, "compressed message without permessage-deflate")
    }

    public func finishMessage(into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError) {
        throw WebSocketProtocolError(.protocolError, "compressed message without permessage-deflate")
    }
}

/// The inflater of a connection that may not have negotiated
/// permessage-deflate: nil fails a compressed message as
/// ``WebSocketNoInflation`` does.
extension Optional: WebSocketMessageInflating where Wrapped: WebSocketMessageInflating {
    public mutating func inflate(
        _ compressed: [UInt8], into output: inout [UInt8],
        limit: Int
    ) throws(WebSocketProtocolError) {
        guard case .some(var inflater) = self else {
            return try WebSocketNoInflation().inflate(compressed, into: &output, limit: limit)
        }
        defer { self = inflater }
        try inflater.inflate(compressed, into: &output, limit: limit)
    }

    public mutating func finishMessage(into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError) {
        guard case .some(var inflater) = self else {
            return try WebSocketNoInflation().finishMessage(into: &output, limit: limit)
        }
        defer { self = inflater }
        try inflater.finishMessage(into: &output, limit: limit)
    }
}
