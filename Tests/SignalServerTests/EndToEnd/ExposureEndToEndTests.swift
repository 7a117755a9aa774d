import Foundation
import SignalProtocol
import TestSupport
import Testing

/// The built ringd where it could be reached from elsewhere: the shipped
/// development keys are refused on requests a proxy forwarded, the test API
/// answers only this machine's loopback, and a scrape-only key reads
/// `GET /metrics` and nothing else.
@Suite("EndToEnd: what reaches ringd from elsewhere", .blocking)
struct ExposureEndToEndTests {
    static let proxyHeaders = [
        "X-Forwarded-For: 203.0.113.9", "Forwarded: for=203.0.113.9;proto=https", "X-Real-IP: 203.0.113.9",
    ]

    @Test func theDevelopmentKeysAreRefusedOnWhatAProxyForwarded() throws {
        try withRingd { ringd in
            let direct = try SignalingIntegration.rest(port: ringd.port, "POST", "/v1/users/alice/tokens")
            #expect(direct.status == 201, "\(direct)")
            for header in Self.proxyHeaders {
                let minted = try SignalingIntegration.rest(
                    port: ringd.port, "POST", "/v1/users/alice/tokens", headers: [header])
                #expect(minted.status == 401 && minted.errorCode == "ERR_UNAUTHORIZED", "\(header): \(minted)")
                #expect(minted.errorMessage.contains(#"the development key "ringd-dev-api-key" is refused"#))
                #expect(minted.errorMessage.contains("set auth.apiKeys to your own secret"), "\(minted)")
                let scrape = try SignalingIntegration.rest(port: ringd.port, "GET", "/metrics", headers: [header])
                #expect(scrape.status == 401, "\(header): \(scrape)")
            }
            let proxied = try SignalingIntegration.Device.connect(
                port: ringd.port, headers: ["X-Forwarded-For: 1.2.3.4"])
            let refused = try proxied.auth(uid: "alice", deviceId: "a1")
            #expect(!refused.ok && refused.code == "ERR_AUTH_FAILED", "\(refused)")
            #expect(refused.message.contains(#""ringd-dev-auth-key" is refused"#), "\(refused)")
            #expect(refused.message.contains("set auth.authKeys"), "\(refused)")
            let local = try SignalingIntegration.Device.connect(port: ringd.port)
            #expect(try local.auth(uid: "alice", deviceId: "a2").ok)
        }
    }

