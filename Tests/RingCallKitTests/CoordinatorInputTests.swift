import RingCallKit
import SignalProtocol
import Testing

/// The inputs the failure table does not exercise: app launch, a CallKit
/// reset, actions for calls the coordinator does not know, and the bound
/// on remembered calls.
@Suite struct CoordinatorInputTests {
    static let sid = CoordinatorTableTests.sid
    static let uuid = CoordinatorTableTests.uuid

    @Test func aLaunchAsksForOneConnection() {
        var coordinator = CallKitCoordinator(now: { 0 })
        #expect(coordinator.appLaunched() == [.connect])
        #expect(coordinator.appLaunched() == [], "one request while it is outstanding")
        _ = coordinator.connectionChanged(.loggedIn(uid: "bob", deviceId: "b-iphone"))
        #expect(coordinator.appLaunched() == [])
    }

    @Test func aResetHangsUpWhatIsInProgressAndForgetsTheRest() throws {
        let h = CallKitHarness()
        h.login()
        h.push(h.ring(Self.sid))
        h.answer(Self.sid)
        let outgoing = try #require(CallUUID(uuidString: "7C9E6679-7425-40DE-944B-E07FC1F90AE7"))
        h.start(outgoing, to: "carol", type: .audio)
        let placed = CoordinatorTableTests.placedId
        h.sent = []
        h.app = []
        h.providerReset()
        #expect(h.sent == [.endCall(sessionId: Self.sid), .cancelCall(sessionId: placed)])
        #expect(
            h.app == [.ended(sessionId: Self.sid, .reported(.failed)), .ended(sessionId: placed, .reported(.failed))])
        #expect(h.server[Self.sid]?.status == .ended && h.server[placed]?.status == .cancelled)
    }

    @Test func actionsForUnknownCalls() {
        var coordinator = CallKitCoordinator(now: { 0 })
        #expect(coordinator.answer(Self.uuid) == [.fail(.answer(Self.uuid))])
        #expect(coordinator.end(Self.uuid) == [.fulfill(.end(Self.uuid))], "CallKit ends its call regardless")
        #expect(coordinator.setMuted(Self.uuid, muted: true) == [.fail(.setMuted(Self.uuid))])
        #expect(coordinator.reportedIncomingCall(Self.uuid, outcome: .shown) == [])
        #expect(coordinator.timerFired(.answer(Self.uuid)) == [])
        #expect(coordinator.commandFailed(.ringing(sessionId: Self.sid), code: "ERR_CALL_TERMINATED") == [])
    }

    @Test func endedCallsAreRememberedUpToTheBound() {
        let h = CallKitHarness(endedCallsKept: 2)
        h.login()
        let sessions = ["a", "b", "c"].map { String(repeating: $0, count: 32) }
        let calls = sessions.map { h.ring($0) }
        for call in calls {
            h.push(call)
            h.callerCancels(call.sessionId)
        }
        h.sent = []
        h.push(calls[2])
        #expect(h.sent == [], "a call still remembered is reported and ended with no request")
        h.push(calls[0])
        #expect(h.sent == [.ringing(sessionId: sessions[0])], "the oldest was forgotten: the server is asked")
        #expect(
            h.provider.suffix(2) == [
                .reported(h.report(calls[0])), .ended(CallUUID(sessionId: sessions[0]), .remoteEnded),
            ])
    }
}
