import SignalClient
import SignalProtocol
import TestSupport
import Testing

@Suite("Calls between real clients", .prompt)
struct CallFlowTests {
    @Test("initiate, ring, accept, end: both sides on the same session, with events and notifications")
    func fullCall() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await ringd.connect("bob", device: "phone")
            let aliceStreams = ClientStreams(alice), bobStreams = ClientStreams(bob)

            let (call, ringing) = try await alice.initiateCall(
                to: "bob", type: .video, timeout: 30,
                metadata: .object([("topic", .string("standup"))]))
            #expect(call.status == .initiated)
            #expect(call.initiator == "alice" && call.receiver == "bob")
            #expect(call.metadata == .object([("topic", .string("standup"))]))
            #expect(ringing == 1)

            let rung = try await bobStreams.nextCall()
            #expect(rung.sessionId == call.sessionId)
            #expect(rung.status == .initiated)
            #expect(await bobStreams.notifications.next() == .incomingCallReceived(rung))

            let accepted = try await bob.acceptCall(call.sessionId)
            #expect(accepted.status == .ongoing)
            #expect(accepted.acceptedBy == "phone")
            let acceptedEvent = try await aliceStreams.nextCall()
            #expect(acceptedEvent.sessionId == call.sessionId)
            #expect(await aliceStreams.notifications.next() == .outgoingCallAccepted(acceptedEvent))

            let ended = try await alice.endCall(call.sessionId)
            #expect(ended.status == .ended)
            #expect(ended.endReason == .hangup)
            let endedEvent = try await bobStreams.nextCall()
            #expect(endedEvent.sessionId == call.sessionId)
            #expect(endedEvent.status == .ended)
            #expect(await bobStreams.notifications.next() == .callEnded(endedEvent))

