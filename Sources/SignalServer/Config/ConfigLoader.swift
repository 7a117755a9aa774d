import SignalCore
import SignalCrypto
import SignalProtocol
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a configuration file and `RINGD_*` environment overrides into a
/// ``ServerConfig``, rejecting unknown keys and bad values with messages that
/// name the file and the key.
public enum ConfigLoader {
    /// Every key the configuration accepts.
    static let keys: [Key] =
        [
            Key(path: "listen.host", expectation: "a non-empty host name or address") { config, value in
                guard let host = value.stringValue, !host.isEmpty else { return false }
                config.host = host
                return true
            },
            integer("listen.port", \.port, 0 ... 65535),
            integer("threads", \.threads, 0 ... 256),
            Key(path: "logLevel", expectation: "one of error, warning, info, debug") { config, value in
                guard let name = value.stringValue, let level = Log.Level(name: name) else { return false }
                config.logLevel = level
                return true
            },
            Key(path: "log.format", expectation: "text or json") { config, value in
                guard let format = value.stringValue.flatMap(Log.Format.init(rawValue:)) else { return false }
                config.logFormat = format
                return true
            },
            integer("http.maxBodyBytes", \.maxRequestBodyBytes, 0 ... 64 * 1024 * 1024),
            seconds("ws.handshakeTimeoutSeconds", \.handshakeTimeout),
            integer("ws.maxMessageBytes", \.maxMessageBytes, 125 ... 64 * 1024 * 1024),
            seconds("ws.pingIntervalSeconds", \.pingInterval),
            seconds("ws.pingTimeoutSeconds", \.pingTimeout),
            boolean("ws.compression", \.compression),
            integer("ws.compressionThresholdBytes", \.compressionThresholdBytes, 0 ... 64 * 1024 * 1024),
            boolean("ws.compressionContextTakeover", \.compressionContextTakeover),
            integer("limits.maxConnections", \.maxConnections, 1 ... 10_000_000),
            integer("limits.connectionsPerAddress", \.connectionsPerAddress, 1 ... 10_000_000),
            integer("limits.maxUnauthenticatedConnections", \.maxUnauthenticatedConnections, 1 ... 10_000_000),
            integer("limits.devicesPerUser", \.devicesPerUser, 1 ... 1000),
            integer("limits.requestsPerSecond", \.requestsPerSecond, 1 ... 1_000_000),
            integer("limits.requestBurst", \.requestBurst, 1 ... 1_000_000),
            integer("limits.restRequestsPerSecond", \.restRequestsPerSecond, 0 ... 1_000_000),
            integer("limits.initiatesPerMinute", \.initiatesPerMinute, 0 ... 1_000_000),
            keyList("auth.authKeys", \.authKeys),
            keyList("auth.apiKeys", \.apiKeys),
            boolean("auth.allowDevelopmentKeys", \.allowDevelopmentKeys),
            optionalSecret("auth.tokenSecret", \.tokenSecret),
            seconds("auth.timeoutSeconds", \.authTimeout),
            boolean("testing.enabled", \.testing.enabled),
            boolean("testing.allowRemote", \.testing.allowRemote),
            optionalSecret("testing.key", \.testing.key),
            Key(path: "store.path", expectation: "a non-empty path") { config, value in
                guard let path = value.stringValue, !path.isEmpty else { return false }
                config.storePath = path
                return true
            },
            Key(path: "store.synchronous", expectation: "normal or full") { config, value in
                guard let mode = value.stringValue, mode == "normal" || mode == "full" else { return false }
                config.storeSynchronousFull = mode == "full"
                return true
            },
            integer("calls.ringTimeoutSeconds", \.ringTimeout, 1 ... 300),
            seconds("calls.reconnectGraceSeconds", \.reconnectGrace),
            Key(path: "calls.onRestart", expectation: "resume or end") { config, value in
                guard let policy = value.stringValue.flatMap(RestartPolicy.init(rawValue:)) else { return false }
                config.onRestart = policy
                return true
            },
            seconds("calls.restartGraceSeconds", \.restartGrace),
            Key(path: "calls.unreachable", expectation: "ring or fail") { config, value in
                guard let policy = value.stringValue.flatMap(UnreachablePolicy.init(rawValue:)) else { return false }
                config.unreachable = policy
                return true
            },
            integer("limits.outboundSoftLimitBytes", \.outboundSoftLimit, 1024 ... 1 << 30),
            integer("limits.outboundHardLimitBytes", \.outboundHardLimit, 1024 ... 1 << 30),
            optionalPath("tls.certificate", \.tlsCertificatePath),
            optionalPath("tls.privateKey", \.tlsPrivateKeyPath),
            Key(
                path: "webhooks.endpoints",
                expectation: "a list of {\"url\": http(s) URL, \"secrets\": [\"whsec_<base64 of 24 to 64 bytes>\", …], "
                    + "\"events\": [trigger, …] or null, \"enabled\": true or false}, each URL once", isSecret: true,
                apply: { config, value in
                    guard case .success(let endpoints) = WebhookSettings.endpoints(from: value) else { return false }
                    config.webhooks.endpoints = endpoints
                    return true
                },
                explain: { value in
                    guard case .failure(let error) = WebhookSettings.endpoints(from: value) else { return nil }
                    return error.message
                }),
            seconds("webhooks.timeoutSeconds", \.webhooks.timeout),
            integer("webhooks.maxAttempts", \.webhooks.maxAttempts, 1 ... 1000),
            integer("webhooks.concurrency", \.webhooks.concurrency, 1 ... 1000),
            integer("webhooks.maxEventsInMemory", \.webhooks.maxEventsInMemory, 2 ... 10_000_000),
            Key(path: "webhooks.retrySeconds", expectation: "a non-empty list of seconds from 0.01 to 86400") {
                config, value in
                guard let seconds = secondsList(value, 0.01 ... 86400) else { return false }
                config.webhooks.retrySeconds = seconds
                return true
            },
            optionalPath("webhooks.caFile", \.webhooks.caFile),
            Key(path: "webhooks.retentionHours", expectation: "a number of hours from 1 to 8760") { config, value in
                let hours: Double
                switch value {
                case .integer(let whole): hours = Double(whole)
                case .double(let fraction): hours = fraction
                default: return false
                }
                guard hours >= 1 && hours <= 8760 else { return false }
                config.webhooks.retentionHours = hours
                return true
            },
            Key(path: "push.mode", expectation: "offline or all") { config, value in
                guard let mode = value.stringValue.flatMap(PushMode.init(rawValue:)) else { return false }
                config.push.mode = mode
                return true
            },
            optionalPath("push.apns.keyFile", \.push.apns.keyFile),
            optionalText("push.apns.keyId", \.push.apns.keyId),
            optionalText("push.apns.teamId", \.push.apns.teamId),
            optionalText("push.apns.bundleId", \.push.apns.bundleId),
            url("push.apns.productionURL", \.push.apns.productionURL),
            url("push.apns.sandboxURL", \.push.apns.sandboxURL),
            optionalPath("push.fcm.serviceAccountFile", \.push.fcm.serviceAccountFile),
            url("push.fcm.baseURL", \.push.fcm.baseURL),
            Key(path: "push.fcm.tokenURL", expectation: "an http(s) URL, or null") { config, value in
                if value == .null {
                    config.push.fcm.tokenURL = nil
                    return true
                }
                guard let text = value.stringValue, isURL(text) else { return false }
                config.push.fcm.tokenURL = text
                return true
            },
            seconds("push.timeoutSeconds", \.push.timeout),
            Key(path: "push.retrySeconds", expectation: "a non-empty list of seconds from 0.01 to 3600") {
                config, value in
                guard let seconds = secondsList(value, 0.01 ... 3600) else { return false }
                config.push.retrySeconds = seconds
                return true
            },
            optionalPath("push.caFile", \.push.caFile),
            integer("push.maxTokensPerUser", \.push.maxTokensPerUser, 1 ... 1000),
            integer("push.connectionsPerHost", \.push.connectionsPerHost, 1 ... 64),
            boolean("push.missedCallAlerts", \.push.missedCallAlerts),
            boolean("push.trustCallerMetadata", \.push.trustCallerMetadata),
            Key(path: "tls.port", expectation: "an integer from 0 to 65535, or null") { config, value in
                switch value {
                case .null: config.tlsPort = nil
                case .integer(let port) where (0 ... 65535).contains(port): config.tlsPort = Int(port)
                default: return false
                }
                return true
            },
            Key(path: "metrics.listen", expectation: "\"host:port\", or null") { config, value in
                switch value {
                case .null: config.metricsListen = nil
                case .string(let text):
                    guard let address = HostPort(text) else { return false }
                    config.metricsListen = address
                default: return false
                }
                return true
            },
            optionalSecret("metrics.key", \.metricsKey),
            Key(path: "tls.minVersion", expectation: "\"1.2\" or \"1.3\"") { config, value in
                guard let text = value.stringValue, let version = TLSVersion(rawValue: text) else { return false }
                config.tlsMinimumVersion = version
                return true
            },
        ] + webRTCKeys + mediaKeys + clusterKeys

