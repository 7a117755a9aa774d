import CZlib
import SignalProtocol

/// A raw-deflate compressor (zlib, no header) producing permessage-deflate
/// message payloads (RFC 7692 §7.2.1). Lives on one thread.
///
/// zlib cannot raw-deflate with an 8-bit window, so `windowBits` must be
/// 9...15 (negotiation declines a peer that demands 8).
///
/// Memory (zlib's own, measured with ``allocatedBytes``): about
/// 2^(windowBits+2) + 2^(memLevel+9) bytes plus 6 KB of state.
public final class DeflateStream {
    /// The compression level: zlib's default, 6.
    public static let level: Int32 = 6
    /// The `memLevel` of a stream shared by the connections of a thread: zlib's default, 8.
    public static let sharedMemLevel = 8
    /// The `memLevel` of a connection's own stream (context takeover): 6,
    /// which quarters the hash and literal buffers (128 KB down to 32 KB).
    public static let connectionMemLevel = 6

    /// The window sizes zlib's raw deflate supports.
    public static let windowBitsRange = PerMessageDeflateNegotiation.smallestCompressorWindowBits ... 15

    /// The window the peer allowed (9...15).
    public let windowBits: Int
    public let memLevel: Int
    private let stream = ZlibStream()

    /// A compressor for a peer that allows a `windowBits` window.
    public init(windowBits: Int, memLevel: Int) throws(CompressionError) {
        self.windowBits = windowBits
        self.memLevel = memLevel
        guard Self.windowBitsRange.contains(windowBits) else {
            throw CompressionError(.zlib, "raw deflate needs a window of 9 to 15 bits, not \(windowBits)")
        }
        let status = deflateInit2_(
            stream.pointer, Self.level, Z_DEFLATED, -Int32(windowBits),
            Int32(memLevel), Z_DEFAULT_STRATEGY, ZlibStream.version, ZlibStream.streamSize)
        if let error = ZlibStream.initError(status, "deflateInit2") { throw error }
    }

    deinit { deflateEnd(stream.pointer) }

    /// Bytes zlib holds for this stream.
    public var allocatedBytes: Int { stream.allocatedBytes }

    /// Compresses one whole message: deflate with a sync flush, minus the
    /// `00 00 FF FF` the flush ends with. The context stays for the next
    /// message unless ``reset()`` is called.
    public func compressMessage(_ payload: [UInt8]) throws(CompressionError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(payload.count / 2 + 64)
        let status = payload.withUnsafeBufferPointer { input in
            let z = stream.pointer
            z.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            z.pointee.avail_in = uInt(input.count)
            defer { z.pointee.next_in = nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 * 1024) { chunk -> Int32 in
                var status = Z_OK
                repeat {
                    z.pointee.next_out = chunk.baseAddress
                    z.pointee.avail_out = uInt(chunk.count)
                    status = deflate(z, Z_SYNC_FLUSH)
                    output.append(contentsOf: chunk[..<(chunk.count - Int(z.pointee.avail_out))])
                } while z.pointee.avail_out == 0 && (status == Z_OK || status == Z_BUF_ERROR)
                z.pointee.next_out = nil
                return status
            }
        }
        guard status == Z_OK || status == Z_BUF_ERROR, output.count >= 4,
            output.suffix(4).elementsEqual([0, 0, 0xFF, 0xFF])
        else {
            throw CompressionError(.zlib, "deflate failed with status \(status)")
        }
        output.removeLast(4)
        return output
    }

    /// Forgets the context: the next message is compressed on its own.
    public func reset() {
        deflateReset(stream.pointer)
    }
}
