import SignalProtocol
import SignalServer
import TestSupport
import Testing

/// The test API's faults, reset and crash, and who may use it.
@Suite("Test API: faults, reset, crash, access", .blocking)
struct TestFaultTests {
    @Test("without the key every route is refused; with testing off the routes do not exist")
    func access() throws {
        let routes = [
            ("GET", "/v1/test/clock"), ("POST", "/v1/test/clock"), ("POST", "/v1/test/clock/advance"),
            ("POST", "/v1/test/devices/bob/b1/drop"), ("POST", "/v1/test/devices/bob/b1/hold"),
            ("POST", "/v1/test/devices/bob/b1/release"), ("POST", "/v1/test/store/fail"),
            ("POST", "/v1/test/crash"), ("POST", "/v1/test/reset"), ("GET", "/v1/test/transitions"),
            ("GET", "/v1/test/tap"),
        ]
        let on = try TestAPIRig()
        defer { on.finish() }
        let off = try SignalingIntegration.Harness()
        defer { off.finish() }
        for (method, path) in routes {
            let none = try on.harness.rest(method, path, body: "{}", apiKey: nil)
            #expect(none.status == 401 && none.errorCode == "ERR_UNAUTHORIZED", "\(method) \(path): \(none)")
            let wrong = try on.harness.rest(method, path, body: "{}", apiKey: nil, headers: ["X-Test-Key: not-the-key"])
            #expect(wrong.status == 401, "\(method) \(path): \(wrong)")
            let apiKey = try on.harness.rest(method, path, body: "{}")
            #expect(apiKey.status == 401, "the API key is not the test key: \(method) \(path): \(apiKey)")
            let absent = try off.rest(method, path, body: "{}", apiKey: nil, headers: ["X-Test-Key: \(TestAPIRig.key)"])
            #expect(absent.status == 404, "\(method) \(path) with testing off: \(absent)")
        }
    }

    @Test("reset between two tests leaves no trace of the first: no call logs, no devices, close 4010")
    func reset() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.manualClock()
        let first = try alice.initiate(to: "bob").call()
        try SignalingIntegration.expectOne([bob], .initiated, first.sessionId)
        try rig.call("POST", "/v1/test/store/fail", #"{"commits":5}"#)
        let reset = try rig.call("POST", "/v1/test/reset", expect: 204)
        #expect(reset.status == 204, "\(reset.description)")
        #expect(try alice.nextClose() == .testReset)
        #expect(try bob.nextClose() == .testReset)

        let clock = try rig.call("GET", "/v1/test/clock").json
        #expect(clock?["mode"]?.stringValue == "real")
        // Real time runs the timers again: a short ring ends by itself.
        let dave = try rig.device("dave", "d1"), erin = try rig.device("erin", "e1")
        let short = try dave.request(
            "initiateCall",
            [
                ("receiverId", .string("erin")), ("callType", .string("audio")),
                ("timeoutMs", .integer(200)),
            ]
        ).call()
        #expect(try erin.waitForEvent(short.sessionId, .unanswered, timeout: 10).status == .unanswered)
        let logs = try rig.harness.rest("GET", "/v1/users/alice/calls")
        #expect(SignalingIntegration.logEntries(logs.json).isEmpty, "\(logs)")
        #expect(try rig.harness.rest("GET", "/v1/calls/\(first.sessionId)").status == 404)
        #expect(try rig.transitions(sessionId: first.sessionId).isEmpty)
        // No device is left: bob is not busy, and no commit fails any more.
        let carol = try rig.device("carol", "c1"), newBob = try rig.device("bob", "b1")
        let auth = try newBob.activeCall()
        #expect(auth == nil)
        let second = try carol.initiate(to: "bob")
        #expect(second.ok, "\(second)")
        #expect(try second.call().seq > first.seq, "the change sequence goes on: no position is handed out twice")
        #expect(try newBob.logs().data.map(SignalingIntegration.logEntries)?.count == 1)
    }