    /// Loads `path` (a missing file is an error) and then the environment,
    /// over `base` (the defaults unless `ringd --ephemeral` says otherwise).
    public static func load(
        path: String, environment: [String: String],
        base: ServerConfig = ServerConfig()
    ) throws(ConfigError) -> ServerConfig {
        guard let bytes = FileContents.read(path) else {
            throw ConfigError("\(path): cannot read the configuration file")
        }
        return try load(bytes: bytes, source: path, environment: environment, base: base)
    }

    /// `ringd --ephemeral`: the file at `path`, or with none the defaults,
    /// then the environment, over a base that listens on a free port (so
    /// `listen.port` in the file or `RINGD_LISTEN_PORT` still picks one);
    /// the store is in memory whatever `store.path` says.
    public static func loadEphemeral(path: String?, environment: [String: String]) throws(ConfigError) -> ServerConfig {
        var base = ServerConfig()
        base.port = 0
        var config =
            if let path {
                try load(path: path, environment: environment, base: base)
            } else {
                try load(bytes: Array("{}".utf8), source: "the environment", environment: environment, base: base)
            }
        config.storePath = CallStore.inMemoryPath
        return config
    }

    /// Loads a configuration file's `bytes` (`source` names it in messages)
    /// and then the environment, over `base`.
    public static func load(
        bytes: [UInt8], source path: String, environment: [String: String],
        base: ServerConfig = ServerConfig()
    ) throws(ConfigError) -> ServerConfig {
        let document: JSONValue
        do throws(JSONParseError) {
            document = try JSONValue.parse(bytes)
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw ConfigError("\(path):\(line):\(column): invalid JSON: \(error.message)")
        }
        guard document.objectMembers != nil else {
            throw ConfigError("\(path): the configuration must be a JSON object")
        }
        var config = base
        try apply(document, prefix: "", to: &config, source: path)
        let known = Set(keys.map(\.environmentName))
        // A misspelt variable would otherwise change nothing, silently.
        config.ignoredEnvironment = try EnvironmentOverrides.ignored(in: environment, known: known)
        for key in keys {
            guard let text = environment[key.environmentName] else { continue }
            // A Service named like a key (`ringd-tls` gives RINGD_TLS_PORT=tcp://…) is not a setting.
            if key.environmentName.hasSuffix("_PORT"), EnvironmentOverrides.isServiceAddress(text) {
                config.ignoredEnvironment.append(key.environmentName)
                continue
            }
            // A value reads as JSON when it is JSON (numbers, lists), else as a string.
            let value = (try? JSONValue.parse(text)) ?? .string(text)
            guard key.apply(&config, value) || key.apply(&config, .string(text)) else {
                let shown = key.isSecret ? "" : ", got \"\(text)\""
                let reason = key.explain?(value).map { " (\($0))" } ?? ""
                throw ConfigError("\(key.environmentName): \"\(key.path)\" must be \(key.expectation)\(reason)\(shown)")
            }
        }
        try validate(config, source: path)
        return config
    }

