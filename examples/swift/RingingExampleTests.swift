// An app's integration test against ringd, in Swift Testing: an ephemeral
// ringd per test (RingdTesting: in memory, ready in milliseconds), devices through the SignalClient library
// (the public protocol only), and the test API for the clock and faults.
// Run with `swift test --filter RingingExample` (make test runs it).
import RingdTesting
import SignalClient
import SignalProtocol
import Testing

@Suite("Example: ringing a user with ringd as the test backend", .timeLimit(.minutes(1)))
struct RingingExampleTests {
    let ringd: EphemeralRingd

    init() throws {
        ringd = try EphemeralRingd.start()
    }

    /// A device of `uid` connected with the development key.
    func device(_ uid: String, _ deviceId: String) async throws -> SignalClient {
        try await SignalClient.connect(
            to: ringd.endpoint, credentials: .authKey(uid: uid, key: EphemeralRingd.authKey),
            options: ConnectOptions(deviceId: deviceId))
    }

    @Test("every device of the callee rings, and the other one stops when one answers")
    func everyDeviceRings() async throws {
        defer { ringd.stop() }
        let alice = try await device("alice", "laptop")
        let phone = try await device("bob", "phone"), tablet = try await device("bob", "tablet")
        var phoneEvents = phone.events.makeAsyncIterator(), tabletEvents = tablet.events.makeAsyncIterator()
        var aliceEvents = alice.events.makeAsyncIterator()

        let (call, ringing) = try await alice.initiateCall(to: "bob", type: .video)
        #expect(ringing == 2)
        #expect(await nextCall(&phoneEvents)?.status == .initiated)
        #expect(await nextCall(&tabletEvents)?.status == .initiated)

        let answered = try await phone.acceptCall(call.sessionId)
        #expect(answered.status == .ongoing && answered.acceptedBy == "phone")
        #expect(await nextCall(&aliceEvents)?.status == .ongoing, "the caller joins the same session")
        #expect(await nextCall(&tabletEvents)?.status == .ongoing, "the tablet stops ringing")

        // The tap shows what each device was told, in order, without instrumenting a client.
        let records = try await ringd.testAPI.transitions(sessionId: call.sessionId)
        #expect(records.map { $0["input"]?["request"]?.stringValue } == ["initiateCall", "acceptCall"])
        await alice.close(); await phone.close(); await tablet.close()
    }

    @Test("an unanswered call ends for both sides after 45 s of manual time, in no time at all")
    func ringTimeout() async throws {
        defer { ringd.stop() }
        let alice = try await device("alice", "laptop"), bob = try await device("bob", "phone")
        var aliceEvents = alice.events.makeAsyncIterator(), bobEvents = bob.events.makeAsyncIterator()
        try await ringd.testAPI.useManualClock()
        let (call, _) = try await alice.initiateCall(to: "bob", type: .audio)
        #expect(await nextCall(&bobEvents)?.status == .initiated)

        #expect(try await ringd.testAPI.advanceClock(milliseconds: 45_000) == 1)
        let callerSaw = await nextCall(&aliceEvents), calleeSaw = await nextCall(&bobEvents)
        #expect(callerSaw?.status == .unanswered && calleeSaw?.status == .unanswered)
        #expect(callerSaw?.endedAt == call.initiatedAt + 45_000)
        let missed = try await bob.getCallLogs().logs.first
        #expect(missed?.missed == true)
        await alice.close(); await bob.close()
    }

    @Test("a callee whose network dies mid-call: the call ends connection_lost once the grace runs out")
    func lostConnection() async throws {
        defer { ringd.stop() }
        let alice = try await device("alice", "laptop"), bob = try await device("bob", "phone")
        var aliceEvents = alice.events.makeAsyncIterator()
        try await ringd.testAPI.useManualClock()
        let (call, _) = try await alice.initiateCall(to: "bob", type: .audio)
        _ = try await bob.acceptCall(call.sessionId)
        #expect(await nextCall(&aliceEvents)?.status == .ongoing)

        try await ringd.testAPI.drop(uid: "bob", deviceId: "phone")
        try await ringd.testAPI.advanceClock(milliseconds: 10_000)
        let ended = await nextCall(&aliceEvents)
        #expect(ended?.status == .ended && ended?.endReason == .connectionLost)
        await alice.close(); await bob.close()
    }
}

/// The next call event, skipping connection events; nil if the stream ends.
func nextCall(_ events: inout AsyncStream<ClientEvent>.Iterator) async -> Call? {
    while let event = await events.next() {
        if case .call(let call) = event { return call }
    }
    return nil
}
