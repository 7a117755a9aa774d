import SignalCrypto
import SignalReactor
import SignalSystem
import Synchronization

/// What a server runs: its routes, and its part in shutting down.
public protocol ServerApplication: Sendable {
    /// A router for one loop; runs on that loop's thread before it serves.
    func makeRouter(_ context: ServerContext) -> HTTPRouter
    /// The server is about to close its connections: finish what clients
    /// must hear first. Blocking is allowed (it runs off the loops).
    func stop()
    /// Every loop has exited: release resources.
    func close()
    /// The router of the `metrics.listen` address, made on loop 0 alone
    /// (one listener is enough for a scraper); nil serves nothing there.
    func makeMetricsRouter(_ context: ServerContext) -> HTTPRouter?
}

extension ServerApplication {
    public func makeMetricsRouter(_ context: ServerContext) -> HTTPRouter? { nil }
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
    /// Where `GET /metrics` is served without a key (`metrics.listen`), with
    /// the real port; nil when not configured.
    public let metricsAddress: SocketAddress?
    private let group: EventLoopGroup
    private let application: ServerApplication
    private let closed = Mutex(false)

    /// Binds and starts serving `application`, on the `inherited` sockets
    /// in place of the configured addresses they replace (see
    /// ``listenTargets(config:certificates:inherited:)``). Throws
    /// ``ResolveError`` when the address cannot be resolved, ``TLSError``
    /// when the certificate or key cannot be loaded, and ``ListenError``
    /// when an address is in use (by any other process, another ringd
    /// included) or cannot be bound, or an inherited socket cannot serve.
    public init(config: ServerConfig, application: ServerApplication, inherited: InheritedSockets = .none) throws {
        defer { inherited.close() }
        var certificates: TLSCertificates?
        if let certificatePath = config.tlsCertificatePath, let privateKeyPath = config.tlsPrivateKeyPath {
            certificates = try TLSCertificates(
                certificatePath: certificatePath, privateKeyPath: privateKeyPath,
                minimumVersion: config.tlsMinimumVersion)
        }
        let requested = try Self.listenTargets(config: config, certificates: certificates, inherited: inherited)
        for case (.address(let address), _) in requested { try Listener.checkFree(address) }
        let metricsTarget = try config.metricsListen.map { try SocketAddress.resolve(host: $0.host, port: $0.port) }
        if let metricsTarget { try Listener.checkFree(metricsTarget) }
        let stats = ServerStats()
        // Loop 0 binds first; the others reuse the ports it was given.
        let bound = Mutex<[SocketAddress]?>(nil)
        let metricsBound = Mutex<SocketAddress?>(nil)
        group = try EventLoopGroup(
            count: config.resolvedThreads,
            onFailure: { index, error in
                Log.error("event loop \(index): \(error)")
            }
        ) { loop in
            let context = ServerContext(loop: loop, config: config, stats: stats)
            let serverLoop = ServerLoop(context: context, router: application.makeRouter(context))
            let firstBound = bound.withLock { $0 }
            var actual: [SocketAddress] = []
            for (index, (target, certificates)) in requested.enumerated() {
                var resolved = target
                if case .address = target, let firstBound { resolved = .address(firstBound[index]) }
                actual.append(try serverLoop.listen(on: resolved, certificates: certificates))
            }
            bound.withLock { $0 = $0 ?? actual }
            if loop.index == 0, let metricsTarget, let metricsRouter = application.makeMetricsRouter(context) {
                let address = try serverLoop.listen(
                    on: .address(metricsTarget), certificates: nil, router: metricsRouter)
                metricsBound.withLock { $0 = address }
            }
            loop.attach(serverLoop)
        }
        self.config = config
        self.stats = stats
        self.application = application
        self.certificates = certificates
        metricsAddress = metricsBound.withLock { $0 }
        if let metricsAddress { Log.info("serving GET /metrics without an API key on http://\(metricsAddress)") }
        let addresses = bound.withLock { $0 } ?? []
        listeners = zip(addresses, requested).map { ServerListener(address: $0, isSecure: $1.1 != nil) }
        for case (.inherited(let socket), let certificates) in requested {
            Log.info("listening on inherited socket \(socket)\(certificates == nil ? "" : " (TLS)")")
        }
        stats.markReady()
    }

    /// Where to listen, plain text first, then TLS, each with the
    /// certificate it serves. Inherited sockets replace configured
    /// addresses: one named `tls` (`FileDescriptorName=tls`) replaces
    /// `tls.port` and serves TLS; any other replaces `listen` and serves
    /// what it serves (plain text, or TLS when TLS is configured without
    /// `tls.port`). A configured address no inherited socket replaces is
    /// bound as before.
    static func listenTargets(
        config: ServerConfig, certificates: TLSCertificates?,
        inherited: InheritedSockets
    ) throws -> [(ListenTarget, TLSCertificates?)] {
        let tlsAlone = certificates != nil && config.tlsPort == nil
        let forListen = inherited.sockets.filter { tlsAlone || !$0.isTLS }
        let forTLS = inherited.sockets.filter { !tlsAlone && $0.isTLS }
        if certificates == nil, let socket = forTLS.first {
            throw ListenError(
                message:
                    "inherited socket \(socket) is named \(InheritedSocket.tlsName) but no TLS certificate is configured (tls.certificate)"
            )
        }
        var targets: [(ListenTarget, TLSCertificates?)] = []
        let listenCertificates = tlsAlone ? certificates : nil
        if forListen.isEmpty {
            targets.append(
                (.address(try SocketAddress.resolve(host: config.host, port: config.port)), listenCertificates))
        } else {
            targets += forListen.map { (.inherited($0), listenCertificates) }
        }
        if let certificates, let tlsPort = config.tlsPort {
            if forTLS.isEmpty {
                targets.append((.address(try SocketAddress.resolve(host: config.host, port: tlsPort)), certificates))
            } else {
                targets += forTLS.map { (.inherited($0), certificates) }
            }
        }
        return targets
    }

    /// How many event loops serve.
    var loopCount: Int { group.mailboxes.count }

    /// Runs `task` once on every loop's thread.
    func onEveryLoop(_ task: @escaping LoopMailbox.Task) {
        for mailbox in group.mailboxes { mailbox.submit(task) }
    }

    /// The first address it listens on (plain text, unless it serves TLS alone).
    public var address: SocketAddress { listeners[0].address }

    /// The TLS address, when TLS is configured.
    public var secureAddress: SocketAddress? { listeners.first(where: \.isSecure)?.address }

    /// Binds and starts serving the routers `makeRouter` makes.
    public convenience init(config: ServerConfig, makeRouter: @escaping @Sendable (ServerContext) -> HTTPRouter) throws
    {
        try self.init(config: config, application: RouterApplication(makeRouterBody: makeRouter))
    }

    /// Starts a graceful stop: the application finishes first, then no new
    /// connections are taken and open ones are closed cleanly.
    public func shutdown() {
        stats.markStopping()
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
