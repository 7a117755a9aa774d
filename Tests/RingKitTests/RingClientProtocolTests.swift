import RingKit
import TestSupport
import Testing

/// RingClient's protocol logic over a scripted in-memory transport: the
/// test plays the server, so every frame and every close is the test's choice.
@Suite("RingClient over a scripted transport", .prompt)
struct RingClientProtocolTests {
    static let fast = ReconnectPolicy(initialDelay: 0.001, maxDelay: 0.01)
    static let bobCall = Call(
        sessionId: "s-1", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
        initiatedAt: 1_000, timeoutMs: 30_000, seq: 9)

    /// A client logged in as bob on device phone, at `seq`, and its connection.
    static func loggedIn(
        _ transport: ScriptedTransport, policy: ReconnectPolicy = fast, seq: Int64 = 5, epoch: String? = nil
    ) async throws -> (RingClient, ScriptedConnection) {
        let client = RingClient(
            url: "ws://ringd.test:8787", transport: RingTransportFactory(transport), reconnect: policy)
        async let login: Void = client.login(uid: "bob", authKey: "key", deviceId: "phone")
        let connection = try #require(await transport.opened.next())
        let auth = try #require(await connection.nextRequest())
        #expect(auth.request == .auth(.authKey(uid: "bob", key: "key"), deviceId: "phone"))
        connection.reply(
            auth.id,
            .authenticated(Authentication(uid: "bob", deviceId: "phone", activeCall: nil, seq: seq, epoch: epoch)))
        try await login
        #expect(client.state == .connected(loggedIn: true))
        #expect(client.uid == "bob" && client.deviceId == "phone")
        return (client, connection)
    }

