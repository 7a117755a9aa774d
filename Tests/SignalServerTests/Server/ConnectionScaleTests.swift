import SignalProtocol
import SignalServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Raises this process's soft descriptor limit to its hard limit; returns the
/// soft limit in force afterwards.
@discardableResult
func raiseDescriptorLimit() -> UInt {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return UInt(limit.rlim_cur)
}

/// Many simultaneous connections, and the connection limit.
@Suite(.blocking) struct ConnectionScaleTests {
    @Test func thousandWebSocketsAreCountedAndReleased() throws {
        let count = 1000
        // Each connection costs two descriptors here (client and server end).
        let limit = raiseDescriptorLimit()
        try #require(limit >= UInt(2 * count + 200), "RLIMIT_NOFILE is only \(limit)")
        // All from 127.0.0.1.
        let server = try TestServer(ringd: testConfig { $0.connectionsPerAddress = count + 10 })
        defer { server.stop() }
        var sockets: [TestWebSocket] = []
        defer { for socket in sockets { socket.close() } }
        for _ in 0 ..< count {
            sockets.append(try TestWebSocket.connect(port: server.port, path: "/v1/ws"))
        }
        #expect(server.server.stats.openConnections == count)
        let reported = try #require(try healthConnections(port: server.port))
        #expect(reported >= Int64(count))
        // Every connection is still served.
        for socket in sockets.prefix(10) + sockets.suffix(10) {
            try socket.send(.ping, [1])
            #expect(try socket.nextEvent() == .pong([1]))
        }
        for socket in sockets { socket.close() }
        sockets = []
        #expect(
            waitUntil(timeout: 10) { server.server.stats.openConnections == 0 },
            "\(server.server.stats.openConnections) connections still counted")
        #expect(try healthConnections(port: server.port) == 1)
    }

    @Test func connectionsOverMaxConnectionsAreRefusedWith503() throws {
        let server = try TestServer(ringd: testConfig { $0.maxConnections = 2 })
        defer { server.stop() }
        let first = try TestSocket(port: server.port)
        defer { first.close() }
        let second = try TestSocket(port: server.port)
        defer { second.close() }
        try expectRefusedUntilOneCloses(server, open: 2, release: first)
    }
}

/// With `open` connections counted, one more is refused with 503
/// `ERR_UNAVAILABLE` (and `message`, when given), closed and not counted;
/// once `release` closes, a new connection is admitted.
func expectRefusedUntilOneCloses(
    _ server: TestServer, open: Int, message: String? = nil, release: TestSocket,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == open }, sourceLocation: sourceLocation)
    let refused = try TestSocket(port: server.port)
    defer { refused.close() }
    let response = try refused.readResponse()
    #expect(response.status == 503, sourceLocation: sourceLocation)
    let error = try jsonBody(response)["error"]
    #expect(error?["code"] == .string("ERR_UNAVAILABLE"), sourceLocation: sourceLocation)
    if let message { #expect(error?["message"] == .string(message), sourceLocation: sourceLocation) }
    #expect(refused.closesWithin(5), sourceLocation: sourceLocation)
    #expect(
        server.server.stats.openConnections == open, "a refused connection is not counted",
        sourceLocation: sourceLocation)
    release.close()
    #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == open - 1 }, sourceLocation: sourceLocation)
    let next = try TestSocket(port: server.port)
    defer { next.close() }
    #expect(try next.get("/healthz").status == 200, sourceLocation: sourceLocation)
}

/// `limits.connectionsPerAddress`: every test client comes from 127.0.0.1.
@Suite(.blocking) struct ConnectionsPerAddressTests {
    @Test func connectionsOverThePerAddressLimitAreRefusedWith503() throws {
        let server = try TestServer(ringd: testConfig { $0.connectionsPerAddress = 2 })
        defer { server.stop() }
        let first = try TestSocket(port: server.port)
        defer { first.close() }
        let second = try TestSocket(port: server.port)
        defer { second.close() }
        try expectRefusedUntilOneCloses(
            server, open: 2, message: "too many connections from this address", release: first)
    }
}

/// `limits.maxUnauthenticatedConnections`: a connection counts until its
/// signaling session authenticates.
@Suite(.blocking) struct UnauthenticatedConnectionTests {
    @Test func connectionsOverTheUnauthenticatedLimitAreRefusedWith503() throws {
        let server = try TestServer(ringd: testConfig { $0.maxUnauthenticatedConnections = 1 })
        defer { server.stop() }
        // Authenticated, so no longer counted.
        let device = try SignalingIntegration.Device.connect(port: server.port)
        defer { device.ws.close() }
        #expect(try device.auth(uid: "alice", deviceId: "phone").ok)
        let idle = try TestSocket(port: server.port)
        defer { idle.close() }
        try expectRefusedUntilOneCloses(
            server, open: 2, message: "too many connections waiting to authenticate",
            release: idle)
    }
}
