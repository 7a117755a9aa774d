import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// Alice (a1, a2) calls Bob (b1, b2) through every outcome; the actor's
    /// device gets only its result, every other device of both parties one
    /// event per change.
    @Suite("SignalingIntegration: call outcomes", .blocking)
    struct CallOutcomeTests {
        struct Parties {
            let h: Harness
            let a1: Device, a2: Device, b1: Device, b2: Device
            var all: [Device] { [a1, a2, b1, b2] }

            init() throws {
                h = try Harness()
                a1 = try h.device("alice", "a1")
                a2 = try h.device("alice", "a2")
                b1 = try h.device("bob", "b1")
                b2 = try h.device("bob", "b2")
            }

            /// a1 rings bob; returns the session id after checking the fan-out.
            func ring(timeout: Int = 30) throws -> String {
                let metadata = JSONValue.object([("topic", .string("standup"))])
                let reply = try a1.initiate(to: "bob", "video", timeout: timeout, metadata: metadata)
                let call = try reply.call()
                #expect(call.status == .initiated)
                #expect(reply.ringing == 2)
                #expect(call.initiator == "alice" && call.receiver == "bob")
                #expect(call.callType == .video && call.timeout == timeout && call.metadata == metadata)
                #expect(call.sessionId.count == 32 && call.sessionId.allSatisfy(\.isHexDigit))
                #expect(call.acceptedAt == nil && call.endedAt == nil && call.endReason == nil && call.endedBy == nil)
                #expect(call.json["receiverType"] == .string("user"))
                try expectOne([a2, b1, b2], .initiated, call.sessionId)
                try expectNone([a1])
                return call.sessionId
            }

            /// No one has a live call any more, and the REST API shows `final`.
            func expectSettled(_ final: Snapshot) throws {
                for device in all { #expect(try device.activeCall() == nil, "\(device) still has a call") }
                try expectNone(all)
                let stored = try h.rest("GET", "/v1/calls/\(final.sessionId)")
                #expect(stored.status == 200)
                #expect(stored.json == final.json, "stored \(stored) vs told \(final)")
            }
        }

        @Test("accepted, then ended by either side", arguments: ["caller", "callee"])
        func acceptedThenEnded(by side: String) throws {
            let p = try Parties()
            defer { p.h.finish() }
            let sessionId = try p.ring()

            let accepted = try p.b2.accept(sessionId).call()
            #expect(accepted.sessionId == sessionId && accepted.status == .ongoing)
            #expect(accepted.acceptedBy == "b2" && accepted.acceptedAt != nil && accepted.wireDurationMs == nil)
            let heard = try expectOne([p.a1, p.a2, p.b1], .ongoing, sessionId)
            #expect(heard.allSatisfy { $0.json == accepted.json })
            try expectNone([p.b2])

            // Any device of a party may hang up, not only the one in the call.
            let ender = side == "caller" ? p.a2 : p.b1
            let ended = try ender.end(sessionId).call()
            #expect(ended.status == .ended && ended.endReason == .hangup)
            #expect(ended.endedBy == (side == "caller" ? "alice" : "bob"))
            let acceptedAt = try #require(ended.acceptedAt), endedAt = try #require(ended.endedAt)
            #expect(ended.wireDurationMs == endedAt - acceptedAt)
            #expect(ended.acceptedBy == "b2")
            let others = p.all.filter { $0 !== ender }
            let endEvents = try expectOne(others, .ended, sessionId)
            #expect(endEvents.allSatisfy { $0.json == ended.json })
            try p.expectSettled(ended)
        }

        @Test(
            "rejected by a callee device, with a reason or not", arguments: ["rejected", "busy"], [nil, "In a meeting"])
        func rejected(status: String, reason: String?) throws {
            let p = try Parties()
            defer { p.h.finish() }
            let sessionId = try p.ring()
            let rejected = try p.b1.reject(sessionId, status: status, reason: reason).call()
            #expect(rejected.status.rawValue == status)
            #expect(rejected.rejectReason == reason && (rejected.json["rejectReason"] != nil) == (reason != nil))
            #expect(rejected.endReason?.rawValue == status)
            #expect(rejected.endedBy == "bob" && rejected.endedAt != nil)
            #expect(rejected.acceptedAt == nil && rejected.wireDurationMs == nil)
            let events = try expectOne([p.a1, p.a2, p.b2], rejected.status, sessionId)
            #expect(events.allSatisfy { $0.json == rejected.json })
            try p.expectSettled(rejected)
            let logs = try p.a1.logs(limit: 1)
            #expect(logs.data?["logs"]?[0]?["rejectReason"]?.stringValue == reason, "\(logs)")
        }

        @Test("cancelled by the caller", arguments: ["cancelCall", "rejectCall"])
        func cancelled(via request: String) throws {
            let p = try Parties()
            defer { p.h.finish() }
            let sessionId = try p.ring()
            // The other caller device cancels through rejectCall, the ringing one through cancelCall.
            let actor = request == "cancelCall" ? p.a1 : p.a2
            let reply =
                request == "cancelCall" ? try actor.cancel(sessionId) : try actor.reject(sessionId, status: "cancelled")
            let cancelled = try reply.call()
            #expect(cancelled.status == .cancelled && cancelled.endReason == .cancelled && cancelled.endedBy == "alice")
            let events = try expectOne(p.all.filter { $0 !== actor }, .cancelled, sessionId)
            #expect(events.allSatisfy { $0.json == cancelled.json })
            try p.expectSettled(cancelled)
        }

        @Test("unanswered after the per-call timeout")
        func unanswered() throws {
            let p = try Parties()
            defer { p.h.finish() }
            let sessionId = try p.ring(timeout: 1)
            // The server made the change: every device hears it, the caller's too.
            var last: Snapshot?
            for device in p.all {
                let event = try device.nextEvent(timeout: 5)
                #expect(event.sessionId == sessionId && event.status == .unanswered)
                #expect(event.endReason == .timeout && event.endedBy == nil)
                let endedAt = try #require(event.endedAt)
                #expect(endedAt >= event.initiatedAt + 1000, "ended \(endedAt - event.initiatedAt) ms after initiating")
                if let last { #expect(last.json == event.json) }
                last = event
            }
            try p.expectSettled(try #require(last))
        }

        /// A ring of 200 ms (`timeoutMs`) ends on its own, for every device,
        /// and the store keeps the milliseconds. When is not asserted
        /// tightly: the machine may be loaded.
        @Test("unanswered after a ring of 200 ms asked as timeoutMs")
        func unansweredAfterMilliseconds() throws {
            let p = try Parties()
            defer { p.h.finish() }
            let reply = try p.a1.request(
                "initiateCall",
                [
                    ("receiverId", .string("bob")), ("callType", .string("audio")),
                    ("timeoutMs", .integer(200)),
                ])
            let placed = try reply.call()
            #expect(placed.timeoutMs == 200 && placed.json["timeout"] == .integer(1) && reply.ringing == 2)
            var last: Snapshot?
            for device in p.all {
                let event = try device.waitForEvent(placed.sessionId, .unanswered, timeout: 10)
                #expect(event.endReason == .timeout && event.timeoutMs == 200)
                #expect(try #require(event.endedAt) >= event.initiatedAt + 200)
                last = event
            }
            try p.expectSettled(try #require(last))
        }

        @Test("receiver busy: the call ends busy at once and nothing rings")
        func receiverBusy() throws {
            let p = try Parties()
            defer { p.h.finish() }
            let c1 = try p.h.device("carol", "c1")
            let carolCall = try c1.initiate(to: "bob").call()
            _ = try p.b1.accept(carolCall.sessionId).call()
            try expectOne([c1], .ongoing, carolCall.sessionId)
            _ = try p.b2.drainEvents()
            _ = try p.b1.drainEvents()

            let reply = try p.a1.initiate(to: "bob", "audio")
            let busy = try reply.call()
            #expect(busy.status == .busy && busy.endReason == .busy && busy.endedBy == nil)
            #expect(busy.endedAt != nil && busy.acceptedAt == nil)
            #expect(reply.ringing == 0)
            // One busy event each (a missed call for bob), no initiated event anywhere.
            let events = try expectOne([p.a2, p.b1, p.b2], .busy, busy.sessionId)
            #expect(events.allSatisfy { $0.json == busy.json })
            try expectNone([p.a1, c1])
            // Carol's call goes on; alice is free again.
            #expect(try p.b2.activeCall()?.sessionId == carolCall.sessionId)
            #expect(try c1.activeCall()?.status == .ongoing)
            #expect(try p.a2.activeCall() == nil)
            #expect(try p.h.rest("GET", "/v1/calls/\(busy.sessionId)").json == busy.json)
        }

        @Test("accept race: exactly one device wins")
        func acceptRace() throws {
            let p = try Parties()
            defer { p.h.finish() }
            let sessionId = try p.ring()
            let id1 = try p.b1.send("acceptCall", [("sessionId", .string(sessionId))])
            let id2 = try p.b2.send("acceptCall", [("sessionId", .string(sessionId))])
            let r1 = try p.b1.result(for: id1), r2 = try p.b2.result(for: id2)
            #expect([r1.ok, r2.ok].filter { $0 }.count == 1, "results \(r1) and \(r2)")
            let (winner, loser, won, lost) = r1.ok ? (p.b1, p.b2, r1, r2) : (p.b2, p.b1, r2, r1)
            #expect(lost.code == "ERR_CALL_USER_ALREADY_JOINED")
            let call = try won.call()
            #expect(call.status == .ongoing && call.acceptedBy == winner.deviceId)
            let events = try expectOne([p.a1, p.a2, loser], .ongoing, sessionId)
            #expect(events.allSatisfy { $0.acceptedBy == winner.deviceId })
            try expectNone([winner])
        }

        @Test("glare: calling back a caller who is ringing you joins their call")
        func glare() throws {
            let p = try Parties()
            defer { p.h.finish() }
            let sessionId = try p.ring()
            let reply = try p.b1.initiate(to: "alice", "audio")
            let joined = try reply.call()
            #expect(joined.sessionId == sessionId)
            #expect(joined.status == .ongoing && joined.acceptedBy == "b1" && joined.acceptedAt != nil)
            #expect(joined.initiator == "alice" && joined.callType == .video, "alice's call, not a new one")
            #expect(reply.ringing == 0)
            try expectOne([p.a1, p.a2, p.b2], .ongoing, sessionId)
            try expectNone([p.b1])
            for uid in ["alice", "bob"] {
                let logs = try p.h.rest("GET", "/v1/users/\(uid)/calls")
                #expect(sessionIds(logs.json) == [sessionId], "\(uid): \(logs)")
            }
        }
    }
}
