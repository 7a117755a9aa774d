import SignalClient
import SignalProtocol
import TestSupport
import Testing

@Suite("Servers that misbehave", .prompt)
struct MisbehavingServerTests {
    @Test(
        "an unanswered request times out with CLIENT_TIMEOUT; its late result is ignored and the connection stays usable"
    )
    func requestTimeout() async throws {
        let server = try ScriptedServer { peer in
            try peer.acceptAuth()
            let first = try peer.nextJSON()
            let second = try peer.nextJSON()
            try peer.sendJSON(
                .object([
                    ("type", .string("result")), ("id", first["id"] ?? .null), ("ok", .bool(true)),
                    ("data", .object([("call", .null)])),
                ]))
            try peer.sendJSON(
                .object([
                    ("type", .string("result")), ("id", second["id"] ?? .null), ("ok", .bool(false)),
                    ("error", .object([("code", .string("ERR_INTERNAL")), ("message", .string("x"))])),
                ]))
            guard case .close = try peer.next() else { throw ScriptedPeer.Failure() }
        }
        let client = try await SignalClient.connect(
            to: ServerEndpoint(host: "127.0.0.1", port: server.port), credentials: .authKey(uid: "alice", key: "k"),
            options: ConnectOptions(requestTimeout: 0.3))
        #expect(client.uid == "alice" && client.deviceId == "laptop")
        let timedOut = try await clientError { try await client.getActiveCall() }
        #expect(timedOut.code == .timeout)
        #expect(try await clientError { try await client.getActiveCall() }.code == .server(.internalError))
        await client.close()
        await server.waitUntilDone()
    }

    @Test("no auth result in time gives CLIENT_TIMEOUT")
    func authTimeout() async throws {
        let server = try ScriptedServer { peer in
            try peer.upgrade()
            _ = try peer.nextJSON()
            guard case .close = try peer.next() else { throw ScriptedPeer.Failure() }
        }
        let error = try await clientError {
            try await SignalClient.connect(
                to: ServerEndpoint(host: "127.0.0.1", port: server.port),
                credentials: .token("t"), options: ConnectOptions(requestTimeout: 0.3))
        }
        #expect(error.code == .timeout)
        await server.waitUntilDone()
    }

    @Test("a frame that breaks RFC 6455 fails the connection with 1002 and CLIENT_PROTOCOL")
    func brokenFrame() async throws {
        let closeCode = ResultBox<WebSocketCloseCode>()
        let server = try ScriptedServer { peer in
            try peer.acceptAuth()
            try peer.send([0x83, 0x00])
            guard case .close(let code?, _) = try peer.next() else { throw ScriptedPeer.Failure() }
            closeCode.set(code)
        }
        let client = try await SignalClient.connect(
            to: ServerEndpoint(host: "127.0.0.1", port: server.port),
            credentials: .authKey(uid: "alice", key: "k"))
        let streams = ClientStreams(client)
        let error = try await streams.nextDisconnect()
        #expect(error.code == .protocolViolation)
        await server.waitUntilDone()
        #expect(closeCode.value == .protocolError)
    }

    @Test("pings are answered, unknown frames and binary messages are ignored, events arrive in order")
    func pingsAndNoise() async throws {
        let server = try ScriptedServer { peer in
            try peer.acceptAuth()
            try peer.send(WebSocketFrameEncoder.frame(.ping, payload: [1, 2, 3]))
            guard case .pong([1, 2, 3]) = try peer.next() else { throw ScriptedPeer.Failure() }
            try peer.sendJSON(.object([("type", .string("presence")), ("uid", .string("bob"))]))
            try peer.send(WebSocketFrameEncoder.frame(.binary, payload: [9]))
            for status in ["initiated", "ongoing"] {
                try peer.sendJSON(.object([("type", .string("call")), ("call", Self.call(status: status))]))
            }
            guard case .close = try peer.next() else { throw ScriptedPeer.Failure() }
        }
        let client = try await SignalClient.connect(
            to: ServerEndpoint(host: "127.0.0.1", port: server.port),
            credentials: .authKey(uid: "bob", key: "k"))
        let streams = ClientStreams(client)
        #expect(try await streams.nextCall().status == .initiated)
        #expect(try await streams.nextCall().status == .ongoing)
        await client.close()
        await server.waitUntilDone()
    }

    @Test("a silent server is pinged; answered, the connection stays; unanswered, it is lost")
    func keepAlive() async throws {
        let pings = ResultBox<Int>()
        let server = try ScriptedServer { peer in
            try peer.acceptAuth()
            guard case .ping = try peer.next() else { throw ScriptedPeer.Failure() }
            try peer.send(WebSocketFrameEncoder.frame(.pong, payload: []))
            guard case .ping = try peer.next() else { throw ScriptedPeer.Failure() }
            pings.set(2)
            _ = try? peer.next()
        }
        var options = ConnectOptions()
        // The scripted server must answer the first ping within the
        // interval: room for a loaded machine, which once took over 0.2 s.
        options.keepAliveInterval = 0.5
        let client = try await SignalClient.connect(
            to: ServerEndpoint(host: "127.0.0.1", port: server.port),
            credentials: .authKey(uid: "alice", key: "k"), options: options)
        let streams = ClientStreams(client)
        let error = try await streams.nextDisconnect()
        #expect(error.code == .closed)
        #expect(error.message.contains("did not answer a ping"))
        await server.waitUntilDone()
        #expect(pings.value == 2)
    }

    private static func call(status: String) -> JSONValue {
        .object([
            ("sessionId", .string("s1")), ("callType", .string("audio")), ("receiverType", .string("user")),
            ("status", .string(status)), ("initiator", .object([("uid", .string("alice"))])),
            ("receiver", .object([("uid", .string("bob"))])), ("initiatedAt", .integer(1)),
            ("acceptedAt", .null), ("endedAt", .null), ("durationMs", .null), ("acceptedBy", .null),
            ("endedBy", .null), ("endReason", .null), ("timeout", .integer(45)), ("metadata", .null),
        ])
    }
}
