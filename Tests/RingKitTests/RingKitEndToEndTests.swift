import Foundation
import RingKit
import SignalClient
import TestSupport
import Testing

/// Two RingClients against the built ringd over real sockets, with
/// RingKit's default transport on Linux (SignalClient's reactor WebSocket).
/// Starting ringd blocks (its readiness line is read synchronously), so the
/// suite runs on threads of its own.
@Suite("EndToEnd: RingKit against ringd", .serialized, .blocking)
struct RingKitEndToEndTests {
    static let authKey = "ringd-dev-auth-key"
    static let testKey = "test-key-0123456789abcdef"
    /// RingKit's tests run in a `swift test` of their own (Makefile, `test`):
    /// the clients' tasks need a cooperative pool that other suites do not hold.
    static let config = #"{"testing": {"enabled": true, "key": "\#(testKey)"}}"#
    /// Reconnects quickly, so the tests do not wait out a long backoff.
    static let quick = ReconnectPolicy(initialDelay: 0.05, maxDelay: 0.5)

    /// Starts the built ringd with the test API on, and runs `body` with it.
    static func withBuiltRingd(_ body: (RingdProcess) async throws -> Void) async throws {
        let ringd = try RingdProcess(config: config)
        defer { ringd.remove() }
        do {
            try await body(ringd)
        } catch {
            Issue.record("ringd's log:\n\(ringd.log)")
            throw error
        }
    }

    static func client(_ uid: String, device: String, url: String) async throws -> (RingClient, EventRecorder) {
        let client = RingClient(url: url, reconnect: quick)
        let events = EventRecorder(client)
        try await client.login(uid: uid, authKey: authKey, deviceId: device)
        #expect(await events.waitFor(.connected(loggedIn: true)))
        return (client, events)
    }

