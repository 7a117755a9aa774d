import SignalClient
import SignalProtocol
import TestSupport
import Testing

@Suite("Signals between real clients", .prompt)
struct SignalRelayClientTests {
    @Test("an offer and its answer travel through signal, as events in order; refusals are ClientErrors")
    func offerAndAnswer() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await ringd.connect("bob", device: "phone")
            let aliceStreams = ClientStreams(alice), bobStreams = ClientStreams(bob)
            let (call, _) = try await alice.initiateCall(to: "bob", type: .video)
            #expect(call.initiatorDevice == "laptop")
            _ = try await bobStreams.nextCall()
            let refused = try await clientError { _ = try await alice.signal(call.sessionId, payload: .object([])) }
            #expect(refused.code.serverCode == .notStarted)

            _ = try await bob.acceptCall(call.sessionId)
            _ = try await aliceStreams.nextCall()
            let offer = JSONValue.object([("kind", .string("offer")), ("sdp", .string("v=0"))])
            #expect(try await alice.signal(call.sessionId, payload: offer))
            for index in 0 ..< 3 {
                #expect(
                    try await alice.signal(call.sessionId, payload: .object([("candidate", .integer(Int64(index)))])))
            }
            let expected = [offer] + (0 ..< 3).map { JSONValue.object([("candidate", .integer(Int64($0)))]) }
            for payload in expected {
                guard case .signal(let signal)? = await bobStreams.events.next() else {
                    Issue.record("expected a signal")
                    return
                }
                #expect(
                    signal == PeerSignal(sessionId: call.sessionId, uid: "alice", deviceId: "laptop", payload: payload))
            }
            #expect(try await bob.signal(call.sessionId, payload: .object([("kind", .string("answer"))])))
            guard case .signal(let answer)? = await aliceStreams.events.next() else {
                Issue.record("expected the answer")
                return
            }
            #expect(answer.deviceId == "phone" && answer.payload["kind"] == .string("answer"))
            #expect(try await alice.getIceServers() == IceServerList(iceServers: [], expiresAt: nil))

            await alice.close()
            await bob.close()
        }
    }
}
