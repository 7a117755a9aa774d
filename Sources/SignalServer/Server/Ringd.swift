import SignalProtocol

/// The ringing server as an application: opens the store, restores the
/// calls the previous run left live (or ends them, as `calls.onRestart`
/// says), loads the token secret and the revocations, and serves
/// ``RingdRouter`` on every loop.
public final class Ringd: ServerApplication {
    /// The signaling service (state machine, store, auth).
    public let service: SignalingService
    private let storeLock: StoreLock
    private let webhooks: Webhooks?

    /// Prepares everything the server needs before it listens. Throws
    /// ``ConfigError`` for a bad secret and ``StoreError`` for a store that
    /// cannot be opened or that another ringd serves.
    public init(config: ServerConfig) throws {
        storeLock = try StoreLock(storePath: config.storePath)
        let store = try CallStore(path: config.storePath, synchronousFull: config.storeSynchronousFull)
        let secret = try TokenSecret.load(configured: config.tokenSecret, directory: config.dataDirectory)
        let tokens = TokenAuthority(secret: secret, revocations: try store.loadRevocations())
        let webhooks = try Webhooks(settings: config.webhooks, store: store, wall: SignalingClock.system.wall)
        try webhooks?.load(from: store)
        self.webhooks = webhooks
        service = SignalingService(config: config, store: store, tokens: tokens,
                                   keys: AccessKeys(authKeys: config.authKeys, apiKeys: config.apiKeys), clock: .system,
                                   consumers: webhooks.map { [$0.outbox] } ?? [])
        let report = try service.start(from: try store.loadContinuity())
        webhooks?.start()
        if report.restored > 0 || report.ended > 0 {
            let ending = config.onRestart == .resume ? "ended (deadline passed)" : "ended (server_restart)"
            Log.info("calls left live by the previous run: \(report.restored) restored, \(report.ended) \(ending)")
        }
    }

    public func makeRouter(_ context: ServerContext) -> HTTPRouter {
        RingdRouter(context: context, service: service, webhooks: webhooks)
    }

    public func stop() {
        service.shutdown()
    }

    public func close() {
        webhooks?.stop()
        service.store.close()
        storeLock.release()
    }
}