            await alice.close()
            await bob.close()
        }
    }

    @Test("a ring asked in milliseconds ends unanswered, for both sides")
    func ringInMilliseconds() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await ringd.connect("bob", device: "phone")
            let aliceStreams = ClientStreams(alice), bobStreams = ClientStreams(bob)
            let (call, ringing) = try await alice.initiateCall(to: "bob", type: .audio, timeout: .milliseconds(200))
            #expect(call.timeoutMs == 200 && call.timeout == 1 && ringing == 1)
            #expect(try await bobStreams.nextCall().status == .initiated)
            for streams in [aliceStreams, bobStreams] {
                let unanswered = try await streams.nextCall(timeout: 10)
                #expect(unanswered.sessionId == call.sessionId && unanswered.status == .unanswered)
                #expect(unanswered.endReason == .timeout && unanswered.timeoutMs == 200)
            }
            await alice.close()
            await bob.close()
        }
    }

    @Test("typed errors carry the server's codes")
    func serverCodes() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await ringd.connect("bob", device: "phone")
            #expect(
                try await clientError { try await alice.initiateCall(to: "alice", type: .audio) }.code
                    == .server(.callingSelf))
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            #expect(try await clientError { try await alice.acceptCall(call.sessionId) }.code == .server(.notReceiver))
            #expect(
                try await clientError { try await alice.initiateCall(to: "carol", type: .audio) }.code
                    == .server(.callBusySelf))
            #expect(try await clientError { try await bob.cancelCall(call.sessionId) }.code == .server(.notInitiator))
            #expect(try await clientError { try await bob.endCall(call.sessionId) }.code == .server(.notStarted))
            #expect(
                try await clientError { try await bob.acceptCall("0123456789abcdef0123456789abcdef") }.code
                    == .server(.sessionNotFound))
            let validation = try await clientError {
                try await alice.initiateCall(to: "carol", type: .audio, timeout: 0)
            }
            #expect(validation.code == .server(.validation))
            #expect(validation.message.contains("timeout"))
            let milliseconds = try await clientError {
                try await alice.initiateCall(to: "carol", type: .audio, timeout: .milliseconds(20))
            }
            #expect(milliseconds.code == .server(.validation) && milliseconds.message.contains("timeoutMs"))
            await alice.close()
            await bob.close()
        }
    }

    @Test("getActiveCall, and activeCall in the auth result of a late device")
    func activeCall() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            #expect(try await alice.getActiveCall() == nil)
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            #expect(try await alice.getActiveCall()?.sessionId == call.sessionId)
            let bob = try await ringd.connect("bob", device: "phone")
            #expect(bob.initialActiveCall?.sessionId == call.sessionId)
            #expect(bob.initialActiveCall?.status == .initiated)
            #expect(try await bob.getActiveCall()?.sessionId == call.sessionId)
            _ = try await bob.rejectCall(call.sessionId)
            #expect(try await alice.getActiveCall() == nil)
            await alice.close()
            await bob.close()
        }
    }

    @Test("getCallLogs pages newest first with a cursor, and filters")
    func callLogs() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            var sessions: [String] = []
            for _ in 0 ..< 3 {
                let call = try await alice.initiateCall(to: "bob", type: .audio).call
                _ = try await alice.cancelCall(call.sessionId)
                sessions.append(call.sessionId)
            }
            let first = try await alice.getCallLogs(CallLogFilter(limit: 2))
            #expect(first.logs.map(\.call.sessionId) == [sessions[2], sessions[1]])
            #expect(first.logs.allSatisfy { $0.direction == .outgoing && !$0.missed && $0.call.status == .cancelled })
            let cursor = try #require(first.next)
            let second = try await alice.getCallLogs(CallLogFilter(limit: 2, cursor: cursor))
            #expect(second.logs.map(\.call.sessionId) == [sessions[0]])
            #expect(second.next == nil)

            let bob = try await ringd.connect("bob", device: "phone")
            let missed = try await bob.getCallLogs(CallLogFilter(missedOnly: true, direction: .incoming, with: "alice"))
            #expect(missed.logs.count == 3)
            #expect(missed.logs.allSatisfy { $0.missed })
            #expect(try await bob.getCallLogs(CallLogFilter(direction: .outgoing)).logs.isEmpty)
            #expect(
                try await clientError { try await bob.getCallLogs(CallLogFilter(limit: 0)) }.code
                    == .server(.validation))
            await alice.close()
            await bob.close()
        }
    }

    @Test("reject and cancel reach the other side as CometChat notifications")
    func rejectAndCancel() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let bob = try await ringd.connect("bob", device: "phone")
            let aliceStreams = ClientStreams(alice), bobStreams = ClientStreams(bob)

            let rejectedCall = try await alice.initiateCall(to: "bob", type: .audio).call
            #expect(await bobStreams.notifications.next() == .incomingCallReceived(try await bobStreams.nextCall()))
            let rejected = try await bob.rejectCall(rejectedCall.sessionId, status: .busy)
            #expect(rejected.status == .busy)
            let rejectedEvent = try await aliceStreams.nextCall()
            #expect(await aliceStreams.notifications.next() == .outgoingCallRejected(rejectedEvent))

            let cancelledCall = try await alice.initiateCall(to: "bob", type: .video).call
            #expect(await bobStreams.notifications.next() == .incomingCallReceived(try await bobStreams.nextCall()))
            _ = try await alice.cancelCall(cancelledCall.sessionId)
            let cancelledEvent = try await bobStreams.nextCall()
            #expect(cancelledEvent.status == .cancelled)
            #expect(await bobStreams.notifications.next() == .incomingCallCancelled(cancelledEvent))
            await alice.close()
            await bob.close()
        }
    }

    @Test("a call answered on one device is cancelled on the other (answered elsewhere)")
    func answeredElsewhere() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let phone = try await ringd.connect("bob", device: "phone")
            let tablet = try await ringd.connect("bob", device: "tablet")
            let phoneStreams = ClientStreams(phone), tabletStreams = ClientStreams(tablet)
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            _ = try await phoneStreams.nextCall()
            #expect(
                await tabletStreams.notifications.next() == .incomingCallReceived(try await tabletStreams.nextCall()))
            _ = try await phone.acceptCall(call.sessionId)
            let elsewhere = try await tabletStreams.nextCall()
            #expect(elsewhere.status == .ongoing && elsewhere.acceptedBy == "phone")
            #expect(await tabletStreams.notifications.next() == .incomingCallCancelled(elsewhere))
            #expect(
                try await clientError { try await tablet.acceptCall(call.sessionId) }.code == .server(.alreadyJoined))
            await alice.close()
            await phone.close()
            await tablet.close()
        }
    }

    @Test("requests from several tasks at once all get their own results")
    func concurrentRequests() async throws {
        try await withRingd { ringd in
            let alice = try await ringd.connect("alice", device: "laptop")
            let call = try await alice.initiateCall(to: "bob", type: .audio).call
            try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0 ..< 50 {
                    group.addTask { try await alice.getActiveCall()?.sessionId }
                }
                for try await sessionId in group { #expect(sessionId == call.sessionId) }
            }
            await alice.close()
        }
    }
}
