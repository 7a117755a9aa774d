import SignalProtocol
import TestSupport
import Testing

@testable import SignalClient

@Suite("Replacement, lost connections and reconnecting", .prompt)
struct ReconnectTests {
    @Test("a second connection of the same device ends the first with 4003")
    func replaced() async throws {
        try await withRingd { ringd in
            let first = try await ringd.connect("alice", device: "laptop", reconnect: true)
            let firstStreams = ClientStreams(first)
            let second = try await ringd.connect("alice", device: "laptop")
            let error = try await firstStreams.nextDisconnect()
            #expect(error.code == .closed)
            #expect(error.closeCode == WebSocketCloseCode.replaced.rawValue)
            #expect(await firstStreams.events.next(timeout: 1) == nil)
            #expect(try await clientError { try await first.getActiveCall() }.code == .closed)
            #expect(try await second.getActiveCall() == nil)
            await second.close()
        }
    }

    @Test("a dropped connection reconnects as the same device and picks up the ongoing call")
    func reconnects() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop", reconnect: true)
            let bob = try await ringd.connect("bob", device: "phone")
            let aliceStreams = ClientStreams(alice), bobStreams = ClientStreams(bob)
            let call = try await alice.initiateCall(to: "bob", type: .video).call
            _ = try await bobStreams.nextCall()
            _ = try await bob.acceptCall(call.sessionId)
            #expect(try await aliceStreams.nextCall().status == .ongoing)

            alice.dropConnectionForTesting()
            let lost = await aliceStreams.events.next()
            guard case .reconnecting(let error)? = lost else {
                Issue.record("expected .reconnecting, got \(String(describing: lost))")
                return
            }
            #expect(error.code == .closed)
            let back = await aliceStreams.events.next()
            guard case .reconnected(let activeCall, let endpoint)? = back else {
                Issue.record("expected .reconnected, got \(String(describing: back))")
                return
            }
            #expect(endpoint == ringd.endpoint)
            #expect(activeCall?.sessionId == call.sessionId)
            #expect(activeCall?.status == .ongoing)
            #expect(alice.deviceId == "laptop")

            let ended = try await alice.endCall(call.sessionId)
            #expect(ended.status == .ended && ended.endReason == .hangup)
            #expect(try await bobStreams.nextCall().status == .ended)
            await alice.close()
            #expect(try await aliceStreams.nextDisconnect().closeCode == 1000)
            await bob.close()
        }
    }

    @Test("a server-assigned device id is kept across a reconnect")
    func keepsAssignedDevice() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", reconnect: true)
            let streams = ClientStreams(alice)
            let assigned = alice.deviceId
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            alice.dropConnectionForTesting()
            guard case .reconnecting? = await streams.events.next(),
                case .reconnected(let activeCall, _)? = await streams.events.next()
            else {
                Issue.record("expected .reconnecting then .reconnected")
                return
            }
            #expect(activeCall?.sessionId == call.sessionId)
            #expect(alice.deviceId == assigned)
            #expect(try await alice.getActiveCall()?.sessionId == call.sessionId)
            await alice.close()
        }
    }

    @Test("without reconnect a dropped connection is final")
    func noReconnect() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let streams = ClientStreams(alice)
            alice.dropConnectionForTesting()
            let error = try await streams.nextDisconnect()
            #expect(error.code == .closed)
            #expect(error.closeCode == nil)
            #expect(try await clientError { try await alice.getActiveCall() }.code == .closed)
        }
    }

    @Test("when the server stays away, reconnecting gives up after the window; requests meanwhile fail")
    func windowPasses() async throws {
        let ringd = try RingdFixture()
        let alice = try await SignalClient.connect(
            to: ringd.endpoint, credentials: .authKey(uid: "alice", key: RingdFixture.authKey),
            options: ConnectOptions(deviceId: "laptop", reconnect: true, reconnectWindow: 1))
        let streams = ClientStreams(alice)
        await ringd.stop()
        let lost = await streams.events.next()
        guard case .reconnecting(let error)? = lost else {
            Issue.record("expected .reconnecting, got \(String(describing: lost))")
            return
        }
        #expect(error.closeCode == 1001)
        #expect(try await clientError { try await alice.getActiveCall() }.code == .closed)
        let final = try await streams.nextDisconnect(timeout: 5)
        #expect(final.code == .connectFailed)
        #expect(final.message.hasPrefix("reconnecting failed"))
        #expect(await streams.events.next(timeout: 1) == nil)
    }

    @Test("releasing a client without close() drops its connection and ends its events")
    func released() async throws {
        try await withRingd { ringd in
            var client: SignalClient? = try await ringd.connect("alice", device: "laptop", reconnect: true)
            let streams = ClientStreams(try #require(client))
            client = nil
            #expect(try await streams.nextDisconnect().message == "the client was released")
            let replacement = try await ringd.connect("alice", device: "laptop")
            #expect(try await replacement.getActiveCall() == nil)
            await replacement.close()
        }
    }

    @Test("close() while reconnecting ends the events at once")
    func closeWhileReconnecting() async throws {
        let ringd = try RingdFixture()
        let alice = try await SignalClient.connect(
            to: ringd.endpoint, credentials: .authKey(uid: "alice", key: RingdFixture.authKey),
            options: ConnectOptions(deviceId: "laptop", reconnect: true, reconnectWindow: 30))
        let streams = ClientStreams(alice)
        await ringd.stop()
        guard case .reconnecting? = await streams.events.next() else {
            Issue.record("expected .reconnecting")
            return
        }
        await alice.close()
        #expect(try await streams.nextDisconnect(timeout: 2).code == .closed)
    }
}
