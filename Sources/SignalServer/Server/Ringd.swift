import SignalCrypto
import SignalProtocol

/// The ringing server as an application: opens the store, restores the
/// calls the previous run left live (or ends them, as `calls.onRestart`
/// says), loads the token secret and the revocations, and serves
/// ``RingdRouter`` on every loop.
public final class Ringd: ServerApplication {
    /// The signaling service (state machine, store, auth).
    public let service: SignalingService
    /// Nil for a store in memory: no other process can open it.
    private let storeLock: StoreLock?
    private let webhooks: Webhooks?
    private let pushes: PushDispatcher?
    /// libcurl's thread, shared by webhooks and push; nil when neither is on.
    private let outbound: OutboundHTTPClient?
    /// The test API, with `testing.enabled`.
    private let testing: TestControl?
    /// Where the calls are kept: the SQLite store, or a cluster's PostgreSQL.
    private let backend: CallBackend

    /// Prepares everything the server needs before it listens. Throws
    /// ``ConfigError`` for a bad secret, ``StoreError`` for a store that
    /// cannot be opened or that another ringd serves, ``PushError`` for
    /// push credentials that cannot be read, and ``CryptoError`` when the
    /// access keys cannot be hashed.
    public init(config: ServerConfig) throws {
        // A cluster node keeps everything in PostgreSQL and opens no SQLite store.
        let backend: CallBackend
        if config.cluster.isEnabled {
            backend = .cluster(try ClusterNode(settings: config.cluster, name: ClusterNode.defaultName))
            storeLock = nil
        } else {
            storeLock = config.storePath == CallStore.inMemoryPath ? nil : try StoreLock(storePath: config.storePath)
            backend = .embedded(try CallStore(path: config.storePath, synchronousFull: config.storeSynchronousFull))
        }
        let store = backend.embeddedStore
        self.backend = backend
        // Nodes share the secret PostgreSQL keeps unless one is configured.
        let secret =
            if case .cluster(let node) = backend, config.tokenSecret == nil {
                node.sharedTokenSecret
            } else {
                try TokenSecret.load(configured: config.tokenSecret, directory: config.dataDirectory)
            }
        // A cluster node's revocations and push tokens come from PostgreSQL
        // once it attaches (ClusterListener).
        let tokens = TokenAuthority(secret: secret, revocations: try store?.loadRevocations() ?? [:])
        let wall = SignalingClock.system.wall
        let needsOutbound = config.push.isEnabled || config.webhooks.endpoints.contains(where: \.enabled)
        for caFile in [config.webhooks.caFile, config.push.caFile].compactMap({ $0 }) {
            try OutboundHTTPClient.checkCAFile(caFile)
        }
        // Webhooks bound their requests per endpoint themselves; the client's
        // per-host bound is there for push.
        let outbound =
            needsOutbound
            ? try OutboundHTTPClient(
                maxConnectionsPerHost: max(config.webhooks.concurrency, config.push.connectionsPerHost),
                caFile: nil) : nil
        self.outbound = outbound
        let webhooks = outbound.flatMap {
            Webhooks(settings: config.webhooks, backend: backend, client: $0, wall: wall)
        }
        if let store { try webhooks?.load(from: store) }
        self.webhooks = webhooks
        let pushTokens = PushTokenRegistry(try store?.loadPushTokens() ?? [])
        let pushes = try outbound.flatMap { client throws(PushError) -> PushDispatcher? in
            guard config.push.isEnabled else { return nil }
            return try PushDispatcher(
                settings: config.push, registry: pushTokens, store: backend.pushTokens, client: client, wall: wall)
        }
        self.pushes = pushes
        let metrics = SignalingMetrics(wall: wall)
        let testing = try config.testing.key.flatMap { key throws(CryptoError) in
            config.testing.enabled ? try TestControl(key: key) : nil
        }
        self.testing = testing
        service = SignalingService(
            config: config, backend: backend, tokens: tokens,
            keys: try AccessKeys(
                authKeys: config.authKeys, apiKeys: config.apiKeys, metricsKey: config.metricsKey,
                developmentKeysAllowed: config.allowDevelopmentKeys),
            clock: testing?.clock.signalingClock ?? backend.clusterNode?.clock ?? .configured,
            // A cluster's transactions write the outbox themselves (ClusterWebhooks).
            consumers: (store != nil ? webhooks.map { [$0.outbox] } ?? [] : []) + [metrics],
            pushTokens: pushTokens,
            pushes: pushes, metrics: metrics, tap: testing?.tap)
        if config.unreachable == .fail {
            pushes?.reportUnreachable { [weak service = self.service] sessionId in
                service?.unreachable(sessionId: sessionId)
            }
        }
        if let testing, let store {
            testing.attach(to: service, store: store)
            Log.warning(
                "the test API is on (testing.enabled): anyone with the test key can change the clock, "
                    + "drop connections and erase every call; never enable it in production")
            if config.testing.allowRemote {
                Log.warning(
                    "testing.allowRemote: the test API answers every peer, not only this machine's; "
                        + "keep it off anywhere a network you do not own can reach")
            }
        }
        pushes?.start()
        switch backend {
        case .cluster(let node):
            try node.start(
                for: service, webhooks: webhooks.map { ClusterWebhooks(webhooks: $0, store: node.webhookStore) })
            webhooks?.start()
        case .embedded(let store):
            let report = try service.start(from: try store.loadContinuity())
            webhooks?.start()
            if report.restored > 0 || report.ended > 0 {
                let ending = config.onRestart == .resume ? "ended (deadline passed)" : "ended (server_restart)"
                Log.info("calls left live by the previous run: \(report.restored) restored, \(report.ended) \(ending)")
            }
        }
    }

    public func makeRouter(_ context: ServerContext) -> HTTPRouter {
        RingdRouter(context: context, service: service, webhooks: webhooks, testing: testing)
    }

    public func makeMetricsRouter(_ context: ServerContext) -> HTTPRouter? {
        MetricsRouter(context: context, service: service, webhooks: webhooks)
    }

    public func stop() {
        // First, so other nodes take this one's devices away while it closes them.
        if case .cluster(let node) = backend { node.leave() }
        service.shutdown()
    }

    public func close() {
        webhooks?.stop()
        pushes?.stop()
        outbound?.close()
        switch backend {
        case .embedded(let store): store.close()
        case .cluster(let node): node.stop()
        }
        storeLock?.release()
    }
}
