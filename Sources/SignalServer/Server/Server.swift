import SignalCrypto
import SignalReactor
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

/// One address a server listens on.
public struct ServerListener: Sendable {
    /// The address, with the real port when 0 was configured.
    public let address: SocketAddress
    public let isSecure: Bool

    /// `ws://host:port` or `wss://host:port`.
    public var url: String { "\(isSecure ? "wss" : "ws")://\(address)" }
}

/// A running server: one ``EventLoopGroup``, every loop listening on the
/// same addresses (plain, TLS or both), each with its own router.
public final class Server: Sendable {
    public let config: ServerConfig
    /// Where it listens: plain text first, then TLS.
    public let listeners: [ServerListener]
    /// The certificate TLS connections get, when TLS is configured.
    public let certificates: TLSCertificates?
    public let stats: ServerStats
    private let group: EventLoopGroup
    private let application: ServerApplication
    private let closed = Mutex(false)

    /// Binds and starts serving `application`. Throws ``ResolveError`` when the
    /// address cannot be resolved, ``TLSError`` when the certificate or key
    /// cannot be loaded, and ``ListenError`` when an address is in use
    /// (by any other process, another ringd included) or cannot be bound.
    public init(config: ServerConfig, application: ServerApplication) throws {
        var certificates: TLSCertificates?
        if let certificatePath = config.tlsCertificatePath, let privateKeyPath = config.tlsPrivateKeyPath {
            certificates = try TLSCertificates(certificatePath: certificatePath, privateKeyPath: privateKeyPath,
                                               minimumVersion: config.tlsMinimumVersion)
        }
        var wanted: [(SocketAddress, TLSCertificates?)] = []
        if certificates == nil || config.tlsPort != nil {
            wanted.append((try SocketAddress.resolve(host: config.host, port: config.port), nil))
        }
        if let certificates {
            let port = config.tlsPort ?? config.port
            wanted.append((try SocketAddress.resolve(host: config.host, port: port), certificates))
        }
        let requested = wanted
        for (address, _) in requested { try Listener.checkFree(address) }
        let stats = ServerStats()
        // Loop 0 binds first; the others reuse the ports it was given.
        let bound = Mutex<[SocketAddress]?>(nil)
        group = try EventLoopGroup(count: config.resolvedThreads, onFailure: { index, error in
            Log.error("event loop \(index): \(error)")
        }) { loop in
            let context = ServerContext(loop: loop, config: config, stats: stats)
            let serverLoop = ServerLoop(context: context, router: application.makeRouter(context))
            let targets = bound.withLock { $0 } ?? requested.map(\.0)
            var actual: [SocketAddress] = []
            for (target, (_, certificates)) in zip(targets, requested) {
                actual.append(try serverLoop.listen(on: target, certificates: certificates))
            }
            bound.withLock { $0 = $0 ?? actual }
            loop.attach(serverLoop)
        }
        self.config = config
        self.stats = stats
        self.application = application
        self.certificates = certificates
        let addresses = bound.withLock { $0 } ?? requested.map(\.0)
        listeners = zip(addresses, requested).map { ServerListener(address: $0, isSecure: $1.1 != nil) }
    }

    /// The first address it listens on (plain text, unless it serves TLS alone).
    public var address: SocketAddress { listeners[0].address }

    /// The TLS address, when TLS is configured.
    public var secureAddress: SocketAddress? { listeners.first(where: \.isSecure)?.address }

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

    /// The URL clients connect to, with the real port: the first listener's.
    public var url: String { listeners[0].url }
}
