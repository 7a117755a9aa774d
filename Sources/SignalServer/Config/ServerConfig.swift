import SignalCore
import SignalCrypto

/// The daemon's configuration: `config.json` at the repository root holds the
/// defaults, `--config PATH` another file, and `RINGD_*` environment variables
/// override single keys (see ``ConfigLoader``).
public struct ServerConfig: Sendable {
    /// The address to listen on (`listen.host`).
    public var host = "127.0.0.1"
    /// The TCP port (`listen.port`); 0 picks a free one.
    public var port = 8787
    /// Event-loop threads (`threads`); 0 means one per CPU.
    public var threads = 0
    /// How much to log (`logLevel`).
    public var logLevel = Log.Level.info
    /// `RINGD_…` variables of the environment that were not ringd's
    /// (Kubernetes service links), said at debug level once logging is set up.
    public var ignoredEnvironment: [String] = []
    /// How log lines are written (`log.format`).
    public var logFormat = Log.Format.text
    /// The largest HTTP request body (`http.maxBodyBytes`; 413 beyond).
    public var maxRequestBodyBytes = 64 * 1024
    /// Seconds a request, the WebSocket upgrade included, may take to arrive
    /// (`ws.handshakeTimeoutSeconds`); also how long an idle keep-alive
    /// connection stays open.
    public var handshakeTimeout = 10.0
    /// The largest WebSocket message (`ws.maxMessageBytes`; 1009 beyond).
    public var maxMessageBytes = 64 * 1024
    /// Whether WebSockets accept permessage-deflate when a client offers it (`ws.compression`).
    public var compression = false
    /// Messages smaller than this go uncompressed (`ws.compressionThresholdBytes`).
    public var compressionThresholdBytes = 256
    /// Whether compression contexts are kept between messages (`ws.compressionContextTakeover`).
    public var compressionContextTakeover = false
    /// Seconds of silence before the server pings (`ws.pingIntervalSeconds`).
    public var pingInterval = 15.0
    /// Seconds of silence after which a peer is dropped (`ws.pingTimeoutSeconds`).
    public var pingTimeout = 40.0
    /// Open connections accepted at once (`limits.maxConnections`); more are refused with 503.
    public var maxConnections = 100_000
    /// Open connections accepted at once from one peer address
    /// (`limits.connectionsPerAddress`), so one client cannot take every
    /// slot; more are refused with 503.
    public var connectionsPerAddress = 256
    /// Open connections without an authenticated signaling session
    /// (`limits.maxUnauthenticatedConnections`): every plain HTTP connection,
    /// and a WebSocket until its auth succeeds. Keeps room for authenticated
    /// ones when many addresses open idle connections; more are refused with 503.
    public var maxUnauthenticatedConnections = 10_000
    /// Queued outbound bytes above which the server stops reading from a peer
    /// (`limits.outboundSoftLimitBytes`).
    public var outboundSoftLimit = 256 * 1024
    /// Queued outbound bytes above which a peer is dropped (`limits.outboundHardLimitBytes`).
    public var outboundHardLimit = 4 * 1024 * 1024

    /// The PEM certificate chain served over TLS (`tls.certificate`); nil: no TLS.
    public var tlsCertificatePath: String?
    /// The PEM private key of that certificate (`tls.privateKey`).
    public var tlsPrivateKeyPath: String?
    /// Where TLS is served (`tls.port`): nil serves TLS alone on
    /// `listen.port`; a port serves plain text on `listen.port` and TLS on
    /// this one (0 picks a free one).
    public var tlsPort: Int?
    /// The oldest TLS version accepted (`tls.minVersion`).
    public var tlsMinimumVersion = TLSVersion.tls12
    /// Where `GET /metrics` is also served without an API key, and nothing
    /// else (`metrics.listen`, `"host:port"`); nil: no such listener.
    public var metricsListen: HostPort?
    /// A key that reads `GET /metrics` and nothing else (`metrics.key`), in
    /// `Authorization: Bearer` or `X-Api-Key`: what a scrape configuration
    /// holds instead of an API key, which also mints tokens for any user.
    public var metricsKey: String?