    /// A token minted without the development keys is as good through a
    /// proxy: only the public keys are refused there.
    @Test func ownKeysAndTokensPassAProxy() throws {
        let config = #"{"auth": {"authKeys": ["own-auth-key-5b1e"], "apiKeys": ["own-api-key-77c2"]}}"#
        try withRingd(config: config) { ringd in
            let minted = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/users/alice/tokens", apiKey: "own-api-key-77c2",
                headers: ["X-Forwarded-For: 203.0.113.9"])
            #expect(minted.status == 201, "\(minted)")
            let device = try SignalingIntegration.Device.connect(
                port: ringd.port, headers: ["X-Forwarded-For: 1.2.3.4"])
            #expect(try device.auth(uid: "alice", deviceId: "a1", key: "own-auth-key-5b1e").ok)
        }
    }

    @Test func theFlagLetsTheDevelopmentKeysThroughAProxy() throws {
        try withRingd(config: #"{"auth": {"allowDevelopmentKeys": true}}"#) { ringd in
            let minted = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/users/alice/tokens", headers: ["X-Forwarded-For: 203.0.113.9"])
            #expect(minted.status == 201, "\(minted)")
        }
    }

    static let testKey = "test-key-0123456789abcdef"
    static let testing = #"{"testing": {"enabled": true, "key": "\#(testKey)"}}"#

    /// A peer beyond loopback: a connection over loopback from one of this
    /// machine's other addresses (the server sees that address).
    static let beyondLoopback = TestSocket.localAddressBeyondLoopback()

    @Test(.enabled(if: beyondLoopback != nil, "this machine has no address beyond loopback"))
    func theTestAPIAnswersOnlyLoopbackPeers() throws {
        let source = try #require(Self.beyondLoopback)
        try withRingd(config: Self.testing) { ringd in
            let headers = ["X-Test-Key: \(Self.testKey)"]
            let local = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/v1/test/clock", apiKey: nil, headers: headers)
            #expect(local.status == 200, "\(local)")
            for path in ["/v1/test/clock", "/v1/test/transitions", "/v1/test/tap"] {
                let remote = try SignalingIntegration.rest(
                    port: ringd.port, "GET", path, apiKey: nil, headers: headers, source: source)
                #expect(remote.status == 404 && remote.errorMessage == "no resource at \(path)", "\(path): \(remote)")
            }
            let reset = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/test/reset", apiKey: nil, headers: headers, source: source)
            #expect(reset.status == 404, "\(reset)")
            let proxied = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/v1/test/clock", apiKey: nil,
                headers: headers + ["X-Forwarded-For: 203.0.113.9"])
            #expect(proxied.status == 404, "a loopback peer forwarding from elsewhere: \(proxied)")
            let health = try SignalingIntegration.rest(port: ringd.port, "GET", "/healthz", apiKey: nil, source: source)
            #expect(health.status == 200, "the rest of the server answers \(source): \(health)")
        }
    }

    @Test(.enabled(if: beyondLoopback != nil, "this machine has no address beyond loopback"))
    func allowRemoteOpensTheTestAPIAndSaysSo() throws {
        let source = try #require(Self.beyondLoopback)
        let config = #"{"testing": {"enabled": true, "key": "\#(Self.testKey)", "allowRemote": true}}"#
        try withRingd(config: config) { ringd in
            let remote = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/v1/test/clock", apiKey: nil, headers: ["X-Test-Key: \(Self.testKey)"],
                source: source)
            #expect(remote.status == 200, "\(remote)")
            #expect(ringd.log.contains("testing.allowRemote: the test API answers every peer"), "\(ringd.log)")
        }
    }

    @Test func aMetricsKeyReadsMetricsAndNothingElse() throws {
        let metricsKey = "scrape-only-key-3f9a61c2"
        try withRingd(config: #"{"metrics": {"key": "\#(metricsKey)"}}"#) { ringd in
            let bearer = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/metrics", apiKey: nil, headers: ["Authorization: Bearer \(metricsKey)"])
            #expect(bearer.status == 200 && bearer.response.bodyText.contains("ringd_connections_open"), "\(bearer)")
            let header = try SignalingIntegration.rest(port: ringd.port, "GET", "/metrics", apiKey: metricsKey)
            #expect(header.status == 200, "\(header)")
            let apiKey = try SignalingIntegration.rest(port: ringd.port, "GET", "/metrics")
            #expect(apiKey.status == 200, "the API key still reads metrics: \(apiKey)")
            let mint = try SignalingIntegration.rest(
                port: ringd.port, "POST", "/v1/users/alice/tokens", apiKey: metricsKey)
            #expect(mint.status == 401 && mint.errorMessage == "unknown API key", "\(mint)")
            let history = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/v1/users/alice/calls", apiKey: metricsKey)
            #expect(history.status == 401, "\(history)")
            let wrong = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/metrics", apiKey: nil, headers: ["Authorization: Bearer not-the-key"])
            #expect(wrong.status == 401, "\(wrong)")
        }
    }

    /// `limits.restRequestsPerSecond` per API key: a key over it gets 429
    /// with `Retry-After`, another key goes on.
    @Test func anAPIKeyOverItsRateGets429AndRetryAfter() throws {
        let config =
            #"{"auth": {"apiKeys": ["key-one-0c5e9a7d", "key-two-91f2b6e4"]}, "limits": {"restRequestsPerSecond": 3}}"#
        try withRingd(config: config) { ringd in
            let answers = try (0 ..< 6).map { _ in
                try SignalingIntegration.rest(port: ringd.port, "GET", "/v1/calls/none", apiKey: "key-one-0c5e9a7d")
            }
            #expect(answers.prefix(3).allSatisfy { $0.status == 404 }, "the bucket holds a second's worth")
            let limited = answers.filter { $0.status == 429 }
            #expect(!limited.isEmpty, "\(answers.map(\.status))")
            #expect(
                limited.allSatisfy { $0.errorCode == "ERR_RATE_LIMITED" && $0.response.header("Retry-After") == "1" })
            let other = try SignalingIntegration.rest(
                port: ringd.port, "GET", "/v1/calls/none", apiKey: "key-two-91f2b6e4")
            #expect(other.status == 404, "another key has its own bucket: \(other)")
        }
    }
}
