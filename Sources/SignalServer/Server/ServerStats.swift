import SignalProtocol
import SignalSystem
import Synchronization

/// Counters shared by every loop of a server.
public final class ServerStats: Sendable {
    private let connections = Atomic<Int>(0)
    private let accepted = Atomic<Int>(0)
    private let ready = Atomic<Bool>(false)
    private let handshakesCompleted = Atomic<Int>(0)
    private let handshakesFailed = Atomic<Int>(0)
    public let startedAt = Deadline.now()

    /// Connections open right now.
    public var openConnections: Int { connections.load(ordering: .relaxed) }

    /// Connections admitted since start (refused ones not counted).
    public var acceptedConnections: Int { accepted.load(ordering: .relaxed) }

    /// Counts a new connection if fewer than `limit` are open; false when full.
    func admit(limit: Int) -> Bool {
        let after = connections.wrappingAdd(1, ordering: .relaxed).newValue
        if after > limit {
            connections.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        accepted.wrappingAdd(1, ordering: .relaxed)
        return true
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

    /// Counts a closed connection.
    func release() {
        connections.wrappingSubtract(1, ordering: .relaxed)
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
        .json(.ok, .object([
            ("status", .string("ok")),
            ("version", .string(RingdVersion.current)),
            ("uptimeSeconds", .integer(Int64(uptimeSeconds))),
            ("connections", .integer(Int64(openConnections))),
        ]))
    }

    /// The `GET /readyz` answer: 200 while ready, else 503.
    public var readinessResponse: HTTPResponse {
        isReady ? .json(.ok, .object([("status", .string("ready"))]))
            : .json(.serviceUnavailable, .object([("status", .string("not ready")),
                                                  ("reason", .string("starting or shutting down"))]))
    }
}