    /// The line and column (both from 1, the column in characters) of byte `offset`.
    static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        let before = bytes.prefix(max(0, min(offset, bytes.count)))
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let line = before.count(where: { $0 == UInt8(ascii: "\n") }) + 1
        // UTF-8 continuation bytes do not start a character.
        let column = before[lineStart...].count(where: { $0 & 0xC0 != 0x80 }) + 1
        return (line, column)
    }

    private static func apply(
        _ object: JSONValue, prefix: String, to config: inout ServerConfig,
        source: String
    ) throws(ConfigError) {
        for (name, value) in object.objectMembers ?? [] {
            let path = prefix.isEmpty ? name : "\(prefix).\(name)"
            if let key = keys.first(where: { $0.path == path }) {
                guard key.apply(&config, value) else {
                    let shown = key.isSecret ? "" : ", got \(value.serialized)"
                    let reason = key.explain?(value).map { " (\($0))" } ?? ""
                    throw ConfigError("\(source): \"\(path)\" must be \(key.expectation)\(reason)\(shown)")
                }
            } else if value.objectMembers != nil, keys.contains(where: { $0.path.hasPrefix(path + ".") }) {
                try apply(value, prefix: path, to: &config, source: source)
            } else {
                throw ConfigError("\(source): unknown key \"\(path)\"")
            }
        }
    }

    private static func validate(_ config: ServerConfig, source: String) throws(ConfigError) {
        if config.pingTimeout <= config.pingInterval {
            throw ConfigError("\(source): \"ws.pingTimeoutSeconds\" must be greater than \"ws.pingIntervalSeconds\"")
        }
        if (config.tlsCertificatePath == nil) != (config.tlsPrivateKeyPath == nil) {
            throw ConfigError("\(source): \"tls.certificate\" and \"tls.privateKey\" must be set together")
        }
        if config.tlsPort != nil && !config.servesTLS {
            throw ConfigError("\(source): \"tls.port\" needs \"tls.certificate\" and \"tls.privateKey\"")
        }
        if let tlsPort = config.tlsPort, tlsPort != 0, tlsPort == config.port {
            throw ConfigError(
                "\(source): \"tls.port\" must differ from \"listen.port\" (leave it null to serve TLS alone)")
        }
        let apns = config.push.apns
        if (apns.keyFile != nil || apns.keyId != nil || apns.teamId != nil) && !apns.isConfigured {
            throw ConfigError(
                "\(source): \"push.apns.keyFile\", \"push.apns.keyId\" and \"push.apns.teamId\" must be set together")
        }
        if config.outboundHardLimit <= config.outboundSoftLimit {
            throw ConfigError(
                "\(source): \"limits.outboundHardLimitBytes\" must be greater than \"limits.outboundSoftLimitBytes\"")
        }
        if config.testing.enabled && config.testing.key == nil {
            throw ConfigError(
                "\(source): \"testing.enabled\" needs \"testing.key\" (the secret of the test API's X-Test-Key header)")
        }
        try validateWebRTC(config, source: source)
        try validateMedia(config, source: source)
        try validateCluster(config, source: source)
        try refuseDevelopmentKeysInTheOpen(config, source: source)
    }

    /// The development keys are in the README, so whoever can reach ringd
    /// from beyond this machine could log in as anyone with them and use the
    /// REST API. Refused when the configuration says it can be reached from
    /// elsewhere (a listener beyond loopback, TLS, which is for clients
    /// elsewhere, or a metrics listener beyond loopback) unless
    /// `auth.allowDevelopmentKeys` says the network is trusted; a request a
    /// proxy forwarded is refused at run time (``AccessKeys``). Only the two
    /// shipped keys are recognised: a key of the operator's own is theirs to judge.
    private static func refuseDevelopmentKeysInTheOpen(_ config: ServerConfig, source: String) throws(ConfigError) {
        var reachable: [String] = []
        if !isLoopback(config.host) { reachable.append("\"listen.host\" \(config.host) is not loopback") }
        if config.tlsCertificatePath != nil { reachable.append("TLS is configured (\"tls.certificate\")") }
        if let metrics = config.metricsListen, !isLoopback(metrics.host) {
            reachable.append("\"metrics.listen\" \(metrics) is not loopback")
        }
        guard !config.allowDevelopmentKeys, !reachable.isEmpty else { return }
        var found: [String] = []
        for (path, keys) in [("auth.authKeys", config.authKeys), ("auth.apiKeys", config.apiKeys)] {
            for key in [ServerConfig.developmentAuthKey, ServerConfig.developmentAPIKey] where keys.contains(key) {
                found.append("\"\(path)\" holds the development key \"\(key)\"")
            }
        }
        guard !found.isEmpty else { return }
        throw ConfigError(
            "\(source): \(found.joined(separator: " and ")), and \(reachable.joined(separator: " and ")), so anyone "
                + "who can reach it can use them: set auth.authKeys/auth.apiKeys to your own secrets "
                + "(e.g. `openssl rand -hex 32` each), or auth.allowDevelopmentKeys: true for a trusted network")
    }

    /// Whether `host` reaches this machine only: `localhost`, 127.0.0.0/8 or
    /// ::1. A wildcard (0.0.0.0, ::) listens on every interface, so it is not.
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, host, &ipv4) == 1 { return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, host, &ipv6) == 1 else { return false }
        return withUnsafeBytes(of: &ipv6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
    }
}
