import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// Parties whose devices drop without a close frame: the reconnect grace,
    /// connection_lost, and picking the call up again.
    @Suite("SignalingIntegration: lost connections", .blocking)
    struct LostConnectionTests {
        @Test("a caller that drops while ringing: cancelled with connection_lost after the grace")
        func callerDropsWhileRinging() throws {
            let h = try Harness { $0.reconnectGrace = 0.3 }
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b1 = try h.device("bob", "b1"), b2 = try h.device("bob", "b2")
            let call = try a.initiate(to: "bob", timeout: 30).call()
            try expectOne([b1, b2], .initiated, call.sessionId)
            let dropped = WallClock.milliseconds()
            a.drop()
            for device in [b1, b2] {
                let event = try device.nextEvent(timeout: 5)
                #expect(event.sessionId == call.sessionId && event.status == .cancelled)
                #expect(event.endReason == .connectionLost && event.endedBy == nil)
                let endedAt = try #require(event.endedAt)
                #expect(endedAt - dropped >= 250, "cancelled \(endedAt - dropped) ms after the drop")
            }
            try expectNone([b1, b2])
            #expect(try b1.activeCall() == nil)
        }

        @Test("a caller that stops answering pings is dropped (1001) and its call cancelled")
        func missedPings() throws {
            let h = try Harness { config in
                config.reconnectGrace = 0.2
                config.pingInterval = 0.1
                config.pingTimeout = 0.5
            }
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1")
            let call = try a.initiate(to: "bob").call()
            // Bob keeps reading (and so answers pings); alice goes silent.
            let event = try b.waitForEvent(call.sessionId, .cancelled, timeout: 6)
            #expect(event.endReason == .connectionLost && event.endedBy == nil)
            #expect(try a.nextClose() == .goingAway, "the silent peer was closed with 1001")
            #expect(try b.activeCall() == nil)
        }

        @Test("an ongoing call ends with connection_lost only when all of a party's devices are gone")
        func ongoingPartyDrops() throws {
            let h = try Harness { $0.reconnectGrace = 0.3 }
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b1 = try h.device("bob", "b1"), b2 = try h.device("bob", "b2")
            let call = try a.initiate(to: "bob").call()
            try expectOne([b1, b2], .initiated, call.sessionId)
            _ = try b1.accept(call.sessionId).call()
            try expectOne([a, b2], .ongoing, call.sessionId)

            b2.drop()
            #expect(try a.expectNoEvent(within: 0.6), "bob still has b1 connected")
            #expect(try a.activeCall()?.status == .ongoing)

            b1.drop()
            let event = try a.nextEvent(timeout: 5)
            #expect(event.sessionId == call.sessionId && event.status == .ended)
            #expect(event.endReason == .connectionLost && event.endedBy == nil)
            #expect(event.wireDurationMs != nil && event.acceptedBy == "b1")
            try expectNone([a])
            #expect(try h.rest("GET", "/v1/calls/\(call.sessionId)").json == event.json)
        }

        @Test("a device that reconnects within the grace keeps the call and finds it in activeCall")
        func reconnectWithinGrace() throws {
            let h = try Harness { $0.reconnectGrace = 1.5 }
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1")
            let call = try a.initiate(to: "bob").call()
            try expectOne([b], .initiated, call.sessionId)
            let accepted = try b.accept(call.sessionId).call()
            try expectOne([a], .ongoing, call.sessionId)

            a.drop()
            let back = try h.connect()
            let reply = try back.auth(uid: "alice", deviceId: "a1")
            #expect(reply.data?["activeCall"] == accepted.json, "activeCall \(reply)")
            // Well past the grace: nothing happened to the call.
            #expect(try b.expectNoEvent(within: 1.9), "the call ended although alice came back")
            #expect(try back.activeCall()?.status == .ongoing)
            let ended = try back.end(call.sessionId).call()
            #expect(ended.endReason == .hangup && ended.endedBy == "alice")
            try expectOne([b], .ended, call.sessionId)
        }

        @Test("a callee whose devices all drop is rung until the timeout")
        func calleeDropsKeepsRinging() throws {
            let h = try Harness { $0.reconnectGrace = 0.3 }
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b1 = try h.device("bob", "b1"), b2 = try h.device("bob", "b2")
            let call = try a.initiate(to: "bob", timeout: 2).call()
            try expectOne([b1, b2], .initiated, call.sessionId)
            b1.drop()
            b2.drop()
            // The grace (0.3 s) passes long before the ring timeout (2 s): the first change must be the timeout.
            let event = try a.nextEvent(timeout: 6)
            #expect(event.sessionId == call.sessionId && event.status == .unanswered && event.endReason == .timeout)
            let endedAt = try #require(event.endedAt)
            #expect(endedAt - event.initiatedAt >= 2000)
            // Bob comes back: no live call, the log shows a missed call.
            let back = try h.device("bob", "b1")
            #expect(try back.activeCall() == nil)
            let logs = try back.logs()
            #expect(logEntries(logs.data).first?["missed"] == .bool(true))
        }
    }
}
