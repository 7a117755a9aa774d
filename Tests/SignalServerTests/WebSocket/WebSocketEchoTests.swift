import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// WebSocket messages, control frames and protocol failures over real
/// sockets, against an echo responder.
@Suite(.blocking) struct WebSocketEchoTests {
    static let payloadSizes = [0, 1, 125, 126, 127, 65535, 65536, 200_000]

    private func echoServer(maxMessageBytes: Int = 1 << 20) throws -> TestServer {
        try TestServer(
            config: testConfig {
                $0.maxMessageBytes = maxMessageBytes
                $0.outboundHardLimit = 16 << 20
            })
    }

    @Test(arguments: payloadSizes)
    func binaryMessagesAreEchoed(size: Int) throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let payload = (0 ..< size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        try socket.send(.binary, payload)
        let echo = try socket.nextMessage()
        #expect(echo.kind == .binary)
        #expect(echo.payload.count == size)
        #expect(echo.payload == payload)
    }

    @Test(arguments: payloadSizes)
    func textMessagesAreEchoed(size: Int) throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        // Mix one-, two- and three-byte characters, then pad with ASCII to size.
        var text = Array("héllo wörld €".utf8)
        text = Array(text.prefix(size <= text.count ? 0 : text.count))
        text += [UInt8](repeating: UInt8(ascii: "x"), count: size - text.count)
        try socket.send(.text, text)
        let echo = try socket.nextMessage()
        #expect(echo.kind == .text)
        #expect(echo.payload == text)
    }

    @Test func manyMessagesInOneWriteAreEchoedInOrder() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        var burst: [UInt8] = []
        for index in 0 ..< 50 {
            burst += WebSocketFrameEncoder.frame(.text, payload: Array("message \(index)".utf8), maskKey: .random())
        }
        try socket.socket.send(burst)
        for index in 0 ..< 50 {
            #expect(try socket.nextMessage() == .text("message \(index)"))
        }
    }

    @Test func fragmentedMessageWithInterleavedPing() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.send(.text, Array("first ".utf8), fin: false)
        try socket.send(.ping, Array("are you there".utf8))
        try socket.send(.continuation, Array("second ".utf8), fin: false)
        try socket.send(.continuation, Array("third".utf8), fin: true)
        #expect(try socket.nextEvent() == .pong(Array("are you there".utf8)))
        #expect(try socket.nextEvent() == .message(.text("first second third")))
    }

    @Test func pingIsAnsweredWithTheSamePayload() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        let payload = (0 ..< 125).map { UInt8($0) }
        try socket.send(.ping, payload)
        #expect(try socket.nextEvent() == .pong(payload))
        try socket.send(.ping, [])
        #expect(try socket.nextEvent() == .pong([]))
        // An unsolicited pong is ignored.
        try socket.send(.pong, [1, 2, 3])
        try socket.send(text: "still here")
        #expect(try socket.nextEvent() == .message(.text("still here")))
    }

    @Test func clientCloseIsAnsweredAndTCPClosed() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.sendClose(1000, reason: "bye")
        #expect(try socket.nextClose() == .normalClosure)
        #expect(socket.seesEOF())
        #expect(server.recorder.waitForCloses() == [.normalClosure])
    }

    @Test func emptyCloseIsAnsweredWithEmptyClose() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.send(.close, [])
        #expect(try socket.nextEvent() == .close(code: nil, reason: ""))
        #expect(socket.seesEOF())
        #expect(server.recorder.waitForCloses() == [.noStatusReceived])
    }

    @Test func applicationCloseCodeIsEchoed() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.sendClose(4001, reason: "app")
        #expect(try socket.nextClose() == WebSocketCloseCode(rawValue: 4001))
        #expect(socket.seesEOF())
        #expect(server.recorder.waitForCloses() == [WebSocketCloseCode(rawValue: 4001)])
    }

    @Test func droppedTCPIsReportedAs1006() throws {
        let server = try echoServer()
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        try socket.send(text: "hi")
        #expect(try socket.nextMessage() == .text("hi"))
        socket.close()
        #expect(server.recorder.waitForCloses() == [.abnormalClosure])
    }

    // MARK: Failures

    /// Sends `bytes` on a fresh connection and expects a close frame with
    /// `code`, TCP closed by the server, and the responder told `code`.
    private func expectFailure(
        _ bytes: [UInt8], code: WebSocketCloseCode, maxMessageBytes: Int = 1 << 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let server = try echoServer(maxMessageBytes: maxMessageBytes)
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port)
        defer { socket.close() }
        try socket.socket.send(bytes)
        #expect(try socket.nextClose() == code, sourceLocation: sourceLocation)
        #expect(socket.seesEOF(), "TCP closed after the close frame", sourceLocation: sourceLocation)
        #expect(server.recorder.waitForCloses() == [code], sourceLocation: sourceLocation)
        #expect(server.recorder.messageCount == 0, sourceLocation: sourceLocation)
    }

    private func masked(
        _ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true,
        reservedBits: UInt8 = 0
    ) -> [UInt8] {
        WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin, reservedBits: reservedBits, maskKey: .random())
    }

    @Test func messageOverMaxMessageBytesIs1009() throws {
        try expectFailure(
            masked(.binary, [UInt8](repeating: 1, count: 2000)), code: .messageTooBig,
            maxMessageBytes: 1024)
    }

    @Test func fragmentedMessageOverMaxMessageBytesIs1009() throws {
        let fragments =
            masked(.binary, [UInt8](repeating: 1, count: 600), fin: false)
            + masked(.continuation, [UInt8](repeating: 2, count: 600))
        try expectFailure(fragments, code: .messageTooBig, maxMessageBytes: 1024)
    }

    @Test func unmaskedFrameIs1002() throws {
        try expectFailure(WebSocketFrameEncoder.frame(.text, payload: Array("plain".utf8)), code: .protocolError)
    }

    @Test(arguments: [WebSocketFrameHeader.rsv1, 0b010, 0b001])
    func reservedBitIs1002(bits: UInt8) throws {
        try expectFailure(masked(.text, Array("x".utf8), reservedBits: bits), code: .protocolError)
    }

    @Test(arguments: [UInt8(0x3), 0x7, 0xB, 0xF])
    func unknownOpcodeIs1002(opcode: UInt8) throws {
        try expectFailure(masked(WebSocketOpcode(rawValue: opcode)!, [1]), code: .protocolError)
    }

    @Test func invalidUTF8TextIs1007() throws {
        try expectFailure(masked(.text, [0x68, 0x69, 0xC3, 0x28]), code: .invalidPayload)
    }

    @Test func textEndingInsideACharacterIs1007() throws {
        try expectFailure(masked(.text, [0x68, 0xE2, 0x82]), code: .invalidPayload)
    }

    @Test func closeWithCode1005Is1002() throws {
        try expectFailure(masked(.close, [0x03, 0xED]), code: .protocolError)
    }

    @Test func closeWithOneBytePayloadIs1002() throws {
        try expectFailure(masked(.close, [0x03]), code: .protocolError)
    }

    @Test func controlFrameOver125BytesIs1002() throws {
        try expectFailure(masked(.ping, [UInt8](repeating: 0, count: 126)), code: .protocolError)
    }

    @Test func continuationWithoutAMessageIs1002() throws {
        try expectFailure(masked(.continuation, [1, 2]), code: .protocolError)
    }

    @Test func newMessageInsideAFragmentedOneIs1002() throws {
        try expectFailure(
            masked(.text, Array("a".utf8), fin: false) + masked(.text, Array("b".utf8)),
            code: .protocolError)
    }
}
