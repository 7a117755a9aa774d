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
