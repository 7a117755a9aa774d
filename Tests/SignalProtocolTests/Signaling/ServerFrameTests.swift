import SignalProtocol
import Testing
import TestSupport

/// Server frames and result data: encoded by the server, parsed by clients,
/// the same values both ways.
@Suite(.blocking) struct ServerFrameTests {
    static let ringing = ClientFrameTests.call
    static let ended = Call(sessionId: "3f2a", callType: .video, status: .ended, initiator: "alice", receiver: "bob",
                            initiatedAt: 1_700_000_000_000, acceptedAt: 1_700_000_002_000, endedAt: 1_700_000_009_500,
                            acceptedBy: "b-phone", endedBy: "alice", endReason: .hangup, timeoutMs: 45_000,
                            metadata: .object([("topic", .string("standup"))]), seq: 17)

    static let results: [(ResultData, RequestType)] = [
        (.authenticated(Authentication(uid: "alice", deviceId: "a1", activeCall: ringing)), .auth),
        (.authenticated(Authentication(uid: "alice", deviceId: "a1", activeCall: nil)), .auth),
        (.authenticated(Authentication(uid: "alice", deviceId: "a1", activeCall: ringing, seq: 12,
                                       resume: ResumeOutcome(resumed: true, calls: [ringing]))), .auth),
        (.authenticated(Authentication(uid: "alice", deviceId: "a1", activeCall: nil, seq: 12,
                                       resume: ResumeOutcome(resumed: false, calls: []))), .auth),
        (.initiated(ringing, ringing: 2), .initiateCall),
        (.call(ended), .endCall),
        (.call(ended), .acceptCall),
        (.activeCall(nil), .getActiveCall),
        (.activeCall(ringing), .getActiveCall),
        (.callLogs(CallLogPage(logs: [CallLog(call: ended, for: "bob"), CallLog(call: ringing, for: "alice")],
                               next: "AAAAAAAAAAE")), .getCallLogs),
        (.callLogs(CallLogPage(logs: [], next: nil)), .getCallLogs),
    ]

    @Test func resultsRoundTrip() throws {
        for (data, type) in Self.results {
            let frame = ServerFrame.result(id: "r1", .success(data.json))
            guard case .result(let id, .success(let json)) = try ServerFrame.parse(frame.encoded) else {
                Issue.record("not a successful result: \(frame)")
                continue
            }
            #expect(id == "r1")
            #expect(try ResultData(json: json, answering: type) == data)
        }
    }

    @Test func eventsAndErrorsRoundTrip() throws {
        for frame: ServerFrame in [.call(Self.ended), .result(id: nil, .failure(SignalError(.authTimeout, "no auth frame"))),
                                   .result(id: "9", .failure(SignalError(.callBusySelf, "alice is already in call 3f2a")))] {
            #expect(try ServerFrame.parse(frame.encoded) == frame)
        }
    }

    @Test func durationIsDerivedOnTheWire() {
        #expect(Self.ended.json["durationMs"] == .integer(7500))
        #expect(Self.ringing.json["durationMs"] == .null)
    }

    @Test func malformedDataNamesTheMember() {
        #expect(throws: SignalError(.validation, "ringing must be an integer")) {
            try ResultData(json: .object([("call", Self.ringing.json)]), answering: .initiateCall)
        }
        #expect(throws: SignalError(.validation, "activeCall must be an object or null")) {
            try ResultData(json: .object([("user", .object([("uid", .string("a"))])), ("deviceId", .string("d")),
                                          ("activeCall", .integer(1))]), answering: .auth)
        }
        #expect(throws: SignalError(.badRequest, "invalid JSON: expected a member name at byte 1")) {
            try ServerFrame.parse(Array("{".utf8))
        }
    }
}