    /// Whether `device` has no frame waiting before the pong of a ping sent
    /// now (run after an advance, which returns once every loop has handed
    /// out what it was given: a frame not held would be ahead of the pong).
    static func nothingBeforePong(_ device: SignalingIntegration.Device) throws -> Bool {
        try device.ws.send(.ping, [7])
        return try device.ws.nextEvent() == .pong([7])
    }

    @Test("hold: a device's frames wait until released, then arrive in order")
    func hold() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.manualClock()
        try rig.call("POST", "/v1/test/devices/bob/b1/hold", expect: 204)
        let call = try alice.initiate(to: "bob").call()
        #expect(try alice.cancel(call.sessionId).ok)
        try rig.advance(0)
        #expect(try Self.nothingBeforePong(bob), "the ring and the cancel are held; pings still flow")
        try rig.call("POST", "/v1/test/devices/bob/b1/release", expect: 204)
        #expect(try bob.nextEvent().status == .initiated)
        #expect(try bob.nextEvent().status == .cancelled)
        try rig.call("POST", "/v1/test/devices/nobody/x1/hold", expect: 404)
    }

    @Test("hold for N ms: held at first, then the frames go out by themselves")
    func holdFor() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.manualClock()
        try rig.call("POST", "/v1/test/devices/bob/b1/hold", #"{"ms":500}"#, expect: 204)
        let call = try alice.initiate(to: "bob").call()
        try rig.advance(0)
        #expect(try Self.nothingBeforePong(bob))
        #expect(try bob.waitForEvent(call.sessionId, .initiated).status == .initiated)
    }

    @Test("failing commits: the request gets ERR_INTERNAL, memory is rebuilt, the next request works")
    func failingCommits() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        try rig.call("POST", "/v1/test/store/fail", #"{"commits":1}"#)
        let failed = try alice.initiate(to: "bob")
        #expect(failed.code == "ERR_INTERNAL", "\(failed)")
        var next = try alice.initiate(to: "bob")
        // The rebuild is brief: requests meanwhile are refused as unavailable.
        for _ in 0 ..< 1000 where next.code == "ERR_UNAVAILABLE" { next = try alice.initiate(to: "bob") }
        #expect(next.ok, "\(next)")
        try SignalingIntegration.expectOne([bob], .initiated, try next.call().sessionId)
    }

    @Test("a simulated crash: every device is reset, the live call is restored from the store and goes on")
    func crash() throws {
        let rig = try TestAPIRig()
        defer { rig.finish() }
        let alice = try rig.device("alice", "a1"), bob = try rig.device("bob", "b1")
        let call = try alice.initiate(to: "bob").call()
        #expect(try bob.accept(call.sessionId).ok)
        try SignalingIntegration.expectOne([alice], .ongoing, call.sessionId)
        try SignalingIntegration.expectOne([bob], .initiated, call.sessionId)
        let report = try rig.call("POST", "/v1/test/crash").json
        #expect(report?["restored"]?.integerValue == 1)
        #expect(alice.ws.seesEOF() && bob.ws.seesEOF())
        let alice2 = try rig.device("alice", "a1"), bob2 = try rig.device("bob", "b1")
        #expect(try alice2.activeCall()?.sessionId == call.sessionId)
        #expect(try bob2.end(call.sessionId).ok)
        try SignalingIntegration.expectOne([alice2], .ended, call.sessionId)
        // The tap shows the restart: both parties' grace periods, started as they were away.
        guard case .array(let records)? = try rig.call("GET", "/v1/test/transitions?uid=alice").json?["transitions"],
            let restart = records.first(where: { $0["input"]?["type"]?.stringValue == "restart" }),
            case .array(let actions)? = restart["actions"]
        else {
            throw SignalingIntegration.ClientError("no restart transition")
        }
        #expect(
            actions.filter { $0["type"]?.stringValue == "schedule" }.compactMap { $0["uid"]?.stringValue }.sorted()
                == ["alice", "bob"])
    }
}
