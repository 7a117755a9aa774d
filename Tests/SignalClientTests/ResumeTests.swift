import SignalProtocol
import TestSupport
import Testing

@testable import SignalClient

/// A device that comes back resumes after the last change it saw: what it
/// missed arrives as call events before `.reconnected`, nothing twice. The
/// network fails through a ``TCPProxy``, which also keeps the device away
/// until the test lets it back.
@Suite("Resuming after a lost connection", .prompt)
struct ResumeTests {
    /// `uid` connected through `proxy` with reconnect on.
    static func connect(_ uid: String, device: String, through proxy: TCPProxy) async throws -> SignalClient {
        try await SignalClient.connect(
            to: ServerEndpoint(host: "127.0.0.1", port: proxy.port, isSecure: false),
            credentials: .authKey(uid: uid, key: RingdFixture.authKey),
            options: ConnectOptions(deviceId: device, reconnect: true))
    }

    /// Cuts `client`'s connection and keeps it away until `whileAway` is done.
    static func away(_ proxy: TCPProxy, _ streams: ClientStreams, _ whileAway: () async throws -> Void) async throws {
        proxy.refusing = true
        proxy.cut()
        guard case .reconnecting? = await streams.events.next() else {
            Issue.record("expected .reconnecting")
            throw ExpectationFailure()
        }
        try await whileAway()
        proxy.refusing = false
    }

    @Test("the other party ends the call while the device is away: it learns ended, by whom, on resuming")
    func endedWhileAway() async throws {
        try await withRingd { ringd in
            let proxy = try TCPProxy(forwardingTo: ringd.endpoint.port)
            defer { proxy.stop() }
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await Self.connect("bob", device: "phone", through: proxy)
            let bobStreams = ClientStreams(bob)
            let call = try await alice.initiateCall(to: "bob", type: .video).call
            _ = try await bobStreams.nextCall()
            let accepted = try await bob.acceptCall(call.sessionId)

            var ended: Call?
            try await Self.away(proxy, bobStreams) { ended = try await alice.endCall(call.sessionId) }
            let missed = try await bobStreams.nextCall(timeout: 10)
            #expect(missed == ended)
            #expect(missed.status == .ended && missed.endReason == .hangup && missed.endedBy == "alice")
            #expect(missed.seq > accepted.seq)
            guard case .reconnected(let activeCall, _)? = await bobStreams.events.next() else {
                Issue.record("expected .reconnected after the missed change")
                return
            }
            #expect(activeCall == nil)
            // The CometChat-style stream heard it too, once.
            #expect(await bobStreams.notifications.next() == .incomingCallReceived(call))
            #expect(await bobStreams.notifications.next() == .callEnded(missed))
            await bob.close()
            await alice.close()
        }
    }

    @Test("calls that came and went while the device was away arrive in order, then live events follow")
    func missedCallsWhileAway() async throws {
        try await withRingd { ringd in
            let proxy = try TCPProxy(forwardingTo: ringd.endpoint.port)
            defer { proxy.stop() }
            let bob = try await Self.connect("bob", device: "phone", through: proxy)
            let bobStreams = ClientStreams(bob)
            let carol = try await ringd.connect("carol", device: "desk")
            let dave = try await ringd.connect("dave", device: "desk")
            var cancelled: Call?, ringing: Call?
            try await Self.away(proxy, bobStreams) {
                // The server may not have seen bob's connection drop yet: the
                // ring then goes to a dead connection, and the resume still
                // has to bring it.
                let first = try await carol.initiateCall(to: "bob", type: .audio)
                cancelled = try await carol.cancelCall(first.call.sessionId)
                ringing = try await dave.initiateCall(to: "bob", type: .audio).call
            }
            #expect(try await bobStreams.nextCall(timeout: 10) == cancelled)
            #expect(try await bobStreams.nextCall() == ringing)
            guard case .reconnected(let activeCall, _)? = await bobStreams.events.next() else {
                Issue.record("expected .reconnected")
                return
            }
            #expect(activeCall == ringing)
            let accepted = try await bob.acceptCall(try #require(ringing).sessionId)
            let hungUp = try await dave.endCall(accepted.sessionId)
            #expect(try await bobStreams.nextCall() == hungUp, "live events follow the resume, nothing repeated")
            await bob.close()
            await carol.close()
            await dave.close()
        }
    }
}
