import SignalProtocol
import SignalSystem
import Synchronization

/// Counters shared by every loop of a server.
public final class ServerStats: Sendable {
    private let connections = Atomic<Int>(0)
    private let accepted = Atomic<Int>(0)
    private let ready = Atomic<Bool>(false)
    /// Open connections without an authenticated signaling session.
    private let unauthenticated = Atomic<Int>(0)
    /// Open connections by peer address (without the port); an address
    /// leaves the table with its last connection.
    private let perAddress = Mutex<[String: Int]>([:])
    private let handshakesCompleted = Atomic<Int>(0)
    private let handshakesFailed = Atomic<Int>(0)
    public let startedAt = Deadline.now()

    /// Connections open right now.
    public var openConnections: Int { connections.load(ordering: .relaxed) }

    /// Connections admitted since start (refused ones not counted).
    public var acceptedConnections: Int { accepted.load(ordering: .relaxed) }

    /// Why a connection was not admitted.
    enum Refusal: Error {
        /// `limits.maxConnections` are open.
        case full
        /// `limits.connectionsPerAddress` are open from the peer's address.
        case addressFull
        /// `limits.maxUnauthenticatedConnections` are open.
        case unauthenticatedFull
    }

    /// Counts a new, unauthenticated connection from `address` if fewer than
    /// `limits.total` are open in all, fewer than `limits.perAddress` from
    /// that address and fewer than `limits.unauthenticated` unauthenticated.
    func admit(
        from address: String,
        limits: (total: Int, perAddress: Int, unauthenticated: Int)
    ) -> Result<Void, Refusal> {
        let after = connections.wrappingAdd(1, ordering: .relaxed).newValue
        if after > limits.total {
            connections.wrappingSubtract(1, ordering: .relaxed)
            return .failure(.full)
        }
        if unauthenticated.wrappingAdd(1, ordering: .relaxed).newValue > limits.unauthenticated {
            unauthenticated.wrappingSubtract(1, ordering: .relaxed)
            connections.wrappingSubtract(1, ordering: .relaxed)
            return .failure(.unauthenticatedFull)
        }
        let admitted = perAddress.withLock { counts in
            let count = counts[address, default: 0]
            guard count < limits.perAddress else { return false }
            counts[address] = count + 1
            return true
        }
        guard admitted else {
            unauthenticated.wrappingSubtract(1, ordering: .relaxed)
            connections.wrappingSubtract(1, ordering: .relaxed)
            return .failure(.addressFull)
        }
        accepted.wrappingAdd(1, ordering: .relaxed)
        return .success(())
    }

    /// Counts a connection that authenticated (once per connection).
    func authenticated() {
        unauthenticated.wrappingSubtract(1, ordering: .relaxed)
    }

    /// TLS handshakes since start: completed, and failed (an error before
    /// completion; a peer that leaves mid-handshake without one is neither).
    public var tlsHandshakes: (completed: Int, failed: Int) {
        (handshakesCompleted.load(ordering: .relaxed), handshakesFailed.load(ordering: .relaxed))
    }

    func countHandshake(complete: Bool) {
        if complete {
            handshakesCompleted.wrappingAdd(1, ordering: .relaxed)
        } else {
            handshakesFailed.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Counts a closed connection from `address`.
    func release(from address: String, authenticated: Bool) {
        connections.wrappingSubtract(1, ordering: .relaxed)
        if !authenticated { unauthenticated.wrappingSubtract(1, ordering: .relaxed) }
        perAddress.withLock { counts in
            let count = counts[address, default: 1] - 1
            counts[address] = count > 0 ? count : nil
        }
    }

    /// Whether `GET /readyz` says ready: from when every listener is up
    /// (the application, ringd's store included, was made before them)
    /// until a graceful stop starts, so a balancer stops sending new
    /// clients before connections are closed.
    public var isReady: Bool { ready.load(ordering: .relaxed) }

    /// Every listener is up.
    func markReady() { ready.store(true, ordering: .relaxed) }

    /// A graceful stop has started.
    func markStopping() { ready.store(false, ordering: .relaxed) }

    /// Seconds since start.
    public var uptimeSeconds: Double { Deadline.now().seconds(since: startedAt) }

    /// The `GET /healthz` answer: status, version, uptime, open connections.
    public var healthResponse: HTTPResponse {
        .json(
            .ok,
            .object([
                ("status", .string("ok")),
                ("version", .string(RingdVersion.current)),
                ("uptimeSeconds", .integer(Int64(uptimeSeconds))),
                ("connections", .integer(Int64(openConnections))),
            ]))
    }

    /// The `GET /readyz` answer: 200 while ready, else 503.
    public var readinessResponse: HTTPResponse {
        isReady ? .json(.ok, .object([("status", .string("ready"))])) : Self.notReady("starting or shutting down")
    }

    /// `/readyz`'s answer when the server cannot take clients now, and why.
    static func notReady(_ reason: String) -> HTTPResponse {
        .json(.serviceUnavailable, .object([("status", .string("not ready")), ("reason", .string(reason))]))
    }
}
