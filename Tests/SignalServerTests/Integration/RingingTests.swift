import SignalCore
import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// `ringing` acknowledgements and `calls.unreachable`, over real sockets.
    @Suite("SignalingIntegration: ringing", .blocking)
    struct RingingTests {
        static func ringing(_ device: Device, _ sessionId: String) throws -> Reply {
            try device.request("ringing", [("sessionId", .string(sessionId))])
        }

        @Test("a callee device's ringing reaches the caller, and stays with the call through resume and history")
        func acknowledged() throws {
            let h = try Harness()
            defer { h.finish() }
            let a1 = try h.device("alice", "a1"), a2 = try h.device("alice", "a2")
            let b1 = try h.device("bob", "b1"), b2 = try h.device("bob", "b2")
            let placed = try a1.initiate(to: "bob").call()
            let sessionId = placed.sessionId
            #expect(placed.json["ringingDevices"] == nil, "absent until a device acknowledges")
            try expectOne([a2, b1, b2], .initiated, sessionId)

            let acknowledged = try Self.ringing(b2, sessionId).call()
            #expect(acknowledged.status == .initiated && acknowledged.ringingDevices == ["b2"])
            #expect(acknowledged.json["ringingDevices"] == .array([.string("b2")]))
            let told = try expectOne([a1, a2, b1], .initiated, sessionId)
            #expect(told.allSatisfy { $0.ringingDevices == ["b2"] && $0.seq == acknowledged.seq }, "\(told)")
            try expectNone([b2])

            let again = try Self.ringing(b2, sessionId)
            #expect(try again.call().seq == acknowledged.seq, "a repeat changes nothing")
            try expectNone([a1, a2, b1, b2])
            #expect(try Self.ringing(a2, sessionId).code == "ERR_CALL_NOT_RECEIVER")
            let carol = try h.device("carol", "c1")
            #expect(try Self.ringing(carol, sessionId).code == "ERR_CALL_NOT_A_PART")
            #expect(try a1.activeCall()?.ringingDevices == ["b2"])

            // A caller device that was away hears the acknowledgement when it resumes.
            let back = try ResumeTests.resume(try h.connect(), "alice", "a3", after: placed.seq)
            let missed = try #require(back.data?["calls"].flatMap { if case .array(let c) = $0 { c } else { nil } })
            #expect(missed.count == 1 && missed.first?["ringingDevices"] == .array([.string("b2")]), "\(back)")

            _ = try Self.ringing(b1, sessionId).call()
            _ = try b1.accept(sessionId).call()
            #expect(try Self.ringing(b2, sessionId).code == "ERR_CALL_USER_ALREADY_JOINED")
            let ended = try a1.end(sessionId).call()
            #expect(ended.ringingDevices == ["b2", "b1"], "kept after the ring, in the order said")
            #expect(try Self.ringing(b2, sessionId).code == "ERR_CALL_TERMINATED")
            let stored = try h.rest("GET", "/v1/calls/\(sessionId)")
            #expect(stored.json?["ringingDevices"] == .array([.string("b2"), .string("b1")]), "\(stored)")
            let history = try b1.logs(limit: 1)
            #expect(logEntries(history.data).first?["ringingDevices"] == .array([.string("b2"), .string("b1")]))
        }

        @Test("calls.unreachable: fail ends a call to an offline callee at once; ring keeps it ringing")
        func unreachableWithoutPush() throws {
            for policy in [UnreachablePolicy.fail, .ring] {
                let h = try Harness { $0.unreachable = policy }
                defer { h.finish() }
                let a1 = try h.device("alice", "a1"), a2 = try h.device("alice", "a2")
                let reply = try a1.initiate(to: "bob")
                let call = try reply.call()
                #expect(reply.ringing == 0)
                switch policy {
                case .fail:
                    #expect(call.status == .unanswered && call.endReason == .unreachable, "\(call)")
                    #expect(try a1.activeCall() == nil)
                    try expectOne([a2], .unanswered, call.sessionId)
                    let bob = try h.device("bob", "b1")
                    let missed = logEntries(try bob.logs(limit: 1).data).first
                    #expect(missed?["missed"] == .bool(true) && missed?["endReason"] == .string("unreachable"))
                case .ring:
                    #expect(call.status == .initiated)
                    let bob = try h.device("bob", "b1")
                    #expect(try bob.activeCall()?.sessionId == call.sessionId, "a device that connects late rings")
                }
            }
        }
    }
}
