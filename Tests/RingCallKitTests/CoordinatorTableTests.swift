import RingCallKit
import SignalProtocol
import Testing

/// The failure-case table of docs/IOS.md, row for row: each row is a
/// script run against the recording fake of CallKit and the model of
/// ringd, and what CallKit, ringd and the app saw, in order. A row's name
/// here is its name in the document (CoordinatorDocumentTests checks both
/// hold the same rows).
@Suite struct CoordinatorTableTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var script: @Sendable (CallKitHarness) -> Void
        /// What CallKit was told, in order.
        var callKit: [ProviderEvent]
        /// The requests sent to ringd, in order.
        var server: [ServerCommand]
        /// What the app's delegate was told.
        var app: [AppEvent] = []
        /// How many times the adapter was asked to connect and log in.
        var connects = 1

        var testDescription: String { name }
    }

    static let sid = "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d"
    static let uuid = CallUUID(sessionId: sid)
    static let alice = IncomingCallReport(uuid: uuid, handle: "alice", displayName: "Alice Liddell", hasVideo: false)

    static let rows: [Row] = acceptanceRows + moreRows

    /// The rows the acceptance list names.
    static let acceptanceRows: [Row] = [
        Row(
            name: "push before login",
            script: { h in
                h.push(h.ring(sid))
                #expect(h.sent.isEmpty, "nothing is sent before the login")
                h.login()
            },
            callKit: [.reported(alice)], server: [.ringing(sessionId: sid)]),
        Row(
            name: "push for a call already cancelled",
            script: { h in
                let call = h.ring(sid)
                h.callerCancels(sid)
                h.push(call)
                h.login()
            },
            callKit: [.reported(alice), .ended(uuid, .remoteEnded)], server: [.ringing(sessionId: sid)],
            app: [.ended(sessionId: sid, .reported(.remoteEnded))]),
        Row(
            name: "push for a call already answered elsewhere",
            script: { h in
                let call = h.ring(sid)
                h.answeredElsewhere(sid)
                h.push(call)
                h.login()
            },
            callKit: [.reported(alice), .ended(uuid, .answeredElsewhere)], server: [.ringing(sessionId: sid)],
            app: [.ended(sessionId: sid, .reported(.answeredElsewhere))]),
        Row(
            name: "push for a call already unanswered",
            script: { h in
                let call = h.ring(sid)
                h.clock.advance(by: 30_000)
                h.ringsOut(sid)
                h.push(call)
                h.login()
            },
            callKit: [.reported(alice), .ended(uuid, .unanswered)], server: [.ringing(sessionId: sid)],
            app: [.ended(sessionId: sid, .reported(.unanswered))]),
        Row(
            name: "the same session pushed twice",
            script: { h in
                let call = h.ring(sid)
                h.push(call)
                h.push(call)
                h.login()
                #expect(h.showing == [uuid], "one call in CallKit")
            },
            callKit: [.reported(alice), .reported(alice)], server: [.ringing(sessionId: sid)]),
        Row(
            name: "answer from the lock screen while offline",
            script: { h in
                h.push(h.ring(sid))
                h.answer(sid)
                #expect(h.scheduledTimers == [.answer(uuid)])
                h.advance(by: 5_000)
                h.login()
                #expect(h.scheduledTimers.isEmpty)
            },
            callKit: [.reported(alice), .fulfilled(.answer(uuid))],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid)],
            app: [.presented(sessionId: sid, status: .ongoing)]),
        Row(
            name: "decline",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.endTapped(sid)
                #expect(h.server[sid]?.status == .rejected)
            },
            callKit: [.reported(alice), .fulfilled(.end(uuid))],
            server: [.ringing(sessionId: sid), .rejectCall(sessionId: sid, reason: nil)],
            app: [.ended(sessionId: sid, .endedHere)], connects: 0),
        Row(
            name: "caller cancels while ringing",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.callerCancels(sid)
            },
            callKit: [.reported(alice), .ended(uuid, .remoteEnded)], server: [.ringing(sessionId: sid)],
            app: [.ended(sessionId: sid, .reported(.remoteEnded))], connects: 0),
        Row(
            name: "an audio call",
            script: { h in
                h.login()
                h.push(h.ring(sid, type: .audio))
            },
            callKit: [.reported(alice)], server: [.ringing(sessionId: sid)], connects: 0),
        Row(
            name: "a video call",
            script: { h in
                h.login()
                h.push(h.ring(sid, type: .video))
            },
            callKit: [
                .reported(IncomingCallReport(uuid: uuid, handle: "alice", displayName: "Alice Liddell", hasVideo: true))
            ],
            server: [.ringing(sessionId: sid)], connects: 0),
        Row(
            name: "the server restarts mid-ring",
            script: { h in
                let call = h.ring(sid)
                h.push(call)
                h.login()
                // ringd stops: the socket drops, and the next start pushes
                // the ringing call again.
                h.connectionLost()
                h.push(call)
                h.answer(sid)
                #expect(h.sent == [.ringing(sessionId: sid)], "the answer waits for the reconnect")
                h.login()
            },
            callKit: [.reported(alice), .reported(alice), .fulfilled(.answer(uuid))],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid)],
            app: [.presented(sessionId: sid, status: .ongoing)]),
    ]
}
