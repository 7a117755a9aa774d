import RingCallKit
import SignalProtocol
import Testing

extension CoordinatorTableTests {
    static let outgoing = CallUUID(uuidString: "7C9E6679-7425-40DE-944B-E07FC1F90AE7")!
    static let placedId = String(repeating: "0", count: 31) + "1"

    /// Rows beyond the acceptance list: races, and the paths around them.
    static let moreRows: [Row] = incomingRows + outgoingRows

    static let incomingRows: [Row] = [
        Row(
            name: "a call answered elsewhere while ringing",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.answeredElsewhere(sid)
            },
            callKit: [.reported(alice), .ended(uuid, .answeredElsewhere)], server: [.ringing(sessionId: sid)],
            app: [.ended(sessionId: sid, .reported(.answeredElsewhere))], connects: 0),
        Row(
            name: "a call declined elsewhere while ringing",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.serverChanges(sid) {
                    $0.status = .rejected
                    $0.endedBy = "bob"
                    $0.endReason = .rejected
                }
            },
            callKit: [.reported(alice), .ended(uuid, .declinedElsewhere)], server: [.ringing(sessionId: sid)],
            app: [.ended(sessionId: sid, .reported(.declinedElsewhere))], connects: 0),
        Row(
            name: "two pushes racing a server event",
            script: { h in
                h.login()
                let call = h.ring(sid)
                h.push(call)
                h.answeredElsewhere(sid)
                h.push(call)
            },
            callKit: [
                .reported(alice), .ended(uuid, .answeredElsewhere), .reported(alice), .ended(uuid, .answeredElsewhere),
            ],
            server: [.ringing(sessionId: sid)], app: [.ended(sessionId: sid, .reported(.answeredElsewhere))],
            connects: 0),
        Row(
            name: "the event comes before the push",
            script: { h in
                h.login()
                let call = h.ring(sid)
                h.server[sid]?.status = .cancelled
                h.server[sid]?.endedBy = "alice"
                h.perform(h.coordinator.serverCall(h.server[sid]!))
                h.push(call)
            },
            callKit: [.reported(alice), .ended(uuid, .remoteEnded)], server: [],
            app: [.ended(sessionId: sid, .reported(.remoteEnded))], connects: 0),
        Row(
            name: "end before connected",
            script: { h in
                h.push(h.ring(sid))
                h.answer(sid)
                h.endTapped(sid)
                h.login()
                #expect(h.server[sid]?.status == .rejected)
            },
            callKit: [.reported(alice), .failed(.answer(uuid)), .fulfilled(.end(uuid))],
            server: [.ringing(sessionId: sid), .rejectCall(sessionId: sid, reason: nil)],
            app: [.ended(sessionId: sid, .endedHere)]),
        Row(
            name: "end while the accept is in flight",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.holdResults = true
                h.answer(sid)
                h.endTapped(sid)
                h.holdResults = false
                h.releaseHeld()
                #expect(h.server[sid]?.status == .ended)
            },
            callKit: [.reported(alice), .failed(.answer(uuid)), .fulfilled(.end(uuid))],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid), .endCall(sessionId: sid)],
            app: [.ended(sessionId: sid, .endedHere)], connects: 0),
        Row(
            name: "the connection drops with the accept in flight",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.holdResults = true
                h.answer(sid)
                h.connectionLost()
                h.holdResults = false
                h.releaseHeld(failing: "CLIENT_CONNECTION_LOST")
                h.login()
            },
            callKit: [.reported(alice), .fulfilled(.answer(uuid))],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid), .acceptCall(sessionId: sid)],
            app: [.presented(sessionId: sid, status: .ongoing)], connects: 0),
        Row(
            name: "an accept whose result was lost, heard again on resume",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.holdResults = true
                h.answer(sid)
                h.connectionLost()
                h.holdResults = false
                h.loseHeld()
                h.resumed(sid)
                h.login()
            },
            callKit: [.reported(alice), .fulfilled(.answer(uuid))],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid)],
            app: [.presented(sessionId: sid, status: .ongoing)], connects: 0),
        Row(
            name: "a login that fails, then an answer",
            script: { h in
                h.push(h.ring(sid))
                h.perform(h.coordinator.connectionChanged(.connecting))
                h.perform(h.coordinator.connectionChanged(.disconnected))
                #expect(h.connectRequests == 1, "a failed login is not retried at once")
                h.answer(sid)
                h.login()
            },
            callKit: [.reported(alice), .fulfilled(.answer(uuid))],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid)],
            app: [.presented(sessionId: sid, status: .ongoing)], connects: 2),
        Row(
            name: "an answer that waits past the bound",
            script: { h in
                h.push(h.ring(sid))
                h.answer(sid)
                h.advance(by: 15_000)
                h.login()
                #expect(h.server[sid]?.status == .initiated, "the call rings on at the other devices")
            },
            callKit: [.reported(alice), .failed(.answer(uuid)), .ended(uuid, .failed)], server: [],
            app: [.ended(sessionId: sid, .reported(.failed))]),
        Row(
            name: "hang up an answered call",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.answer(sid)
                h.mute(sid, true)
                h.hold(sid)
                h.endTapped(sid)
            },
            callKit: [
                .reported(alice), .fulfilled(.answer(uuid)), .fulfilled(.setMuted(uuid)), .failed(.setHeld(uuid)),
                .fulfilled(.end(uuid)),
            ],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid), .endCall(sessionId: sid)],
            app: [
                .presented(sessionId: sid, status: .ongoing), .muted(sessionId: sid, true),
                .ended(sessionId: sid, .endedHere),
            ], connects: 0),
        Row(
            name: "the caller hangs up",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.answer(sid)
                h.serverChanges(sid) {
                    $0.status = .ended
                    $0.endedBy = "alice"
                    $0.endReason = .hangup
                }
            },
            callKit: [.reported(alice), .fulfilled(.answer(uuid)), .ended(uuid, .remoteEnded)],
            server: [.ringing(sessionId: sid), .acceptCall(sessionId: sid)],
            app: [.presented(sessionId: sid, status: .ongoing), .ended(sessionId: sid, .reported(.remoteEnded))],
            connects: 0),
        Row(
            name: "a ring heard on the socket, with no push",
            script: { h in
                h.login()
                h.perform(h.coordinator.serverCall(h.ring(sid)))
            },
            callKit: [.reported(alice)], server: [.ringing(sessionId: sid)], connects: 0),
        Row(
            name: "CallKit refuses the call",
            script: { h in
                h.refuseReports = true
                h.login()
                h.push(h.ring(sid))
            },
            callKit: [.reported(alice)], server: [], connects: 0),
        Row(
            name: "an unreadable push",
            script: { h in
                h.push(json: .object([("aps", .object([])), ("callerUid", .string("alice"))]))
            },
            callKit: [
                .reported(
                    IncomingCallReport(
                        uuid: CallUUID(sessionId: "ringcallkit-invalid-push-1"), handle: "unknown",
                        displayName: "Unknown", hasVideo: false)),
                .ended(CallUUID(sessionId: "ringcallkit-invalid-push-1"), .failed),
            ],
            server: [], connects: 0),
        Row(
            name: "a caller without a profile name",
            script: { h in
                h.login()
                h.push(h.ring(sid, callerName: nil))
            },
            callKit: [
                .reported(IncomingCallReport(uuid: uuid, handle: "alice", displayName: "alice", hasVideo: false))
            ],
            server: [.ringing(sessionId: sid)], connects: 0),
    ]

    static let outgoingRows: [Row] = [
        Row(
            name: "an outgoing call answered",
            script: { h in
                h.login()
                h.start(outgoing, to: "alice", type: .video)
                h.calleeAnswers(placedId)
            },
            callKit: [
                .fulfilled(.start(outgoing)), .connecting(outgoing), .connected(outgoing),
            ],
            server: [.initiateCall(to: "alice", type: .video, clientCallId: outgoing.uuidString)],
            app: [.presented(sessionId: placedId, status: .ongoing)], connects: 0),
        Row(
            name: "an outgoing call declined",
            script: { h in
                h.login()
                h.start(outgoing, to: "alice", type: .audio)
                h.calleeDeclines(placedId)
            },
            callKit: [.fulfilled(.start(outgoing)), .connecting(outgoing), .ended(outgoing, .remoteEnded)],
            server: [.initiateCall(to: "alice", type: .audio, clientCallId: outgoing.uuidString)],
            app: [.ended(sessionId: placedId, .reported(.remoteEnded))], connects: 0),
        Row(
            name: "an outgoing call unanswered",
            script: { h in
                h.login()
                h.start(outgoing, to: "alice", type: .audio)
                h.ringsOut(placedId)
            },
            callKit: [.fulfilled(.start(outgoing)), .connecting(outgoing), .ended(outgoing, .unanswered)],
            server: [.initiateCall(to: "alice", type: .audio, clientCallId: outgoing.uuidString)],
            app: [.ended(sessionId: placedId, .reported(.unanswered))], connects: 0),
        Row(
            name: "an outgoing call cancelled",
            script: { h in
                h.login()
                h.start(outgoing, to: "alice", type: .audio)
                h.endTapped(outgoing)
                #expect(h.server[placedId]?.status == .cancelled)
            },
            callKit: [.fulfilled(.start(outgoing)), .connecting(outgoing), .fulfilled(.end(outgoing))],
            server: [
                .initiateCall(to: "alice", type: .audio, clientCallId: outgoing.uuidString),
                .cancelCall(sessionId: placedId),
            ],
            app: [.ended(sessionId: placedId, .endedHere)], connects: 0),
        Row(
            name: "both call each other at once",
            script: { h in
                h.login()
                h.push(h.ring(sid))
                h.start(outgoing, to: "alice", type: .audio)
                h.serverChanges(sid) {
                    $0.status = .ended
                    $0.endedBy = "alice"
                    $0.endReason = .hangup
                }
            },
            callKit: [
                .reported(alice), .fulfilled(.start(outgoing)), .connecting(outgoing), .connected(outgoing),
                .ended(uuid, .answeredElsewhere), .ended(outgoing, .remoteEnded),
            ],
            server: [
                .ringing(sessionId: sid), .initiateCall(to: "alice", type: .audio, clientCallId: outgoing.uuidString),
            ],
            app: [.presented(sessionId: sid, status: .ongoing), .ended(sessionId: sid, .reported(.remoteEnded))],
            connects: 0),
        Row(
            name: "an outgoing call started offline",
            script: { h in
                h.start(outgoing, to: "alice", type: .audio)
                h.login()
            },
            callKit: [.fulfilled(.start(outgoing)), .connecting(outgoing)],
            server: [.initiateCall(to: "alice", type: .audio, clientCallId: outgoing.uuidString)]),
        Row(
            name: "an outgoing call that cannot be placed",
            script: { h in
                h.start(outgoing, to: "alice", type: .audio)
                h.advance(by: 15_000)
                h.login()
            },
            callKit: [.failed(.start(outgoing))], server: [], app: [.ended(sessionId: nil, .reported(.failed))]),
    ]

    @Test(arguments: rows)
    func row(_ row: Row) {
        let harness = CallKitHarness()
        row.script(harness)
        #expect(harness.provider == row.callKit, "CallKit")
        #expect(harness.sent == row.server, "ringd")
        #expect(harness.app == row.app, "the app")
        #expect(harness.connectRequests == row.connects, "connect requests")
    }

    @Test func everyRowHasItsOwnName() {
        #expect(Set(Self.rows.map(\.name)).count == Self.rows.count)
    }
}
