import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What `ringbench idle` measured.
struct IdleResults {
    var connections = 0
    /// The source addresses the connections came from; empty when the kernel chose.
    var sources: [String] = []
    /// From the first connect to the last auth result, in seconds.
    var connectSeconds = 0.0
    var holdSeconds = 0.0
    /// The server before connecting, once all were authenticated, and after the hold.
    var beforeConnect: ProcessSample?
    var afterConnect: ProcessSample?
    var afterHold: ProcessSample?
    /// The server's soft open-descriptor limit, when its pid is known.
    var serverDescriptorLimit: Int?
    var pingsAnswered = 0
    /// Connections the server closed (or that failed) during the hold, with why.
    var dropped: [String] = []
}

/// Drives the `idle` scenario on a ``ClientLoop``: opens N connections as
/// users `idle0…`, a bounded number in flight at once, waits until every one
/// is authenticated, then holds them open and quiet (answering pings).
final class IdleRun {
    /// Connections one source address carries at most: well inside the
    /// 28,232 ports of Linux's default ephemeral range (32768–60999).
    static let perSource = 20_000
    /// Connections connecting, upgrading or authenticating at once, so the
    /// server's listen backlog (1024) never overflows into SYN retries.
    static let inFlight = 256

    private let loop: ClientLoop
    private let options: IdleOptions

    init(options: IdleOptions) throws {
        self.options = options
        loop = try ClientLoop(server: options.server)
    }

    /// Connects, holds and measures the server (when its pid is known) around both.
    func measure() throws -> IdleResults {
        var results = IdleResults()
        results.connections = options.connections
        let pid = options.server.serverPIDs.first
        if let pid {
            let limit = DescriptorLimit.of(pid: pid)
            results.serverDescriptorLimit = limit
            if let limit, limit < options.descriptorsNeeded {
                throw RunError(
                    message: "the server (pid \(pid)) may open \(limit) descriptors (/proc/\(pid)/limits), "
                        + "fewer than the about \(options.descriptorsNeeded) that \(options.connections) connections need: "
                        + "raise its hard limit (ringd raises its soft limit to the hard limit) or ask for fewer")
            }
        }
        let address = try SocketAddress.resolve(host: options.server.host, port: options.server.port)
        let sources = try IdleRun.sources(for: address, connections: options.connections)
        results.sources = sources.map(\.host)
        results.beforeConnect = try pid.map { try ProcessSample(pid: $0) }
        results.connectSeconds = try connect(to: address, from: sources)
        results.afterConnect = try pid.map { try ProcessSample(pid: $0) }
        let failuresBefore = loop.failures.count
        let pingsBefore = loop.pingsAnswered
        let start = monotonicNanos()
        let end = start + UInt64(options.hold * 1e9)
        var now = start
        while now < end {
            loop.poll(timeoutMS: Int32(min(100, (end - now + 999_999) / 1_000_000)))
            now = monotonicNanos()
        }
        results.holdSeconds = Double(monotonicNanos() - start) / 1e9
        results.afterHold = try pid.map { try ProcessSample(pid: $0) }
        results.pingsAnswered = loop.pingsAnswered - pingsBefore
        results.dropped = Array(loop.failures.dropFirst(failuresBefore))
        return results
    }

    /// 127.0.0.2, 127.0.0.3, … (one per ``perSource`` connections) when the
    /// server is on IPv4 loopback; none (the kernel chooses) otherwise.
    static func sources(for server: SocketAddress, connections: Int) throws -> [SocketAddress] {
        guard server.family == AF_INET, server.host.hasPrefix("127.") else { return [] }
        let count = (connections + perSource - 1) / perSource
        guard count <= 253 else {
            throw RunError(message: "\(connections) connections need more than 253 source addresses")
        }
        return try (0 ..< count).map { try SocketAddress.resolve(host: "127.0.0.\($0 + 2)", port: 0) }
    }

    /// Opens every connection, keeping at most ``inFlight`` unauthenticated,
    /// and returns the seconds until the last is authenticated; throws at the
    /// first failure or after `connectTimeout`.
    private func connect(to address: SocketAddress, from sources: [SocketAddress]) throws -> Double {
        let total = options.connections
        let start = monotonicNanos()
        let deadline = start + UInt64(options.connectTimeout * 1e9)
        var opened = 0
        while loop.readyCount < total {
            if let first = loop.failures.first {
                throw RunError(
                    message: "connecting: \(loop.failures.count) failed (\(loop.readyCount) of \(total) "
                        + "authenticated), the first: \(first)")
            }
            while opened < total, opened - loop.readyCount < IdleRun.inFlight {
                let source = sources.isEmpty ? nil : sources[opened % sources.count]
                do {
                    try loop.connect(to: address, from: source, uid: "idle\(opened)", pair: opened, isCaller: false)
                } catch {
                    throw RunError(
                        message: "connection \(opened + 1) of \(total)"
                            + (source.map { " from \($0.host)" } ?? "") + ": \(error)")
                }
                opened += 1
            }
            if monotonicNanos() > deadline {
                throw RunError(
                    message: "connecting: \(loop.readyCount) of \(total) authenticated after "
                        + "\(TextFormat.number(options.connectTimeout, digits: 0)) s")
            }
            loop.poll(timeoutMS: 10)
        }
        return Double(monotonicNanos() - start) / 1e9
    }
}
