import SignalClient
import SignalCompression
import SignalProtocol
import TestSupport
import Testing

@Suite("permessage-deflate in the client", .prompt)
struct CompressionTests {
    static let options = ConnectOptions(compression: true)
    static let credentials = Credentials.authKey(uid: "alice", key: "k")

    private func connect(_ server: ScriptedServer, options: ConnectOptions = options) async throws -> SignalClient {
        try await SignalClient.connect(
            to: ServerEndpoint(host: "127.0.0.1", port: server.port),
            credentials: Self.credentials, options: options)
    }

    @Test("the offer is sent only when asked for")
    func offer() async throws {
        for compression in [true, false] {
            let offer = ResultBox<String>()
            let server = try ScriptedServer { peer in
                try peer.acceptAuth()
                offer.set(peer.offer ?? "none")
                guard case .close = try peer.next() else { throw ScriptedPeer.Failure() }
            }
            let client = try await connect(server, options: ConnectOptions(compression: compression))
            await client.close()
            await server.waitUntilDone()
            #expect(offer.value == (compression ? "permessage-deflate; client_max_window_bits" : "none"))
        }
    }

    @Test(
        "an answer that breaks RFC 7692 fails the handshake",
        arguments: [
            "permessage-deflate; server_max_window_bits=16", "permessage-deflate; client_max_window_bits=8",
            "permessage-deflate; unknown", "permessage-deflate; client_no_context_takeover; client_no_context_takeover",
            "x-other", "permessage-deflate, permessage-deflate",
        ])
    func badAnswers(_ answer: String) async throws {
        let server = try ScriptedServer { peer in
            try peer.upgrade(extensions: answer)
        }
        let error = try await clientError { try await connect(server) }
        #expect(error.code == .handshakeFailed)
        #expect(error.message.contains("Sec-WebSocket-Extensions"), "\(error.message)")
        await server.waitUntilDone()
    }

    @Test("an answer without having offered fails the handshake")
    func answerWithoutOffer() async throws {
        let server = try ScriptedServer { peer in
            try peer.upgrade(extensions: "permessage-deflate")
        }
        let error = try await clientError { try await connect(server, options: ConnectOptions()) }
        #expect(error.code == .handshakeFailed)
        await server.waitUntilDone()
    }

    @Test("compressed messages flow both ways once agreed")
    func compressedBothWays() async throws {
        let received = ResultBox<JSONValue>()
        let server = try ScriptedServer { peer in
            try peer.upgrade(extensions: "permessage-deflate; server_no_context_takeover", inflate: true)
            try peer.answerAuth()
            let request = try peer.nextJSON()
            received.set(request)
            var compressor = MessageCompressor(
                PerMessageDeflateDirection(windowBits: 15, contextTakeover: false), cache: nil)
            let result = JSONValue.object([
                ("type", .string("result")), ("id", request["id"] ?? .null), ("ok", .bool(true)),
                ("data", .object([("call", .null)])),
            ])
            try peer.send(
                WebSocketFrameEncoder.frame(
                    .text, payload: try compressor.compress(Array(result.serialized.utf8)),
                    reservedBits: WebSocketFrameHeader.rsv1))
            guard case .close = try peer.next() else { throw ScriptedPeer.Failure() }
        }
        let client = try await connect(server)
        let metadata = JSONValue.string(String(repeating: "standup ", count: 80))
        let error = try await clientError {
            try await client.initiateCall(
                to: "bob", type: .audio, timeout: 30, metadata: .object([("topic", metadata)]))
        }
        // The scripted result is not a call: the request was read (inflated) and answered (compressed).
        #expect(error.code == .protocolViolation)
        #expect(received.value?["metadata"]?["topic"] == metadata)
        await client.close()
        await server.waitUntilDone()
    }

    @Test("a signaling flow through a real ringd with compression on")
    func realServer() async throws {
        try await withRingd({
            $0.compression = true; $0.compressionThresholdBytes = 0
        }) { ringd in
            let endpoint = ringd.endpoint
            let alice = try await SignalClient.connect(
                to: endpoint, credentials: .authKey(uid: "alice", key: RingdFixture.authKey),
                options: ConnectOptions(deviceId: "laptop", compression: true))
            let bob = try await SignalClient.connect(
                to: endpoint, credentials: .authKey(uid: "bob", key: RingdFixture.authKey),
                options: ConnectOptions(deviceId: "phone", compression: true))
            #expect(alice.usesCompression && bob.usesCompression)
            let bobStreams = ClientStreams(bob)
            let topic = JSONValue.string(String(repeating: "quarterly planning ", count: 40))
            let (call, _) = try await alice.initiateCall(
                to: "bob", type: .video, timeout: 30,
                metadata: .object([("topic", topic)]))
            let rung = try await bobStreams.nextCall()
            #expect(rung.sessionId == call.sessionId)
            #expect(rung.metadata == .object([("topic", topic)]))
            #expect(try await bob.acceptCall(call.sessionId).status == .ongoing)
            #expect(try await alice.endCall(call.sessionId).status == .ended)
            #expect(try await bobStreams.nextCall().sessionId == call.sessionId)
            await alice.close()
            await bob.close()
        }
    }
}
