import RingCallKit
import SignalProtocol
import Testing

@Suite struct CallUUIDTests {
    @Test func aSessionIdsHexDigitsAreTheUUIDsBytes() {
        let uuid = CallUUID(sessionId: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d")
        #expect(uuid.uuidString == "9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6D")
        #expect(CallUUID(sessionId: "9B1DEB4D3B7D4BAD9BDD2B0D7B3DCB6D") == uuid, "hex case does not matter")
    }

    @Test func versionAndVariantBitsAreLeftAsTheSessionHasThem() {
        // Digit 13 (the version) and 17 (the variant) are the session's own.
        let uuid = CallUUID(sessionId: "00000000000000000000000000000000")
        #expect(uuid.uuidString == "00000000-0000-0000-0000-000000000000")
        #expect(
            CallUUID(sessionId: "ffffffffffffffffffffffffffffffff").uuidString == "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"
        )
    }

    @Test func otherSessionIdsHashToAStableUUID() throws {
        let first = CallUUID(sessionId: "call-42")
        #expect(first == CallUUID(sessionId: "call-42"))
        #expect(first != CallUUID(sessionId: "call-43"))
        #expect(CallUUID(uuidString: first.uuidString) == first, "a well-formed UUID")
        // 31 hex digits, or one that is not hex, are hashed too.
        #expect(
            CallUUID(sessionId: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6").uuidString != "9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6")
        #expect(CallUUID(sessionId: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6g").uuidString.hasPrefix("9B1DEB4D") == false)
    }

    @Test func theFNV1a128HashMatchesItsReferenceValue() {
        // FNV-1a 128 of the empty string is the offset basis; of "a" it is
        // d228cb696f1a8caf78912b704e4a8964 (the FNV reference test vectors).
        #expect(CallUUID(sessionId: "").uuidString == "6C62272E-07BB-0142-62B8-21756295C58D")
        #expect(CallUUID(sessionId: "a").uuidString == "D228CB69-6F1A-8CAF-7891-2B704E4A8964")
    }

    @Test func uuidStringsAreReadInEitherCase() {
        let lower = CallUUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90ae7")
        #expect(lower?.uuidString == "7C9E6679-7425-40DE-944B-E07FC1F90AE7")
        #expect(CallUUID(uuidString: "7c9e6679742540de944be07fc1f90ae7") == nil)
        #expect(CallUUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90ae") == nil)
        #expect(CallUUID(uuidString: "7c9e6679-7425-40de-944b-e07fc1f90aeg") == nil)
    }
}

@Suite struct VoIPPushTests {
    @Test func readsRingdsAPNsBody() throws {
        let body = try JSONValue.parse(
            #"{"aps":{},"sessionId":"9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d","callerUid":"alice","callType":"video","initiatedAt":1764466800000,"ringTimeout":30,"callerName":"Alice Liddell","callerAvatarUrl":"https://cdn.example.com/alice.png"}"#
        )
        let push = try VoIPPush(json: body)
        #expect(
            push
                == VoIPPush(
                    sessionId: "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d", callerUid: "alice", callType: .video,
                    initiatedAt: 1_764_466_800_000, ringTimeout: 30, callerName: "Alice Liddell",
                    callerAvatarUrl: "https://cdn.example.com/alice.png"))
        #expect(push.ringDeadline == 1_764_466_830_000)
        #expect(push.displayName == "Alice Liddell")
    }

    @Test func readsFCMsStringValues() throws {
        let push = try VoIPPush(strings: [
            "type": "incoming_call", "sessionId": "9b1deb4d3b7d4bad9bdd2b0d7b3dcb6d", "callerUid": "alice",
            "callType": "audio", "initiatedAt": "1764466800000", "ringTimeout": "30",
        ])
        #expect(push.callType == .audio && push.ringDeadline == 1_764_466_830_000)
        #expect(push.callerName == nil && push.displayName == "alice")
    }

    @Test func aPushWithoutASessionOrCallerIsRefused() {
        #expect(throws: VoIPPushError.self) { try VoIPPush(json: .object([("callerUid", .string("alice"))])) }
        #expect(throws: VoIPPushError.self) { try VoIPPush(json: .object([("sessionId", .string("s"))])) }
        #expect(throws: VoIPPushError.self) { try VoIPPush(json: .array([])) }
        #expect(throws: VoIPPushError.self) { try VoIPPush(strings: ["sessionId": "", "callerUid": "alice"]) }
    }

    @Test func anUnknownCallTypeRingsAsAudioAndAnEmptyNameIsNone() throws {
        let push = try VoIPPush(strings: [
            "sessionId": "s", "callerUid": "alice", "callType": "hologram", "callerName": "",
        ])
        #expect(push.callType == .audio && push.callerName == nil && push.ringDeadline == nil)
    }
}
