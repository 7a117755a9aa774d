import SignalProtocol

/// The sending half of permessage-deflate on one connection: compresses
/// whole messages for the agreed direction.
///
/// With context takeover the connection owns a compressor for its lifetime
/// (``DeflateStream/connectionMemLevel``). Without, it holds none: each
/// message borrows the thread's shared compressor from the cache and resets
/// it, or (no cache) creates one and frees it after the message.
public struct MessageCompressor {
    private let direction: PerMessageDeflateDirection
    private let cache: CompressionStreamCache?
    private var owned: DeflateStream?

    /// A compressor for `direction`, borrowing from `cache` when the context is not kept.
    public init(_ direction: PerMessageDeflateDirection, cache: CompressionStreamCache?) {
        self.direction = direction
        self.cache = cache
    }

    /// Bytes of zlib memory the connection holds between messages.
    public var heldBytes: Int { owned?.allocatedBytes ?? 0 }

    /// What to send for a data message carrying `payload`, and the frame's
    /// reserved bits: compressed (RSV1) from `threshold` bytes up, as is
    /// below it, and as is when compressing did not make it smaller, which
    /// only a compressor without context takeover may do (the context would
    /// otherwise hold bytes the peer never saw).
    public mutating func encode(
        _ payload: [UInt8], threshold: Int
    ) throws(CompressionError) -> (payload: [UInt8], reservedBits: UInt8) {
        guard payload.count >= threshold else { return (payload, 0) }
        let compressed = try compress(payload)
        if !direction.contextTakeover && compressed.count >= payload.count { return (payload, 0) }
        return (compressed, WebSocketFrameHeader.rsv1)
    }

    /// The payload of a compressed message (RSV1) carrying `payload`.
    public mutating func compress(_ payload: [UInt8]) throws(CompressionError) -> [UInt8] {
        if direction.contextTakeover {
            if let owned { return try owned.compressMessage(payload) }
            let stream = try DeflateStream(windowBits: direction.windowBits, memLevel: DeflateStream.connectionMemLevel)
            owned = stream
            return try stream.compressMessage(payload)
        }
        let stream: DeflateStream
        if let cache {
            stream = try cache.deflater(windowBits: direction.windowBits)
        } else {
            stream = try DeflateStream(windowBits: direction.windowBits, memLevel: DeflateStream.sharedMemLevel)
        }
        defer { stream.reset() }
        return try stream.compressMessage(payload)
    }
}
