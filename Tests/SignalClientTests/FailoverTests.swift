import SignalProtocol
import TestSupport
import Testing

@testable import SignalClient

#if canImport(Glibc)
    import Glibc
#endif

/// A client given several endpoints (nodes of one cluster): the first
/// connect skips those that cannot take it, reconnects move on through the
/// list and resume there. Two ringd in-process have separate stores, so
/// moving between them shows the move and the resume's outcome; one ringd
/// behind two ``TCPProxy`` endpoints shows a resume that carries the call on.
@Suite("Several endpoints: failing over and moving on", .prompt)
struct FailoverTests {
    /// A loopback endpoint nobody listens on, refusing connections while
    /// `fd` is held; the caller closes it.
    static func deadEndpoint() throws -> (endpoint: ServerEndpoint, fd: Int32) {
        let socket = try boundLoopbackSocket()
        return (ServerEndpoint(host: "127.0.0.1", port: socket.port), socket.fd)
    }

    static func endpoint(of proxy: TCPProxy) -> ServerEndpoint { ServerEndpoint(host: "127.0.0.1", port: proxy.port) }

    /// A server that upgrades, answers the auth frame with the error `code`, and waits for the close.
    static func refusingAuth(_ code: SignalErrorCode, _ message: String) throws -> ScriptedServer {
        try ScriptedServer { peer in
            try peer.upgrade()
            let auth = try peer.nextJSON()
            try peer.sendJSON(
                .object([
                    ("type", .string("result")), ("id", auth["id"] ?? .null), ("ok", .bool(false)),
                    ("error", .object([("code", .string(code.rawValue)), ("message", .string(message))])),
                ]))
            guard case .close = try peer.next() else { throw ScriptedPeer.Failure() }
        }
    }

    /// `uid`/`device` connected to `endpoints` with reconnect on.
    static func connect(_ uid: String, device: String, to endpoints: [ServerEndpoint]) async throws -> SignalClient {
        try await SignalClient.connect(
            to: endpoints, credentials: .authKey(uid: uid, key: RingdFixture.authKey),
            options: ConnectOptions(deviceId: device, reconnect: true))
    }

    /// The endpoint of `client`'s latest connection. The first connect
    /// reports it by no event, and after a reconnect this shows the client
    /// itself moved on, not only the event it sent.
    static func connectedEndpoint(of client: SignalClient) -> ServerEndpoint {
        client.endpoints[client.state.withLock { $0.endpointIndex }]
    }

    /// The resume outcome of `client`'s current connection.
    static func resume(of client: SignalClient) -> ResumeOutcome? {
        client.state.withLock { state in
            guard case .connected(let connection) = state.phase else { return nil }
            return connection.auth.resume
        }
    }

    /// The next two events, which must be `.reconnecting` then `.reconnected`; returns the latter's values.
    static func reconnected(
        _ streams: ClientStreams, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws
        -> (lost: ClientError, activeCall: Call?, endpoint: ServerEndpoint)
    {
        let lost = await streams.events.next(), back = await streams.events.next(timeout: 10)
        guard case .reconnecting(let error)? = lost, case .reconnected(let activeCall, let endpoint)? = back else {
            Issue.record(
                "expected .reconnecting then .reconnected, got \(String(describing: lost)), \(String(describing: back))",
                sourceLocation: sourceLocation)
            throw ExpectationFailure()
        }
        return (error, activeCall, endpoint)
    }

    @Test("the first connect skips an endpoint nobody listens on")
    func skipsDeadEndpoint() async throws {
        try await withRingd { ringd in
            let dead = try Self.deadEndpoint()
            defer { close(dead.fd) }
            let client = try await Self.connect("alice", device: "laptop", to: [dead.endpoint, ringd.endpoint])
            #expect(client.endpoints == [dead.endpoint, ringd.endpoint])
            #expect(Self.connectedEndpoint(of: client) == ringd.endpoint)
            #expect(try await client.getActiveCall() == nil)
            await client.close()
        }
    }

    @Test("ERR_UNAVAILABLE from a node shutting down moves on to the next")
    func unavailableMovesOn() async throws {
        try await withRingd { ringd in
            let draining = try Self.refusingAuth(.unavailable, "the server is shutting down")
            let first = ServerEndpoint(host: "127.0.0.1", port: draining.port)
            let client = try await Self.connect("alice", device: "laptop", to: [first, ringd.endpoint])
            #expect(Self.connectedEndpoint(of: client) == ringd.endpoint)
            await draining.waitUntilDone()
            await client.close()
        }
    }

    @Test("ERR_AUTH_FAILED is thrown at once: the next node, though up, is not tried")
    func refusalIsFinal() async throws {
        try await withRingd { ringd in
            let refusing = try Self.refusingAuth(.authFailed, "unknown auth key")
            let first = ServerEndpoint(host: "127.0.0.1", port: refusing.port)
            let error = try await clientError {
                try await Self.connect("alice", device: "laptop", to: [first, ringd.endpoint])
            }
            #expect(error == ClientError(code: .server(.authFailed), message: "unknown auth key"))
            await refusing.waitUntilDone()
        }
    }

    @Test("when every endpoint fails, the error names each; no endpoint at all is CLIENT_BAD_URL")
    func everyEndpointFails() async throws {
        let first = try Self.deadEndpoint(), second = try Self.deadEndpoint()
        defer { close(first.fd); close(second.fd) }
        let error = try await clientError {
            try await Self.connect("alice", device: "laptop", to: [first.endpoint, second.endpoint])
        }
        #expect(error.code == .connectFailed)
        #expect(error.message.hasPrefix("every server failed: "))
        #expect(
            error.message.contains(first.endpoint.webSocketURL) && error.message.contains(second.endpoint.webSocketURL))
        #expect(try await clientError { try await Self.connect("alice", device: "laptop", to: []) }.code == .badURL)
    }

