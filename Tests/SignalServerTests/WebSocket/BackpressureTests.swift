import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// Outbound limits: a peer that does not read is dropped at the hard limit;
/// a slow one below it gets everything, in order.
@Suite(.blocking) struct BackpressureTests {
    static let messageSize = 64 * 1024

    private func limitedConfig() -> ServerConfig {
        testConfig {
            $0.outboundSoftLimit = 64 * 1024
            $0.outboundHardLimit = 1024 * 1024
        }
    }

    /// Checks that `message` is flood message number `sequence`.
    private func checkFlood(_ message: WebSocketMessage, _ sequence: UInt32) -> Bool {
        message.kind == .binary && message.payload == floodPayload(sequence, size: Self.messageSize)
    }

    @Test func peerThatDoesNotReadIsDroppedAndServerStaysHealthy() throws {
        let server = try TestServer(config: limitedConfig(), behavior: .flood(count: 200, size: Self.messageSize))
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, receiveBufferSize: 16 * 1024)
        defer { socket.close() }
        try socket.send(text: "flood me")
        // 200 x 64 KiB is far beyond what the socket buffers take: the queue
        // passes the hard limit and the server drops the connection.
        let codes = server.recorder.waitForCloses(timeout: 10)
        #expect(codes == [.abnormalClosure])
        // Reading now yields part of the flood, in order, then EOF or a reset.
        var received: UInt32 = 0
        readLoop: while true {
            switch try socket.nextEvent(timeout: 10) {
            case .message(let message):
                #expect(checkFlood(message, received), "message \(received) intact and in order")
                received += 1
            case nil:
                break readLoop
            case let other:
                Issue.record("unexpected \(String(describing: other))")
                break readLoop
            }
        }
        #expect(received < 200, "the connection was dropped before the whole flood went out")
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 0 })
        // The server still serves.
        let fresh = try TestSocket(port: server.port)
        defer { fresh.close() }
        let health = try fresh.get("/healthz")
        #expect(health.status == 200)
        #expect(try jsonBody(health)["connections"]?.integerValue == 1)
        let another = try TestWebSocket.connect(port: server.port)
        another.close()
    }

    @Test func slowReaderBelowTheHardLimitReceivesEverythingInOrder() throws {
        // Each request queues 12 x 64 KiB = 768 KiB: over the soft limit (so
        // the server stops reading) but under the hard limit.
        let server = try TestServer(config: limitedConfig(), behavior: .flood(count: 12, size: Self.messageSize))
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, receiveBufferSize: 16 * 1024)
        defer { socket.close() }
        socket.readChunkSize = 8 * 1024
        socket.pauseBeforeRead = 0.001
        try socket.send(text: "first batch")
        var received: UInt32 = 0
        while received < 24 {
            let message = try socket.nextMessage(timeout: 10)
            #expect(checkFlood(message, received), "message \(received) intact and in order")
            received += 1
            if received == 1 {
                // The server is now holding the rest of the first batch and
                // not reading; this request waits until the queue drains.
                try socket.send(text: "second batch")
            }
        }
        #expect(server.recorder.messageCount == 2)
        #expect(server.recorder.closeCodes.isEmpty, "a slow reader is not dropped")
        try socket.sendClose(1000)
        #expect(try socket.nextClose() == .normalClosure)
        #expect(socket.seesEOF())
    }

    @Test func pausedReadingResumesForControlFrames() throws {
        // While the server holds a big queue it does not read; once the client
        // drains it, a ping sent meanwhile is answered after the queued data.
        let server = try TestServer(config: limitedConfig(), behavior: .flood(count: 8, size: Self.messageSize))
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, receiveBufferSize: 16 * 1024)
        defer { socket.close() }
        try socket.send(text: "go")
        let first = try socket.nextMessage()
        #expect(checkFlood(first, 0))
        try socket.send(.ping, [7, 7, 7])
        for sequence in UInt32(1) ..< 8 {
            #expect(checkFlood(try socket.nextMessage(), sequence))
        }
        #expect(try socket.nextEvent() == .pong([7, 7, 7]))
    }
}
