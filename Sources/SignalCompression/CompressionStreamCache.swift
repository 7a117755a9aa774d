/// zlib streams shared by the connections of one thread, for directions
/// without context takeover: one compressor per window size, used for a
/// whole message at once and reset after it, and a few idle decompressors
/// lent to a connection for one message (a fragmented message may span
/// several reads, interleaved with other connections' messages).
///
/// Not `Sendable`: it belongs to one thread (one event loop).
public final class CompressionStreamCache {
    /// How many idle decompressors are kept; more are freed when returned.
    public let maxIdleInflaters: Int
    private var deflaters: [Int: DeflateStream] = [:]
    private var idleInflaters: [InflateStream] = []

    /// An empty cache keeping at most `maxIdleInflaters` idle decompressors.
    public init(maxIdleInflaters: Int = 4) {
        self.maxIdleInflaters = maxIdleInflaters
    }

    /// The shared compressor for `windowBits`; reset it after the message.
    public func deflater(windowBits: Int) throws(CompressionError) -> DeflateStream {
        if let deflater = deflaters[windowBits] { return deflater }
        let deflater = try DeflateStream(windowBits: windowBits, memLevel: DeflateStream.sharedMemLevel)
        deflaters[windowBits] = deflater
        return deflater
    }

    /// An idle decompressor, or a new one; give it back with ``recycle(_:)``.
    public func takeInflater() throws(CompressionError) -> InflateStream {
        if let inflater = idleInflaters.popLast() { return inflater }
        return try InflateStream()
    }

    /// Takes back a decompressor after a message: reset and kept, or freed
    /// when enough are idle.
    public func recycle(_ inflater: InflateStream) {
        guard idleInflaters.count < maxIdleInflaters else { return }
        inflater.reset()
        idleInflaters.append(inflater)
    }

    /// Bytes zlib holds for the cached streams.
    public var allocatedBytes: Int {
        deflaters.values.reduce(0) { $0 + $1.allocatedBytes } + idleInflaters.reduce(0) { $0 + $1.allocatedBytes }
    }
}
