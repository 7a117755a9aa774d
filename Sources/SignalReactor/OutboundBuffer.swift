import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes waiting to be written to a socket: a queue of chunks gathered into
/// one `sendmsg` (the socket form of `writev`), so a frame header and its
/// payload leave in one call. Holds no
/// memory while empty.
///
/// Written chunks are not removed one by one (each removal from the front of
/// an array moves all the others): a head index skips them, and the array is
/// compacted once the written part is at least half of it, so consuming
/// costs O(1) per chunk however many tiny chunks (pongs, say) are queued.
public struct OutboundBuffer {
    /// Chunks from `head` on are queued; those before it were written.
    private var chunks: [[UInt8]] = []
    private var head = 0
    /// How much of the chunk at `head` was already written.
    private var offset = 0
    /// Bytes queued and not yet written.
    public private(set) var pendingBytes = 0

    /// Written chunks kept before compacting: below this the array is not
    /// worth moving.
    static let compactionThreshold = 64

    public init() {}

    public var isEmpty: Bool { pendingBytes == 0 }

    /// Chunks queued and not yet completely written.
    public var chunkCount: Int { chunks.count - head }

    /// Chunks the storage holds, written ones included (for tests of compaction).
    var storedChunks: Int { chunks.count }

    /// Queues a chunk behind everything already queued.
    public mutating func append(_ chunk: [UInt8]) {
        guard !chunk.isEmpty else { return }
        chunks.append(chunk)
        pendingBytes += chunk.count
    }

    /// Writes as much as the socket takes, with `sendmsg` and MSG_NOSIGNAL so a
    /// peer that reset never raises SIGPIPE in a process embedding the server. Returns true when everything was
    /// written, false when the socket would block with bytes still queued.
    public mutating func flush(to fd: Int32) throws -> Bool {
        while head < chunks.count {
            let batch = min(chunks.count - head, 64)
            let result = try withIOVecs(batch) { iovecs in
                var message = msghdr()
                message.msg_iov = UnsafeMutablePointer(mutating: iovecs.baseAddress)
                message.msg_iovlen = iovecs.count
                return try syscall("sendmsg") { sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
            }
            switch result {
            case .wouldBlock:
                return false
            case .processed(let written):
                consume(written)
            }
        }
        return true
    }

    /// Forgets everything queued (the connection is being aborted).
    public mutating func discard() {
        chunks = []
        head = 0
        offset = 0
        pendingBytes = 0
    }

    private mutating func consume(_ written: Int) {
        var left = written
        pendingBytes -= written
        while left > 0 {
            let available = chunks[head].count - offset
            if left >= available {
                left -= available
                // Drops the bytes now; the slot goes at the next compaction.
                chunks[head] = []
                head += 1
                offset = 0
            } else {
                offset += left
                left = 0
            }
        }
        if head == chunks.count {
            chunks = []
            head = 0
        } else if head >= Self.compactionThreshold && head * 2 >= chunks.count {
            // Moves the queued chunks (at most as many as were written since
            // the last compaction), so each chunk is moved O(1) times.
            chunks.removeFirst(head)
            head = 0
        }
    }

    /// Builds iovecs over the first `count` queued chunks (the first from `offset`)
    /// and runs `body` with them. Each chunk's storage is pinned by its own
    /// `withUnsafeBytes` scope, nested one per chunk, so every pointer is
    /// valid for the whole call.
    private func withIOVecs<R>(_ count: Int, _ body: (UnsafeBufferPointer<iovec>) throws -> R) throws -> R {
        var iovecs = [iovec](repeating: iovec(), count: count)
        return try pin(0, count, &iovecs, body)
    }

    private func pin<R>(
        _ index: Int, _ count: Int, _ iovecs: inout [iovec],
        _ body: (UnsafeBufferPointer<iovec>) throws -> R
    ) throws -> R {
        if index == count {
            return try iovecs.withUnsafeBufferPointer { try body($0) }
        }
        let start = index == 0 ? offset : 0
        return try chunks[head + index].withUnsafeBytes { bytes in
            iovecs[index] = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start),
                iov_len: bytes.count - start)
            return try pin(index + 1, count, &iovecs, body)
        }
    }
}
