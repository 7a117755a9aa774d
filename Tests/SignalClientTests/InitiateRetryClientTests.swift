import SignalProtocol
import TestSupport
import Testing

@testable import SignalClient

/// `initiateCall` carries a `clientCallId`, and the client sends the same
/// initiate again after a reconnect, so a lost result never costs a second
/// call or an `ERR_CALL_BUSY_SELF`.
@Suite("Retried initiates", .prompt)
struct InitiateRetryClientTests {
    static let testKey = "test-key-0123456789abcdef"

    /// The server places the call, but its result is held and then lost
    /// with the connection: the client reconnects, sends the initiate again
    /// with the same id, and returns the call the first one placed.
    @Test("an initiate whose result was lost with the connection returns the call it placed")
    func retriedAfterADroppedConnection() async throws {
        try await withRingd({
            $0.testing.enabled = true
            $0.testing.key = Self.testKey
        }) { ringd in
            let testAPI = TestAPIClient(endpoint: ringd.endpoint, key: Self.testKey)
            let alice = try await ringd.connect("alice", device: "laptop", reconnect: true)
            let bob = try await ringd.connect("bob", device: "phone")
            let bobStreams = ClientStreams(bob)
            try await testAPI.hold(uid: "alice", deviceId: "laptop")
            async let placed = alice.initiateCall(to: "bob", type: .video)
            let rung = try await bobStreams.nextCall()
            #expect(rung.status == .initiated)
            let clientCallId = try #require(rung.clientCallId)
            #expect(clientCallId.count == 32 && clientCallId.allSatisfy(\.isHexDigit))
            try await testAPI.drop(uid: "alice", deviceId: "laptop")

            let (call, ringing) = try await placed
            #expect(call.sessionId == rung.sessionId && call.clientCallId == clientCallId)
            #expect(ringing == 1)
            #expect(try await alice.getActiveCall()?.sessionId == rung.sessionId)
            let logs = try await alice.getCallLogs().logs
            #expect(logs.map(\.call.sessionId) == [rung.sessionId], "one call placed")
            _ = try await alice.cancelCall(call.sessionId)
            #expect(try await bobStreams.nextCall().status == .cancelled, "bob heard one ring, then the cancel")
            await alice.close()
            await bob.close()
        }
    }

    @Test("an initiate repeated with the caller's own id returns the same call; each initiate gets a fresh id")
    func ownIdReplays() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let first = try await alice.initiateCall(to: "bob", type: .audio, clientCallId: "standup-42").call
            #expect(first.clientCallId == "standup-42")
            let again = try await alice.initiateCall(to: "bob", type: .audio, clientCallId: "standup-42").call
            #expect(again == first)
            let refused = try await clientError { try await alice.initiateCall(to: "bob", type: .audio) }
            #expect(refused.code == .server(.callBusySelf))
            _ = try await alice.cancelCall(first.sessionId)
            let generated = try await alice.initiateCall(to: "bob", type: .audio).call
            _ = try await alice.cancelCall(generated.sessionId)
            let next = try await alice.initiateCall(to: "carol", type: .audio)
            #expect(generated.clientCallId != nil && next.call.clientCallId != generated.clientCallId)
            await alice.close()
        }
    }

    @Test("while the client is reconnecting, an initiate waits for the connection; without reconnect it fails")
    func waitsForTheConnection() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop", reconnect: true)
            let streams = ClientStreams(alice)
            alice.dropConnectionForTesting()
            guard case .reconnecting? = await streams.events.next() else {
                Issue.record("expected .reconnecting")
                return
            }
            let placed = try await alice.initiateCall(to: "bob", type: .audio).call
            #expect(placed.status == .initiated)
            await alice.close()

            let plain = try await ringd.connect("carol", device: "phone")
            plain.dropConnectionForTesting()
            #expect(try await clientError { try await plain.initiateCall(to: "bob", type: .audio) }.code == .closed)
        }
    }
}
