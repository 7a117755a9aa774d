import SignalProtocol
import Testing

@testable import SignalServer

/// `webrtc.*`: the ICE servers as configured, the TURN secret and what a
/// TURN entry needs without it.
@Suite(.blocking) struct WebRTCConfigTests {
    @Test func serversSecretAndLifetimeFromFileAndEnvironment() throws {
        let config = try loadConfig(
            """
            {"webrtc": {"phone": false, "turnCredentialSeconds": 3600,
                        "iceServers": [{"urls": "stun:stun.example.com:3478"},
                                       {"urls": ["turn:turn.example.com:3478", "turns:turn.example.com:5349"]}]}}
            """, environment: ["RINGD_WEBRTC_TURN_SECRET": "a-secret-of-16-bytes-or-more"]
        ).get()
        #expect(!config.webrtc.phonePage)
        #expect(config.webrtc.turnCredentialSeconds == 3600)
        #expect(config.webrtc.turnSecret == "a-secret-of-16-bytes-or-more")
        #expect(
            config.webrtc.iceServers == [
                IceServer(urls: ["stun:stun.example.com:3478"]),
                IceServer(urls: ["turn:turn.example.com:3478", "turns:turn.example.com:5349"]),
            ])
        let fromEnvironment = try loadConfig(
            "{}",
            environment: [
                "RINGD_WEBRTC_ICE_SERVERS": #"[{"urls":["turn:127.0.0.1:3478"],"username":"u","credential":"p"}]"#
            ]
        ).get()
        #expect(
            fromEnvironment.webrtc.iceServers == [
                IceServer(urls: ["turn:127.0.0.1:3478"], username: "u", credential: "p")
            ])
        #expect(ServerConfig().webrtc.phonePage && ServerConfig().webrtc.iceServers.isEmpty)
    }

    @Test func aTURNServerNeedsCredentialsOrTheSecret() throws {
        let message = try configError(#"{"webrtc": {"iceServers": [{"urls": "stun:a"}, {"urls": "turn:b"}]}}"#)
        #expect(message.contains("entry 1 is a TURN server without \"username\""), "\(message)")
        #expect(message.contains("webrtc.turnSecret"))
    }

    @Test func badEntriesAreNamedWithoutEchoingThem() throws {
        let scheme = try configError(#"{"webrtc": {"iceServers": [{"urls": "https://turn.example.com"}]}}"#)
        #expect(
            scheme.contains("entry 0: https://turn.example.com is not a stun:, stuns:, turn: or turns: URL"),
            "\(scheme)")
        let half = try configError(#"{"webrtc": {"iceServers": [{"urls": "turn:b", "username": "u"}]}}"#)
        #expect(half.contains("username and credential must be set together"), "\(half)")
        #expect(!half.contains("\"u\""))
        let short = try configError(#"{"webrtc": {"turnSecret": "short"}}"#)
        #expect(short.contains("at least 16 bytes") && !short.contains("short\""), "\(short)")
    }
}
