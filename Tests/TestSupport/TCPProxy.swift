import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP forwarder between clients and a server, for tests that
/// need a network that fails on demand: ``cut()`` drops every connection
/// through it at once (no close frame, as a lost network would), and while
/// ``refusing`` is set new connections are accepted and closed at once, so a
/// client's reconnect attempts fail until it is cleared. Threads and
/// blocking sockets: it is a test tool, not a reactor.
public final class TCPProxy: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let sockets = Mutex<Set<Int32>>([])
    private let refusal = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)

    /// Whether new connections are closed as soon as they are accepted.
    public var refusing: Bool {
        get { refusal.load(ordering: .acquiring) }
        set { refusal.store(newValue, ordering: .releasing) }
    }

    /// Forwards 127.0.0.1:`port` (a free port) to 127.0.0.1:`upstreamPort`.
    public init(forwardingTo upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw ProxyError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    /// Drops every connection through the proxy. Under the lock that also
    /// covers closing, so no descriptor is shut down after its number went
    /// to another socket of the test process.
    public func cut() {
        sockets.withLock { open in
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Stops accepting (the accept thread closes the listener as it leaves,
    /// so it never accepts on a number reused meanwhile) and drops every connection.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !stopped.load(ordering: .acquiring) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            if refusing {
                close(client)
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard upstream >= 0, connected == 0 else {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            let registered = sockets.withLock { open in
                guard !stopped.load(ordering: .acquiring) else { return false }
                open.formUnion([client, upstream])
                return true
            }
            guard registered else {
                close(client)
                close(upstream)
                return
            }
            let finished = Atomic<Int>(0)
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread { [self] in
                    pump(from: from, to: to)
                    // The second pump to end closes both sockets.
                    if finished.add(1, ordering: .acquiringAndReleasing).newValue == 2 {
                        sockets.withLock { open in
                            open.subtract([client, upstream])
                            close(client)
                            close(upstream)
                        }
                    }
                }.start()
            }
        }
    }

    /// Copies bytes until either side ends, then shuts both directions down.
    private func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes {
                    send(destination, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break }
                offset += written
            }
            if offset < count { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// The proxy could not be set up.
public struct ProxyError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