    @Test("two clients ring, accept with the same session id, exchange a signal and end")
    func ringAcceptSignalEnd() async throws {
        try await Self.withBuiltRingd { ringd in
            let (alice, aliceEvents) = try await Self.client("alice", device: "laptop", url: ringd.url)
            let (bob, bobEvents) = try await Self.client("bob", device: "phone", url: ringd.url)
            let placed = try await alice.initiateCall(
                to: "bob", type: .video, metadata: .object([("topic", .string("demo"))]))
            #expect(placed.status == .initiated && placed.clientCallId?.count == 32)
            let rung = try #require(await bobEvents.nextCall())
            #expect(rung.sessionId == placed.sessionId && rung.metadata == .object([("topic", .string("demo"))]))
            _ = try await bob.ringing(rung.sessionId)
            #expect(try await alice.activeCall()?.sessionId == placed.sessionId)

            let accepted = try await bob.acceptCall(rung.sessionId)
            #expect(accepted.sessionId == placed.sessionId && accepted.status == .ongoing)
            var heard = try #require(await aliceEvents.nextCall())
            while heard.status != .ongoing { heard = try #require(await aliceEvents.nextCall()) }
            #expect(heard.sessionId == placed.sessionId)

            let offer = JSONValue.object([("sdp", .string("v=0"))])
            #expect(try await alice.signal(placed.sessionId, payload: offer))
            guard case .signal(let signal)? = await bobEvents.next() else {
                Issue.record("bob expected the signal")
                return
            }
            #expect(signal.sessionId == placed.sessionId && signal.uid == "alice" && signal.payload == offer)

            let ended = try await bob.endCall(placed.sessionId)
            #expect(ended.status == .ended && ended.endedBy == "bob")
            #expect(await aliceEvents.nextCall() == ended)
            #expect(try await alice.callLogs().logs.map(\.call.sessionId) == [placed.sessionId])
            await alice.disconnect()
            await bob.disconnect()
            #expect(alice.state == .disconnected)
        }
    }

    @Test("a client that loses its TCP connection resumes and hears what it missed")
    func resumesAfterALostConnection() async throws {
        try await Self.withBuiltRingd { ringd in
            let proxy = try TCPProxy(forwardingTo: ringd.port)
            defer { proxy.stop() }
            let (alice, _) = try await Self.client("alice", device: "laptop", url: ringd.url)
            let (bob, bobEvents) = try await Self.client(
                "bob", device: "phone", url: "ws://127.0.0.1:\(proxy.port)")
            let placed = try await alice.initiateCall(to: "bob", type: .audio)
            #expect(await bobEvents.nextCall()?.status == .initiated)
            #expect(try await bob.acceptCall(placed.sessionId).status == .ongoing)

            proxy.refusing = true
            proxy.cut()
            #expect(await bobEvents.next() == .connection(.reconnecting))
            let ended = try await alice.endCall(placed.sessionId)
            proxy.refusing = false

            // What bob missed comes first, then the connection is back.
            var missed = try #require(await bobEvents.nextCall())
            while missed.status != .ended { missed = try #require(await bobEvents.nextCall()) }
            #expect(missed == ended)
            #expect(await bobEvents.waitFor(.connected(loggedIn: true)))
            #expect(bob.deviceId == "phone")
            #expect(try await bob.activeCall() == nil)
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("an initiate whose result was lost with the connection returns the call it placed")
    func retriedInitiateReturnsTheSameCall() async throws {
        try await Self.withBuiltRingd { ringd in
            let testAPI = TestAPIClient(
                endpoint: ServerEndpoint(host: "127.0.0.1", port: ringd.port), key: Self.testKey)
            let (alice, aliceEvents) = try await Self.client("alice", device: "laptop", url: ringd.url)
            let (_, bobEvents) = try await Self.client("bob", device: "phone", url: ringd.url)
            try await testAPI.hold(uid: "alice", deviceId: "laptop")
            async let placed = alice.initiateCall(to: "bob", type: .video)
            let rung = try #require(await bobEvents.nextCall())
            let clientCallId = try #require(rung.clientCallId)
            try await testAPI.drop(uid: "alice", deviceId: "laptop")
            #expect(await aliceEvents.next() == .connection(.reconnecting))

            let call = try await placed
            #expect(call.sessionId == rung.sessionId && call.clientCallId == clientCallId)
            #expect(try await alice.callLogs().logs.map(\.call.sessionId) == [rung.sessionId], "one call placed")
            _ = try await alice.cancelCall(call.sessionId)
            #expect(await bobEvents.nextCall()?.status == .cancelled, "bob heard one ring, then the cancel")
        }
    }

    @Test("push tokens, do-not-disturb, a decline with a reason and media tokens, on the real server")
    func theOtherOperations() async throws {
        try await Self.withBuiltRingd { ringd in
            let (alice, _) = try await Self.client("alice", device: "laptop", url: ringd.url)
            let (bob, bobEvents) = try await Self.client("bob", device: "phone", url: ringd.url)
            let token = "fcm-token-bob-0123456789abcdef0123456789"
            try await bob.registerPushToken(try PushRegistration(platform: .fcm, token: token))
            try await bob.setDoNotDisturb(.busy)
            #expect(try await alice.initiateCall(to: "bob", type: .audio).status == .busy)
            try await bob.setDoNotDisturb(.off)
            let placed = try await alice.initiateCall(to: "bob", type: .audio)
            var rung = try #require(await bobEvents.nextCall())
            while rung.sessionId != placed.sessionId { rung = try #require(await bobEvents.nextCall()) }
            let declined = try await bob.rejectCall(placed.sessionId, reason: "in a meeting")
            #expect(declined.status == .rejected && declined.rejectReason == "in a meeting")
            let error = await #expect(throws: RingError.self) { try await alice.mediaToken(for: placed.sessionId) }
            #expect(error?.code == "ERR_MEDIA_NOT_CONFIGURED", "\(String(describing: error))")
            let history = try await bob.callLogs(CallLogFilter(limit: 1))
            #expect(history.logs.map(\.call.sessionId) == [placed.sessionId] && history.next != nil)
        }
    }

    @Test("URLSession's transport cannot open a WebSocket on Linux: Debian's libcurl has none")
    func urlSessionTransportFailsOnLinux() async throws {
        try await Self.withBuiltRingd { ringd in
            let client = RingClient(url: ringd.url, transport: .urlSession, reconnect: .never)
            let error = await #expect(throws: RingError.self) { try await client.connect() }
            #expect(error?.code == "CLIENT_CONNECT_FAILED", "\(String(describing: error))")
            #expect(client.state == .disconnected)
        }
    }
}
