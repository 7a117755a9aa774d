import SignalProtocol
import TestSupport
import Testing

/// Server frames and result data: encoded by the server, parsed by clients,
/// the same values both ways.
@Suite(.blocking) struct ServerFrameTests {
    static let ringing = ClientFrameTests.call
    static let ended = Call(
        sessionId: "3f2a", callType: .video, status: .ended, initiator: "alice", receiver: "bob",
        initiatorDevice: "a-laptop", initiatedAt: 1_700_000_000_000, acceptedAt: 1_700_000_002_000,
        endedAt: 1_700_000_009_500,
        acceptedBy: "b-phone", endedBy: "alice", endReason: .hangup, timeoutMs: 45_000,
        metadata: .object([("topic", .string("standup"))]), seq: 17)

    static let placedWithId = Call(
        sessionId: "3f2b", callType: .audio, status: .initiated, initiator: "alice", receiver: "bob",
        initiatorDevice: "a-phone", initiatedAt: 1_700_000_000_000, timeoutMs: 30_000, seq: 4,
        clientCallId: "c-1")

    static let results: [(ResultData, RequestType)] = [
        (.authenticated(Authentication(uid: "alice", deviceId: "a1", activeCall: ringing)), .auth),
        (.authenticated(Authentication(uid: "alice", deviceId: "a1", activeCall: nil)), .auth),
        (
            .authenticated(
                Authentication(
                    uid: "alice", deviceId: "a1", activeCall: ringing, seq: 12,
                    resume: ResumeOutcome(resumed: true, calls: [ringing]))), .auth
        ),
        (
            .authenticated(
                Authentication(
                    uid: "alice", deviceId: "a1", activeCall: nil, seq: 12,
                    resume: ResumeOutcome(resumed: false, calls: []))), .auth
        ),
        (
            .authenticated(
                Authentication(
                    uid: "alice", deviceId: "a1", activeCall: nil, seq: 12, epoch: "9b1deb4d3b7d4bad",
                    resume: ResumeOutcome(resumed: false, calls: []))), .auth
        ),
        (.initiated(ringing, ringing: 2), .initiateCall),
        (.initiated(placedWithId, ringing: 1, replayed: true), .initiateCall),
        (.call(placedWithId), .cancelCall),
        (.call(ended), .endCall),
        (.call(ended), .acceptCall),
        (.activeCall(nil), .getActiveCall),
        (.activeCall(ringing), .getActiveCall),
        (
            .callLogs(
                CallLogPage(
                    logs: [CallLog(call: ended, for: "bob"), CallLog(call: ringing, for: "alice")],
                    next: "AAAAAAAAAAE")), .getCallLogs
        ),
        (.callLogs(CallLogPage(logs: [], next: nil)), .getCallLogs),
        (.signalled(delivered: true), .signal),
        (.signalled(delivered: false), .signal),
        (.iceServers(IceServerList(iceServers: [], expiresAt: nil)), .getIceServers),
        (
            .iceServers(
                IceServerList(
                    iceServers: [
                        IceServer(urls: ["stun:stun.example.com:3478"]),
                        IceServer(
                            urls: ["turn:turn.example.com:3478?transport=udp", "turns:turn.example.com:5349"],
                            username: "1700086400:alice", credential: "c2VjcmV0"),
                    ],
                    expiresAt: 1_700_086_400_000)), .getIceServers
        ),
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
        let signal = PeerSignal(
            sessionId: "3f2a", uid: "alice", deviceId: "a-laptop",
            payload: .object([("kind", .string("offer")), ("sdp", .string("v=0\r\n"))]))
        for frame: ServerFrame in [
            .call(Self.ended), .signal(signal), .result(id: nil, .failure(SignalError(.authTimeout, "no auth frame"))),
            .result(id: "9", .failure(SignalError(.callBusySelf, "alice is already in call 3f2a"))),
        ] {
            #expect(try ServerFrame.parse(frame.encoded) == frame)
        }
    }

    @Test func aSignalHasTheDocumentedWireForm() {
        let signal = PeerSignal(
            sessionId: "3f2a", uid: "bob", deviceId: "b-phone",
            payload: .object([("kind", .string("answer"))]))
        #expect(
            String(decoding: ServerFrame.signal(signal).encoded, as: UTF8.self)
                == #"{"type":"signal","sessionId":"3f2a","from":{"uid":"bob","deviceId":"b-phone"},"payload":{"kind":"answer"}}"#
        )
    }

    @Test func aCallNamesTheDeviceThatPlacedIt() throws {
        #expect(Self.ended.json["initiatorDevice"] == .string("a-laptop"))
        #expect(Self.ringing.json["initiatorDevice"] == .null)
        #expect(try Call(json: Self.ended.json).device(of: "alice") == "a-laptop")
        #expect(Self.ended.device(of: "bob") == "b-phone")
        #expect(Self.ended.device(of: "carol") == nil)
    }

    @Test func iceServerURLsMustHaveAnICEScheme() {
        #expect(
            throws: SignalError(.validation, "https://turn.example.com is not a stun:, stuns:, turn: or turns: URL")
        ) {
            try IceServer(json: .object([("urls", .array([.string("stun:a"), .string("https://turn.example.com")]))]))
        }
        #expect(throws: SignalError(.validation, "urls must not be empty")) {
            try IceServer(json: .object([("urls", .array([]))]))
        }
        #expect(
            (try? IceServer(json: .object([("urls", .string("stun:stun.example.com"))])))
                == IceServer(urls: ["stun:stun.example.com"]))
    }

    /// `ringingDevices` is on the wire only once a device acknowledged, so
    /// every other call reads as before; it round-trips in order.
    @Test func ringingDevicesAppearOnceAcknowledged() throws {
        #expect(Self.ringing.json["ringingDevices"] == nil)
        var acknowledged = Self.ringing
        acknowledged.ringingDevices = ["b-watch", "b-phone"]
        #expect(acknowledged.json["ringingDevices"] == .array([.string("b-watch"), .string("b-phone")]))
        #expect(try Call(json: acknowledged.json) == acknowledged)
        #expect(throws: SignalError(.validation, "ringingDevices must be an array of strings")) {
            guard case .object(var members) = Self.ringing.json else { return }
            members.append(("ringingDevices", .array([.integer(1)])))
            _ = try Call(json: .object(members))
        }
    }

    /// `clientCallId` and `replayed` appear only when set, so every other
    /// call and initiate result reads as before.
    @Test func clientCallIdAndReplayedShowOnlyWhenSet() {
        #expect(Self.placedWithId.json["clientCallId"] == .string("c-1"))
        #expect(Self.ringing.json["clientCallId"] == nil)
        #expect(ResultData.initiated(Self.placedWithId, ringing: 1, replayed: true).json["replayed"] == .bool(true))
        #expect(ResultData.initiated(Self.placedWithId, ringing: 1).json["replayed"] == nil)
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
            try ResultData(
                json: .object([
                    ("user", .object([("uid", .string("a"))])), ("deviceId", .string("d")),
                    ("activeCall", .integer(1)),
                ]), answering: .auth)
        }
        #expect(throws: SignalError(.badRequest, "invalid JSON: expected a member name at byte 1")) {
            try ServerFrame.parse(Array("{".utf8))
        }
    }
}
