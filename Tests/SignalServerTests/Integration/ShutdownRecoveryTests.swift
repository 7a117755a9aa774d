import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// Graceful shutdown in process with `calls.onRestart: end`: every
    /// device hears its call end with server_shutdown before the 1001 close;
    /// a restart on the same store shows those calls (and has nothing left
    /// to recover). With `resume`: see RestartResumeTests.
    @Suite("SignalingIntegration: shutdown and restart", .blocking)
    struct ShutdownRecoveryTests {
        @Test("onRestart end: graceful shutdown ends live calls with server_shutdown, then closes with 1001")
        func gracefulShutdown() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let storePath = directory.file("ringd.sqlite")
            var ringingId = "", ongoingId = "", accepted: Snapshot?
            do {
                let h = try Harness {
                    $0.storePath = storePath; $0.onRestart = .end
                }
                defer { h.finish() }
                let a1 = try h.device("alice", "a1"), a2 = try h.device("alice", "a2"), b1 = try h.device("bob", "b1")
                let c1 = try h.device("carol", "c1"), d1 = try h.device("dave", "d1")
                ringingId = try a1.initiate(to: "bob", "video").call().sessionId
                try expectOne([a2, b1], .initiated, ringingId)
                ongoingId = try c1.initiate(to: "dave").call().sessionId
                try expectOne([d1], .initiated, ongoingId)
                accepted = try d1.accept(ongoingId).call()
                try expectOne([c1], .ongoing, ongoingId)
                try expectNone([a1, d1])

                h.server.beginShutdown()
                let expectations: [(Device, String, CallStatus)] = [
                    (a1, ringingId, .cancelled), (a2, ringingId, .cancelled), (b1, ringingId, .cancelled),
                    (c1, ongoingId, .ended), (d1, ongoingId, .ended),
                ]
                for (device, sessionId, status) in expectations {
                    // nextClose buffers what comes before the close frame: the event must be there.
                    #expect(try device.nextClose() == .goingAway, "\(device)")
                    let events = device.bufferedEvents
                    #expect(events.count == 1, "\(device) got \(events) before the close")
                    let event = try #require(events.first)
                    #expect(event.sessionId == sessionId && event.status == status, "\(device): \(event)")
                    #expect(event.endReason == .serverShutdown && event.endedBy == nil && event.endedAt != nil)
                    if status == .ended { #expect(event.wireDurationMs != nil && event.acceptedBy == "d1") }
                    device.close()
                }
                #expect(h.server.waitForExit(timeout: 5), "the server exits once the devices are gone")
            }

            let h = try Harness {
                $0.storePath = storePath; $0.onRestart = .end
            }
            defer { h.finish() }
            let ringing = try #require(try h.rest("GET", "/v1/calls/\(ringingId)").json)
            #expect(
                ringing["status"] == .string("cancelled") && ringing["endReason"] == .string("server_shutdown"),
                "\(ringing.serialized)")
            let ongoing = try #require(try h.rest("GET", "/v1/calls/\(ongoingId)").json)
            #expect(
                ongoing["status"] == .string("ended") && ongoing["endReason"] == .string("server_shutdown"),
                "\(ongoing.serialized)")
            #expect(ongoing["acceptedAt"] == accepted?.json["acceptedAt"])
            // The logs show them, and nobody is left in a call.
            let a = try h.device("alice", "a1"), d = try h.device("dave", "d1")
            let aliceLog = try #require(logEntries(try a.logs().data).first)
            #expect(aliceLog["sessionId"] == .string(ringingId) && aliceLog["endReason"] == .string("server_shutdown"))
            #expect(aliceLog["direction"] == .string("outgoing") && aliceLog["missed"] == .bool(false))
            let bobLog = logEntries(try h.rest("GET", "/v1/users/bob/calls").json).first
            #expect(bobLog?["missed"] == .bool(true), "a call cancelled by the shutdown is a missed call")
            let missed = try h.rest("GET", "/v1/users/bob/calls?callStatus=missed")
            #expect(sessionIds(missed.json) == [ringingId], "the missed filter: \(missed)")
            let cancelled = try h.rest("GET", "/v1/users/alice/calls?callStatus=cancelled")
            #expect(sessionIds(cancelled.json) == [ringingId])
            #expect(try a.activeCall() == nil && d.activeCall() == nil)
            let next = try a.initiate(to: "dave").call()
            #expect(try d.waitForEvent(next.sessionId, .initiated).initiator == "alice")
        }
    }
}
