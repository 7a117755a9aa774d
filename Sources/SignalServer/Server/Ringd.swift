import SignalProtocol

/// The ringing server as an application: opens the store, closes calls a
/// crash left live (`server_restart`), loads the token secret and the
/// revocations, and serves ``RingdRouter`` on every loop.
public final class Ringd: ServerApplication {
    /// The signaling service (state machine, store, auth).
    public let service: SignalingService
    private let storeLock: StoreLock

    /// Prepares everything the server needs before it listens. Throws
    /// ``ConfigError`` for a bad secret and ``StoreError`` for a store that
    /// cannot be opened or that another ringd serves.
    public init(config: ServerConfig) throws {
        storeLock = try StoreLock(storePath: config.storePath)
        let store = try CallStore(path: config.storePath, synchronousFull: config.storeSynchronousFull)
        let secret = try TokenSecret.load(configured: config.tokenSecret, directory: config.dataDirectory)
        let tokens = TokenAuthority(secret: secret, revocations: try store.loadRevocations())
        service = SignalingService(config: config, store: store, tokens: tokens,
                                   keys: AccessKeys(authKeys: config.authKeys, apiKeys: config.apiKeys))
        let recovered = try service.restart(with: try store.loadLiveCalls())
        if recovered > 0 {
            Log.info("closed \(recovered) call(s) left live by the previous run (server_restart)")
        }
    }

    public func makeRouter(_ context: ServerContext) -> HTTPRouter {
        RingdRouter(context: context, service: service)
    }

    public func stop() {
        service.shutdown()
    }

    public func close() {
        service.store.close()
        storeLock.release()
    }
}
