import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// Below the soft limit every ping gets a pong of its own, with its payload
/// and in order, however the pings arrive: many to a read, split across
/// reads, or a few at a time to a reader that keeps up. (Past the limit
/// pongs are coalesced: PingFloodTests.)
@Suite(.blocking) struct PongTests {
    static let pings = 1000

    @Test func pingsInOneWriteGetAPongEach() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.socket.send(Self.pingFrames(0 ..< Self.pings))
        try expectPongs(0 ..< Self.pings, from: socket)
        try expectCloseNext(socket)
    }

    @Test func pingsSplitAcrossWritesGetAPongEach() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        // 1000-byte writes (TCP_NODELAY): frames straddle them, so reads end
        // in the middle of a ping.
        let bytes = Self.pingFrames(0 ..< Self.pings)
        for start in stride(from: 0, to: bytes.count, by: 1000) {
            try socket.socket.send(Array(bytes[start ..< min(start + 1000, bytes.count)]))
        }
        try expectPongs(0 ..< Self.pings, from: socket)
        try expectCloseNext(socket)
    }

    @Test func aReaderThatKeepsUpGetsAPongPerPing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        // Ten pings to a write, their pongs read before the next ten.
        for first in stride(from: 0, to: Self.pings, by: 10) {
            try socket.socket.send(Self.pingFrames(first ..< first + 10))
            try expectPongs(first ..< first + 10, from: socket)
        }
        try expectCloseNext(socket)
    }

    @Test func pongsAndEchoesKeepTheOrderOfPingsAndMessages() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let mask = WebSocketMaskKey(5, 6, 7, 8)
        try socket.socket.send(
            Self.pingFrames(0 ..< 2) + WebSocketFrameEncoder.frame(.text, payload: Array("echo".utf8), maskKey: mask)
                + Self.pingFrames(2 ..< 3))
        try expectPongs(0 ..< 2, from: socket)
        #expect(try socket.nextMessage() == .text("echo"))
        try expectPongs(2 ..< 3, from: socket)
        try expectCloseNext(socket)
    }

    /// Expects the pongs to pings `sequences`, in order, as the next events.
    private func expectPongs(_ sequences: Range<Int>, from socket: TestWebSocket) throws {
        for sequence in sequences {
            let event = try socket.nextEvent()
            try #require(event == .pong(Self.payload(sequence)), "the pong to ping \(sequence)")
        }
    }

    /// Closes, and expects the server's close frame as the next event: no
    /// pong was left over.
    private func expectCloseNext(_ socket: TestWebSocket) throws {
        try socket.sendClose(1000)
        let event = try socket.nextEvent()
        #expect(event == .close(code: .normalClosure, reason: ""))
    }

    /// Masked pings `sequences`, back to back.
    private static func pingFrames(_ sequences: Range<Int>) -> [UInt8] {
        let mask = WebSocketMaskKey(1, 2, 3, 4)
        return Array(sequences.map { WebSocketFrameEncoder.frame(.ping, payload: payload($0), maskKey: mask) }.joined())
    }

    /// The sequence number, then a fill of a length that varies with it, up
    /// to the largest control payload (125 bytes).
    private static func payload(_ sequence: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(sequence).bigEndian) { Array($0) }
            + [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: sequence % 122)
    }
}