    @Test("when its server stops, the client moves to the next one and asks it to resume")
    func movesToNextServer() async throws {
        try await withRingd { first in
            try await withRingd { second in
                let alice = try await Self.connect("alice", device: "laptop", to: [first.endpoint, second.endpoint])
                let streams = ClientStreams(alice)
                #expect(Self.connectedEndpoint(of: alice) == first.endpoint)
                // A call puts the device's position (its seq) beyond anything the second store gave out.
                let call = try await alice.initiateCall(to: "bob", type: .audio).call
                #expect(call.seq > 0)

                await first.stop()
                let back = try await Self.reconnected(streams)
                #expect(back.lost.closeCode == WebSocketCloseCode.goingAway.rawValue)
                #expect(back.endpoint == second.endpoint && Self.connectedEndpoint(of: alice) == second.endpoint)
                // The second store never gave out the first one's positions: no resume, and no call there.
                #expect(Self.resume(of: alice) == ResumeOutcome(resumed: false, calls: []))
                // Its positions are of another epoch: the client starts over from its auth's.
                let kept = alice.state.withLock { state -> (Int64, String?, Authentication?) in
                    guard case .connected(let connection) = state.phase else {
                        return (state.lastSeq, state.epoch, nil)
                    }
                    return (state.lastSeq, state.epoch, connection.auth)
                }
                #expect(kept.1 != nil && kept.1 == kept.2?.epoch && kept.0 == kept.2?.seq && kept.0 < call.seq)
                #expect(back.activeCall == nil)
                #expect(alice.deviceId == "laptop")
                #expect(try await alice.getActiveCall() == nil)
                await alice.close()
            }
        }
    }

    @Test("reconnects cycle through the endpoints and resume the ongoing call on each")
    func cyclesThroughEndpoints() async throws {
        try await withRingd { ringd in
            let one = try TCPProxy(forwardingTo: ringd.endpoint.port),
                two = try TCPProxy(forwardingTo: ringd.endpoint.port)
            defer { one.stop(); two.stop() }
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await Self.connect(
                "bob", device: "phone", to: [Self.endpoint(of: one), Self.endpoint(of: two)])
            let bobStreams = ClientStreams(bob)
            let call = try await alice.initiateCall(to: "bob", type: .video).call
            _ = try await bobStreams.nextCall()
            let accepted = try await bob.acceptCall(call.sessionId)

            // The endpoint that dropped the connection still takes new ones:
            // the client moves on all the same, and past the end back to the first.
            for (lost, next) in [(one, two), (two, one)] {
                lost.cut()
                let back = try await Self.reconnected(bobStreams)
                #expect(back.endpoint == Self.endpoint(of: next))
                #expect(Self.connectedEndpoint(of: bob) == Self.endpoint(of: next))
                #expect(back.activeCall == accepted)
                #expect(Self.resume(of: bob) == ResumeOutcome(resumed: true, calls: []))
            }
            let ended = try await alice.endCall(call.sessionId)
            #expect(try await bobStreams.nextCall() == ended)
            await bob.close()
            await alice.close()
        }
    }

    @Test("what changed while every endpoint was away arrives from the one that comes back, before .reconnected")
    func resumesOnTheEndpointThatComesBack() async throws {
        try await withRingd { ringd in
            let one = try TCPProxy(forwardingTo: ringd.endpoint.port),
                two = try TCPProxy(forwardingTo: ringd.endpoint.port)
            defer { one.stop(); two.stop() }
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await Self.connect(
                "bob", device: "phone", to: [Self.endpoint(of: one), Self.endpoint(of: two)])
            let bobStreams = ClientStreams(bob)
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            _ = try await bobStreams.nextCall()

            one.refusing = true
            two.refusing = true
            one.cut()
            guard case .reconnecting? = await bobStreams.events.next() else {
                Issue.record("expected .reconnecting")
                return
            }
            let cancelled = try await alice.cancelCall(call.sessionId)
            two.refusing = false
            #expect(try await bobStreams.nextCall(timeout: 10) == cancelled)
            guard case .reconnected(nil, let endpoint)? = await bobStreams.events.next() else {
                Issue.record("expected .reconnected without an active call")
                return
            }
            #expect(endpoint == Self.endpoint(of: two))
            #expect(Self.resume(of: bob)?.resumed == true)
            await bob.close()
            await alice.close()
        }
    }
}
