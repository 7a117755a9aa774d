import SignalProtocol
import TestSupport
import Testing

@testable import SignalServer

#if canImport(Glibc)
    import Glibc
#endif

/// A temporary configuration file, removed by ``remove()``.
struct TempConfigFile {
    let path: String

    init(_ contents: String) throws {
        var template = Array("/tmp/ringd-config-test-XXXXXX.json".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 5) }
        guard fd >= 0 else { throw TestSocketError("mkstemps failed") }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw TestSocketError("short write to \(path)") }
    }

    func remove() { unlink(path) }
}

/// Loads `contents` as a configuration file; returns the config or the error.
func loadConfig(_ contents: String, environment: [String: String] = [:]) throws -> Result<ServerConfig, ConfigError> {
    let file = try TempConfigFile(contents)
    defer { file.remove() }
    return Result { () throws(ConfigError) in try ConfigLoader.load(path: file.path, environment: environment) }
}

/// The error message of a load that must fail.
func configError(
    _ contents: String, environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> String {
    switch try loadConfig(contents, environment: environment) {
    case .success:
        Issue.record("the configuration loaded", sourceLocation: sourceLocation)
        return ""
    case .failure(let error):
        return error.message
    }
}

@Suite(.blocking) struct ConfigLoaderTests {
    /// The repository's `config.json`, found from this file's location.
    static let repositoryConfig = Repository.root() + "/config.json"

    @Test func repositoryDefaultsLoadAndMatchServerConfig() throws {
        let config = try ConfigLoader.load(path: Self.repositoryConfig, environment: [:])
        let defaults = ServerConfig()
        #expect(config.host == defaults.host)
        #expect(config.port == defaults.port)
        #expect(config.threads == defaults.threads)
        #expect(config.logLevel == defaults.logLevel)
        #expect(config.maxRequestBodyBytes == defaults.maxRequestBodyBytes)
        #expect(config.handshakeTimeout == defaults.handshakeTimeout)
        #expect(config.compression == defaults.compression)
        #expect(config.compressionThresholdBytes == defaults.compressionThresholdBytes)
        #expect(config.compressionContextTakeover == defaults.compressionContextTakeover)
        #expect(config.maxMessageBytes == defaults.maxMessageBytes)
        #expect(config.pingInterval == defaults.pingInterval)
        #expect(config.pingTimeout == defaults.pingTimeout)
        #expect(config.maxConnections == defaults.maxConnections)
        #expect(config.outboundSoftLimit == defaults.outboundSoftLimit)
        #expect(config.outboundHardLimit == defaults.outboundHardLimit)
    }

    @Test func everyKeyIsApplied() throws {
        let config = try loadConfig(
            """
            {"listen": {"host": "0.0.0.0", "port": 9000}, "threads": 3, "logLevel": "debug",
             "http": {"maxBodyBytes": 100}, "auth": {"allowDevelopmentKeys": true},
             "ws": {"maxMessageBytes": 2048, "handshakeTimeoutSeconds": 2.5,
                    "pingIntervalSeconds": 1, "pingTimeoutSeconds": 3},
             "limits": {"maxConnections": 50, "outboundSoftLimitBytes": 2048, "outboundHardLimitBytes": 4096,
                        "initiatesPerMinute": 12}}
            """
        ).get()
        #expect(config.host == "0.0.0.0")
        #expect(config.allowDevelopmentKeys)
        #expect(config.port == 9000)
        #expect(config.threads == 3)
        #expect(config.logLevel == .debug)
        #expect(config.maxRequestBodyBytes == 100)
        #expect(config.maxMessageBytes == 2048)
        #expect(config.handshakeTimeout == 2.5)
        #expect(config.pingInterval == 1)
        #expect(config.pingTimeout == 3)
        #expect(config.maxConnections == 50)
        #expect(config.outboundSoftLimit == 2048)
        #expect(config.outboundHardLimit == 4096)
        #expect(config.initiatesPerMinute == 12)
        #expect(ServerConfig().initiatesPerMinute == 0, "off unless set")
    }

    @Test func compressionKeysFromFileAndEnvironment() throws {
        let file = try loadConfig(
            #"{"ws": {"compression": true, "compressionThresholdBytes": 0, "compressionContextTakeover": true}}"#
        ).get()
        #expect(file.compression && file.compressionContextTakeover)
        #expect(file.compressionThresholdBytes == 0)
        #expect(file.webSocket.compression?.contextTakeover == true)
        let environment = try loadConfig(
            "{}",
            environment: [
                "RINGD_WS_COMPRESSION": "true", "RINGD_WS_COMPRESSION_THRESHOLD_BYTES": "1024",
                "RINGD_WS_COMPRESSION_CONTEXT_TAKEOVER": "false",
            ]
        ).get()
        #expect(environment.webSocket.compression?.thresholdBytes == 1024)
        #expect(environment.webSocket.compression?.contextTakeover == false)
        #expect(try loadConfig("{}").get().webSocket.compression == nil)
        #expect(try configError(#"{"ws": {"compression": "yes"}}"#).contains("ws.compression"))
        #expect(try configError("{}", environment: ["RINGD_WS_COMPRESSION": "1"]).contains("RINGD_WS_COMPRESSION"))
        #expect(try configError(#"{"ws": {"compressionThresholdBytes": -1}}"#).contains("ws.compressionThresholdBytes"))
    }

    @Test func emptyObjectGivesTheDefaults() throws {
        let config = try loadConfig("{}").get()
        #expect(config.port == ServerConfig().port)
        #expect(config.maxMessageBytes == ServerConfig().maxMessageBytes)
    }

    @Test func unknownKeyIsNamed() throws {
        let message = try configError(#"{"ws": {"maxMesageBytes": 1000}}"#)
        #expect(message.contains("ws.maxMesageBytes"), "\(message)")
        let top = try configError(#"{"listen": {"port": 1}, "colour": "blue"}"#)
        #expect(top.contains("colour"), "\(top)")
    }

    @Test(arguments: [#""abc""#, "70000", "-1", "80.5", "null", "true"])
    func badPortIsNamed(value: String) throws {
        let message = try configError(#"{"listen": {"port": \#(value)}}"#)
        #expect(message.contains("listen.port"), "\(message)")
    }

    @Test func aBadWebhookEndpointIsPinpointedWithoutItsSecret() throws {
        let good = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let short = "whsec_c2hvcnQ="
        let endpoints =
            #"[{"url":"https://a.example/h","secrets":["\#(good)"]},{"url":"https://b.example/h","secrets":["\#(short)"]}]"#
        let message = try configError(#"{"webhooks": {"endpoints": \#(endpoints)}}"#)
        #expect(
            message.contains("webhooks.endpoints")
                && message.contains("endpoint 2: a webhook secret must encode 24 to 64 bytes"),
            "\(message)")
        #expect(!message.contains(short) && !message.contains(good), "no secret in \(message)")
        let fromEnvironment = try configError("{}", environment: ["RINGD_WEBHOOKS_ENDPOINTS": endpoints])
        #expect(
            fromEnvironment.contains("RINGD_WEBHOOKS_ENDPOINTS") && fromEnvironment.contains("endpoint 2:"),
            "\(fromEnvironment)")
        #expect(!fromEnvironment.contains(short), "\(fromEnvironment)")
        let twice =
            #"[{"url":"https://a.example/h","secrets":["\#(good)"]},{"url":"https://a.example/h","secrets":["\#(good)"]}]"#
        #expect(
            try configError(#"{"webhooks": {"endpoints": \#(twice)}}"#).contains(
                "endpoint 2: https://a.example/h is configured twice"))
        let loaded = try loadConfig(
            #"{"webhooks": {"endpoints": [{"url":"http://127.0.0.1:9/h","secrets":["\#(good)"],"events":["call_ended"]}]}}"#
        ).get()
        #expect(loaded.webhooks.endpoints.first?.events == [.callEnded])
    }

    @Test func callsUnreachableIsRingOrFail() throws {
        #expect(ServerConfig().unreachable == .ring)
        #expect(try loadConfig(#"{"calls": {"unreachable": "fail"}}"#).get().unreachable == .fail)
        #expect(try loadConfig("{}", environment: ["RINGD_CALLS_UNREACHABLE": "fail"]).get().unreachable == .fail)
        #expect(try configError(#"{"calls": {"unreachable": "drop"}}"#).contains("calls.unreachable"))
    }

    @Test func otherBadValuesAreNamed() throws {
        #expect(try configError(#"{"logLevel": "loud"}"#).contains("logLevel"))
        #expect(try configError(#"{"ws": {"maxMessageBytes": 10}}"#).contains("ws.maxMessageBytes"))
        #expect(try configError(#"{"ws": {"pingIntervalSeconds": "5"}}"#).contains("ws.pingIntervalSeconds"))
        #expect(try configError(#"{"listen": {"host": ""}}"#).contains("listen.host"))
        #expect(try configError(#"{"listen": 8080}"#).contains("listen"))
        #expect(try configError(#"{"limits": {"initiatesPerMinute": -1}}"#).contains("limits.initiatesPerMinute"))
    }

    @Test func inconsistentValuesAreRejected() throws {
        let ping = try configError(#"{"ws": {"pingIntervalSeconds": 10, "pingTimeoutSeconds": 5}}"#)
        #expect(ping.contains("ws.pingTimeoutSeconds"), "\(ping)")
        let limits = try configError(#"{"limits": {"outboundSoftLimitBytes": 8192, "outboundHardLimitBytes": 4096}}"#)
        #expect(limits.contains("limits.outboundHardLimitBytes"), "\(limits)")
    }

    @Test func mediaKeysAreAppliedAndSetTogether() throws {
        let config = try loadConfig(
            #"{"media": {"livekit": {"url": "wss://m.example", "apiKey": "APIk", "apiSecret": "\#(String(repeating: "s", count: 32))", "tokenSeconds": 120}}}"#
        ).get()
        #expect(config.media.isConfigured && config.media.url == "wss://m.example" && config.media.tokenSeconds == 120)
        #expect(!(try loadConfig("{}").get().media.isConfigured))
        let partial = try configError(#"{"media": {"livekit": {"url": "wss://m.example"}}}"#)
        #expect(partial.contains("must be set together"), "\(partial)")
        #expect(try configError(#"{"media": {"livekit": {"apiSecret": "short"}}}"#).contains("media.livekit.apiSecret"))
        #expect(try configError(#"{"media": {"livekit": {"url": "ftp://m.example"}}}"#).contains("media.livekit.url"))
        #expect(try configError(#"{"media": {"livekit": {"tokenSeconds": 5}}}"#).contains("media.livekit.tokenSeconds"))
    }

    @Test func tlsKeysAreAppliedAndCheckedTogether() throws {
        let config = try loadConfig(
            """
            {"tls": {"certificate": "c.pem", "privateKey": "k.pem", "port": 8443, "minVersion": "1.3"},
             "auth": {"authKeys": [], "apiKeys": ["own-api-key-7e21"]}}
            """
        ).get()
        #expect(config.tlsCertificatePath == "c.pem")
        #expect(config.tlsPrivateKeyPath == "k.pem")
        #expect(config.tlsPort == 8443)
        #expect(config.tlsMinimumVersion == .tls13)
        #expect(config.servesTLS)
        let fromEnvironment = try loadConfig(
            "{}",
            environment: [
                "RINGD_TLS_CERTIFICATE": "c.pem", "RINGD_TLS_PRIVATE_KEY": "k.pem", "RINGD_TLS_MIN_VERSION": "1.3",
                "RINGD_AUTH_ALLOW_DEVELOPMENT_KEYS": "true",
            ]
        ).get()
        #expect(fromEnvironment.tlsPrivateKeyPath == "k.pem")
        #expect(fromEnvironment.tlsMinimumVersion == .tls13)
        #expect(fromEnvironment.tlsPort == nil)
        #expect(!(try loadConfig("{}").get().servesTLS))

        #expect(try configError(#"{"tls": {"certificate": "c.pem"}}"#).contains("must be set together"))
        #expect(try configError(#"{"tls": {"port": 8443}}"#).contains("tls.port"))
        #expect(
            try configError(
                #"{"listen": {"port": 8443}, "tls": {"certificate": "c", "privateKey": "k", "port": 8443}}"#
            )
            .contains("must differ"))
        #expect(try configError(#"{"tls": {"minVersion": "1.1"}}"#).contains("tls.minVersion"))
        #expect(try configError(#"{"tls": {"certificate": ""}}"#).contains("tls.certificate"))
    }

    @Test func pushKeysAreAppliedAndCheckedTogether() throws {
        let config = try loadConfig(
            """
            {"push": {"mode": "all", "timeoutSeconds": 3, "retrySeconds": [0.5, 2], "caFile": "/etc/ca.pem",
                      "apns": {"keyFile": "/k.p8", "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ",
                               "bundleId": "com.example.app", "sandboxURL": "https://127.0.0.1:9/"},
                      "fcm": {"serviceAccountFile": "/sa.json", "baseURL": "https://127.0.0.1:9",
                              "tokenURL": "https://127.0.0.1:9/token"}}}
            """
        ).get()
        #expect(config.push.mode == .all && config.push.timeout == 3 && config.push.retrySeconds == [0.5, 2])
        #expect(config.push.apns.isConfigured && config.push.apns.bundleId == "com.example.app")
        #expect(config.push.apns.sandboxURL == "https://127.0.0.1:9", "a trailing slash is dropped")
        #expect(config.push.apns.productionURL == "https://api.push.apple.com")
        #expect(
            config.push.fcm.serviceAccountFile == "/sa.json" && config.push.fcm.tokenURL == "https://127.0.0.1:9/token")
        #expect(config.push.isEnabled)
        #expect(try loadConfig("{}").get().push.isEnabled == false)
        #expect(
            try configError(#"{"push": {"apns": {"keyFile": "/k.p8"}}}"#)
                .contains(#""push.apns.keyFile", "push.apns.keyId" and "push.apns.teamId" must be set together"#))
        #expect(try configError(#"{"push": {"mode": "sometimes"}}"#).contains("push.mode"))
        #expect(try configError(#"{"push": {"fcm": {"baseURL": "fcm.googleapis.com"}}}"#).contains("push.fcm.baseURL"))
        #expect(try configError(#"{"push": {"retrySeconds": []}}"#).contains("push.retrySeconds"))
        let defaults = try loadConfig("{}").get().push
        #expect(defaults.missedCallAlerts && !defaults.trustCallerMetadata)
        let alerts = try loadConfig(#"{"push": {"missedCallAlerts": false, "trustCallerMetadata": true}}"#).get().push
        #expect(!alerts.missedCallAlerts && alerts.trustCallerMetadata)
        #expect(try configError(#"{"push": {"missedCallAlerts": "yes"}}"#).contains("push.missedCallAlerts"))
        let overridden = try loadConfig(
            "{}", environment: ["RINGD_PUSH_MISSED_CALL_ALERTS": "false", "RINGD_PUSH_TRUST_CALLER_METADATA": "true"]
        ).get().push
        #expect(!overridden.missedCallAlerts && overridden.trustCallerMetadata)
        let environment = try loadConfig(
            "{}",
            environment: [
                "RINGD_PUSH_MODE": "all",
                "RINGD_PUSH_FCM_SERVICE_ACCOUNT_FILE": "/sa.json",
            ]
        ).get()
        #expect(environment.push.mode == .all && environment.push.fcm.isConfigured)
    }

    @Test func aVariableThatMatchesNoKeyIsRefused() throws {
        #expect(
            try configError("{}", environment: ["RINGD_LISTEN_PROT": "9000"])
                .contains("RINGD_LISTEN_PROT matches no configuration key"))
        #expect(try loadConfig("{}", environment: ["RINGD_TESTS_ANYTHING": "1", "RINGDX": "1"]).get().port == 8787)
    }

    /// What Kubernetes injects into every pod of the namespace for a Service
    /// named `ringd` (with a port named `https`) and one named `ringd-cluster`.
    static let serviceLinks = [
        "RINGD_SERVICE_HOST": "10.96.0.12", "RINGD_SERVICE_PORT": "443", "RINGD_SERVICE_PORT_HTTPS": "443",
        "RINGD_PORT": "tcp://10.96.0.12:443", "RINGD_PORT_443_TCP": "tcp://10.96.0.12:443",
        "RINGD_PORT_443_TCP_PROTO": "tcp", "RINGD_PORT_443_TCP_PORT": "443", "RINGD_PORT_443_TCP_ADDR": "10.96.0.12",
        "RINGD_CLUSTER_SERVICE_HOST": "10.96.0.13", "RINGD_CLUSTER_SERVICE_PORT": "8787",
        "RINGD_CLUSTER_PORT": "tcp://10.96.0.13:8787", "RINGD_CLUSTER_PORT_8787_TCP": "tcp://10.96.0.13:8787",
        "RINGD_CLUSTER_PORT_8787_TCP_PROTO": "tcp", "RINGD_CLUSTER_PORT_8787_TCP_PORT": "8787",
        "RINGD_CLUSTER_PORT_8787_TCP_ADDR": "10.96.0.13",
    ]

    @Test func kubernetesServiceLinksAreIgnoredAndNamed() throws {
        let config = try loadConfig(
            "{}", environment: Self.serviceLinks.merging(["RINGD_LISTEN_PORT": "9000"]) { a, _ in a }
        )
        .get()
        #expect(config.port == 9000, "a real key still applies beside them")
        #expect(config.ignoredEnvironment == Self.serviceLinks.keys.sorted())
        // A Service named like a key: ringd-tls gives RINGD_TLS_PORT its address.
        let tls = try loadConfig("{}", environment: ["RINGD_TLS_PORT": "tcp://10.96.0.14:443"]).get()
        #expect(tls.tlsPort == nil && tls.ignoredEnvironment == ["RINGD_TLS_PORT"])
    }

    @Test func aMisspeltVariableIsStillRefusedWithTheNearestKey() throws {
        #expect(
            try configError("{}", environment: ["RINGD_LISTN_PORT": "9000"])
                .contains(
                    "RINGD_LISTN_PORT matches no configuration key (RINGD_ plus a key in upper snake case, "
                        + "e.g. RINGD_LISTEN_PORT); did you mean RINGD_LISTEN_PORT?"))
        #expect(
            try configError("{}", environment: ["RINGD_STORE_PAHT": "x"]).hasSuffix("did you mean RINGD_STORE_PATH?"))
        #expect(!(try configError("{}", environment: ["RINGD_WHATEVER": "1"]).contains("did you mean")))
        // Shapes close to a link's that are not one.
        for name in ["RINGD_X_SERVICE_ACCOUNT", "RINGD_PORT_443_TCP_NAME", "RINGD_PORT_X_TCP", "RINGD_FOO_PORT"] {
            #expect(!EnvironmentOverrides.isServiceLink(name, value: "443"), "\(name)")
        }
    }

    @Test func invalidJSONIsPlacedByLineAndColumn() throws {
        let message = try configError("{\n  \"listen\": {\"port\": 1,}\n}")
        #expect(message.hasSuffix(".json:2:24: invalid JSON: expected a member name"), "the } of the line: \(message)")
        #expect(ConfigLoader.position(of: 0, in: Array("x".utf8)) == (1, 1))
        #expect(ConfigLoader.position(of: 5, in: Array("ab\né!x".utf8)) == (2, 2), "é is one character of two bytes")
    }

    @Test func environmentOverridesTheFile() throws {
        let config = try loadConfig(
            #"{"listen": {"port": 9000}, "ws": {"maxMessageBytes": 4096}}"#,
            environment: [
                "RINGD_LISTEN_PORT": "0",
                "RINGD_WS_MAX_MESSAGE_BYTES": "2048",
                "RINGD_LOG_LEVEL": "warning",
                "RINGD_LISTEN_HOST": "::1",
                "UNRELATED": "x",
            ]
        ).get()
        #expect(config.port == 0)
        #expect(config.maxMessageBytes == 2048)
        #expect(config.logLevel == .warning)
        #expect(config.host == "::1")
    }

    @Test func badEnvironmentValueNamesVariableAndKey() throws {
        let message = try configError("{}", environment: ["RINGD_LISTEN_PORT": "abc"])
        #expect(message.contains("RINGD_LISTEN_PORT"), "\(message)")
        #expect(message.contains("listen.port"), "\(message)")
        let range = try configError("{}", environment: ["RINGD_LISTEN_PORT": "70000"])
        #expect(range.contains("listen.port"), "\(range)")
    }

    @Test(arguments: ["{", #"{"listen": {"port": 1,}}"#, "", "[1, 2]", "// comment\n{}"])
    func invalidJSONOrNonObjectIsAnError(text: String) throws {
        let message = try configError(text)
        #expect(!message.isEmpty)
        #expect(message.contains("/tmp/ringd-config-test-"), "the message names the file: \(message)")
    }

    @Test func missingFileIsNamed() throws {
        let path = "/tmp/ringd-no-such-config-\(UInt32.random(in: 0 ... .max)).json"
        #expect {
            _ = try ConfigLoader.load(path: path, environment: [:])
        } throws: { error in
            (error as? ConfigError)?.message.contains(path) == true
        }
    }
}