    /// The auth key shipped in `config.json`: public, for development.
    public static let developmentAuthKey = "ringd-dev-auth-key"
    /// The API key shipped in `config.json`: public, for development.
    public static let developmentAPIKey = "ringd-dev-api-key"
    /// Development keys any uid may log in with (`auth.authKeys`).
    public var authKeys = [ServerConfig.developmentAuthKey]
    /// Keys for the REST API, header `X-Api-Key` (`auth.apiKeys`).
    public var apiKeys = [ServerConfig.developmentAPIKey]
    /// Whether the development keys may be used on a listener other than
    /// loopback (`auth.allowDevelopmentKeys`); without it such a
    /// configuration is refused at load, since the keys are in the README.
    public var allowDevelopmentKeys = false
    /// The HMAC-SHA256 key for tokens (`auth.tokenSecret`); nil: generated on
    /// first start and kept in the data directory.
    public var tokenSecret: String?
    /// Seconds a new WebSocket connection has to authenticate (`auth.timeoutSeconds`).
    public var authTimeout = 5.0
    /// The SQLite database (`store.path`); its directory is the data
    /// directory. ``CallStore/inMemoryPath`` keeps it in memory (`--ephemeral`).
    public var storePath = "data/ringd.sqlite"
    /// Whether every commit is synced to the disk (`store.synchronous`: `normal`
    /// survives a process kill, `full` also a power loss).
    public var storeSynchronousFull = false
    /// Ring timeout when `initiateCall` gives none (`calls.ringTimeoutSeconds`).
    public var ringTimeout = 45
    /// Seconds a user whose devices all went away may take to come back
    /// before their live call ends (`calls.reconnectGraceSeconds`).
    public var reconnectGrace = 10.0
    /// What a start does with the calls the store holds as live (`calls.onRestart`).
    public var onRestart = RestartPolicy.resume
    /// Seconds every party of a call restored at start has to reconnect
    /// before the lost-connection rules apply (`calls.restartGraceSeconds`).
    public var restartGrace = 30.0
    /// What happens to a call nothing can ring: no connected callee device
    /// and no push token, or every push failed for good (`calls.unreachable`).
    public var unreachable = UnreachablePolicy.ring
    /// Webhook endpoints and delivery (`webhooks.*`).
    public var webhooks = WebhookSettings()
    /// VoIP push to devices that are not connected (`push.*`).
    public var push = PushSettings()
    /// The softphone page and the ICE servers for WebRTC (`webrtc.*`).
    public var webrtc = WebRTCSettings()
    /// The store's backend and cluster mode (`store.backend`, `store.url`, `cluster.*`).
    public var cluster = ClusterSettings()
    /// `testing.*`: the test control API.
    public var testing = TestingSettings()
    /// The media server calls join after accept (`media.livekit.*`).
    public var media = LiveKitSettings()
    /// Devices one user may have connected at once (`limits.devicesPerUser`).
    public var devicesPerUser = 10
    /// Requests per second a connection may make on average (`limits.requestsPerSecond`).
    public var requestsPerSecond = 20
    /// Requests a connection may make in a burst (`limits.requestBurst`).
    public var requestBurst = 40
    /// REST requests per second per API key on this node
    /// (`limits.restRequestsPerSecond`, a second's worth at once); 0: no limit.
    public var restRequestsPerSecond = 0
    /// Calls one user may place in any 60 seconds, over all its devices
    /// and, in a cluster, every node (`limits.initiatesPerMinute`); 0: no limit.
    public var initiatesPerMinute = 0

    /// Whether the store lives in memory: no file, no lock, and a token
    /// secret that lasts as long as the process.
    public var storeIsInMemory: Bool { storePath == CallStore.inMemoryPath }

    /// The directory holding the store and the generated token secret; nil
    /// for a store in memory, which has none.
    public var dataDirectory: String? { storeIsInMemory ? nil : FileSystem.parentDirectory(of: storePath) }

    /// The defaults, as shipped in `config.json`.
    public init() {}

    /// The WebSocket part of the configuration.
    public var webSocket: WebSocketSettings {
        WebSocketSettings(
            maxMessageBytes: maxMessageBytes, pingInterval: pingInterval, pingTimeout: pingTimeout,
            compression: compression
                ? WebSocketCompressionSettings(
                    thresholdBytes: compressionThresholdBytes,
                    contextTakeover: compressionContextTakeover)
                : nil)
    }

    public var servesTLS: Bool { tlsCertificatePath != nil }

    /// The per-connection outbound limits.
    var backpressure: BackpressureLimits {
        BackpressureLimits(softLimit: outboundSoftLimit, hardLimit: outboundHardLimit)
    }

    /// The number of loops to run: `threads`, or one per CPU when 0.
    public var resolvedThreads: Int {
        threads > 0 ? threads : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// A `"host:port"` address of the configuration (`[::1]:9464` for IPv6).
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Nil unless `text` is a non-empty host, a colon and a port from 0 to 65535.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0 ... 65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains(" ") else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
