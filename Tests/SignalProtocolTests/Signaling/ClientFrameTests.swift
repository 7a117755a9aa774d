import SignalProtocol
import TestSupport
import Testing

/// Every client frame encodes to what the parser reads back, byte for byte
/// as documented in docs/PROTOCOL.md.
@Suite(.blocking) struct ClientFrameTests {
    static let call = Call(
        sessionId: "3f2a", callType: .video, status: .initiated, initiator: "alice", receiver: "bob",
        initiatedAt: 1_700_000_000_000, timeoutMs: 45_000)

    static let requests: [ClientRequest] = [
        .auth(.authKey(uid: "alice", key: "ringd-dev-auth-key"), deviceId: "a-phone"),
        .auth(.token("v1.abc.def"), deviceId: nil),
        .auth(.token("v1.abc.def"), deviceId: "a-phone", resume: ResumePoint(deviceId: "a-phone", afterSeq: 41)),
        .auth(
            .token("v1.abc.def"), deviceId: "a-phone",
            resume: ResumePoint(deviceId: "a-phone", afterSeq: 41, epoch: "9b1deb4d3b7d4bad.7715139306624029838.2")),
        .initiateCall(
            receiverId: "bob", callType: .video, timeout: 30,
            metadata: .object([("topic", .string("standup")), ("n", .integer(3))])),
        .initiateCall(receiverId: "bob", callType: .audio, timeout: nil, metadata: nil),
        .initiateCall(receiverId: "bob", callType: .audio, timeout: .milliseconds(200), metadata: nil),
        .initiateCall(
            receiverId: "bob", callType: .video, timeout: nil, metadata: nil,
            clientCallId: "7c9e6679-7425-40de-944b-e07fc1f90ae7"),
        .acceptCall(sessionId: "3f2a"),
        .ringing(sessionId: "3f2a"),
        .rejectCall(sessionId: "3f2a", status: .busy),
        .rejectCall(sessionId: "3f2a", status: .cancelled),
        .rejectCall(sessionId: "3f2a", status: .rejected, reason: "Can't talk, in a meeting"),
        .cancelCall(sessionId: "3f2a"),
        .endCall(sessionId: "3f2a"),
        .getActiveCall,
        .getCallLogs(CallLogFilter()),
        .getCallLogs(
            CallLogFilter(
                limit: 5, cursor: "AAAAAAAAAAE", callType: .audio, missedOnly: true,
                direction: .incoming, with: "bob")),
        .getCallLogs(CallLogFilter(limit: 100, status: .ended, direction: .outgoing)),
        .registerPushToken(
            try! PushRegistration(
                platform: .apnsVoip, token: String(repeating: "ab", count: 32),
                topic: "com.example.app", environment: .sandbox)),
        .registerPushToken(
            try! PushRegistration(
                platform: .apnsVoip, token: String(repeating: "ab", count: 32),
                alertToken: String(repeating: "cd", count: 32))),
        .registerPushToken(
            try! PushRegistration(platform: .fcm, token: "fcm-token:" + String(repeating: "x", count: 40))),
        .unregisterPushToken,
        .signal(
            sessionId: "3f2a",
            payload: .object([
                ("kind", .string("candidate")),
                ("candidate", .object([("sdpMid", .string("0"))])),
            ])),
        .getIceServers,
        .getMediaToken(sessionId: "3f2a"),
        .setDoNotDisturb(DoNotDisturb(mode: .busy)),
        .setDoNotDisturb(DoNotDisturb(mode: .silent, until: 1_700_000_360_000)),
        .setDoNotDisturb(.off),
    ]

    @Test(arguments: requests)
    func roundTrips(_ request: ClientRequest) throws {
        let frame = ClientFrame(id: "r1", request: request)
        #expect(try ClientFrame.parse(frame.encoded) == frame)
    }

