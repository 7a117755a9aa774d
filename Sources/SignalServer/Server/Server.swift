import Synchronization
import SignalSystem

/// What a server runs: its routes, and its part in shutting down.
public protocol ServerApplication: Sendable {
    /// A router for one loop; runs on that loop's thread before it serves.
    func makeRouter(_ context: ServerContext) -> HTTPRouter
    /// The server is about to close its connections: finish what clients
    /// must hear first. Blocking is allowed (it runs off the loops).
    func stop()
    /// Every loop has exited: release resources.
    func close()
}

/// An application that is just a router.
struct RouterApplication: ServerApplication {
    let makeRouterBody: @Sendable (ServerContext) -> HTTPRouter

    func makeRouter(_ context: ServerContext) -> HTTPRouter { makeRouterBody(context) }
    func stop() {}
    func close() {}
}

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
    private let application: ServerApplication
    private let closed = Mutex(false)

    /// Binds and starts serving `application`. Throws ``ResolveError`` when the
    /// address cannot be resolved and ``SystemError`` when it cannot be bound.
    public init(config: ServerConfig, application: ServerApplication) throws {
        let requested = try SocketAddress.resolve(host: config.host, port: config.port)
        let stats = ServerStats()
        // Loop 0 binds first; the others reuse the port it was given.
        let bound = Mutex<SocketAddress?>(nil)
        group = try EventLoopGroup(count: config.resolvedThreads) { loop in
            let context = ServerContext(loop: loop, config: config, stats: stats)
            let serverLoop = ServerLoop(context: context, router: application.makeRouter(context))
            let target = bound.withLock { $0 } ?? requested
            let actual = try serverLoop.listen(on: target)
            bound.withLock { $0 = $0 ?? actual }
            loop.attach(serverLoop)
        }
        self.config = config
        self.stats = stats
        self.application = application
        address = bound.withLock { $0 } ?? requested
    }

    /// Binds and starts serving the routers `makeRouter` makes.
    public convenience init(config: ServerConfig, makeRouter: @escaping @Sendable (ServerContext) -> HTTPRouter) throws {
        try self.init(config: config, application: RouterApplication(makeRouterBody: makeRouter))
    }

    /// Starts a graceful stop: the application finishes first, then no new
    /// connections are taken and open ones are closed cleanly.
    public func shutdown() {
        application.stop()
        group.stop()
    }

    /// Blocks until every loop has exited, then closes the application (once).
    public func wait() {
        group.wait()
        let first = closed.withLock { wasClosed in
            defer { wasClosed = true }
            return !wasClosed
        }
        if first { application.close() }
    }

    /// The `ws://` URL clients connect to, with the real port.
    public var url: String { "ws://\(address)" }
}
