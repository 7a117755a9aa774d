import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// Every call error code over the wire, with no side effect on anyone.
    @Suite("SignalingIntegration: error codes", .blocking)
    struct ErrorCodeTests {
        @Test("initiateCall refusals: self, busy self, validation naming the field")
        func initiateRefusals() throws {
            let h = try Harness()
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1"), c = try h.device("carol", "c1")

            #expect(try a.initiate(to: "alice").code == "ERR_CALLING_SELF")
            let invalid: [(String, [(String, JSONValue)])] = [
                ("callType", [("receiverId", .string("bob")), ("callType", .string("fax"))]),
                ("callType", [("receiverId", .string("bob"))]),
                (
                    "timeout",
                    [("receiverId", .string("bob")), ("callType", .string("audio")), ("timeout", .integer(0))]
                ),
                (
                    "timeout",
                    [("receiverId", .string("bob")), ("callType", .string("audio")), ("timeout", .integer(301))]
                ),
                (
                    "timeout",
                    [("receiverId", .string("bob")), ("callType", .string("audio")), ("timeout", .string("5"))]
                ),
                (
                    "metadata",
                    [
                        ("receiverId", .string("bob")), ("callType", .string("audio")),
                        ("metadata", .object([("k", .string(String(repeating: "x", count: 4089)))])),
                    ]
                ),
                (
                    "metadata",
                    [("receiverId", .string("bob")), ("callType", .string("audio")), ("metadata", .string("x"))]
                ),
                ("receiverId", [("receiverId", .string("bob smith")), ("callType", .string("audio"))]),
                (
                    "receiverId",
                    [("receiverId", .string(String(repeating: "b", count: 101))), ("callType", .string("audio"))]
                ),
                ("receiverId", [("callType", .string("audio"))]),
            ]
            for (field, params) in invalid {
                let reply = try a.request("initiateCall", params)
                #expect(reply.code == "ERR_VALIDATION", "\(params.map(\.0)) → \(reply)")
                #expect(reply.message.contains(field), "message \(reply.message.debugDescription) names \(field)")
            }
            try expectNone([a, b, c])
            #expect(sessionIds(try h.rest("GET", "/v1/users/alice/calls").json).isEmpty, "refused requests made calls")

            // Boundaries are accepted: 4096 bytes of metadata, timeout 300.
            let biggest = JSONValue.object([("k", .string(String(repeating: "x", count: 4088)))])
            #expect(biggest.serialized.utf8.count == 4096)
            let call = try a.initiate(to: "bob", timeout: 300, metadata: biggest).call()
            #expect(call.metadata == biggest && call.timeout == 300)
            try expectOne([b], .initiated, call.sessionId)

            // Alice and Bob are both in a live call now.
            #expect(try a.initiate(to: "carol").code == "ERR_CALL_BUSY_SELF")
            #expect(try b.initiate(to: "carol").code == "ERR_CALL_BUSY_SELF")
            try expectNone([a, b, c])
            #expect(try a.activeCall()?.json == call.json)
        }

        @Test("wrong party, wrong state, unknown and foreign sessions")
        func stateAndPartyErrors() throws {
            let h = try Harness()
            defer { h.finish() }
            let a = try h.device("alice", "a1"), b = try h.device("bob", "b1"), c = try h.device("carol", "c1")
            let ringing = try a.initiate(to: "bob").call()
            let sid = ringing.sessionId
            try expectOne([b], .initiated, sid)

            #expect(try a.accept(sid).code == "ERR_CALL_NOT_RECEIVER")
            #expect(try a.reject(sid).code == "ERR_CALL_NOT_RECEIVER")
            #expect(try a.reject(sid, status: "busy").code == "ERR_CALL_NOT_RECEIVER")
            #expect(try b.cancel(sid).code == "ERR_CALL_NOT_INITIATOR")
            let bogusStatus = try b.reject(sid, status: "ended")
            #expect(bogusStatus.code == "ERR_VALIDATION" && bogusStatus.message.contains("status"))
            #expect(try a.end(sid).code == "ERR_CALL_NOT_STARTED")
            #expect(try b.end(sid).code == "ERR_CALL_NOT_STARTED")
            for reply in [try c.accept(sid), try c.reject(sid), try c.cancel(sid), try c.end(sid)] {
                #expect(reply.code == "ERR_CALL_NOT_A_PART", "\(reply)")
            }
            let unknown = String(repeating: "0", count: 32)
            for reply in [try b.accept(unknown), try b.reject(unknown), try a.cancel(unknown), try a.end(unknown)] {
                #expect(reply.code == "ERR_CALL_SESSION_NOT_FOUND", "\(reply)")
            }
            let missing = try b.request("acceptCall")
            #expect(missing.code == "ERR_VALIDATION" && missing.message.contains("sessionId"))
            // None of that changed the call or told anyone anything.
            try expectNone([a, b, c])
            #expect(try a.activeCall()?.json == ringing.json)

            _ = try b.accept(sid).call()
            try expectOne([a], .ongoing, sid)
            #expect(try b.accept(sid).code == "ERR_CALL_USER_ALREADY_JOINED")
            #expect(try b.reject(sid).code == "ERR_CALL_ONGOING")
            #expect(try b.reject(sid, status: "busy").code == "ERR_CALL_ONGOING")
            #expect(try a.cancel(sid).code == "ERR_CALL_ONGOING")
            #expect(try a.reject(sid, status: "cancelled").code == "ERR_CALL_ONGOING")
            #expect(try c.end(sid).code == "ERR_CALL_NOT_A_PART")
            try expectNone([a, b, c])

            _ = try a.end(sid).call()
            try expectOne([b], .ended, sid)
            for reply in [try b.accept(sid), try b.reject(sid), try a.cancel(sid), try a.end(sid), try b.end(sid)] {
                #expect(reply.code == "ERR_CALL_TERMINATED", "\(reply)")
            }
            #expect(try c.accept(sid).code == "ERR_CALL_NOT_A_PART", "a stranger learns nothing of an ended call")
            try expectNone([a, b, c])
        }

        @Test("ERR_CALL_TERMINATED survives a restart on the same store")
        func terminatedAfterRestart() throws {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let storePath = directory.file("ringd.sqlite")
            var sessionId = ""
            do {
                let h = try Harness { $0.storePath = storePath }
                defer { h.finish() }
                let a = try h.device("alice", "a1"), b = try h.device("bob", "b1")
                sessionId = try a.initiate(to: "bob").call().sessionId
                #expect(try a.cancel(sessionId).call().status == .cancelled)
                #expect(try b.accept(sessionId).code == "ERR_CALL_TERMINATED")
                h.finish()
                #expect(h.server.waitForExit(timeout: 5))
            }
            let h = try Harness { $0.storePath = storePath }
            defer { h.finish() }
            let b = try h.device("bob", "b1"), c = try h.device("carol", "c1")
            let reply = try b.accept(sessionId)
            #expect(reply.code == "ERR_CALL_TERMINATED", "\(reply)")
            #expect(try c.accept(sessionId).code == "ERR_CALL_NOT_A_PART")
            #expect(try b.accept(String(repeating: "f", count: 32)).code == "ERR_CALL_SESSION_NOT_FOUND")
            let stored = try h.rest("GET", "/v1/calls/\(sessionId)")
            #expect(stored.json?["status"] == .string("cancelled") && stored.json?["endReason"] == .string("cancelled"))
        }
    }
}
