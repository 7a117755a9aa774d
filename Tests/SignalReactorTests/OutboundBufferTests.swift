import Testing

@testable import SignalReactor

#if canImport(Glibc)
    import Glibc
#endif

/// ``OutboundBuffer`` with many tiny chunks written a little at a time: what
/// arrives is what was queued, in order, and written chunks do not pile up in
/// the storage (they are skipped by index and compacted, not removed one by
/// one from the front).
@Suite struct OutboundBufferTests {
    @Test func manySmallChunksDrainInOrderWithBoundedStorage() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var size: Int32 = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)

        let count = 50_000
        var buffer = OutboundBuffer()
        var expected: [UInt8] = []
        for index in 0 ..< count {
            // Two-byte chunks like pongs, with a third byte now and then.
            let chunk =
                index % 7 == 0
                ? [UInt8(truncatingIfNeeded: index), 0x8A, 0]
                : [UInt8(truncatingIfNeeded: index), 0x8A]
            buffer.append(chunk)
            expected.append(contentsOf: chunk)
        }
        #expect(buffer.chunkCount == count)
        #expect(buffer.pendingBytes == expected.count)

        var received: [UInt8] = []
        var partialFlushes = 0
        var scratch = [UInt8](repeating: 0, count: 1500)
        while true {
            let done = try buffer.flush(to: fds[0])
            // Written chunks linger at most until they are half the storage.
            #expect(buffer.storedChunks <= 2 * buffer.chunkCount + OutboundBuffer.compactionThreshold)
            if done { break }
            partialFlushes += 1
            let got = scratch.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
            try #require(got > 0)
            received.append(contentsOf: scratch[0 ..< got])
        }
        while received.count < expected.count {
            let got = scratch.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
            try #require(got > 0)
            received.append(contentsOf: scratch[0 ..< got])
        }
        #expect(partialFlushes > 10, "the socket took the queue in many pieces")
        #expect(received == expected)
        #expect(buffer.isEmpty)
        #expect(buffer.chunkCount == 0)
        #expect(buffer.storedChunks == 0, "an empty buffer holds no storage")
    }
}
