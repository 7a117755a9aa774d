import Testing

@testable import SignalServer

/// The shipped development keys are refused on a listener beyond loopback
/// unless `auth.allowDevelopmentKeys` is true; the message says what to set.
@Suite(.blocking) struct DevelopmentKeysTests {
    static let advice =
        "set auth.authKeys/auth.apiKeys to your own secrets (e.g. `openssl rand -hex 32` each), "
        + "or auth.allowDevelopmentKeys: true for a trusted network"
    static let ownKeys = #""auth": {"authKeys": ["k-0c5e9a7d"], "apiKeys": ["a-91f2b6e4"]}"#

    @Test(arguments: [
        "0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "2001:db8::1", "ringd.example", "127.1", "::ffff:127.0.0.1",
    ])
    func theDefaultKeysAreRefusedBeyondLoopback(host: String) throws {
        let message = try configError(#"{"listen": {"host": "\#(host)"}}"#)
        #expect(message.contains(#""auth.authKeys" holds the development key "ringd-dev-auth-key""#), "\(message)")
        #expect(message.contains(#""auth.apiKeys" holds the development key "ringd-dev-api-key""#), "\(message)")
        #expect(message.contains(#""listen.host" \#(host) is not loopback"#), "\(message)")
        #expect(message.hasSuffix(Self.advice), "\(message)")
    }

    /// One development key left among the operator's own is enough to refuse;
    /// so is the environment setting the host.
    @Test func oneDevelopmentKeyOrTheEnvironmentIsEnough() throws {
        let apiOnly = try configError(#"{"listen": {"host": "0.0.0.0"}, "auth": {"authKeys": ["k-0c5e9a7d"]}}"#)
        #expect(apiOnly.contains("ringd-dev-api-key") && !apiOnly.contains("ringd-dev-auth-key"), "\(apiOnly)")
        let mixed = try configError(
            #"{"listen": {"host": "0.0.0.0"}, "auth": {"authKeys": ["k-0c5e9a7d", "ringd-dev-auth-key"], "apiKeys": ["a-91f2b6e4"]}}"#
        )
        #expect(mixed.contains(#""auth.authKeys" holds the development key "ringd-dev-auth-key""#), "\(mixed)")
        let environment = try configError("{}", environment: ["RINGD_LISTEN_HOST": "0.0.0.0"])
        #expect(environment.contains("ringd-dev-auth-key"), "\(environment)")
    }

    @Test(arguments: ["127.0.0.1", "127.4.5.6", "127.255.255.255", "::1", "0:0:0:0:0:0:0:1", "localhost", "LocalHost"])
    func loopbackListenersMayUseThem(host: String) throws {
        let config = try loadConfig(#"{"listen": {"host": "\#(host)"}}"#).get()
        #expect(config.authKeys == [ServerConfig.developmentAuthKey] && !config.allowDevelopmentKeys)
    }

    @Test func theFlagOrOwnKeysAllowAnyListener() throws {
        let flagged = try loadConfig(#"{"listen": {"host": "0.0.0.0"}, "auth": {"allowDevelopmentKeys": true}}"#).get()
        #expect(flagged.allowDevelopmentKeys && flagged.apiKeys == [ServerConfig.developmentAPIKey])
        let fromEnvironment = try loadConfig(
            "{}",
            environment: [
                "RINGD_LISTEN_HOST": "::",
                "RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS": "true",
            ]
        ).get()
        #expect(fromEnvironment.allowDevelopmentKeys)
        let own = try loadConfig(#"{"listen": {"host": "0.0.0.0"}, \#(Self.ownKeys)}"#).get()
        #expect(own.authKeys == ["k-0c5e9a7d"] && !own.allowDevelopmentKeys)
        #expect(try configError(#"{"auth": {"allowDevelopmentKeys": "yes"}}"#).contains("auth.allowDevelopmentKeys"))
    }

    /// TLS is for clients elsewhere, and a metrics listener beyond loopback
    /// says the host is reachable: either is enough to refuse the keys on a
    /// loopback listener; a loopback metrics listener is not.
    @Test func tlsOrAMetricsListenerBeyondLoopbackIsEnough() throws {
        let tls = try configError(#"{"tls": {"certificate": "/c.pem", "privateKey": "/k.pem"}}"#)
        #expect(tls.contains(#"TLS is configured ("tls.certificate")"#) && tls.contains("ringd-dev-auth-key"), "\(tls)")
        #expect(tls.hasSuffix(Self.advice), "\(tls)")
        let metrics = try configError(#"{"metrics": {"listen": "0.0.0.0:9464"}}"#)
        #expect(metrics.contains(#""metrics.listen" 0.0.0.0:9464 is not loopback"#), "\(metrics)")
        let both = try configError(#"{"listen": {"host": "::"}, "metrics": {"listen": "[::]:9464"}}"#)
        #expect(both.contains(#""listen.host" :: is not loopback and "metrics.listen""#), "\(both)")
        let local = try loadConfig(#"{"metrics": {"listen": "127.0.0.1:9464"}}"#).get()
        #expect(local.authKeys == [ServerConfig.developmentAuthKey])
        let flagged = try loadConfig(
            #"{"tls": {"certificate": "/c.pem", "privateKey": "/k.pem"}, "auth": {"allowDevelopmentKeys": true}}"#
        ).get()
        #expect(flagged.tlsCertificatePath == "/c.pem")
    }

    /// The repository's config.json (what `make run` starts) listens on
    /// loopback with the development keys, and so still loads.
    @Test func theRepositoryConfigStillLoads() throws {
        let config = try ConfigLoader.load(path: ConfigLoaderTests.repositoryConfig, environment: [:])
        #expect(ConfigLoader.isLoopback(config.host) && config.authKeys == [ServerConfig.developmentAuthKey])
    }
}
