import SignalProtocol
import SignalServer
import Testing
import TestSupport
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
        #expect(waitUntil(timeout: 10) { server.server.stats.openConnections == 0 },
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
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 2 })
        let third = try TestSocket(port: server.port)
        defer { third.close() }
        let refused = try third.readResponse()
        #expect(refused.status == 503)
        #expect(try jsonBody(refused)["error"]?["code"] == .string("ERR_UNAVAILABLE"))
        #expect(third.closesWithin(5))
        // Once one closes, a new connection is admitted again.
        first.close()
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 1 })
        let fourth = try TestSocket(port: server.port)
        defer { fourth.close() }
        #expect(try fourth.get("/healthz").status == 200)
    }
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
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 2 })
        let third = try TestSocket(port: server.port)
        defer { third.close() }
        let refused = try third.readResponse()
        #expect(refused.status == 503)
        let error = try jsonBody(refused)["error"]
        #expect(error?["code"] == .string("ERR_UNAVAILABLE"))
        #expect(error?["message"] == .string("too many connections from this address"))
        #expect(third.closesWithin(5))
        #expect(server.server.stats.openConnections == 2, "a refused connection is not counted")
        // Once one closes, the address may connect again.
        first.close()
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 1 })
        let fourth = try TestSocket(port: server.port)
        defer { fourth.close() }
        #expect(try fourth.get("/healthz").status == 200)
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
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 2 })
        let refused = try TestSocket(port: server.port)
        defer { refused.close() }
        let response = try refused.readResponse()
        #expect(response.status == 503)
        #expect(try jsonBody(response)["error"]?["message"] == .string("too many connections waiting to authenticate"))
        #expect(refused.closesWithin(5))
        // Once the idle one closes, another may connect.
        idle.close()
        #expect(waitUntil(timeout: 5) { server.server.stats.openConnections == 1 })
        let next = try TestSocket(port: server.port)
        defer { next.close() }
        #expect(try next.get("/healthz").status == 200)
    }
}
