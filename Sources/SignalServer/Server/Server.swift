import Synchronization

/// A running server: one ``EventLoopGroup``, every loop listening on the
/// same address, each with its own router.
public final class Server: Sendable {
    /// The configuration it runs with.
    public let config: ServerConfig
    /// The address it listens on, with the real port when 0 was configured.
    public let address: SocketAddress
    /// Shared counters.
    public let stats: ServerStats
    private let group: EventLoopGroup

    /// Binds and starts serving. `makeRouter` runs once on each loop's thread.
    /// Throws ``ConfigError`` when the address cannot be resolved and
    /// ``SystemError`` when it cannot be bound.
    public init(config: ServerConfig, makeRouter: @escaping @Sendable (ServerContext) -> HTTPRouter) throws {
        let requested = try SocketAddress.resolve(host: config.host, port: config.port)
        let stats = ServerStats()
        // Loop 0 binds first; the others reuse the port it was given.
        let bound = Mutex<SocketAddress?>(nil)
        group = try EventLoopGroup(count: config.resolvedThreads) { loop in
            let context = ServerContext(loop: loop, config: config, stats: stats)
            let serverLoop = ServerLoop(context: context, router: makeRouter(context))
            let target = bound.withLock { $0 } ?? requested
            let actual = try serverLoop.listen(on: target)
            bound.withLock { $0 = $0 ?? actual }
            loop.keepAlive(serverLoop)
        }
        self.config = config
        self.stats = stats
        address = bound.withLock { $0 } ?? requested
    }

    /// Starts a graceful stop: no new connections, open ones closed cleanly.
    public func shutdown() {
        group.stop()
    }

    /// Blocks until every loop has exited.
    public func wait() {
        group.wait()
    }

    /// The `ws://` URL clients connect to, with the real port.
    public var url: String { "ws://\(address)" }
}
