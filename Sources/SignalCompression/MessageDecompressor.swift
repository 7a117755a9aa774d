import SignalProtocol

/// The receiving half of permessage-deflate on one connection, the inflater
/// of its ``WebSocketMessageReader``.
///
/// With context takeover the connection owns a decompressor for its
/// lifetime. Without, it holds one only while a compressed message is
/// arriving: borrowed from the thread's cache (or created) at its first
/// bytes and given back (or freed) at its end.
public struct MessageDecompressor: WebSocketMessageInflating {
    /// The bytes a sync flush ends with, removed by the sender (RFC 7692 §7.2.2).
    static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    private let contextTakeover: Bool
    private let cache: CompressionStreamCache?
    private var stream: InflateStream?

    /// A decompressor for a direction with or without `contextTakeover`,
    /// borrowing from `cache` when the context is not kept.
    public init(contextTakeover: Bool, cache: CompressionStreamCache?) {
        self.contextTakeover = contextTakeover
        self.cache = cache
    }

    /// Bytes of zlib memory the connection holds now.
    public var heldBytes: Int { stream?.allocatedBytes ?? 0 }

    public mutating func inflate(
        _ compressed: [UInt8], into output: inout [UInt8],
        limit: Int
    ) throws(WebSocketProtocolError) {
        do {
            try acquire().inflate(compressed, into: &output, limit: limit)
        } catch {
            throw error.protocolError
        }
    }

    public mutating func finishMessage(into output: inout [UInt8], limit: Int) throws(WebSocketProtocolError) {
        do {
            try acquire().inflate(Self.tail, into: &output, limit: limit)
        } catch {
            throw error.protocolError
        }
        guard !contextTakeover, let stream else { return }
        self.stream = nil
        if let cache {
            cache.recycle(stream)
        }
    }

    private mutating func acquire() throws(CompressionError) -> InflateStream {
        if let stream { return stream }
        let fresh: InflateStream
        if let cache {
            fresh = try cache.takeInflater()
        } else {
            fresh = try InflateStream()
        }
        stream = fresh
        return fresh
    }
}
