import SignalProtocol
import SignalSystem

/// A server's presence on one event loop: its listener, its router and its
/// open connections, which it closes on shutdown.
final class ServerLoop {
    private let context: ServerContext
    private let router: HTTPRouter
    private var listener: Listener?
    private var connections: [ObjectIdentifier: Connection] = [:]

    /// Seconds connections get to close cleanly at shutdown before they are dropped.
    static let shutdownGrace = 3.0

    init(context: ServerContext, router: HTTPRouter) {
        self.context = context
        self.router = router
    }

    /// Listens on `address`; returns the address actually bound.
    func listen(on address: SocketAddress) throws -> SocketAddress {
        let listener = try Listener(address: address, loop: context.loop) { [unowned self] socket, peer in
            self.accept(socket, peer)
        }
        self.listener = listener
        context.loop.onShutdown { [self] in self.shutdown() }
        return listener.address
    }

    private func accept(_ socket: FileDescriptor, _ peer: SocketAddress) {
        let config = context.config
        let connection = Connection(socket: socket, peer: peer, loop: context.loop, limits: config.backpressure)
        guard context.stats.admit(limit: config.maxConnections) else {
            Log.warning("\(peer): refused, \(config.maxConnections) connections open")
            connection.write(HTTPResponse.error(.serviceUnavailable, "too many connections").serialized(keepAlive: false))
            connection.abort()
            return
        }
        do {
            try connection.start()
        } catch {
            Log.warning("\(peer): \(error)")
            context.stats.release()
            return
        }
        connection.handler = HTTPConnectionHandler(connection: connection, router: router, settings: config)
        connections[ObjectIdentifier(connection)] = connection
        connection.onClose = { [unowned self] closed in
            self.connections[ObjectIdentifier(closed)] = nil
            self.context.stats.release()
        }
    }

    /// Stops accepting, asks every connection to close (WebSockets with 1001),
    /// and drops what is still open after the grace period.
    private func shutdown() {
        listener?.close()
        listener = nil
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
