import SignalCrypto
import SignalProtocol
import SignalSystem

/// A server's presence on one event loop: its listeners (plain and TLS), its
/// router and its open connections, which it closes on shutdown.
final class ServerLoop {
    private let context: ServerContext
    private let router: HTTPRouter
    private var listeners: [Listener] = []
    private var connections: [ObjectIdentifier: Connection] = [:]

    /// Seconds connections get to close cleanly at shutdown before they are dropped.
    static let shutdownGrace = 3.0

    init(context: ServerContext, router: HTTPRouter) {
        self.context = context
        self.router = router
    }

    /// What a plaintext client on a TLS port is told.
    private static let plaintextRefusal = PlaintextRefusal(
        response: HTTPResponse.error(.badRequest, "this port speaks TLS: use wss:// or https://").serialized(
            keepAlive: false))

    /// Listens on `target`, with TLS when `certificates` are given, serving
    /// `router` (the loop's own unless told); returns the address actually bound.
    func listen(
        on target: ListenTarget, certificates: TLSCertificates?, router: HTTPRouter? = nil
    ) throws -> SocketAddress {
        let router = router ?? self.router
        let listener = try Listener(target: target, loop: context.loop) { [unowned self] socket, peer in
            self.accept(socket, peer, certificates: certificates, router: router)
        }
        if listeners.isEmpty { context.loop.onShutdown { [self] in self.shutdown() } }
        listeners.append(listener)
        return listener.address
    }

    private func accept(
        _ socket: FileDescriptor, _ peer: SocketAddress, certificates: TLSCertificates?,
        router: HTTPRouter
    ) {
        let config = context.config
        let address = peer.host
        let limits = (config.maxConnections, config.connectionsPerAddress, config.maxUnauthenticatedConnections)
        if case .failure(let reason) = context.stats.admit(from: address, limits: limits) {
            let message =
                switch reason {
                case .full: "too many connections"
                case .addressFull: "too many connections from this address"
                case .unauthenticatedFull: "too many connections waiting to authenticate"
                }
            Log.repeatedWarning("refused", "refused a connection: \(message)", [("remote", "\(peer)")])
            // A TLS peer cannot be told before its handshake; it sees the close.
            let refusal = Connection(socket: socket, peer: peer, loop: context.loop, limits: config.backpressure)
            if certificates == nil {
                refusal.write(HTTPResponse.error(.serviceUnavailable, message).serialized(keepAlive: false))
            }
            refusal.abort()
            return
        }
        let session: TLSSession?
        do {
            session = try certificates?.makeSession()
        } catch {
            Log.warning("\(peer): \(error)")
            context.stats.release(from: address, authenticated: false)
            socket.close()
            return
        }
        let connection = Connection(
            socket: socket, peer: peer, loop: context.loop, limits: config.backpressure,
            tls: session, plaintextRefusal: Self.plaintextRefusal)
        do {
            try connection.start()
        } catch {
            Log.warning("\(peer): \(error)")
            context.stats.release(from: address, authenticated: false)
            return
        }
        if session != nil {
            connection.onHandshake = { [stats = context.stats] complete in stats.countHandshake(complete: complete) }
        }
        connection.handler = HTTPConnectionHandler(connection: connection, router: router, settings: config)
        connection.onAuthenticate = { [unowned self] in self.context.stats.authenticated() }
        connections[ObjectIdentifier(connection)] = connection
        connection.onClose = { [unowned self] closed in
            self.connections[ObjectIdentifier(closed)] = nil
            self.context.stats.release(from: address, authenticated: closed.isAuthenticated)
        }
    }

    /// Stops accepting, asks every connection to close (WebSockets with 1001),
    /// and drops what is still open after the grace period.
    private func shutdown() {
        for listener in listeners { listener.close() }
        listeners = []
        for connection in connections.values {
            if let socket = connection.handler as? WebSocket {
                socket.close(code: .goingAway, reason: "server shutting down")
            } else {
                connection.closeAfterFlush()
            }
        }
        guard !connections.isEmpty else { return }
        context.loop.schedule(after: Self.shutdownGrace) { [self] in
            for connection in self.connections.values { connection.abort() }
        }
    }
}
