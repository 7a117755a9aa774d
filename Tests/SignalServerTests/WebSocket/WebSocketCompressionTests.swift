import SignalCompression
import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// permessage-deflate over real sockets against the echo responder.
@Suite(.blocking) struct WebSocketCompressionTests {
    static let offer = "permessage-deflate; client_max_window_bits"

    private func server(
        compression: Bool = true, threshold: Int = 256, contextTakeover: Bool = false,
        maxMessageBytes: Int = 1 << 20
    ) throws -> TestServer {
        try TestServer(
            config: testConfig {
                $0.compression = compression
                $0.compressionThresholdBytes = threshold
                $0.compressionContextTakeover = contextTakeover
                $0.maxMessageBytes = maxMessageBytes
                $0.outboundHardLimit = 16 << 20
            })
    }

    /// A masked frame with RSV1 carrying `payload` compressed on its own.
    private func compressedFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws -> [UInt8] {
        var compressor = MessageCompressor(
            PerMessageDeflateDirection(windowBits: 15, contextTakeover: false), cache: nil)
        return WebSocketFrameEncoder.frame(
            opcode, payload: try compressor.compress(payload),
            reservedBits: WebSocketFrameHeader.rsv1, maskKey: .random())
    }

    /// The first byte of the next frame the server sends (its FIN, RSV and opcode bits).
    private func nextFrameFirstByte(_ socket: TestWebSocket) throws -> UInt8? {
        let deadline = monotonicSeconds() + 5
        while socket.socket.buffer.isEmpty {
            if try socket.socket.receiveSome(until: deadline) == 0 { return nil }
        }
        return socket.socket.buffer.first
    }

    @Test func theServerAnswersAnOfferWithNoContextTakeoverByDefault() throws {
        let server = try server()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, offer: "x-unknown, " + Self.offer)
        defer { socket.close() }
        #expect(socket.extensions == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        let withTakeover = try self.server(contextTakeover: true)
        defer { withTakeover.stop() }
        let kept = try TestWebSocket.connect(port: withTakeover.port, offer: Self.offer)
        defer { kept.close() }
        #expect(kept.extensions == "permessage-deflate")
    }

    @Test func noAnswerWhenCompressionIsOffOrNoOfferIsAcceptable() throws {
        let off = try server(compression: false)
        defer { off.stop() }
        let plain = try TestWebSocket.connect(port: off.port, offer: Self.offer)
        defer { plain.close() }
        #expect(plain.extensions == nil)
        let on = try server()
        defer { on.stop() }
        let eightBits = try TestWebSocket.connect(port: on.port, offer: "permessage-deflate; server_max_window_bits=8")
        defer { eightBits.close() }
        #expect(eightBits.extensions == nil)
    }

    @Test func aMalformedExtensionsHeaderIsRefusedWith400() throws {
        let server = try server()
        defer { server.stop() }
        let error = #expect(throws: TestSocketError.self) {
            try TestWebSocket.connect(port: server.port, offer: "permessage-deflate; =1")
        }
        #expect(error?.description.contains("answered 400") == true, "\(String(describing: error))")
        #expect(error?.description.contains("Sec-WebSocket-Extensions") == true, "\(String(describing: error))")
    }

    @Test func aMessageThatDoesNotShrinkIsSentUncompressed() throws {
        let server = try server(threshold: 16)
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, offer: Self.offer)
        defer { socket.close() }
        var generator = SystemRandomNumberGenerator()
        let noise = (0 ..< 2000).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
        try socket.socket.send(WebSocketFrameEncoder.frame(.binary, payload: noise, maskKey: .random()))
        #expect(try nextFrameFirstByte(socket) == 0x82)  // FIN, binary, no RSV1
        #expect(try socket.nextMessage() == WebSocketMessage(kind: .binary, payload: noise))
    }

    @Test func compressedMessagesAreInflatedAndLargeEchoesCompressed() throws {
        let server = try server()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, offer: Self.offer)
        defer { socket.close() }
        let large = Array(String(repeating: "{\"type\":\"call\",\"status\":\"ringing\"} ", count: 40).utf8)
        try socket.socket.send(try compressedFrame(.text, large))
        #expect(try nextFrameFirstByte(socket) == 0xC1)  // FIN, RSV1, text
        #expect(try socket.nextMessage() == WebSocketMessage(kind: .text, payload: large))

        try socket.socket.send(try compressedFrame(.text, Array("small".utf8)))
        #expect(try nextFrameFirstByte(socket) == 0x81)  // under the threshold: FIN, text, no RSV1
        #expect(try socket.nextMessage() == .text("small"))
    }

    @Test func aFragmentedCompressedMessageIsReassembled() throws {
        let server = try server(contextTakeover: true)
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, offer: Self.offer)
        defer { socket.close() }
        var compressor = MessageCompressor(
            PerMessageDeflateDirection(windowBits: 15, contextTakeover: true), cache: nil)
        let payload = (0 ..< 3_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        for _ in 0 ..< 2 {
            let compressed = try compressor.compress(payload)
            let half = compressed.count / 2
            try socket.send(.binary, Array(compressed[..<half]), fin: false, reservedBits: WebSocketFrameHeader.rsv1)
            try socket.send(.ping, [1])
            try socket.send(.continuation, Array(compressed[half...]))
            #expect(try socket.nextEvent() == .pong([1]))
            #expect(try socket.nextMessage() == WebSocketMessage(kind: .binary, payload: payload))
        }
    }

    @Test func aCompressionBombIsClosedWith1009() throws {
        let server = try server(maxMessageBytes: 65_536)
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, offer: Self.offer)
        defer { socket.close() }
        let bomb = try compressedFrame(.binary, [UInt8](repeating: 0, count: 4 << 20))
        #expect(bomb.count < 8_192)
        try socket.socket.send(bomb)
        #expect(try socket.nextClose() == .messageTooBig)
        #expect(server.recorder.waitForCloses() == [.messageTooBig])
    }

    @Test("RSV1 without negotiation is closed with 1002", arguments: [true, false])
    func rsv1WithoutNegotiation(compressionEnabled: Bool) throws {
        let server = try server(compression: compressionEnabled)
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.socket.send(try compressedFrame(.text, Array("hello".utf8)))
        #expect(try socket.nextClose() == .protocolError)
    }

    @Test func rsv1OnAContinuationIsClosedWith1002() throws {
        let server = try server()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, offer: Self.offer)
        defer { socket.close() }
        try socket.send(.text, Array("a".utf8), fin: false)
        try socket.send(.continuation, Array("b".utf8), reservedBits: WebSocketFrameHeader.rsv1)
        #expect(try socket.nextClose() == .protocolError)
    }
}
