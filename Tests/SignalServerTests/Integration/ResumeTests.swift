import SignalProtocol
import Testing

@testable import SignalServer

extension SignalingIntegration {
    /// `auth` with `resume`, over real sockets: what a device missed, then
    /// live events; and when the server cannot say, `resumed: false`.
    @Suite("SignalingIntegration: resume", .blocking)
    struct ResumeTests {
        /// Authenticates `device` as `uid`/`deviceId` resuming after `seq`.
        /// `epoch`: the store epoch the position is of (none: as a client that knows none).
        static func resume(
            _ device: Device, _ uid: String, _ deviceId: String, after seq: Int64, epoch: String? = nil
        ) throws -> Reply {
            var point: [(key: String, value: JSONValue)] = [
                ("deviceId", .string(deviceId)), ("afterSeq", .integer(seq)),
            ]
            if let epoch { point.append(("epoch", .string(epoch))) }
            return try device.authenticate(
                try device.request(
                    "auth",
                    [
                        ("uid", .string(uid)), ("authKey", .string(SignalingIntegration.authKey)),
                        ("resume", .object(point)),
                    ]))
        }

        @Test("a device that comes back hears what changed after its position, then live events")
        func resumes() throws {
            let h = try Harness()
            defer { h.finish() }
            let a1 = try h.device("alice", "a1"), b1 = try h.device("bob", "b1")
            let sessionId = try a1.initiate(to: "bob").call().sessionId
            _ = try b1.waitForEvent(sessionId, .initiated)
            let accepted = try b1.accept(sessionId).call()
            b1.drop()
            let ended = try a1.end(sessionId).call()

            let back = try h.connect()
            let reply = try Self.resume(back, "bob", "b1", after: accepted.seq)
            #expect(reply.ok, "\(reply)")
            #expect(reply.data?["deviceId"] == .string("b1"), "the resume names the device")
            #expect(reply.data?["resumed"] == .bool(true))
            #expect(reply.data?["calls"] == .array([ended.json]))
            #expect(reply.data?["seq"] == .integer(ended.seq))
            #expect(ended.endedBy == "alice" && ended.seq > accepted.seq)
            let next = try a1.initiate(to: "bob").call()
            #expect(try back.nextEvent().json == next.json)

            let again = try h.connect()
            let nothing = try Self.resume(again, "carol", "c1", after: next.seq)
            #expect(nothing.data?["resumed"] == .bool(true) && nothing.data?["calls"] == .array([]))
        }

        @Test("auth results carry the store's epoch; a position of another epoch gets resumed false")
        func epochs() throws {
            let h = try Harness()
            defer { h.finish() }
            let a1 = try h.device("alice", "a1"), b1 = try h.device("bob", "b1")
            let first = try Self.resume(try h.connect(), "carol", "c1", after: 0)
            guard case .string(let epoch)? = first.data?["epoch"] else {
                Issue.record("no epoch: \(first)")
                return
            }
            let sessionId = try a1.initiate(to: "bob").call().sessionId
            let ringing = try b1.waitForEvent(sessionId, .initiated)
            b1.drop()
            let accepted = try a1.request("getActiveCall")

            let same = try Self.resume(try h.connect(), "bob", "b1", after: ringing.seq - 1, epoch: epoch)
            #expect(same.data?["resumed"] == .bool(true) && same.data?["epoch"] == .string(epoch), "\(same)")
            let other = try Self.resume(try h.connect(), "bob", "b1", after: ringing.seq - 1, epoch: "another")
            #expect(other.ok && other.data?["resumed"] == .bool(false) && other.data?["calls"] == .array([]))
            #expect(other.data?["epoch"] == .string(epoch), "it names the epoch to resume from next")
            #expect(other.data?["activeCall"] == accepted.data?["call"], "and gives the snapshot")
        }

        @Test("a position the store never gave out gets resumed false, and the snapshot")
        func unknownPosition() throws {
            let h = try Harness()
            defer { h.finish() }
            let a1 = try h.device("alice", "a1")
            let ringing = try a1.initiate(to: "bob").call()
            let reply = try Self.resume(try h.connect(), "bob", "b1", after: ringing.seq + 1_000)
            #expect(reply.ok)
            #expect(reply.data?["resumed"] == .bool(false) && reply.data?["calls"] == .array([]))
            #expect(reply.data?["activeCall"] == ringing.json)
        }

        @Test("more calls than the window holds, a change older than it, or another store's position is resumed false")
        func window() {
            let call = Call(
                sessionId: "s", callType: .audio, status: .cancelled, initiator: "a", receiver: "b",
                initiatedAt: 1_000, endedAt: 2_000, timeoutMs: 30_000, seq: 5)
            let now: Int64 = 2_000 + SignalingService.resumeWindowMillis
            let read = Result<ChangedCalls, StoreError>.success(ChangedCalls(calls: [call], exceeded: false))
            #expect(
                SignalingService.outcome(after: 4, read, handedOut: 5, now: now)
                    == ResumeOutcome(resumed: true, calls: [call]))
            #expect(
                SignalingService.outcome(after: 4, read, handedOut: 5, now: now + 1)
                    == ResumeOutcome(resumed: false, calls: []))
            #expect(SignalingService.outcome(after: 6, read, handedOut: 5, now: now).resumed == false)
            let exceeded = Result<ChangedCalls, StoreError>.success(ChangedCalls(calls: [], exceeded: true))
            #expect(SignalingService.outcome(after: 4, exceeded, handedOut: 5, now: now).resumed == false)
            #expect(
                SignalingService.outcome(after: 4, .failure(StoreError(.closed, "closed")), handedOut: 5, now: now)
                    .resumed == false)
        }
    }
}
