import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// The WebSocket opening handshake over real sockets.
@Suite(.blocking) struct HandshakeTests {
    /// RFC 6455 §1.3: key "dGhlIHNhbXBsZSBub25jZQ==" gives
    /// "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" (SHA-1 b37a4f2c c0624f16 90f64606
    /// cf385945 b2bec4ea, checked independently).
    @Test func acceptValueMatchesTheRFC6455Example() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(WebSocketHandshake.acceptValue(forKey: "AAAAAAAAAAAAAAAAAAAAAA==") == "ICX+Yqv66kxgM0FcWaLWlFLwTAI=")
    }

    @Test func successfulHandshakeAnswers101WithTheAcceptValue() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let key = randomWebSocketKey()
        try socket.send(upgradeRequest(key: key))
        let response = try socket.readResponse()
        #expect(response.status == 101)
        #expect(response.header("Upgrade")?.lowercased() == "websocket")
        #expect(response.header("Connection")?.lowercased() == "upgrade")
        #expect(response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key))
        #expect(response.header("Content-Length") == nil)
        #expect(waitUntil(timeout: 5) { server.recorder.openCount == 1 })
    }

    @Test func ringdRouterUpgradesV1WS() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestWebSocket.connect(port: server.port, path: "/v1/ws")
        defer { socket.close() }
        try socket.sendClose(1000)
        #expect(try socket.nextClose() == .normalClosure)
        #expect(socket.seesEOF())
    }

    /// Sends an upgrade request and expects a refusal with `status`, a
    /// `Connection: close` and the server closing TCP; returns the response.
    @discardableResult
    private func expectRefusal(_ request: String, status: Int) throws -> TestHTTPResponse {
        let server = try TestServer()
        defer { server.stop() }
        let response = try expectClosingRefusal(request, status: status, port: server.port)
        #expect(server.recorder.openCount == 0)
        return response
    }

    @Test func missingUpgradeIs426() throws {
        let key = randomWebSocketKey()
        let response = try expectRefusal(
            upgradeRequest(
                key: key,
                headers: [
                    "Connection: Upgrade", "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13",
                ]), status: 426)
        #expect(response.header("Upgrade") == "websocket")
        #expect(try jsonBody(response)["error"]?["code"] == .string("ERR_UPGRADE_REQUIRED"))
    }

    @Test func connectionWithoutUpgradeTokenIs400() throws {
        let key = randomWebSocketKey()
        let response = try expectRefusal(
            upgradeRequest(
                key: key,
                headers: [
                    "Upgrade: websocket", "Connection: keep-alive", "Sec-WebSocket-Key: \(key)",
                    "Sec-WebSocket-Version: 13",
                ]), status: 400)
        #expect(try jsonBody(response)["error"]?["code"] == .string("ERR_BAD_REQUEST"))
    }

    @Test func connectionTokenListInMixedCaseIsAccepted() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let key = randomWebSocketKey()
        try socket.send(
            upgradeRequest(
                key: key,
                headers: [
                    "upgrade: WebSocket", "connection: keep-alive, Upgrade", "Sec-WebSocket-Key: \(key)",
                    "Sec-WebSocket-Version: 13",
                ]))
        let response = try socket.readResponse()
        #expect(response.status == 101)
        #expect(response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key))
    }

    @Test func version8Is426NamingVersion13() throws {
        let key = randomWebSocketKey()
        let response = try expectRefusal(
            upgradeRequest(
                key: key,
                headers: [
                    "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: \(key)",
                    "Sec-WebSocket-Version: 8",
                ]), status: 426)
        #expect(response.header("Sec-WebSocket-Version") == "13")
    }

    @Test(arguments: [
        "not base64!",
        "dGhlIHNhbXBsZSBub25jZQ",  // unpadded
        "AAAAAAAAAAAAAAAAAAAA",  // base64 of 15 bytes
        "AAAAAAAAAAAAAAAAAAAAAAAAAA==",  // base64 of 19 bytes
    ])
    func keyThatIsNotBase64Of16BytesIs400(key: String) throws {
        try expectRefusal(upgradeRequest(key: key), status: 400)
    }

    @Test func postUpgradeIs405WithAllowGet() throws {
        let response = try expectRefusal(upgradeRequest(key: randomWebSocketKey(), method: "POST"), status: 405)
        #expect(response.header("Allow") == "GET")
    }

    @Test func http10UpgradeIs400() throws {
        try expectRefusal(upgradeRequest(key: randomWebSocketKey(), version: "HTTP/1.0"), status: 400)
    }

    @Test func frameSentWithTheUpgradeRequestIsProcessed() throws {
        let server = try TestServer()
        defer { server.stop() }
        let frame = WebSocketFrameEncoder.frame(.text, payload: Array("early bird".utf8), maskKey: .random())
        let socket = try TestWebSocket.connect(port: server.port, path: "/echo", firstBytes: frame)
        defer { socket.close() }
        #expect(try socket.nextMessage() == .text("early bird"))
    }

    @Test func handshakeSplitByteByByteSucceeds() throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try TestSocket(port: server.port)
        let key = randomWebSocketKey()
        try raw.sendByteByByte(Array(upgradeRequest(key: key).utf8))
        let response = try raw.readResponse()
        #expect(response.status == 101)
        #expect(response.header("Sec-WebSocket-Accept") == WebSocketHandshake.acceptValue(forKey: key))
        let socket = TestWebSocket(socket: raw)
        defer { socket.close() }
        try socket.send(text: "after")
        #expect(try socket.nextMessage() == .text("after"))
    }
}