    @Test func theWireFormIsTheDocumentedOne() {
        let frames: [(ClientRequest, String)] = [
            (
                .auth(.authKey(uid: "alice", key: "k"), deviceId: "a1"),
                #"{"type":"auth","id":"1","uid":"alice","authKey":"k","deviceId":"a1"}"#
            ),
            (.auth(.token("t"), deviceId: nil), #"{"type":"auth","id":"1","authToken":"t"}"#),
            (
                .auth(.token("t"), deviceId: "a1", resume: ResumePoint(deviceId: "a1", afterSeq: 7)),
                #"{"type":"auth","id":"1","authToken":"t","deviceId":"a1","resume":{"deviceId":"a1","afterSeq":7}}"#
            ),
            (
                .auth(.token("t"), deviceId: nil, resume: ResumePoint(deviceId: "a1", afterSeq: 7, epoch: "e1")),
                #"{"type":"auth","id":"1","authToken":"t","resume":{"deviceId":"a1","afterSeq":7,"epoch":"e1"}}"#
            ),
            (
                .initiateCall(receiverId: "bob", callType: .audio, timeout: 30, metadata: nil),
                #"{"type":"initiateCall","id":"1","receiverId":"bob","callType":"audio","timeout":30}"#
            ),
            (
                .initiateCall(receiverId: "bob", callType: .audio, timeout: .milliseconds(200), metadata: nil),
                #"{"type":"initiateCall","id":"1","receiverId":"bob","callType":"audio","timeoutMs":200}"#
            ),
            (
                .initiateCall(receiverId: "bob", callType: .audio, timeout: nil, metadata: nil, clientCallId: "c-1"),
                #"{"type":"initiateCall","id":"1","receiverId":"bob","callType":"audio","clientCallId":"c-1"}"#
            ),
            (
                .rejectCall(sessionId: "s", status: .rejected),
                #"{"type":"rejectCall","id":"1","sessionId":"s","status":"rejected"}"#
            ),
            (.getActiveCall, #"{"type":"getActiveCall","id":"1"}"#),
            (
                .getCallLogs(CallLogFilter(limit: 10, missedOnly: true)),
                #"{"type":"getCallLogs","id":"1","limit":10,"callStatus":"missed"}"#
            ),
            (
                .registerPushToken(
                    try! PushRegistration(
                        platform: .apnsVoip, token: String(repeating: "0f", count: 32),
                        topic: "com.example.app")),
                #"{"type":"registerPushToken","id":"1","platform":"apns-voip","token":"\#(String(repeating: "0f", count: 32))","topic":"com.example.app"}"#
            ),
            (.unregisterPushToken, #"{"type":"unregisterPushToken","id":"1"}"#),
            (
                .signal(sessionId: "s", payload: .object([("kind", .string("offer")), ("sdp", .string("v=0"))])),
                #"{"type":"signal","id":"1","sessionId":"s","payload":{"kind":"offer","sdp":"v=0"}}"#
            ),
            (.getIceServers, #"{"type":"getIceServers","id":"1"}"#),
            (.getMediaToken(sessionId: "s"), #"{"type":"getMediaToken","id":"1","sessionId":"s"}"#),
            (.ringing(sessionId: "s"), #"{"type":"ringing","id":"1","sessionId":"s"}"#),
            (
                .setDoNotDisturb(DoNotDisturb(mode: .silent, until: 1_700_000_360_000)),
                #"{"type":"setDoNotDisturb","id":"1","mode":"silent","until":1700000360000}"#
            ),
            (
                .rejectCall(sessionId: "s", status: .busy, reason: "Driving"),
                #"{"type":"rejectCall","id":"1","sessionId":"s","status":"busy","reason":"Driving"}"#
            ),
        ]
        for (request, text) in frames {
            #expect(String(decoding: ClientFrame(id: "1", request: request).encoded, as: UTF8.self) == text)
        }
    }

    @Test func everyRequestTypeIsCovered() {
        #expect(Set(Self.requests.map(\.type)) == Set(RequestType.allCases))
    }

    @Test func refusalsKeepTheIdWhenThereIsOne() {
        #expect(
            throws: ClientFrame.ParseError(id: "7", error: SignalError(.unknownType, #"unknown frame type "dance""#))
        ) {
            try ClientFrame.parse(Array(#"{"type":"dance","id":"7"}"#.utf8))
        }
        #expect(
            throws: ClientFrame.ParseError(
                id: nil, error: SignalError(.badRequest, "id must be a string of 1 to 64 bytes of UTF-8"))
        ) {
            try ClientFrame.parse(Array(#"{"type":"getActiveCall"}"#.utf8))
        }
        #expect(
            throws: ClientFrame.ParseError(
                id: "2", error: SignalError(.validation, "receiverId must be \(Identifier.rule)"))
        ) {
            try ClientFrame.parse(
                Array(#"{"type":"initiateCall","id":"2","receiverId":"a b","callType":"audio"}"#.utf8))
        }
        #expect(
            throws: ClientFrame.ParseError(
                id: "3", error: SignalError(.validation, "resume.deviceId must be the deviceId of the frame"))
        ) {
            try ClientFrame.parse(
                Array(
                    #"{"type":"auth","id":"3","authToken":"t","deviceId":"a","resume":{"deviceId":"b","afterSeq":1}}"#
                        .utf8))
        }
        #expect(
            throws: ClientFrame.ParseError(
                id: "4", error: SignalError(.validation, "resume.afterSeq must be an integer of 0 or more"))
        ) {
            try ClientFrame.parse(
                Array(#"{"type":"auth","id":"4","authToken":"t","resume":{"deviceId":"b","afterSeq":-1}}"#.utf8))
        }
        let tooLong = String(repeating: "e", count: ClientFrame.maxEpochBytes + 1)
        for epoch in [#""""#, "7", #""\#(tooLong)""#] {
            #expect(throws: ClientFrame.ParseError.self) {
                try ClientFrame.parse(
                    Array(
                        #"{"type":"auth","id":"5","authToken":"t","resume":{"deviceId":"b","afterSeq":1,"epoch":\#(epoch)}}"#
                            .utf8))
            }
        }
    }

    /// `clientCallId` is 1 to 64 characters of the identifier alphabet:
    /// both edges pass, one more, none, or another character fails.
    @Test func aClientCallIdIsAShortIdentifier() throws {
        func frame(_ clientCallId: String) -> [UInt8] {
            Array(
                #"{"type":"initiateCall","id":"6","receiverId":"bob","callType":"audio","clientCallId":"\#(clientCallId)"}"#
                    .utf8)
        }
        for id in ["a", String(repeating: "x", count: 64), "A-z_0.9@host"] {
            let parsed = try ClientFrame.parse(frame(id))
            #expect(
                parsed.request
                    == .initiateCall(
                        receiverId: "bob", callType: .audio, timeout: nil, metadata: nil, clientCallId: id))
        }
        let refused = ClientFrame.ParseError(
            id: "6",
            error: SignalError(.validation, "clientCallId must be 1 to 64 characters of A-Z a-z 0-9 . _ - @"))
        for id in ["", String(repeating: "x", count: 65), "a b", "é", "a/b"] {
            #expect(throws: refused, "\(id)") { try ClientFrame.parse(frame(id)) }
        }
        #expect(
            throws: ClientFrame.ParseError(id: "6", error: SignalError(.validation, "clientCallId must be a string"))
        ) {
            try ClientFrame.parse(
                Array(#"{"type":"initiateCall","id":"6","receiverId":"bob","callType":"audio","clientCallId":7}"#.utf8))
        }
    }

    /// The id's bound is in UTF-8 bytes, checked at each edge: 64 bytes of
    /// ASCII, 32 two-byte letters and 16 four-byte emoji pass; one byte more
    /// fails, and so does one letter with 20,000 combining marks (one
    /// character, 40 KB), which counting characters let through.
    @Test func theIdIsBoundedInBytes() throws {
        let refused = ClientFrame.ParseError(
            id: nil, error: SignalError(.badRequest, "id must be a string of 1 to 64 bytes of UTF-8"))
        func frame(_ id: String) -> [UInt8] { Array(#"{"type":"getActiveCall","id":"\#(id)"}"#.utf8) }
        for id in [
            String(repeating: "a", count: 64), String(repeating: "é", count: 32), String(repeating: "😀", count: 16),
            "a", String(repeating: "é", count: 31) + "ab",
        ] {
            #expect(try ClientFrame.parse(frame(id)).id == id)
        }
        let combining = "a" + String(repeating: "\u{301}", count: 20_000)
        #expect(combining.count == 1 && combining.utf8.count == 40_001)
        for id in [
            "", String(repeating: "a", count: 65), String(repeating: "é", count: 32) + "a",
            String(repeating: "😀", count: 16) + "a", "a" + String(repeating: "\u{301}", count: 32), combining,
        ] {
            #expect(throws: refused, "\(id.utf8.count) bytes") { try ClientFrame.parse(frame(id)) }
        }
    }

    /// A signal's payload is an object of at most 16 KiB of JSON: exactly
    /// that passes, one byte more fails, and so does anything not an object.
    @Test func aSignalPayloadIsAnObjectOfAtMost16KiB() throws {
        func frame(payload: String) -> [UInt8] {
            Array(#"{"type":"signal","id":"5","sessionId":"s","payload":\#(payload)}"#.utf8)
        }
        func object(bytes: Int) -> String {
            let wrapper = #"{"sdp":""}"#.utf8.count
            return #"{"sdp":""# + String(repeating: "x", count: bytes - wrapper) + #""}"#
        }
        #expect(object(bytes: ClientFrame.maxSignalPayloadBytes).utf8.count == 16_384)
        let parsed = try ClientFrame.parse(frame(payload: object(bytes: ClientFrame.maxSignalPayloadBytes)))
        guard case .signal("s", let payload) = parsed.request else { Issue.record("not a signal: \(parsed)"); return }
        #expect(payload["sdp"]?.stringValue?.utf8.count == 16_384 - 10)
        #expect(
            throws: ClientFrame.ParseError(
                id: "5", error: SignalError(.validation, "payload must be at most 16384 bytes of JSON"))
        ) {
            try ClientFrame.parse(frame(payload: object(bytes: ClientFrame.maxSignalPayloadBytes + 1)))
        }
        for payload in [#""offer""#, "[1]", "null", "7"] {
            #expect(
                throws: ClientFrame.ParseError(id: "5", error: SignalError(.validation, "payload must be an object")),
                "\(payload)"
            ) {
                try ClientFrame.parse(frame(payload: payload))
            }
        }
        #expect(throws: ClientFrame.ParseError(id: "5", error: SignalError(.validation, "payload must be an object"))) {
            try ClientFrame.parse(Array(#"{"type":"signal","id":"5","sessionId":"s"}"#.utf8))
        }
    }

    @Test func aResumeWithoutADeviceIdResumesAsTheDeviceItNames() throws {
        let frame = try ClientFrame.parse(
            Array(#"{"type":"auth","id":"1","authToken":"t","resume":{"deviceId":"b","afterSeq":9}}"#.utf8))
        #expect(frame.request == .auth(.token("t"), deviceId: "b", resume: ResumePoint(deviceId: "b", afterSeq: 9)))
    }

    /// A reason is 1 to 140 characters (not bytes: a reply in any script
    /// fits the same length).
    @Test func aRejectReasonIsOneToAHundredFortyCharacters() throws {
        func frame(_ reason: String) -> [UInt8] {
            Array(#"{"type":"rejectCall","id":"6","sessionId":"s","reason":"\#(reason)"}"#.utf8)
        }
        let longest = String(repeating: "é", count: 140)
        guard case .rejectCall("s", .rejected, let reason?) = try ClientFrame.parse(frame(longest)).request else {
            Issue.record("not a reject with a reason")
            return
        }
        #expect(reason == longest)
        for bad in ["", String(repeating: "é", count: 141)] {
            #expect(
                throws: ClientFrame.ParseError(
                    id: "6", error: SignalError(.validation, "reason must be 1 to 140 characters")),
                "\(bad.count) characters"
            ) {
                try ClientFrame.parse(frame(bad))
            }
        }
    }
}
