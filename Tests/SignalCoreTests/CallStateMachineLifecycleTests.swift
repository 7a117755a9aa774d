import CoreTestSupport
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore

/// `shutdown(now:)`.
@Suite(.blocking) struct CallStateMachineShutdownTests {
    @Test func shutdownCancelsRingingAndEndsOngoingCalls() throws {
        let h = MachineHarness()
        let a1 = h.online("alice", "a-phone"), a2 = h.online("alice", "a-laptop")
        let b1 = h.online("bob")
        let c1 = h.online("carol")
        let d1 = h.online("dave")
        let ringing = h.ring(from: a1, to: "bob")
        h.advance(by: 1_000)
        let ongoing = h.ring(from: c1, to: "dave")
        h.accept(ongoing, by: d1)
        h.advance(by: 4_000)

        let output = h.shutdown()
        #expect(output.saves.count == 2)
        let cancelled = try #require(output.saves.first { $0.sessionId == ringing })
        let ended = try #require(output.saves.first { $0.sessionId == ongoing })
        #expect(cancelled.status == .cancelled)
        #expect(cancelled.endReason == .serverShutdown)
        #expect(cancelled.endedBy == nil)
        #expect(cancelled.endedAt == MachineHarness.start + 5_000)
        #expect(ended.status == .ended)
        #expect(ended.endReason == .serverShutdown)
        #expect(ended.endedBy == nil)
        #expect(ended.durationMs == 4_000)

        for device in [a1, a2, b1] {
            #expect(output.events(to: device) == [cancelled])
        }
        for device in [c1, d1] {
            #expect(output.events(to: device) == [ended])
        }
        #expect(output.events.count == 5)
        #expect(output.replies.isEmpty && output.schedules.isEmpty)
        #expect(h.machine.liveCalls.isEmpty)
        for uid in ["alice", "bob", "carol", "dave"] {
            #expect(h.live(uid) == nil)
        }
        // Terminal calls never change again.
        #expect(h.advance(by: 120_000).isEmpty)
        #expect(h.shutdown().isEmpty)
    }

    @Test func shutdownReachesCallsWhosePartiesAreOffline() {
        let h = MachineHarness()
        let a1 = h.online("alice")
        let id = h.ring(from: a1, to: "bob")
        let output = h.shutdown()
        #expect(output.saves.map(\.sessionId) == [id])
        #expect(output.eventAddresses == addresses(a1))
    }

    @Test func shutdownWithoutCallsDoesNothing() {
        let (h, _, _, _, _) = MachineHarness.aliceAndBob()
        #expect(h.shutdown().isEmpty)
    }
}

/// Cross-cutting rules: who hears about a change, in which order, and what is saved.
@Suite(.blocking) struct CallStateMachineFanOutTests {
    @Test func aWholeCallIsSavedOncePerChangeAndHeardInOrder() {
        let (h, a1, a2, b1, b2) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        let id = h.ring(from: a1, to: "bob")
        h.advance(by: 1_000)
        h.accept(id, by: b2)
        h.advance(by: 1_000)
        h.end(id, by: a1)

        #expect(h.allSaves.map(\.status) == [.initiated, .ongoing, .ended])
        #expect(h.allSaves.allSatisfy { $0.sessionId == id })
        #expect(h.allEvents(to: a2).map(\.status) == [.initiated, .ongoing, .ended])
        #expect(h.allEvents(to: b1).map(\.status) == [.initiated, .ongoing, .ended])
        // Each actor misses exactly the event of its own request.
        #expect(h.allEvents(to: a1).map(\.status) == [.ongoing])
        #expect(h.allEvents(to: b2).map(\.status) == [.initiated, .ended])
        #expect(h.allEvents(to: carol).isEmpty)
        // Every event is the saved snapshot of the same change.
        for output in h.outputs where !output.saves.isEmpty {
            #expect(output.events.allSatisfy { $0.call == output.saves.last })
        }
    }

    @Test func theActorNeverHearsItsOwnRequest() {
        let (h, a1, a2, b1, _) = MachineHarness.aliceAndBob()
        let first = h.ring(from: a1, to: "bob")
        h.cancel(first, by: a2)
        let second = h.ring(from: a2, to: "bob")
        h.reject(second, by: b1, status: .busy)
        let third = h.ring(from: a1, to: "bob")
        h.accept(third, by: b1)
        h.end(third, by: b1)

        for output in h.outputs {
            for reply in output.replies {
                #expect(
                    !output.events.contains { $0.address == reply.address },
                    "a device got both the result and an event: \(output.actions)")
            }
        }
    }

    @Test func errorRepliesSaveNothingAndTellNobody() {
        let (h, a1, a2, b1, _) = MachineHarness.aliceAndBob()
        let carol = h.online("carol")
        let id = h.ring(from: a1, to: "bob")
        let failures: [SignalingOutput] = [
            h.initiate(from: a1, to: "alice"),
            h.initiate(from: a2, to: "carol"),
            h.accept(id, by: a1),
            h.reject(id, by: a1, status: .rejected),
            h.reject(id, by: b1, status: .cancelled),
            h.cancel(id, by: b1),
            h.end(id, by: a1),
            h.accept(id, by: carol),
            h.accept(id, by: h.newDevice("bob", "unregistered")),
        ]
        for output in failures {
            #expect(output.saves.isEmpty)
            #expect(output.actions.count == 1)
            #expect(output.replies.count == 1)
            if case .success? = output.replies.first?.result { Issue.record("expected an error: \(output.actions)") }
        }
        #expect(h.allSaves.count == 1)
        #expect(h.live("alice")?.status == .initiated)
    }

    @Test func theReplyEchoesTheRequestId() {
        let (h, a1, _, _, _) = MachineHarness.aliceAndBob()
        let ok = h.send(.getActiveCall, from: a1, id: "req-42")
        let failed = h.send(
            .initiateCall(receiverId: "alice", callType: .audio, timeout: nil, metadata: nil),
            from: a1, id: "req-43")
        #expect(ok.replies.map(\.id) == ["req-42"])
        #expect(failed.replies.map(\.id) == ["req-43"])
    }

    @Test func terminalCallsNeverChange() {
        let (h, a1, _, b1, _) = MachineHarness.aliceAndBob()
        let id = h.ring(from: a1, to: "bob", timeout: 10)
        h.reject(id, by: b1)
        h.disconnect(a1)
        #expect(h.advance(by: 60_000).isEmpty)
        #expect(h.shutdown().isEmpty)
        #expect(h.accept(id, by: b1).saves.isEmpty)
        #expect(h.allSaves.map(\.status) == [.initiated, .rejected])
    }

    @Test func independentCallsDoNotInterfere() {
        let h = MachineHarness()
        let a = h.online("alice"), b = h.online("bob"), c = h.online("carol"), d = h.online("dave")
        let ab = h.ring(from: a, to: "bob")
        let cd = h.ring(from: c, to: "dave")
        #expect(ab != cd)
        let accepted = h.accept(ab, by: b)
        #expect(accepted.eventAddresses == addresses(a))
        let rejected = h.reject(cd, by: d)
        #expect(rejected.eventAddresses == addresses(c))
        #expect(h.live("alice")?.status == .ongoing)
        #expect(h.live("carol") == nil)
        // Carol is free again and may call dave; alice is still busy.
        #expect(h.initiate(from: c, to: "alice").resultCall(to: c)?.status == .busy)
        #expect(h.initiate(from: c, to: "dave").resultCall(to: c)?.status == .initiated)
    }
}