    @Test("results go to the request whose id they echo, in whatever order they come")
    func resultsMatchRequestsById() async throws {
        let transport = ScriptedTransport()
        let (client, connection) = try await Self.loggedIn(transport)
        let active = Task { try await client.activeCall() }
        async let logs = client.callLogs()
        let first = try #require(await connection.nextRequest())
        let second = try #require(await connection.nextRequest())
        #expect(first.id != second.id)
        let byType = Dictionary(uniqueKeysWithValues: [first, second].map { ($0.request.type, $0.id) })
        connection.reply(try #require(byType[.getCallLogs]), .callLogs(CallLogPage(logs: [], next: "page-2")))
        connection.reply(try #require(byType[.getActiveCall]), .activeCall(Self.bobCall))
        #expect(try await active.value == Self.bobCall)
        #expect(try await logs.next == "page-2")
        #expect(client.url == "ws://ringd.test:8787/v1/ws")
    }

    @Test("frames it does not know are skipped; a malformed result fails its request")
    func unknownFramesAreSkipped() async throws {
        let transport = ScriptedTransport()
        let (client, connection) = try await Self.loggedIn(transport)
        let events = EventRecorder(client)
        connection.deliver(text: #"{"type":"presence","uid":"carol"}"#)
        connection.deliver(text: "not JSON")
        connection.deliver(text: #"{"type":"result","id":"999","ok":true,"data":{}}"#)
        connection.deliver(.call(Self.bobCall))
        #expect(await events.nextCall() == Self.bobCall)

        let ended = Task { try await client.endCall("s-1") }
        let request = try #require(await connection.nextRequest())
        connection.deliver(text: #"{"type":"result","id":"\#(request.id)","ok":true,"data":{"call":{}}}"#)
        let error = await #expect(throws: RingError.self) { try await ended.value }
        #expect(error?.code == "CLIENT_PROTOCOL")

        let accepted = Task { try await client.acceptCall("s-1") }
        let accept = try #require(await connection.nextRequest())
        connection.deliver(.result(id: accept.id, .failure(SignalError(.sessionNotFound, "no such call"))))
        let refused = await #expect(throws: RingError.self) { try await accepted.value }
        #expect(refused?.code == "ERR_CALL_SESSION_NOT_FOUND" && refused?.message == "no such call")
    }

    @Test(
        "a device the server refused (4001) or replaced (4003) is not reconnected", arguments: [4001, 4003] as [UInt16])
    func refusedOrReplacedStaysDisconnected(code: UInt16) async throws {
        let transport = ScriptedTransport()
        let (client, connection) = try await Self.loggedIn(transport)
        let active = Task { try await client.activeCall() }
        _ = try #require(await connection.nextRequest())
        connection.drop(code: code)
        let error = await #expect(throws: RingError.self) { try await active.value }
        #expect(error?.code == "CLIENT_CLOSED" && error?.closeCode == code)
        #expect(client.state == .disconnected)
        #expect(client.disconnectReason?.closeCode == code)
        #expect(client.uid == nil)
        #expect(transport.openAttempts == 1, "no reconnect was started")
    }

    @Test("a lost connection is reopened, resumes after the largest seq seen and resends the initiate")
    func resumesAndResendsTheInitiate() async throws {
        let transport = ScriptedTransport()
        let (client, first) = try await Self.loggedIn(transport, seq: 5)
        transport.failures.withLock { $0 = [RingError(code: "CLIENT_CONNECT_FAILED", message: "refused")] }
        let events = EventRecorder(client)
        first.deliver(.call(Self.bobCall))
        #expect(await events.nextCall()?.seq == 9)

        async let placed = client.initiateCall(to: "carol", type: .video)
        let active = Task { try await client.activeCall() }
        var initiate: ClientFrame?
        for _ in 0 ..< 2 {
            let frame = try #require(await first.nextRequest())
            if frame.request.type == .initiateCall { initiate = frame }
        }
        guard case .initiateCall(_, _, _, _, let clientCallId?)? = initiate?.request else {
            Issue.record("no initiate with a clientCallId: \(String(describing: initiate))")
            return
        }
        first.drop(code: nil)
        let lost = await #expect(throws: RingError.self) { try await active.value }
        #expect(lost?.code == "CLIENT_CLOSED")
        #expect(await events.next() == .connection(.reconnecting))

        let second = try #require(await transport.opened.next())
        #expect(transport.openAttempts == 3, "one failed open, then this one")
        let auth = try #require(await second.nextRequest())
        #expect(
            auth.request
                == .auth(
                    .authKey(uid: "bob", key: "key"), deviceId: "phone",
                    resume: ResumePoint(deviceId: "phone", afterSeq: 9)))
        var missed = Self.bobCall
        missed.status = .cancelled
        missed.seq = 12
        second.reply(
            auth.id,
            .authenticated(
                Authentication(
                    uid: "bob", deviceId: "phone", activeCall: nil, seq: 12,
                    resume: ResumeOutcome(resumed: true, calls: [missed]))))
        #expect(await events.next() == .call(missed))
        #expect(await events.next() == .connection(.connected(loggedIn: true)))

        let resent = try #require(await second.nextRequest())
        guard case .initiateCall(let receiver, _, _, _, let again?) = resent.request else {
            Issue.record("expected the initiate again, got \(resent)")
            return
        }
        #expect(receiver == "carol" && again == clientCallId)
        let call = Call(
            sessionId: "s-2", callType: .video, status: .initiated, initiator: "bob", receiver: "carol",
            initiatedAt: 2_000, timeoutMs: 30_000, seq: 13, clientCallId: clientCallId)
        second.reply(resent.id, .initiated(call, ringing: 1, replayed: true))
        #expect(try await placed == call)
    }

    @Test("a reconnect names the epoch of its position; an auth of another epoch starts the positions over")
    func resumesWithinAnEpoch() async throws {
        let transport = ScriptedTransport()
        let (client, first) = try await Self.loggedIn(transport, seq: 50, epoch: "e1")
        let events = EventRecorder(client)
        first.drop(code: nil)
        #expect(await events.waitFor(.reconnecting))
        let second = try #require(await transport.opened.next())
        let auth = try #require(await second.nextRequest())
        #expect(
            auth.request
                == .auth(
                    .authKey(uid: "bob", key: "key"), deviceId: "phone",
                    resume: ResumePoint(deviceId: "phone", afterSeq: 50, epoch: "e1")))
        second.reply(
            auth.id,
            .authenticated(
                Authentication(
                    uid: "bob", deviceId: "phone", activeCall: nil, seq: 3, epoch: "e2",
                    resume: ResumeOutcome(resumed: false, calls: []))))
        #expect(await events.waitFor(.connected(loggedIn: true)))

        second.drop(code: nil)
        #expect(await events.waitFor(.reconnecting))
        let third = try #require(await transport.opened.next())
        let again = try #require(await third.nextRequest())
        #expect(
            again.request
                == .auth(
                    .authKey(uid: "bob", key: "key"), deviceId: "phone",
                    resume: ResumePoint(deviceId: "phone", afterSeq: 3, epoch: "e2")),
            "50 was a position of e1, which says nothing of e2's")
    }

    @Test("reconnecting gives up after the policy's attempts, failing what waited")
    func givesUpAfterMaxAttempts() async throws {
        let refused = RingError(code: "CLIENT_CONNECT_FAILED", message: "refused")
        let transport = ScriptedTransport()
        var policy = Self.fast
        policy.maxAttempts = 2
        let (client, connection) = try await Self.loggedIn(transport, policy: policy)
        transport.failures.withLock { $0 = [refused, refused, refused] }
        let events = EventRecorder(client)
        let placed = Task { try await client.initiateCall(to: "carol", type: .audio) }
        _ = try #require(await connection.nextRequest())
        connection.drop(code: nil)
        #expect(await events.waitFor(.reconnecting))
        #expect(await events.next() == .connection(.disconnected))
        let error = await #expect(throws: RingError.self) { try await placed.value }
        #expect(error?.code == "CLIENT_CONNECT_FAILED")
        #expect(client.disconnectReason?.message.hasPrefix("reconnecting failed") == true)
        #expect(transport.openAttempts == 3, "the login's open and two attempts")
    }

    @Test("disconnect closes with 1000, fails what waits, forgets the session; a new login works")
    func disconnectAndLogInAgain() async throws {
        let transport = ScriptedTransport()
        let (client, first) = try await Self.loggedIn(transport)
        let active = Task { try await client.activeCall() }
        _ = try #require(await first.nextRequest())
        await client.disconnect()
        let error = await #expect(throws: RingError.self) { try await active.value }
        #expect(error?.code == "CLIENT_CLOSED")
        #expect(first.closedWith.withLock { $0 } == 1000)
        #expect(client.state == .disconnected && client.uid == nil && client.disconnectReason == nil)
        #expect(transport.openAttempts == 1, "a disconnect is not reconnected")

        async let login: Void = client.login(uid: "bob", authKey: "key")
        let second = try #require(await transport.opened.next())
        let auth = try #require(await second.nextRequest())
        #expect(auth.request == .auth(.authKey(uid: "bob", key: "key"), deviceId: nil), "no resume after a disconnect")
        second.reply(auth.id, .authenticated(Authentication(uid: "bob", deviceId: "new-device", activeCall: nil)))
        try await login
        #expect(client.deviceId == "new-device" && client.state == .connected(loggedIn: true))
    }

    @Test("a request without a connection fails at once")
    func requestWithoutConnection() async throws {
        let client = RingClient(url: "http://ringd.test:8787", transport: RingTransportFactory(ScriptedTransport()))
        #expect(client.url == "ws://ringd.test:8787/v1/ws")
        let error = await #expect(throws: RingError.self) { try await client.activeCall() }
        #expect(error?.code == "CLIENT_CLOSED")
        #expect(client.state == .disconnected)
    }

    @Test("backoff doubles from the initial delay up to the cap, jitter shortening each")
    func backoff() {
        let policy = ReconnectPolicy(initialDelay: 0.2, multiplier: 2, maxDelay: 1, jitter: 0.5)
        #expect((0 ..< 5).map { policy.delay(afterFailures: $0, random: 0) } == [0.2, 0.4, 0.8, 1, 1])
        #expect(abs(policy.delay(afterFailures: 1, random: 0.5) - 0.3) < 1e-9)
        #expect(policy.delay(afterFailures: 100, random: 0.999) > 0.5)
        let steady = ReconnectPolicy(initialDelay: 0.5, jitter: 0)
        #expect(steady.delay(afterFailures: 0, random: 0.9) == 0.5)
        #expect(ReconnectPolicy.never.isEnabled == false)
    }
}
