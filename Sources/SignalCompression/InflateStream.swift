import CZlib

/// A raw-inflate decompressor (zlib, no header) for permessage-deflate
/// payloads, bounded by a size limit checked as output appears. Lives on one
/// thread.
///
/// It always inflates with a 15-bit window, which reads data compressed with
/// any smaller one. Memory (zlib's own, measured with ``allocatedBytes``):
/// about 7 KB of state, plus the 32 KB window once data needs it.
public final class InflateStream {
    /// The output produced per zlib call, on the stack.
    static let chunkSize = 16 * 1024

    private let stream = ZlibStream()

    /// A decompressor at the start of a stream.
    public init() throws(CompressionError) {
        let status = inflateInit2_(stream.pointer, -15, ZlibStream.version, ZlibStream.streamSize)
        if let error = ZlibStream.initError(status, "inflateInit2") { throw error }
    }

    deinit { inflateEnd(stream.pointer) }

    /// Bytes zlib holds for this stream.
    public var allocatedBytes: Int { stream.allocatedBytes }

    /// Inflates `input`, appending the output to `output`. Throws
    /// ``CompressionError/Code/messageTooBig`` as soon as `output` would pass
    /// `limit` bytes; `output` never reserves more than `limit`. A final
    /// deflate block ends the stream; inflating goes on with a fresh one.
    public func inflate(_ input: [UInt8], into output: inout [UInt8], limit: Int) throws(CompressionError) {
        let status = input.withUnsafeBufferPointer { buffer in
            let z = stream.pointer
            z.pointee.next_in = UnsafeMutablePointer(mutating: buffer.baseAddress)
            z.pointee.avail_in = uInt(buffer.count)
            defer { z.pointee.next_in = nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.chunkSize) { chunk in
                drain(into: &output, limit: limit, through: chunk)
            }
        }
        switch status {
        case Z_OK, Z_BUF_ERROR: return
        case Self.overLimit: throw CompressionError(.messageTooBig, "message inflates beyond \(limit) bytes")
        case Z_DATA_ERROR, Z_NEED_DICT: throw CompressionError(.corruptData, "invalid deflate data")
        case Z_MEM_ERROR: throw CompressionError(.outOfMemory, "inflate: out of memory")
        default: throw CompressionError(.zlib, "inflate failed with status \(status)")
        }
    }

    /// Forgets the context: the next data starts a new stream.
    public func reset() {
        inflateReset(stream.pointer)
    }

    /// Starts a new deflate stream after a final block (RFC 7692 §7.2.3.4)
    /// with the old one's window as its dictionary, so that later data,
    /// which may refer back across the end (context takeover), still inflates.
    private func restartKeepingWindow() {
        let z = stream.pointer
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1 << 15) { window in
            var length: uInt = 0
            let saved = inflateGetDictionary(z, window.baseAddress, &length) == Z_OK
            inflateReset(z)
            if saved && length > 0 { _ = inflateSetDictionary(z, window.baseAddress, length) }
        }
    }

    /// The status ``drain(into:limit:through:)`` reports for output past the limit.
    private static let overLimit: Int32 = -100

    /// Runs zlib until the input is used up and no output is pending; returns
    /// the last status, or ``overLimit``.
    private func drain(
        into output: inout [UInt8], limit: Int, through chunk: UnsafeMutableBufferPointer<UInt8>
    ) -> Int32 {
        let z = stream.pointer
        while true {
            // Room for one byte past the limit: producing it proves the message too big.
            let room = min(chunk.count, max(0, limit - output.count) + 1)
            z.pointee.next_out = chunk.baseAddress
            z.pointee.avail_out = uInt(room)
            let status = CZlib.inflate(z, Z_SYNC_FLUSH)
            let produced = room - Int(z.pointee.avail_out)
            z.pointee.next_out = nil
            if output.count + produced > limit { return Self.overLimit }
            if output.capacity < output.count + produced {
                output.reserveCapacity(min(max(output.capacity * 2, output.count + produced), limit))
            }
            output.append(contentsOf: chunk[..<produced])
            switch status {
            case Z_STREAM_END:
                restartKeepingWindow()
                if z.pointee.avail_in == 0 { return Z_OK }
            case Z_OK where z.pointee.avail_in > 0 || produced == room:
                continue
            default:
                return status
            }
        }
    }
}
