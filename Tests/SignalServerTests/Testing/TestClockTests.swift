import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// The test API's manual clock: ring timeouts and grace periods fire when a
/// test advances it, in deadline order, delivered before the advance returns.
@Suite("Test API: the manual clock", .blocking)
struct TestClockTests {
    @Test("a 45 s ring timeout on the manual clock: both sides see unanswered once 45 s are advanced")
    func ringTimeout() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.manualClock()
        let call = try alice.initiate(to: "bob").call()
        #expect(call.timeout == 45)
        try SignalingIntegration.expectOne([bob], .initiated, call.sessionId)
        #expect(try rig.advance(44_999) == 0)
        try SignalingIntegration.expectNone([alice, bob])
        #expect(try rig.advance(1) == 1)
        // The advance answered once the events were written: they are already
        // in the devices' sockets (loopback), read without a barrier.
        for device in [alice, bob] {
            let seen = try device.nextEvent(timeout: 0.05)
            #expect(seen.status == .unanswered && seen.sessionId == call.sessionId)
            #expect(seen.call.endedAt == call.initiatedAt + 45_000, "the call's timestamps are the manual clock's")
        }
    }

    @Test("timers fire in deadline order during one advance, each at its own deadline")
    func deadlineOrder() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let a = try rig.device("a", "a1"), b = try rig.device("b", "b1")
        let c = try rig.device("c", "c1"), d = try rig.device("d", "d1")
        try rig.manualClock()
        let long = try a.initiate(to: "b", timeout: 20).call()
        let short = try c.initiate(to: "d", timeout: 10).call()
        try SignalingIntegration.expectOne([b], .initiated, long.sessionId)
        try SignalingIntegration.expectOne([d], .initiated, short.sessionId)
        #expect(try rig.advance(60_000) == 2)
        let ended =
            try SignalingIntegration.expectOne([a], .unanswered, long.sessionId)
            + SignalingIntegration.expectOne([c], .unanswered, short.sessionId)
        #expect(ended[0].call.endedAt == long.initiatedAt + 20_000)
        #expect(ended[1].call.endedAt == short.initiatedAt + 10_000)
        let order = try rig.call("GET", "/v1/test/transitions").json?["transitions"]
        guard case .array(let records)? = order else { throw SignalingIntegration.ClientError("no transitions") }
        let timers = records.filter { $0["input"]?["type"]?.stringValue == "timer" }
        #expect(timers.compactMap { $0["input"]?["sessionId"]?.stringValue } == [short.sessionId, long.sessionId])
    }

    @Test(
        "a grace period on the manual clock: a dropped callee's call ends connection_lost; one who comes back goes on")
    func grace() throws {
        let rig = try TestAPIRig { $0.reconnectGrace = 10 }
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.manualClock()
        let call = try alice.initiate(to: "bob").call()
        #expect(try bob.accept(call.sessionId).ok)
        try SignalingIntegration.expectOne([alice], .ongoing, call.sessionId)

        try rig.call("POST", "/v1/test/devices/bob/b1/drop", expect: 204)
        #expect(bob.ws.seesEOF())
        let back = try rig.device("bob", "b1")
        #expect(try rig.advance(10_000) >= 1)
        #expect(try back.activeCall()?.status == .ongoing)
        try SignalingIntegration.expectNone([alice])

        try rig.call("POST", "/v1/test/devices/bob/b1/drop", expect: 204)
        #expect(try rig.advance(9_999) == 0)
        try SignalingIntegration.expectNone([alice])
        #expect(try rig.advance(1) == 1)
        let ended = try SignalingIntegration.expectOne([alice], .ended, call.sessionId)
        #expect(ended.first?.call.endReason == .connectionLost)
    }

    @Test("a ring timer armed on the real clock waits for the advance once the clock is manual")
    func switchWithATimerArmed() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        let call = try alice.initiate(to: "bob", timeout: 2).call()
        try SignalingIntegration.expectOne([bob], .initiated, call.sessionId)
        try rig.manualClock()
        #expect(try rig.advance(2_000) == 1)
        let ended = try SignalingIntegration.expectOne([alice, bob], .unanswered, call.sessionId)
        // It ended at its deadline, not at the advance's end. The deadline was
        // set on the real clocks, whose wall and monotonic times are two reads
        // each cut to milliseconds, so they may disagree by one.
        let endedAt = try #require(ended.first?.call.endedAt)
        #expect(abs(endedAt - (call.initiatedAt + 2_000)) <= 1)
    }

    @Test("back to real time: a pending ring timeout runs on the real clock again")
    func backToReal() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.manualClock()
        let call = try alice.initiate(to: "bob", timeout: 1).call()
        try SignalingIntegration.expectOne([bob], .initiated, call.sessionId)
        let clock = try rig.call("POST", "/v1/test/clock", #"{"mode":"real"}"#).json
        #expect(clock?["mode"]?.stringValue == "real")
        #expect(try alice.waitForEvent(call.sessionId, .unanswered, timeout: 10).status == .unanswered)
        try rig.call("POST", "/v1/test/clock/advance", #"{"ms":1}"#, expect: 409)
    }
}
