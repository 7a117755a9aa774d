import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// HTTP/1.1 over real sockets against ringd's router.
@Suite(.blocking) struct HTTPServerTests {
    @Test func healthzReportsStatusVersionUptimeAndConnections() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let response = try socket.get("/healthz")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Connection") == nil)
        let body = try jsonBody(response)
        #expect(body["status"] == .string("ok"))
        #expect(body["version"] == .string(RingdVersion.current))
        let uptime = try #require(body["uptimeSeconds"]?.integerValue)
        #expect(uptime >= 0 && uptime < 60)
        let connections = try #require(body["connections"]?.integerValue)
        #expect(connections >= 1)
    }

    @Test func keepAliveServesTwoRequestsOnOneConnection() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        #expect(try socket.get("/healthz").status == 200)
        let second = try socket.get("/healthz")
        #expect(second.status == 200)
        #expect(try jsonBody(second)["status"] == .string("ok"))
    }

    @Test func connectionCloseIsHonoured() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let response = try socket.get("/healthz", extraHeaders: "Connection: close\r\n")
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(try socket.readUntilEOF() == [])
    }

    @Test func pipelinedRequestsInOneWriteAreAnsweredInOrder() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        try socket.send(
            "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /missing HTTP/1.1\r\nHost: a\r\n\r\n"
                + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try socket.readResponse().status == 200)
        #expect(try socket.readResponse().status == 404)
        #expect(try socket.readResponse().status == 200)
        #expect(socket.staysQuiet(for: 0.05))
    }

    @Test func unknownPathIs404WithErrorCode() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let response = try socket.get("/nothing/here?x=1")
        #expect(response.status == 404)
        let body = try jsonBody(response)
        #expect(body["error"]?["code"] == .string("ERR_NOT_FOUND"))
        #expect(body["error"]?["message"]?.stringValue?.contains("/nothing/here") == true)
        // A 404 keeps the connection usable.
        #expect(try socket.get("/healthz").status == 200)
    }

    @Test func postToHealthzIs405WithAllow() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        try socket.send("POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}")
        let response = try socket.readResponse()
        #expect(response.status == 405)
        #expect(response.header("Allow") == "GET")
        #expect(try jsonBody(response)["error"]?["code"] == .string("ERR_METHOD_NOT_ALLOWED"))
        #expect(try socket.get("/healthz").status == 200)
    }

    /// Sends `request` and expects an error response with `status` and
    /// `code`, marked `Connection: close`, followed by the server closing TCP.
    private func expectRefusal(
        _ request: String, status: Int, code: String,
        config: ServerConfig = testConfig()
    ) throws {
        let server = try TestServer(ringd: config)
        defer { server.stop() }
        let response = try expectClosingRefusal(request, status: status, port: server.port)
        #expect(try jsonBody(response)["error"]?["code"] == .string(code))
    }

    @Test func malformedRequestLineIs400ThenClosed() throws {
        try expectRefusal("GARBAGE\r\n\r\n", status: 400, code: "ERR_BAD_REQUEST")
    }

    @Test func headerBlockOver8KiBIs431() throws {
        // The request is never finished: 431 must come from the size alone.
        let request = "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Padding: " + String(repeating: "p", count: 9000)
        try expectRefusal(request, status: 431, code: "ERR_HEADERS_TOO_LARGE")
    }

    @Test func headerBlockJustUnder8KiBIsAccepted() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let prefix = "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Padding: "
        let padding = String(repeating: "p", count: 8000 - prefix.utf8.count)
        try socket.send(prefix + padding + "\r\n\r\n")
        #expect(try socket.readResponse().status == 200)
    }

    @Test func declaredBodyOverLimitIs413BeforeTheBodyIsSent() throws {
        let config = testConfig { $0.maxRequestBodyBytes = 1024 }
        // Only the head is sent: the answer must not wait for the body.
        try expectRefusal(
            "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 1025\r\n\r\n",
            status: 413, code: "ERR_BODY_TOO_LARGE", config: config)
    }

    @Test func bodyAtTheLimitIsRead() throws {
        let server = try TestServer(ringd: testConfig { $0.maxRequestBodyBytes = 1024 })
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        let body = String(repeating: "b", count: 1024)
        // The body is consumed, so the next pipelined request parses cleanly.
        try socket.send(
            "GET /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 1024\r\n\r\n\(body)"
                + "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(try socket.readResponse().status == 200)
        #expect(try socket.readResponse().status == 200)
    }

    @Test func chunkedTransferEncodingIs501() throws {
        try expectRefusal(
            "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            status: 501, code: "ERR_NOT_IMPLEMENTED")
    }

    @Test func http11WithoutHostIs400() throws {
        try expectRefusal("GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n", status: 400, code: "ERR_BAD_REQUEST")
    }

    @Test func http10WithoutHostIsServedAndClosed() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        try socket.send("GET /healthz HTTP/1.0\r\n\r\n")
        let response = try socket.readResponse()
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(try socket.readUntilEOF() == [])
    }

    @Test func http2VersionIs505() throws {
        try expectRefusal("GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n", status: 505, code: "ERR_HTTP_VERSION")
    }

    @Test func requestSentByteByByteIsServed() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        try socket.sendByteByByte(Array("\r\nGET /healthz HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n".utf8))
        let response = try socket.readResponse()
        #expect(response.status == 200)
        #expect(try jsonBody(response)["status"] == .string("ok"))
    }

    @Test func stalledPartialRequestGets408AfterHandshakeTimeout() throws {
        let server = try TestServer(ringd: testConfig { $0.handshakeTimeout = 0.3 })
        defer { server.stop() }
        let start = monotonicSeconds()
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        try socket.send("GET /healthz HTTP/1.1\r\nHo")
        let response = try socket.readResponse(timeout: 3)
        let elapsed = monotonicSeconds() - start
        #expect(response.status == 408)
        #expect(response.header("Connection") == "close")
        #expect(try jsonBody(response)["error"]?["code"] == .string("ERR_REQUEST_TIMEOUT"))
        #expect(try socket.readUntilEOF() == [])
        #expect(elapsed >= 0.29, "408 after \(elapsed)s, before the 0.3s timeout")
        #expect(elapsed < 2.5, "408 only after \(elapsed)s")
    }

    @Test func stalledBodyGets408AfterHandshakeTimeout() throws {
        let server = try TestServer(ringd: testConfig { $0.handshakeTimeout = 0.3 })
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        // The head is complete; the announced body never comes.
        try socket.send("POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n")
        let response = try socket.readResponse(timeout: 3)
        #expect(response.status == 408)
        #expect(try socket.readUntilEOF() == [])
    }

    @Test func idleKeepAliveConnectionIsClosedAfterHandshakeTimeout() throws {
        let server = try TestServer(ringd: testConfig { $0.handshakeTimeout = 0.3 })
        defer { server.stop() }
        let socket = try TestSocket(port: server.port)
        defer { socket.close() }
        #expect(try socket.get("/healthz").status == 200)
        let start = monotonicSeconds()
        #expect(try socket.readUntilEOF(timeout: 3) == [], "an idle connection is closed without a response")
        #expect(monotonicSeconds() - start >= 0.25)
    }

    @Test func serverStatsCountOpenConnections() throws {
        let server = try TestServer(ringd: testConfig())
        defer { server.stop() }
        let sockets = try (0 ..< 3).map { _ in try TestSocket(port: server.port) }
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 3 })
        #expect(try healthConnections(port: server.port) == 4)
        for socket in sockets { socket.close() }
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 0 })
    }
}
