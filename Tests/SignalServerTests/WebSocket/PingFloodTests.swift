import SignalProtocol
import SignalServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A client that pings without reading: its pongs are queued up to the soft
/// limit, past it only the latest ping is answered, so the server queues a
/// bounded number of bytes, keeps reading, and keeps serving others.
@Suite(.blocking) struct PingFloodTests {
    static let pings = 200_000

    @Test func pingsWithoutReadingQueueABoundedNumberOfPongs() throws {
        let server = try TestServer(behavior: .reportOutbound)
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, receiveBufferSize: 16 * 1024)
        defer { socket.close() }
        // Were the server to stop reading, sending would block: fail instead.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket.socket.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let mask = WebSocketMaskKey(1, 2, 3, 4)
        let batch = 1000
        for first in stride(from: 0, to: Self.pings, by: batch) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(batch * 131)
            for sequence in first ..< first + batch {
                bytes += WebSocketFrameEncoder.frame(.ping, payload: Self.payload(sequence), maskKey: mask)
            }
            try socket.socket.send(bytes)
        }
        try socket.send(text: "how much is queued?")
        #expect(waitUntil(timeout: 10) { server.recorder.lastOutbound != nil })
        // 200,000 pongs are far more than the socket buffers take: pongs
        // queued up to the soft limit, not past it, and the latest one held.
        let softLimit = ServerConfig().outboundSoftLimit
        let outbound = try #require(server.recorder.lastOutbound)
        #expect(outbound.queuedSize <= softLimit, "queued past the soft limit: \(outbound.queuedSize)")
        #expect(outbound.queuedSize > softLimit / 2, "coalesced below the soft limit: \(outbound.queuedSize)")
        #expect(outbound.holdsPong)

        let other = try TestSocket(port: server.port)
        defer { other.close() }
        #expect(try other.get("/healthz").status == 200)

        // Reading now yields fewer pongs than pings, in order, the first for
        // the first ping and the last for the last.
        var sequences: [Int] = []
        while sequences.last != Self.pings - 1 {
            guard case .pong(let payload) = try socket.nextEvent(timeout: 10) else {
                Issue.record("expected a pong")
                break
            }
            let sequence = payload.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard payload == Self.payload(sequence), sequence > sequences.last ?? -1 else {
                Issue.record("pong \(sequence) after \(sequences.last ?? -1)")
                break
            }
            sequences.append(sequence)
        }
        #expect(sequences.first == 0)
        #expect(sequences.count < Self.pings)
        #expect(server.recorder.closeCodes.isEmpty)
    }

    /// The sequence number, filled to the largest control payload: 200,000
    /// pongs of 127 bytes are far more than loopback socket buffers take.
    private static func payload(_ sequence: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(sequence).bigEndian) { Array($0) } + [UInt8](repeating: 0x2A, count: 121)
    }
}
