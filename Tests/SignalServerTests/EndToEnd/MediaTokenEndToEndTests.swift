import Foundation
import SignalCrypto
import SignalProtocol
import TestSupport
import Testing

/// `getMediaToken` and its REST twin on the built ringd: a token for each
/// party of an ongoing call, checked by LiveKit's own verifier (PyPI
/// `livekit-api`, Tests/Media/verify_livekit_token.py), and refused to
/// anyone else, before accept, after the end and without a media server.
@Suite("EndToEnd: media room tokens", .blocking)
struct MediaTokenEndToEndTests {
    static let apiKey = "APIringdtest"
    static let apiSecret = "livekit-secret-0123456789abcdef0123456789"
    static let config = """
        {"media": {"livekit": {"url": "wss://media.example", "apiKey": "\(apiKey)", "apiSecret": "\(apiSecret)",
                               "tokenSeconds": 300}}}
        """

    @Test func thePartiesOfAnOngoingCallGetTokensLiveKitAccepts() throws {
        try withRingd(config: Self.config) { ringd in
            let profile = try SignalingIntegration.rest(
                port: ringd.port, "PUT", "/v1/users/bob", body: #"{"name":"Bob Builder"}"#)
            #expect(profile.status == 200, "\(profile)")
            let alice = try SignalingIntegration.Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
            let bob = try SignalingIntegration.Device.open(port: ringd.port, uid: "bob", deviceId: "b1")
            let carol = try SignalingIntegration.Device.open(port: ringd.port, uid: "carol", deviceId: "c1")
            let sessionId = try alice.initiate(to: "bob").call().sessionId
            func token(_ device: SignalingIntegration.Device) throws -> SignalingIntegration.Reply {
                try device.request("getMediaToken", [("sessionId", .string(sessionId))])
            }
            let early = try token(alice)
            #expect(early.code == "ERR_CALL_NOT_STARTED", "\(early)")
            #expect(try bob.accept(sessionId).ok)
            for (device, uid, name) in [(alice, "alice", nil), (bob, "bob", "Bob Builder")] {
                // Around each request: checking the previous token (a Python process) takes seconds under load.
                let before = Int64(Date().timeIntervalSince1970 * 1000)
                let reply = try token(device)
                let after = Int64(Date().timeIntervalSince1970 * 1000)
                let data = try #require(reply.data, "\(reply)")
                let token = try MediaToken(json: data)
                #expect(token.url == "wss://media.example")
                // Whole seconds in the token: up to one below the exact time.
                #expect(token.expiresAt >= before + 299_000 && token.expiresAt <= after + 300_000, "\(token)")
                try Self.expectLiveKitAccepts(token.token, room: sessionId, identity: uid, name: name)
            }
            let stranger = try token(carol)
            #expect(stranger.code == "ERR_CALL_NOT_A_PART", "\(stranger)")
            let rest = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/calls/\(sessionId)/media-token", body: #"{"uid":"bob"}"#)
            #expect(rest.status == 200, "\(rest)")
            try Self.expectLiveKitAccepts(
                try #require(rest.json?["token"]?.stringValue), room: sessionId, identity: "bob", name: "Bob Builder")
            let restStranger = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/calls/\(sessionId)/media-token", body: #"{"uid":"carol"}"#)
            #expect(restStranger.status == 409 && restStranger.errorCode == "ERR_CALL_NOT_A_PART", "\(restStranger)")
            let unknown = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/calls/nope/media-token", body: #"{"uid":"bob"}"#)
            #expect(unknown.status == 404 && unknown.errorCode == "ERR_CALL_SESSION_NOT_FOUND", "\(unknown)")
            #expect(try alice.end(sessionId).ok)
            let ended = try token(bob)
            #expect(ended.code == "ERR_CALL_TERMINATED", "\(ended)")
        }
    }

    @Test func withoutAMediaServerTheAnswerSaysSo() throws {
        try withRingd { ringd in
            let alice = try SignalingIntegration.Device.open(port: ringd.port, uid: "alice", deviceId: "a1")
            let reply = try alice.request("getMediaToken", [("sessionId", .string("s-1"))])
            #expect(reply.code == "ERR_MEDIA_NOT_CONFIGURED", "\(reply)")
            let rest = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/calls/s-1/media-token", body: #"{"uid":"alice"}"#)
            #expect(rest.status == 503 && rest.errorCode == "ERR_MEDIA_NOT_CONFIGURED", "\(rest)")
        }
    }

    /// Runs LiveKit's verifier on `token` and expects every check to pass.
    static func expectLiveKitAccepts(
        _ token: String, room: String, identity: String, name: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try PythonCheck.expect(
            "Tests/Media/verify_livekit_token.py",
            input: .object([
                ("token", .string(token)), ("apiKey", .string(apiKey)), ("apiSecret", .string(apiSecret)),
                ("room", .string(room)), ("identity", .string(identity)), ("name", name.map(JSONValue.string) ?? .null),
            ]),
            prints: [
                "ok the token verifies with the API key and secret", "ok the identity is the party's uid",
                "ok the name is the party's profile name", "ok the grant joins the call's room",
                "ok the grant publishes and subscribes",
                "ok another secret is refused",
            ], needing: "LiveKit's token verifier", sourceLocation: sourceLocation)
    }
}
