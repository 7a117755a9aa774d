import SignalProtocol
import SignalServer
import TestSupport
import Testing

extension SignalingIntegration {
    /// `initiateCall`'s `clientCallId` and `limits.initiatesPerMinute` over
    /// real sockets on one node (SQLite), time moved by the test API's
    /// manual clock. The same across two cluster nodes: ClusterRetryTests.
    @Suite("SignalingIntegration: retried initiates and the per-user limit", .blocking)
    struct InitiateRetryTests {
        /// `initiateCall` to `receiver` with `clientCallId`.
        static func initiate(
            _ device: Device, to receiver: String = "bob", _ callType: String = "audio", clientCallId: String,
            timeout: Int? = nil
        ) throws -> Reply {
            var params: [(String, JSONValue)] = [
                ("receiverId", .string(receiver)), ("callType", .string(callType)),
                ("clientCallId", .string(clientCallId)),
            ]
            if let timeout { params.append(("timeout", .integer(Int64(timeout)))) }
            return try device.request("initiateCall", params)
        }

        /// The initiate's result is lost with the connection (held, then the
        /// connection dropped); the same initiate on a new connection of the
        /// same device answers the call it placed, and the callee rang once.
        @Test("a retry after a dropped connection answers the call the first initiate placed")
        func retryAfterADroppedConnection() throws {
            let rig = try TestAPIRig()
            defer { rig.finish() }
            let alice = try rig.device("alice", "a1")
            let bob = try rig.device("bob", "b1")
            try rig.call("POST", "/v1/test/devices/alice/a1/hold", expect: 204)
            let asked = try alice.send(
                "initiateCall",
                [("receiverId", .string("bob")), ("callType", .string("video")), ("clientCallId", .string("c-1"))])
            let rung = try bob.nextEvent()
            #expect(rung.status == .initiated && rung.clientCallId == "c-1")
            try rig.call("POST", "/v1/test/devices/alice/a1/drop", expect: 204)
            #expect((try? alice.result(for: asked, timeout: 1)) == nil)

            let again = try rig.device("alice", "a1")
            let retry = try Self.initiate(again, "video", clientCallId: "c-1")
            #expect(retry.data?["replayed"] == .bool(true), "\(retry)")
            #expect(retry.ringing == 1)
            #expect(try retry.call().json == rung.json)
            try expectNone([bob])
            #expect(logEntries(try again.logs().data).count == 1)
            let stored = try rig.harness.rest("GET", "/v1/calls/\(rung.sessionId)")
            #expect(stored.json?["clientCallId"] == .string("c-1"), "\(stored)")
        }

        /// Answered, rejected: a retry gets the call as it is now, until the
        /// ring deadline for an ended one; then the id places a new call.
        @Test("a retry answers the call as it is now, an ended one until its ring deadline")
        func retryAnswersTheCallAsItIsNow() throws {
            let rig = try TestAPIRig()
            defer { rig.finish() }
            try rig.manualClock()
            let alice = try rig.device("alice", "a1")
            let phone = try rig.device("alice", "a2")
            let bob = try rig.device("bob", "b1")

            let first = try Self.initiate(alice, clientCallId: "c-1", timeout: 30).call()
            #expect(first.json["clientCallId"] == .string("c-1"))
            let accepted = try bob.accept(first.sessionId).call()
            let onPhone = try Self.initiate(phone, clientCallId: "c-1")
            #expect(try onPhone.call().json == accepted.json && onPhone.ringing == 0, "\(onPhone)")
            #expect(try bob.end(first.sessionId).ok)

            let second = try Self.initiate(alice, clientCallId: "c-2", timeout: 20).call()
            try rig.advance(1_000)
            let rejected = try bob.reject(second.sessionId, reason: "Driving").call()
            try rig.advance(18_999)
            let replay = try Self.initiate(alice, clientCallId: "c-2")
            #expect(try replay.call().json == rejected.json, "\(replay)")
            #expect(replay.data?["replayed"] == .bool(true))

            try rig.advance(1)
            let fresh = try Self.initiate(alice, clientCallId: "c-2")
            #expect(fresh.data?["replayed"] == nil)
            #expect(try fresh.call().sessionId != second.sessionId)
        }

        @Test("the same id for another callee or type, or a malformed id, is ERR_VALIDATION")
        func refusals() throws {
            let h = try Harness()
            defer { h.finish() }
            let alice = try h.device("alice", "a1")
            _ = try h.device("bob", "b1")
            _ = try Self.initiate(alice, clientCallId: "c-1").call()
            let other = try Self.initiate(alice, to: "carol", clientCallId: "c-1")
            #expect(other.code == "ERR_VALIDATION", "\(other)")
            #expect(other.message.hasPrefix("clientCallId c-1 already placed call "), "\(other)")
            #expect(try Self.initiate(alice, "video", clientCallId: "c-1").code == "ERR_VALIDATION")
            #expect(try alice.initiate(to: "bob").code == "ERR_CALL_BUSY_SELF")
            for bad in ["", String(repeating: "x", count: 65), "no spaces"] {
                let refused = try Self.initiate(alice, clientCallId: bad)
                #expect(refused.code == "ERR_VALIDATION", "\(refused)")
                #expect(refused.message == "clientCallId must be 1 to 64 characters of A-Z a-z 0-9 . _ - @")
            }
        }

        /// Two calls a minute per user, over both of alice's devices; a
        /// replay does not count; the refusal says when the oldest call
        /// leaves the window, and then one more may be placed.
        @Test("limits.initiatesPerMinute: per user, ERR_RATE_LIMITED with retryAfterMs")
        func perUserLimit() throws {
            let rig = try TestAPIRig { $0.initiatesPerMinute = 2 }
            defer { rig.finish() }
            try rig.manualClock()
            let alice = try rig.device("alice", "a1")
            let phone = try rig.device("alice", "a2")
            let bob = try rig.device("bob", "b1")

            let first = try Self.initiate(alice, clientCallId: "c-1").call()
            #expect(try Self.initiate(phone, clientCallId: "c-1").data?["replayed"] == .bool(true))
            #expect(try alice.cancel(first.sessionId).ok)
            try rig.advance(10_000)
            let second = try phone.initiate(to: "bob").call()
            #expect(try phone.cancel(second.sessionId).ok)
            try rig.advance(5_000)

            let refused = try alice.initiate(to: "bob")
            #expect(refused.code == "ERR_RATE_LIMITED", "\(refused)")
            #expect(refused.raw["error"]?["retryAfterMs"] == .integer(45_000), "\(refused)")
            let bobs = try bob.initiate(to: "carol")
            #expect(bobs.ok, "bob has his own allowance: \(bobs)")
            #expect(try bob.cancel(try bobs.call().sessionId).ok)
            try rig.advance(45_000)
            #expect(try alice.initiate(to: "bob").ok)
        }
    }
}
